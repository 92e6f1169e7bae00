"""The tuning charge (Papernot and Steinke, ICLR 2022): RepeatAndSelectDpEvent priced by the RDP
accountants as Theorems 2 and 6 say, checked against dp_accounting, against the theorems'
formulas evaluated term by term here, and against the exact Renyi divergence of the best-of-K
output of small discrete mechanisms; refused by every accountant that cannot price it."""

import json
import math

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as google_rdp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from dpnotes.accounting.rdp import ORDERS, resolve_orders
from dpnotes.accounting.registry import ACCOUNTANT_NAMES, RdpAccountant, UnsupportedEventError, accountant, price
from dpnotes.accounting.tuning import repeat_and_select_rdp, tnb_gamma, tnb_mean
from dpnotes.ledger import (
    GaussianDpEvent,
    Ledger,
    NonPrivateDpEvent,
    PoissonSampledDpEvent,
    RepeatAndSelectDpEvent,
    SelfComposedDpEvent,
)

DELTA = 1e-5
INF = float("inf")


def trial(q=256 / 60000, sigma=1.1, steps=3516):
    return SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)


def eps(event, name="rdp"):
    return price(event, DELTA, name)[name]["epsilon"]


# --- against dp_accounting ---------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(q=st.floats(1e-3, 0.2), sigma=st.floats(0.6, 5), steps=st.integers(1, 3000),
       mean=st.floats(1, 50), shape=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 5.0, INF]))
