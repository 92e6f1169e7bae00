"""RDP of the Poisson-subsampled Gaussian and its conversions, against independent computations."""

import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant
from hypothesis import given, settings
from hypothesis import strategies as st
from opacus.accountants.analysis.rdp import get_privacy_spent
from scipy import integrate
from scipy.stats import norm

from dpnotes.accounting import ORDERS, rdp_epsilon, rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.rdp import _log_a_integers


def _configs(n, seed, integer_orders):
    rng = np.random.default_rng(seed)
    orders = ORDERS["integer"] if integer_orders else [a for a in ORDERS["tf-tutorial"] if a % 1]
    for _ in range(n):
        yield (float(10 ** rng.uniform(-4, -0.01)), float(10 ** rng.uniform(-0.4, 1.3)),
               float(rng.uniform(1, 1e5)), float(rng.choice(orders)))


@pytest.mark.parametrize("q, sigma, steps, order", list(_configs(250, 0, integer_orders=True)))
def test_integer_orders_agree_with_dp_accounting(q, sigma, steps, order):
    ours = subsampled_gaussian_rdp(q, sigma, steps, [order])[0]
    theirs = steps * rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, [order])[0]
    assert ours == pytest.approx(theirs, rel=1e-6) or (math.isinf(ours) and math.isinf(theirs))


def _rdp_by_quadrature(q, sigma, order):
    """log E_{z~N(0,s^2)}[((1-q) + q exp((2z-1)/(2 s^2)))^a] / (a-1) (Mironov et al. 2019, A_alpha)."""
    f = lambda z: norm.pdf(z, scale=sigma) * ((1 - q) + q * math.exp((2 * z - 1) / (2 * sigma**2))) ** order
    value, _ = integrate.quad(f, -40 * sigma, 40 * sigma + 1, points=[0.0, 0.5, 1.0], epsabs=0, epsrel=1e-12, limit=500)
    return math.log(value) / (order - 1)


@pytest.mark.parametrize("q, sigma, steps, order", list(_configs(30, 1, integer_orders=False)))
def test_fractional_orders_agree_with_quadrature(q, sigma, steps, order):
    """Fractional orders: opacus equals numerical integration; dp_accounting 0.6 is an upper
    bound that can be loose (up to ~20x here): it is no exact reference for these orders."""
    if sigma < 1.0:
        sigma += 1.0  # keeps the integrand within float range for quad
    exact = _rdp_by_quadrature(q, sigma, order)
    assert subsampled_gaussian_rdp(q, sigma, 1, [order])[0] == pytest.approx(exact, rel=1e-6)
    assert rdp_privacy_accountant._compute_rdp_poisson_subsampled_gaussian(q, sigma, [order])[0] >= exact * (1 - 1e-6)


@pytest.mark.parametrize("q, sigma, steps, order", list(_configs(100, 2, integer_orders=True))
                         + list(_configs(100, 3, integer_orders=False)))
def test_every_order_agrees_with_opacus(q, sigma, steps, order):
    """opacus's analysis module (the implementation dpnotes used before its own): same formula,
    independent code. Both lose digits to float64 rounding: of A_alpha itself where it is within
    1e-8 of 1 (1e-16 to 1e-14 per step: at q 3.6e-4, sigma 8.9, order 2.4 opacus is 7e-7 off quadrature
    and ours 2e-8; at q 1.4e-4, sigma 6.2, order 18 opacus is 5e-9 relative off
    a 50-digit mpmath sum and ours 9e-11; at order 3.5, q 1.3e-4 ours is 7e-8 off and opacus
    4e-11), and to cancellation in the fractional-order series (order 1.1, q 0.057, sigma 12.5:
    opacus 4.8e-10, ours 6.6e-10 off 40-digit quadrature)."""
    from opacus.accountants.analysis.rdp import compute_rdp

    theirs = compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=[order])[0]
    ours = subsampled_gaussian_rdp(q, sigma, steps, [order])[0]
    assert ours == pytest.approx(theirs, rel=1e-8, abs=steps * 1e-14) or (math.isinf(ours) and math.isinf(theirs))


def test_log_erfc_matches_math_erfc_on_both_sides_of_the_series_switch():
    from dpnotes.accounting.rdp import log_erfc

    for x in (-3.0, 0.0, 1.0, 10.0, 24.9, 25.0 + 1e-9, 25.5, 26.3):  # erfc(26.3) ~ 1e-302: still a float
        assert log_erfc(x) == pytest.approx(math.log(math.erfc(x)), rel=1e-13)
    assert math.isfinite(log_erfc(1e3)) and log_erfc(1e3) < -1e6


def test_full_batch_is_gaussian_rdp():
    a = resolve_orders("integer")
    np.testing.assert_allclose(subsampled_gaussian_rdp(1.0, 2.0, 3.5, a), 3.5 * a / 8)


def test_rdp_is_linear_in_fractional_steps():
    a = resolve_orders("tf-compute")
    np.testing.assert_allclose(subsampled_gaussian_rdp(0.01, 1.1, 2.5, a),
                               2.5 * subsampled_gaussian_rdp(0.01, 1.1, 1, a))


