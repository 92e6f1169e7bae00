"""GDP duality, trade-off functions, PRV, the unified epsilon() and calibration."""

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution
from hypothesis import given, settings
from hypothesis import strategies as st
from opacus.accountants.analysis import gdp as opacus_gdp

from dpnotes.accounting import (
    ACCOUNTANTS,
    composed_subsampled_gaussian_tradeoff,
    delta_from_mu,
    envelope_tradeoff,
    epsdelta_tradeoff,
    epsilon,
    epsilon_from_mu,
    gaussian_tradeoff,
    integer_steps,
    max_steps,
    min_error_sum,
    mu_from_epsilon,
    mu_poisson,
    mu_uniform,
    noise_multiplier,
    prv_epsilon,
    rdp_epsilon,
)

qs = st.floats(1e-4, 0.1)
sigmas = st.floats(0.7, 10)
steps_ = st.floats(1, 1e4)
mus = st.floats(0.05, 10)
ALPHA = np.linspace(0, 1, 2001)


# --- GDP / CLT ---------------------------------------------------------------------------

def test_mu_formulas_match_opacus():
    for q, s, t in [(0.01, 1.0, 1000), (256 / 60000, 1.1, 14062.5), (0.3, 3.0, 7)]:
        kw = {"steps": t, "noise_multiplier": s, "sample_rate": q}
        assert mu_poisson(q, s, t) == pytest.approx(opacus_gdp.compute_mu_poisson(**kw))
        assert mu_uniform(q, s, t) == pytest.approx(opacus_gdp.compute_mu_uniform(**kw))


def test_delta_of_gaussian_mechanism_is_exact_hockey_stick():
    """mu-GDP is exactly the Gaussian mechanism with sensitivity 1, sigma 1/mu; compare with dp_accounting."""
    pld = privacy_loss_distribution.from_gaussian_mechanism(0.5, value_discretization_interval=1e-4)
    for eps in [0.0, 0.5, 2.0, 5.0]:
        assert delta_from_mu(2.0, eps) == pytest.approx(pld.get_delta_for_epsilon(eps), rel=1e-2, abs=1e-12)


def test_epsilon_from_mu_matches_opacus():
    for mu in [0.1, 0.57, 2.0, 4.78]:
        assert epsilon_from_mu(mu, 1e-5) == pytest.approx(opacus_gdp.eps_from_mu(mu=mu, delta=1e-5), rel=1e-6)


def test_epsilon_zero_when_delta_already_met():
    assert epsilon_from_mu(1e-6, 0.5) == 0.0


@settings(max_examples=50, deadline=None)
@given(mus, st.floats(0.0, 20), st.floats(0.01, 5))
def test_delta_falls_with_eps(mu, eps, step):
    assert delta_from_mu(mu, eps + step) <= delta_from_mu(mu, eps)


@settings(max_examples=50, deadline=None)
@given(mus, st.floats(1e-10, 0.1))
def test_mu_eps_round_trip(mu, delta):
    eps = epsilon_from_mu(mu, delta)
    if eps > 0:
        assert mu_from_epsilon(eps, delta) == pytest.approx(mu, rel=1e-9)
        assert delta_from_mu(mu, eps) == pytest.approx(delta, rel=1e-9)


# --- monotonicity of every fast accountant ---------------------------------------------------

@settings(max_examples=15, deadline=None)
@given(qs, sigmas, steps_, st.floats(1.01, 4))
def test_eps_grows_with_steps_and_q_and_shrinks_with_sigma(q, sigma, steps, factor):
    base = (epsilon(q, sigma, steps, 1e-5, "rdp")["rdp"]["epsilon"],
            epsilon(q, sigma, steps, 1e-5, "clt")["clt"]["epsilon"])
    for changed in [
        dict(q=q, sigma=sigma, steps=steps * factor),
        dict(q=min(1.0, q * factor), sigma=sigma, steps=steps),
        dict(q=q, sigma=sigma / factor, steps=steps),
    ]:
        more = (epsilon(delta=1e-5, accountant="rdp", **changed)["rdp"]["epsilon"],
                epsilon(delta=1e-5, accountant="clt", **changed)["clt"]["epsilon"])
        assert more[0] >= base[0] - 1e-12 and more[1] >= base[1] - 1e-12


# --- trade-off functions -------------------------------------------------------------------