def test_curve_matches_dp_accounting_given_the_same_trial_curve(q, sigma, steps, mean, shape):
    a = resolve_orders("opacus")
    base = accountant("rdp").curve(trial(q, sigma, steps))
    ours = repeat_and_select_rdp(a, base, mean, shape)
    theirs = google_rdp._compute_rdp_repeat_and_select(a, base, mean, shape)
    # gamma -> 1 as mean -> 1: the two E[K] formulas differ by ~1e-8 in log(1/gamma) there
    np.testing.assert_allclose(ours, theirs, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize(("mean", "shape"), [(1, 1.0), (5, 1.0), (10, 0.0), (10, 0.5), (3, INF), (20, 2.0)])
def test_epsilon_matches_dp_accounting_rdp_accountant(mean, shape):
    event = RepeatAndSelectDpEvent(trial(), mean, shape)
    google = google_rdp.RdpAccountant(orders=list(ORDERS["opacus"]))
    google.compose(event)
    # the two libraries' subsampled-Gaussian curves differ in the last digits (tests/test_accounting_rdp.py)
    assert eps(event) == pytest.approx(google.get_epsilon(DELTA), rel=1e-3)


# --- the theorems' formulas, term by term ----------------------------------------------------

def tnb_pmf(gamma, eta, kmax=3000):
    """Definition 1: P[K = k] of the truncated negative binomial D_{eta, gamma}, k = 1..kmax."""
    if eta == 0:
        return [(1 - gamma) ** k / (k * math.log(1 / gamma)) for k in range(1, kmax + 1)]
    out, prod = [], 1.0
    for k in range(1, kmax + 1):
        prod *= (k - 1 + eta) / k  # prod_{l < k} (l + eta) / (l + 1)
        out.append((1 - gamma) ** k / (gamma ** -eta - 1) * prod)
    return out


def tnb_sum_mean(gamma, eta):
    pmf = tnb_pmf(gamma, eta)
    return math.fsum(pmf), math.fsum(k * p for k, p in enumerate(pmf, 1))


@pytest.mark.parametrize(("eta", "mean"), [(0.0, 3.0), (0.5, 5.0), (1.0, 10.0), (2.0, 4.0)])
def test_truncated_negative_binomial_mean_and_gamma(eta, mean):
    gamma = brentq(lambda g: tnb_sum_mean(g, eta)[1] - mean, 1e-2, 1 - 1e-9, xtol=1e-14)
    assert tnb_sum_mean(gamma, eta)[0] == pytest.approx(1, abs=1e-9)
    assert tnb_mean(gamma, eta) == pytest.approx(mean, rel=1e-9)
    assert tnb_gamma(eta, mean) == pytest.approx(gamma, rel=1e-7)
    assert tnb_mean(tnb_gamma(eta, mean), eta) >= mean * (1 - 1e-12)  # the conservative side


def theorem_2(orders, rdp, mean, eta):
    gamma = tnb_gamma(eta, mean)
    bounds = []
    for lam, e in zip(orders, rdp):
        best = min(e + (1 + eta) * (1 - 1 / lh) * eh + (1 + eta) * math.log(1 / gamma) / lh
                   + math.log(mean) / (lam - 1) for lh, eh in zip(orders, rdp))
        bounds.append(best)
    return [min(b for lam2, b in zip(orders, bounds) if lam2 >= lam) for lam in orders]  # monotone in the order


def theorem_6(orders, rdp, mean):
    out = []
    for lam, e in zip(orders, rdp):
        eps_hat = math.log(1 + 1 / (lam - 1))
        delta_hat = math.exp(min(0.0, min((a - 1) * (r - eps_hat + math.log(1 - 1 / a)) - math.log(a)
                                          for a, r in zip(orders, rdp))))  # Canonne et al. 2020, Prop. 12
        out.append(e + mean * delta_hat + math.log(mean) / (lam - 1))
    return out


@pytest.mark.parametrize(("mean", "shape"), [(2.0, 0.0), (8.0, 0.5), (10.0, 1.0), (4.0, 3.0), (3.0, INF), (12.0, INF)])
def test_curve_is_the_theorem_term_by_term(mean, shape):
    a = [1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 16.0, 32.0, 64.0]
    rdp = RdpAccountant("test", "", "upper bound", True, orders=tuple(a)).curve(trial())
    expected = theorem_6(a, rdp, mean) if math.isinf(shape) else theorem_2(a, rdp, mean, shape)
    np.testing.assert_allclose(repeat_and_select_rdp(a, rdp, mean, shape), expected, rtol=1e-9)


# --- soundness: exact Renyi divergence of the best of K ----------------------------------------

def pgf(z, mean, shape, gamma):
    """E[z^K] (Poisson: K = 0 has mass e^-mean and releases nothing)."""
    if math.isinf(shape):
        return math.exp(mean * (z - 1))
    if shape == 0:
        return math.log(1 - (1 - gamma) * z) / math.log(gamma)
    return ((1 - (1 - gamma) * z) ** -shape - 1) / (gamma ** -shape - 1)


def best_of_k(p, mean, shape, gamma):
    """The output law of A: nothing (K = 0), or the best (highest index) of K draws from p."""
    cdf = np.concatenate([[0.0], np.cumsum(p)])
    cdf[-1] = 1.0
    g = [pgf(c, mean, shape, gamma) for c in cdf]
    return np.array([g[0]] + [g[j + 1] - g[j] for j in range(len(p))])


def renyi(p, q, lam):
    keep = p > 0
    with np.errstate(divide="ignore"):
        terms = lam * np.log(p[keep]) + (1 - lam) * np.log(q[keep])  # in logs: tiny masses at order 32
    return max(0.0, float(np.logaddexp.reduce(terms)) / (lam - 1))  # >= 0 up to rounding


ORDERS_SMALL = (1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0)
probs = st.lists(st.floats(0.05, 1.0), min_size=2, max_size=6)


@settings(max_examples=80, deadline=None)
@given(p=probs, tilt=st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       mean=st.floats(1, 30), shape=st.sampled_from([0.0, 0.5, 1.0, 3.0, INF]))
def test_bound_holds_for_the_exact_divergence_of_small_mechanisms(p, tilt, mean, shape):
    p = np.array(p) / sum(p)
    q = p * np.exp(np.array(tilt[:len(p)]))
    q = q / q.sum()  # a neighbouring output law: bounded likelihood ratio
    rdp = [max(renyi(p, q, lam), renyi(q, p, lam)) for lam in ORDERS_SMALL]
    bound = repeat_and_select_rdp(ORDERS_SMALL, rdp, mean, shape)
    gamma = None if math.isinf(shape) else tnb_gamma(shape, mean)
    a_p, a_q = best_of_k(p, mean, shape, gamma), best_of_k(q, mean, shape, gamma)
    for lam, b in zip(ORDERS_SMALL, bound):
        assert max(renyi(a_p, a_q, lam), renyi(a_q, a_p, lam)) <= b + 1e-9


# --- monotonicity ---------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(m1=st.floats(1, 40), m2=st.floats(1, 40), shape=st.sampled_from([0.0, 0.5, 1.0, 2.0, INF]),
       sigma=st.floats(0.7, 4))
