"""DPIS accountant (Wei et al. 2022, Lemma 3.1 and Section 4): Eq. (13), release costs, the a_E schedule."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq
from scipy.special import comb, logsumexp

from dpnotes import claims
from dpnotes.accounting.dpis import DPISAccountant, clamp_norm_sum, iteration_rdp
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp

ORDERS = resolve_orders("integer")
DELTA = 1e-5


def claim(claim_id):
    try:
        return claims.get(claim_id)
    except KeyError:
        pytest.skip(f"claim {claim_id} not registered yet")


def eq13(b, c, k_tilde, n_tilde, sigma_g, alpha):
    """Eq. (13) exactly as printed, evaluated independently (log-sum-exp over m = 0..alpha)."""
    q = b * c / k_tilde
    m = np.arange(alpha + 1)
    terms = (np.log(comb(alpha, m)) + (alpha - m) * math.log1p(-q) + m * math.log(q)
             + (m * m - m) * k_tilde**2 / (2 * n_tilde**2 * sigma_g**2 * c**2))
    return logsumexp(terms) / (alpha - 1)


def small_run(**kw):
    base = dict(batch_size=100, n_tilde=5000.0, steps_per_epoch=10, epochs=4, sigma_n=100.0, sigma_k=100.0)
    base.update(kw)
    return DPISAccountant(**base)


# --- one iteration (Lemma 3.1) -------------------------------------------------------------------

@pytest.mark.parametrize("b, c, k_tilde, n_tilde, sigma_g", [
    (1024, 0.1, 3000.0, 60000.0, 1.35), (256, 1.0, 30000.0, 60000.0, 0.9), (64, 4.0, 1000.0, 2000.0, 2.0),
])
def test_iteration_rdp_is_equation_13(b, c, k_tilde, n_tilde, sigma_g):
    ours = iteration_rdp(k_tilde / (n_tilde * c), sigma_g, b, n_tilde, ORDERS)
    expected = [eq13(b, c, k_tilde, n_tilde, sigma_g, int(a)) for a in ORDERS]
    np.testing.assert_allclose(ours, expected, rtol=1e-8)


def test_uniform_case_is_the_dpsgd_step():
    """Lemma 3.1: with K~ = N~ C, tau_DPIS = tau_DP-SGD (Eq. 6) at rate b / N~."""
    claim("dpis.sec3_3.sigma_dpis_le_dpsgd")
    np.testing.assert_allclose(iteration_rdp(1.0, 1.1, 256, 60000.0, ORDERS),
                               subsampled_gaussian_rdp(256 / 60000, 1.1, 1, ORDERS), rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(r1=st.floats(0.05, 1.0), r2=st.floats(0.05, 1.0), s1=st.floats(0.5, 5.0), s2=st.floats(0.5, 5.0))
def test_iteration_rdp_grows_with_ratio_and_falls_with_sigma(r1, r2, s1, s2):
    (r_lo, r_hi), (s_lo, s_hi) = sorted((r1, r2)), sorted((s1, s2))
    b, n = 100, 5000.0
    assert (iteration_rdp(r_lo, s_hi, b, n) <= iteration_rdp(r_hi, s_hi, b, n) * (1 + 1e-12)).all()
    assert (iteration_rdp(r_lo, s_hi, b, n) <= iteration_rdp(r_lo, s_lo, b, n) * (1 + 1e-12)).all()


def test_iteration_rdp_invalid_input():
    with pytest.raises(ValueError, match="ratio"):
        iteration_rdp(0.01, 1.0, 100, 5000.0)  # ratio <= b / N~: sampling probability >= 1
    with pytest.raises(ValueError, match="ratio"):
        iteration_rdp(1.5, 1.0, 100, 5000.0)
    with pytest.raises(ValueError, match="sigma_g"):
        iteration_rdp(0.5, 0.0, 100, 5000.0)
    with pytest.raises(ValueError, match="batch_size"):
        iteration_rdp(0.5, 1.0, -1, 5000.0)


# --- Eq. (12) ------------------------------------------------------------------------------------

def test_clamp_norm_sum_is_equation_12():
    assert clamp_norm_sum(-50.0, 1000.0, 100, 0.5, 0.01) == pytest.approx(50.01)
    assert clamp_norm_sum(10_000.0, 1000.0, 100, 0.5, 0.01) == 500.0
    assert clamp_norm_sum(321.0, 1000.0, 100, 0.5, 0.01) == 321.0


@pytest.mark.parametrize("args, name", [
    ((float("nan"), 1000.0, 100, 0.5, 0.01), "k_noisy"), (("3", 1000.0, 100, 0.5, 0.01), "k_noisy"),
    ((1.0, 1000.0, 100, 0.0, 0.01), "clip"), ((1.0, 1000.0, 100, 0.5, 0.0), "xi"),
    ((1.0, 50.0, 100, 0.5, 0.01), "batch_size"),
])
def test_clamp_norm_sum_invalid_input(args, name):
    with pytest.raises(ValueError, match=name):
        clamp_norm_sum(*args)


# --- releases of N~ and K~, composition ----------------------------------------------------------

def test_fixed_costs():
    run = small_run()
    p_k = 100 / 5000.0
    n_cost = ORDERS / (2 * 100.0**2)  # Gaussian mechanism, sensitivity 1 (Eq. 18)
    k_cost = subsampled_gaussian_rdp(p_k, 100.0 * p_k, 4, ORDERS)  # Eq. (11): sensitivity C / p_K
    np.testing.assert_allclose(run.fixed_rdp(), n_cost + k_cost, rtol=1e-9)
    adaptive = small_run(adaptive_clipping=True)
    np.testing.assert_allclose(adaptive.fixed_rdp(), n_cost + k_cost + 4 * ORDERS / (2 * 100.0**2), rtol=1e-9)


def test_total_rdp_composes_epochs():
    run = small_run()
    ratios, sigmas = [1.0, 0.5, 0.4, 0.3], [1.2, 1.0, 0.9, 0.9]
    expected = run.fixed_rdp() + sum(10 * iteration_rdp(r, s, 100, 5000.0) for r, s in zip(ratios, sigmas))
    np.testing.assert_allclose(run.rdp(ratios, sigmas), expected)


def test_cost_grows_with_iterations_and_falls_with_sigma():
    eps = [small_run(epochs=e).epsilon([0.5] * e, [1.0] * e, DELTA)[0] for e in (1, 2, 4, 8)]
    assert eps == sorted(eps) and eps[0] < eps[-1]
    eps_sigma = [small_run().epsilon([0.5] * 4, [s] * 4, DELTA)[0] for s in (0.7, 1.0, 2.0)]
    assert eps_sigma == sorted(eps_sigma, reverse=True) and eps_sigma[0] > eps_sigma[-1]


def test_importance_sampling_never_costs_more_than_dpsgd():
    run = small_run()
    assert run.epsilon([0.3] * 4, [1.0] * 4, DELTA)[0] < run.epsilon([1.0] * 4, [1.0] * 4, DELTA)[0]


# --- budget allocation (Section 4.2) --------------------------------------------------------------

def dpsgd_sigma(run, epsilon):
    """Constant sigma for which fixed costs + E T DP-SGD steps at rate b / N~ spend exactly epsilon."""
    steps = run.epochs * run.steps_per_epoch
    f = lambda s: rdp_to_epsilon(run.fixed_rdp() + subsampled_gaussian_rdp(
        run.batch_size / run.n_tilde, s, steps, ORDERS), ORDERS, DELTA, "improved")[0] - epsilon
    return brentq(f, 0.3, 20, xtol=1e-12)


@pytest.mark.parametrize("a_e", [0.0, 0.5, 1.0])
def test_worst_case_ratios_give_the_dpsgd_sigma(a_e):
    run = small_run()
    sigmas = run.noise_schedule([1.0] * 4, 3.0, DELTA, a_e)
    np.testing.assert_allclose(sigmas, dpsgd_sigma(run, 3.0), rtol=1e-6)


def test_schedule_spends_the_budget_and_no_more():
    run = small_run()
    ratios = [0.6, 0.5, 0.4, 0.4]
    for a_e in (0.0, 0.5, 1.0):
        eps, _ = run.epsilon(ratios, run.noise_schedule(ratios, 2.0, DELTA, a_e), DELTA)
        assert eps <= 2.0 and eps == pytest.approx(2.0, rel=1e-6)


def test_phase_one_decreases_gradually_and_phase_two_drops():
    """Figure 1 / Section 4.2: sigma_G falls below DP-SGD's and drops when phase 2 starts (a_E E = 2)."""
    claim("dpis.sec3_3.fig1.dpis_sigma_decreases")
    run = small_run()
    sigmas = run.noise_schedule([0.5] * 4, 2.0, DELTA, 0.5)
    assert sigmas[0] < dpsgd_sigma(run, 2.0)
    assert sigmas[1] < sigmas[0]  # phase 1: savings of earlier epochs lower sigma gradually
    assert sigmas[2] < sigmas[1] * 0.9  # phase 2 starts: remaining budget spread at the current K~
    assert sigmas[3] == pytest.approx(sigmas[2], rel=1e-6)