def test_gaussian_tradeoff_closed_form_points():
    assert gaussian_tradeoff(0.0, ALPHA) == pytest.approx(1 - ALPHA)
    mu = 1.3
    # Minimum error sum of G_mu is 2 Phi(-mu/2), attained at alpha = Phi(-mu/2).
    assert min_error_sum(ALPHA, gaussian_tradeoff(mu, ALPHA)) == pytest.approx(2 * 0.2578461, abs=1e-6)


def test_epsdelta_tradeoff_shape():
    f = epsdelta_tradeoff(1.0, 0.01, ALPHA)
    assert f[0] == pytest.approx(0.99) and f[-1] == 0.0
    assert min_error_sum(ALPHA, f) == pytest.approx(2 * 0.99 / (1 + math.e), abs=1e-3)


def test_envelope_is_pointwise_max():
    e, d = np.array([0.5, 1.0, 3.0]), np.array([0.1, 0.01, 1e-5])
    env = envelope_tradeoff(e, d, ALPHA)
    stacked = np.stack([epsdelta_tradeoff(x, y, ALPHA) for x, y in zip(e, d)])
    np.testing.assert_allclose(env, stacked.max(axis=0))


def test_gdp_implies_its_eps_delta_curve():
    """mu-GDP implies (eps, delta(eps; mu))-DP for all eps: the envelope lies below G_mu and touches it."""
    eps = np.linspace(0, 8, 801)
    env = envelope_tradeoff(eps, [delta_from_mu(1.0, x) for x in eps], ALPHA)
    g = gaussian_tradeoff(1.0, ALPHA)
    assert (env <= g + 1e-12).all() and np.abs(env - g).max() < 5e-3


def test_composed_full_batch_is_gaussian():
    """q = 1: G_{1/sigma} composed T times is exactly G_{sqrt(T)/sigma}."""
    f = composed_subsampled_gaussian_tradeoff(1.0, 2.0, 4, ALPHA)
    np.testing.assert_allclose(f, gaussian_tradeoff(1.0, ALPHA), atol=1e-5)
    assert (f <= gaussian_tradeoff(1.0, ALPHA) + 1e-9).all()


def test_composed_single_step_is_symmetrised_mixture():
    """T = 1: min{f_p, f_p^-1}** with f_p = p G_{1/sigma} + (1 - p) Id (GDP Theorem 3)."""
    p, sigma = 0.3, 1.0
    f_p = p * gaussian_tradeoff(1 / sigma, ALPHA) + (1 - p) * (1 - ALPHA)
    f_inv = np.interp(ALPHA, f_p[::-1], ALPHA[::-1])  # inverse of a decreasing function
    lower = np.minimum(f_p, f_inv)
    ours = composed_subsampled_gaussian_tradeoff(p, sigma, 1, ALPHA)
    assert (ours <= lower + 1e-4).all()  # a trade-off function below both (conservative)
    assert np.abs(ours - lower).max() < 0.02  # and close to the lower one (convex hull of the min)


def test_composed_matches_clt_in_appendix_a_setting():
    """GDP Appendix A: T = 234, p chosen so that p sqrt(T) matches Table 1 row 2; f is close to G_0.57."""
    t = 234
    p = 256 / 60000 * math.sqrt(60 * 60000 / 256 / t)
    f = composed_subsampled_gaussian_tradeoff(p, 1.1, t, ALPHA)
    assert np.abs(f - gaussian_tradeoff(mu_poisson(p, 1.1, t), ALPHA)).max() < 0.01


def test_min_error_sum_by_hand():
    assert min_error_sum([0.0, 0.5, 1.0], [1.0, 0.2, 0.0]) == pytest.approx(0.7)


# --- PRV --------------------------------------------------------------------------------------

def test_prv_within_bounds_and_agrees_with_pld():
    q, sigma, steps = 0.01, 1.0, 500
    r = prv_epsilon(q, sigma, steps, 1e-5)
    assert r.lower <= r.epsilon <= r.upper and r.upper - r.lower <= 0.021
    pld = privacy_loss_distribution.from_gaussian_mechanism(sigma, sampling_prob=q, value_discretization_interval=1e-3)
    assert pld.self_compose(steps).get_epsilon_for_delta(1e-5) == pytest.approx(r.epsilon, abs=0.02)
    assert r.upper <= rdp_epsilon(q, sigma, steps, 1e-5, orders="opacus", conversion="improved")[0]