def test_more_trials_cost_more(m1, m2, shape, sigma):
    lo, hi = sorted((m1, m2))
    single = eps(trial(sigma=sigma))
    assert single <= eps(RepeatAndSelectDpEvent(trial(sigma=sigma), lo, shape)) + 1e-12
    assert eps(RepeatAndSelectDpEvent(trial(sigma=sigma), lo, shape)) <= \
        eps(RepeatAndSelectDpEvent(trial(sigma=sigma), hi, shape)) + 1e-9


@settings(max_examples=40, deadline=None)
@given(s1=st.floats(0.7, 4), s2=st.floats(0.7, 4), mean=st.floats(1, 20),
       shape=st.sampled_from([0.0, 1.0, INF]), count=st.integers(1, 3))
def test_a_noisier_trial_costs_less_and_repeated_tunings_add(s1, s2, mean, shape, count):
    lo, hi = sorted((s1, s2))
    assert eps(RepeatAndSelectDpEvent(trial(sigma=hi), mean, shape)) <= \
        eps(RepeatAndSelectDpEvent(trial(sigma=lo), mean, shape)) + 1e-9
    one = RepeatAndSelectDpEvent(trial(sigma=lo), mean, shape)
    assert eps(Ledger().append(one, count)) >= eps(one) - 1e-12


# --- the ledger, JSON, refusals ----------------------------------------------------------------

def test_a_tuned_ledger_round_trips_and_prices_under_every_rdp_accountant_only():
    ledger = Ledger().append(RepeatAndSelectDpEvent(trial(), 10.0, 1.0))
    again = Ledger.from_json(json.loads(json.dumps(ledger.to_json())))
    assert again == ledger
    rdp_names = [n for n in ACCOUNTANT_NAMES if isinstance(accountant(n), RdpAccountant)]
    assert set(rdp_names) == {"rdp", "rdp-classic", "dpis", "sadpsgd-accepted-only"}
    for name in rdp_names:
        assert eps(again, name) > eps(trial(), name)
    for name in set(ACCOUNTANT_NAMES) - set(rdp_names):
        assert not accountant(name).supports(ledger)


def test_pld_refuses_the_tuning_event_in_one_line():
    ledger = Ledger().append(trial()).append(RepeatAndSelectDpEvent(trial(), 5.0, 0.5))
    with pytest.raises(UnsupportedEventError) as err:
        price(ledger, DELTA, "pld")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("accountant 'pld' cannot price RepeatAndSelectDpEvent")
    assert "Papernot and Steinke" in message and "'rdp'" in message


def test_non_private_trial_and_bad_distributions():
    assert eps(RepeatAndSelectDpEvent(NonPrivateDpEvent(), 3.0, 1.0)) == math.inf
    for mean, shape, name in ((0.5, 1.0, "mean"), (3.0, -1.0, "shape"), (math.nan, 1.0, "mean")):
        with pytest.raises(ValueError, match=name) as err:
            eps(RepeatAndSelectDpEvent(trial(), mean, shape))
        assert "\n" not in str(err.value)