def test_allocation_stays_within_budget_when_ratios_rise():
    """Phase 2 projects the current K~; if later K~ is larger, sigma rises but eps stays within budget."""
    run = small_run()
    ratios = [0.3, 0.3, 0.9, 1.0]
    sigmas = run.noise_schedule(ratios, 2.0, DELTA, 0.0)
    assert sigmas[2] > sigmas[1]
    assert run.epsilon(ratios, sigmas, DELTA)[0] <= 2.0 + 1e-12


def test_sigma_is_the_smallest_feasible():
    run = small_run()
    spent = run.epoch_rdp(0.5, 1.0)
    sigma = run.sigma_for_epoch(2, 0.5, spent, 2.0, DELTA, 1.0)
    projected = lambda s: rdp_to_epsilon(run.fixed_rdp() + spent + run.epoch_rdp(0.5, s)
                                         + 2 * run.epoch_rdp(1.0, s), ORDERS, DELTA, "improved")[0]
    assert projected(sigma) <= 2.0 < projected(sigma * (1 - 1e-6))


def test_budget_used_up_by_releases_is_an_error():
    with pytest.raises(ValueError, match="epsilon"):
        small_run(sigma_n=0.01).noise_schedule([0.5] * 4, 1.0, DELTA, 0.5)


@pytest.mark.parametrize("kw, name", [
    (dict(batch_size=5000), "batch_size"), (dict(epochs=0), "epochs"), (dict(steps_per_epoch=2.5), "steps_per_epoch"),
    (dict(sigma_n=0.0), "sigma_n"), (dict(sigma_k=-1.0), "sigma_k"), (dict(adaptive_clipping=1), "adaptive_clipping"),
    (dict(orders=[0.5, 2.0]), "orders"),
])
def test_accountant_invalid_setting(kw, name):
    with pytest.raises(ValueError, match=name):
        small_run(**kw)


@pytest.mark.parametrize("call, name", [
    (lambda r: r.noise_schedule([0.5] * 3, 2.0, DELTA, 0.5), "ratios"),
    (lambda r: r.noise_schedule([0.5] * 4, 2.0, DELTA, 1.5), "a_e"),
    (lambda r: r.noise_schedule([0.5] * 4, -2.0, DELTA, 0.5), "epsilon"),
    (lambda r: r.noise_schedule([0.5] * 4, 2.0, 0.0, 0.5), "delta"),
    (lambda r: r.sigma_for_epoch(5, 0.5, np.zeros(63), 2.0, DELTA, 0.5), "epoch"),
    (lambda r: r.epsilon([0.5] * 4, [1.0] * 3, DELTA), "sigmas"),
])
def test_allocator_invalid_input(call, name):
    with pytest.raises(ValueError, match=name):
        call(small_run())