def test_prv_rounds_fractional_steps_up():
    assert prv_epsilon(0.01, 1.0, 499.2, 1e-5) == prv_epsilon(0.01, 1.0, 500, 1e-5)
    assert integer_steps(14062.5) == 14063 and integer_steps(60.0) == 60


# --- epsilon() and calibration ----------------------------------------------------------------

def test_epsilon_keys_and_defaults():
    out = epsilon(0.01, 1.0, 100, 1e-5, accountant="all")
    assert list(out) == list(ACCOUNTANTS)
    assert set(out["clt"]) == {"mu", "epsilon"} and set(out["pld"]) == {"epsilon"}
    assert set(out["rdp"]) == set(out["rdp-classic"]) == {"epsilon", "order"}
    assert out["rdp"]["epsilon"] == rdp_epsilon(0.01, 1.0, 100, 1e-5, orders="opacus", conversion="improved")[0]
    assert out["rdp-classic"]["epsilon"] == rdp_epsilon(0.01, 1.0, 100, 1e-5)[0]
    assert epsilon(0.01, 1.0, 100, 1e-5, "rdp", orders="integer")["rdp"]["order"] % 1 == 0


@settings(max_examples=15, deadline=None)
@given(st.floats(1e-3, 0.2), st.floats(0.6, 5), st.floats(10, 5000), st.sampled_from(["rdp", "rdp-classic", "clt"]))
def test_sigma_eps_sigma_round_trip(q, sigma, steps, accountant):
    eps = epsilon(q, sigma, steps, 1e-5, accountant)[accountant]["epsilon"]
    if 0.05 < eps < 100:
        found = noise_multiplier(eps, q, steps, 1e-5, accountant=accountant, tol=1e-7)
        assert found == pytest.approx(sigma, rel=1e-5)
        assert epsilon(q, found, steps, 1e-5, accountant)[accountant]["epsilon"] <= eps


@pytest.mark.parametrize("accountant", ["rdp", "rdp-classic", "clt"])
def test_max_steps_is_the_last_step_within_budget(accountant):
    t = max_steps(2.0, 0.01, 1.0, 1e-5, accountant=accountant)
    eps = lambda n: epsilon(0.01, 1.0, n, 1e-5, accountant)[accountant]["epsilon"]  # noqa: E731
    assert t > 0 and eps(t) <= 2.0 < eps(t + 1)


@pytest.mark.slow
def test_prv_calibration():
    sigma = noise_multiplier(2.0, 0.01, 200, 1e-5, accountant="prv", tol=1e-2)
    assert prv_epsilon(0.01, sigma, 200, 1e-5).upper <= 2.0 < prv_epsilon(0.01, sigma / 1.03, 200, 1e-5).upper
    t = max_steps(1.0, 0.01, 1.0, 1e-5, accountant="prv")
    assert prv_epsilon(0.01, 1.0, t, 1e-5).upper <= 1.0 < prv_epsilon(0.01, 1.0, t + 1, 1e-5).upper


# --- invalid input ----------------------------------------------------------------------------