def test_order_lists():
    assert len(ORDERS["tf-tutorial"]) == 99 + 52 and ORDERS["tf-tutorial"][0] == pytest.approx(1.1)
    assert ORDERS["tf-compute"][-3:] == (128.0, 256.0, 512.0) and 5.0 in ORDERS["tf-compute"]
    assert ORDERS["integer"] == tuple(float(a) for a in range(2, 65))
    assert np.array_equal(resolve_orders([2, 3.5]), [2.0, 3.5])


def test_classic_conversion_by_hand():
    a = np.array([2.0, 5.0, 10.0])
    rdp = np.array([0.1, 0.4, 1.5])
    manual = rdp + math.log(1e5) / (a - 1)
    assert rdp_to_epsilon(rdp, a, 1e-5, "classic") == (pytest.approx(manual.min()), a[manual.argmin()])


def test_improved_conversion_matches_opacus():
    a = resolve_orders("opacus")
    rdp = subsampled_gaussian_rdp(256 / 60000, 1.1, 14062.5, a)
    eps, order = rdp_to_epsilon(rdp, a, 1e-5, "improved")
    ref_eps, ref_order = get_privacy_spent(orders=list(a), rdp=list(rdp), delta=1e-5)
    assert (eps, order) == (pytest.approx(ref_eps, rel=1e-12), ref_order)
    assert eps < rdp_to_epsilon(rdp, a, 1e-5, "classic")[0]


def test_infinite_rdp_gives_infinite_epsilon():
    eps, order = rdp_to_epsilon([math.inf, math.inf], [2, 3], 1e-5)
    assert math.isinf(eps) and math.isnan(order)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: subsampled_gaussian_rdp(0.0, 1.0, 10, "integer"), "q"),
        (lambda: subsampled_gaussian_rdp(1.5, 1.0, 10, "integer"), "q"),
        (lambda: subsampled_gaussian_rdp(0.1, 0.0, 10, "integer"), "sigma"),
        (lambda: subsampled_gaussian_rdp(0.1, -1.0, 10, "integer"), "sigma"),
        (lambda: subsampled_gaussian_rdp(0.1, 1.0, 0, "integer"), "steps"),
        (lambda: subsampled_gaussian_rdp(0.1, 1.0, 10, [1.0, 2.0]), "orders"),
        (lambda: subsampled_gaussian_rdp(0.1, 1.0, 10, "nope"), "orders"),
        (lambda: resolve_orders([]), "orders"),
        (lambda: rdp_to_epsilon([0.1], [2.0], 0.0), "delta"),
        (lambda: rdp_to_epsilon([0.1], [2.0], 1.0), "delta"),
        (lambda: rdp_to_epsilon([0.1], [2.0], 1e-5, "new"), "conversion"),
        (lambda: rdp_to_epsilon([0.1, 0.2], [2.0], 1e-5), "rdp"),
        (lambda: rdp_to_epsilon([-0.1], [2.0], 1e-5), "rdp"),
        (lambda: rdp_epsilon(0.1, 1.0, 10, 1e-5, orders=[0.5]), "orders"),
    ],
)
def test_invalid_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def _log_a_term_by_term(q, sigma, alpha):
    """The reference: log A_alpha at an integer order, one binomial term at a time (the
    implementation before the terms were formed with numpy)."""
    log_a = -math.inf
    for k in range(alpha + 1):
        log_binom = math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1)
        term = log_binom + k * math.log(q) + (alpha - k) * math.log1p(-q) + (k * k - k) / (2 * sigma**2)
        hi, lo = max(log_a, term), min(log_a, term)
        log_a = hi if lo == -math.inf else hi + math.log1p(math.exp(lo - hi))
    return log_a


@settings(max_examples=300, deadline=None)
@given(q=st.floats(1e-9, 1.0, exclude_max=True), sigma=st.floats(1e-3, 1e4),
       alphas=st.lists(st.integers(2, 600), min_size=1, max_size=8))
def test_integer_orders_are_bit_for_bit_the_term_by_term_sum(q, sigma, alphas):
    """Calibrated sigmas (and with them stored runs' spec ids) rest on these values' last bits."""
    got = _log_a_integers(q, sigma, tuple(alphas))
    assert [float(v).hex() for v in got] == [_log_a_term_by_term(q, sigma, a).hex() for a in alphas]


def test_integer_orders_name_a_sigma_too_small_to_square():
    with pytest.raises(ValueError, match=r"sigma must be >= 1e-161"):
        subsampled_gaussian_rdp(0.5, 1e-170, 1, [2.0])


@pytest.mark.parametrize("sigma", [1e-155, 1e-150, 3e-3])
def test_integer_orders_with_overflowing_terms_are_the_term_by_term_sum_too(sigma):
    """Below sigma ~1e-150 (k^2 - k) / (2 sigma^2) overflows to inf: the sum falls back to the
    Python fold, whose NaN (inf - inf) the reduceat fold would turn into inf."""
    alphas = (2, 3, 64, 600)
    got = _log_a_integers(0.01, sigma, alphas)
    assert [float(v).hex() for v in got] == [_log_a_term_by_term(0.01, sigma, a).hex() for a in alphas]