@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: mu_poisson(0, 1, 10), "q"), (lambda: mu_uniform(0.1, -1, 10), "sigma"),
        (lambda: mu_poisson(0.1, 1, 0), "steps"), (lambda: delta_from_mu(0, 1), "mu"),
        (lambda: delta_from_mu(1, -1), "eps"), (lambda: epsilon_from_mu(1, 1.0), "delta"),
        (lambda: mu_from_epsilon(-1, 1e-5), "eps"), (lambda: mu_from_epsilon(1, 0), "delta"),
        (lambda: gaussian_tradeoff(-1, ALPHA), "mu"), (lambda: gaussian_tradeoff(1, [1.5]), "alpha"),
        (lambda: epsdelta_tradeoff(-1, 0.1, ALPHA), "eps"), (lambda: epsdelta_tradeoff(1, 1.5, ALPHA), "delta"),
        (lambda: envelope_tradeoff([1, 2], [0.1], ALPHA), "eps and delta"),
        (lambda: composed_subsampled_gaussian_tradeoff(1.5, 1, 1, ALPHA), "q"),
        (lambda: composed_subsampled_gaussian_tradeoff(0.1, 1, 1, ALPHA, discretization=0), "discretization"),
        (lambda: min_error_sum([0, 1], [0.5]), "beta"), (lambda: min_error_sum([0, 1], [0.5, 2]), "beta"),
        (lambda: integer_steps(0), "steps"), (lambda: prv_epsilon(0.1, 0, 10, 1e-5), "sigma"),
        (lambda: prv_epsilon(0.1, 1, 10, 0), "delta"),
        (lambda: prv_epsilon(0.1, 1, 10, 1e-5, eps_error=0), "eps_error"),
        (lambda: epsilon(0.1, 1, 10, 1e-5, "moments"), "accountant"), (lambda: epsilon(0.1, 1, -1, 1e-5), "steps"),
        (lambda: epsilon(0.1, 1, 10, 1e-5, orders=[1.0]), "orders"),
        (lambda: noise_multiplier(0, 0.1, 10, 1e-5), "target_epsilon"),
        (lambda: noise_multiplier(1, 0.1, 10, 1e-5, accountant="all"), "accountant"),
        (lambda: noise_multiplier(1, 0.1, 10, 1e-5, tol=0), "tol"), (lambda: noise_multiplier(1, 2, 10, 1e-5), "q"),
        (lambda: max_steps(1, 0.1, 0, 1e-5), "sigma"), (lambda: max_steps(1, 0.1, 1, 2), "delta"),
        (lambda: max_steps(-1, 0.1, 1, 1e-5), "target_epsilon"),
    ],
)
def test_invalid_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.parametrize("accountant", ["rdp", "clt", "rdp-classic"])
def test_noise_multiplier_on_a_digit_grid_is_the_smallest_grid_value_meeting_the_budget(accountant):
    from dpnotes.accounting import epsilon, noise_multiplier

    q, steps, delta = 0.01, 5000, 1e-5
    root = noise_multiplier(2.0, q, steps, delta, accountant=accountant)
    grid = noise_multiplier(2.0, q, steps, delta, accountant=accountant, digits=3)
    step = 10.0 ** (math.floor(math.log10(grid)) - 2)
    assert root <= grid < root + step and float(f"{grid:.3g}") == grid
    eps = lambda s: epsilon(q, s, steps, delta, accountant)[accountant]["epsilon"]  # noqa: E731
    assert eps(grid) <= 2.0 < eps(round(grid - step, 6))


def test_noise_multiplier_digits_must_be_a_positive_integer():
    from dpnotes.accounting import noise_multiplier

    with pytest.raises(ValueError, match="digits"):
        noise_multiplier(2.0, 0.01, 5000, 1e-5, digits=0)


def test_pure_accountant_refuses_gaussian_mechanisms():
    from dpnotes.accounting import UnsupportedEventError, accountant

    with pytest.raises(UnsupportedEventError, match="pure"):
        accountant("pure").price_mechanisms([(0.01, 1.0, 10)], 1e-5)
    assert not accountant("pure").prices_gaussians and accountant("pld").prices_gaussians


def test_calibrations_are_cached_by_their_checked_inputs():
    """``noise_multiplier`` answers a repeated calibration from its cache, with the very value it
    computed; equal inputs in other types (int, numpy, an order list) share an entry."""
    from dpnotes.accounting import calibrate

    calibrate._noise_multiplier.cache_clear()
    first = noise_multiplier(2, 0.01, 500, 1e-5, digits=3)
    assert calibrate._noise_multiplier.cache_info().misses == 1
    again = noise_multiplier(np.float64(2.0), 0.01, 500.0, 1e-5, digits=3)
    assert again == first and calibrate._noise_multiplier.cache_info().hits == 1
    assert calibrate._noise_multiplier.__wrapped__(2.0, 0.01, 500.0, 1e-5, "rdp", None, 1e-6, 3) == first
    other = noise_multiplier(2, 0.01, 500, 1e-6, digits=3)  # another delta: computed anew, larger
    assert other > first and calibrate._noise_multiplier.cache_info().misses == 2
    orders = [2.0, 4.0, 8.0, 16.0, 32.0]
    assert noise_multiplier(2, 0.01, 500, 1e-5, orders=orders) == noise_multiplier(2, 0.01, 500, 1e-5,
                                                                                    orders=np.array(orders))
    with pytest.raises(ValueError, match="orders must all be > 1"):
        noise_multiplier(2, 0.01, 500, 1e-5, orders=[1.0, 2.0])
