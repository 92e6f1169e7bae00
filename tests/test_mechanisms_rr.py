"""Randomized response, RRTop-k and RRWithPrior (LabelDP, Ghazi et al. 2021), and the Theorem 3 LP.

Statistical tests compare empirical output frequencies with the exact tables by a
chi-square test per true label; with Bonferroni over the rows, the family-wise
false-alarm rate of each test is at most ALPHA = 1e-4 (seeds are fixed).
"""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from dpnotes import claims
from dpnotes.mechanisms import (
    optimal_k,
    optimal_randomizer,
    randomized_response,
    randomized_response_probabilities,
    rr_top_k,
    rr_top_k_probabilities,
    rr_with_prior,
    rr_with_prior_probabilities,
)

ALPHA = 1e-4


def claim(claim_id):
    try:
        return claims.get(claim_id)
    except KeyError:
        pytest.skip(f"claim {claim_id} not registered yet")


def random_prior(rng, k, concentration=0.5):
    return rng.dirichlet(np.full(k, concentration))


priors_st = st.integers(2, 8).flatmap(
    lambda k: st.lists(st.floats(0.0, 1.0), min_size=k, max_size=k).filter(lambda v: sum(v) > 1e-3)
).map(lambda v: np.array(v) / sum(v))
eps_st = st.floats(0.0, 6.0)


def max_log_ratio(table):
    """max over outputs o and inputs y, y' of log P[y, o] / P[y', o] (inf if P[y', o] = 0 < P[y, o])."""
    with np.errstate(divide="ignore"):
        logs = np.log(table)
    reachable = np.isfinite(logs.max(axis=0))
    logs = logs[:, reachable]
    return float((logs.max(axis=0) - logs.min(axis=0)).max())


def assert_matches_table(labels, outputs, tables):
    """Chi-square per group (one row per true label of one table); zero-probability outputs never occur."""
    groups = [(t, y) for t in range(len(tables)) for y in range(tables[t].shape[0])]
    for t, y in groups:
        sel = (labels[1] == t) & (labels[0] == y)
        obs = np.bincount(outputs[sel], minlength=tables[t].shape[1])
        exp_p = tables[t][y]
        assert obs[exp_p == 0].sum() == 0, f"impossible output drawn for table {t}, label {y}"
        nz = exp_p > 0
        if nz.sum() > 1:
            pvalue = chisquare(obs[nz], obs.sum() * exp_p[nz] / exp_p[nz].sum()).pvalue
            assert pvalue > ALPHA / len(groups), (t, y, obs, exp_p)


# --- randomized response -------------------------------------------------------------------------

@pytest.mark.parametrize("k, eps", [(2, 0.5), (10, 1.0), (10, 8.0), (100, 2.0)])
def test_rr_table_has_the_paper_keep_probability(k, eps):
    table = randomized_response_probabilities(k, eps)
    keep = math.exp(eps) / (math.exp(eps) + k - 1)
    np.testing.assert_allclose(np.diag(table), keep)
    np.testing.assert_allclose(table[~np.eye(k, dtype=bool)], (1 - keep) / (k - 1))
    np.testing.assert_allclose(table.sum(axis=1), 1)
    assert max_log_ratio(table) == pytest.approx(eps)


def test_rr_huge_epsilon_keeps_the_label():
    labels = torch.arange(5)
    out = randomized_response(labels, 5, 1000.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(out, labels)


@pytest.mark.statistical
def test_rr_frequencies_match_table():
    k, eps, n = 5, 1.0, 100_000
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(0, k, (n,), generator=g)
    out = randomized_response(labels, k, eps, generator=g)
    assert_matches_table((labels.numpy(), np.zeros(n, int)), out.numpy(), [randomized_response_probabilities(k, eps)])


def test_rr_same_seed_same_output():
    labels = torch.randint(0, 10, (1000,), generator=torch.Generator().manual_seed(0))
    a = randomized_response(labels, 10, 1.0, generator=torch.Generator().manual_seed(3))
    b = randomized_response(labels, 10, 1.0, generator=torch.Generator().manual_seed(3))
    assert torch.equal(a, b)


@pytest.mark.parametrize("kwargs, name", [
    (dict(num_classes=1, epsilon=1.0), "num_classes"),
    (dict(num_classes=3, epsilon=-0.1), "epsilon"),
    (dict(num_classes=3, epsilon=float("nan")), "epsilon"),
    (dict(num_classes=2, epsilon=1.0), "labels"),  # label 2 out of range
])
def test_rr_invalid_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        randomized_response(torch.tensor([0, 2]), **kwargs)
    if name != "labels":
        with pytest.raises(ValueError, match=name):
            randomized_response_probabilities(**kwargs)


def test_rr_rejects_float_labels():
    with pytest.raises(ValueError, match="labels"):
        randomized_response(torch.tensor([0.0, 1.0]), 2, 1.0)


# --- RRTop-k -------------------------------------------------------------------------------------

def test_rr_top_k_table_follows_algorithm_1():
    prior = np.array([0.1, 0.4, 0.2, 0.3])  # top-2 = {1, 3}
    eps = 1.5
    table = rr_top_k_probabilities(prior, 2, eps)
    keep = math.exp(eps) / (math.exp(eps) + 1)
    expected = np.zeros((4, 4))
    expected[1, 1] = expected[3, 3] = keep
    expected[1, 3] = expected[3, 1] = 1 - keep
    expected[0, [1, 3]] = expected[2, [1, 3]] = 0.5
    np.testing.assert_allclose(table, expected)


def test_rr_top_k_ties_break_to_smaller_index():
    table = rr_top_k_probabilities(np.array([0.25, 0.25, 0.25, 0.25]), 1, 2.0)
    np.testing.assert_allclose(table[:, 0], 1.0)


@settings(max_examples=60, deadline=None)
@given(prior=priors_st, eps=eps_st, data=st.data())
def test_rr_top_k_is_eps_dp(prior, eps, data):
    claim("labeldp.lemma1.rrtopk_dp")
    k = data.draw(st.integers(1, prior.size))
    table = rr_top_k_probabilities(prior, k, eps)
    np.testing.assert_allclose(table.sum(axis=1), 1)
    assert max_log_ratio(table) <= eps + 1e-9


def test_rr_top_k_k_equals_K_is_plain_rr():
    np.testing.assert_allclose(
        rr_top_k_probabilities(np.array([0.7, 0.2, 0.1]), 3, 1.3), randomized_response_probabilities(3, 1.3)
    )


@pytest.mark.parametrize("k", [0, 5, 2.0])
def test_rr_top_k_invalid_k(k):
    with pytest.raises(ValueError, match="k"):
        rr_top_k_probabilities(np.array([0.5, 0.3, 0.1, 0.1]), k, 1.0)
    with pytest.raises(ValueError, match="k"):
        rr_top_k(torch.tensor([0]), torch.tensor([[0.5, 0.3, 0.1, 0.1]]), k, 1.0)


# --- RRWithPrior ---------------------------------------------------------------------------------

def test_optimal_k_matches_direct_argmax():
    rng = np.random.default_rng(0)
    priors = np.stack([random_prior(rng, 6) for _ in range(200)])
    for eps in (0.3, 1.0, 4.0):
        ks = optimal_k(torch.tensor(priors), eps).numpy()
        for p, k in zip(priors, ks):
            w = [np.sort(p)[::-1][:j].sum() * math.exp(eps) / (math.exp(eps) + j - 1) for j in range(1, 7)]
            assert w[k - 1] == pytest.approx(max(w), rel=1e-12)


def test_uniform_prior_recovers_rr():
    """Section 1: with a uniform prior RRWithPrior is classical RR (k* = K)."""
    claim("labeldp.sec4.lp1st_is_rr")
    prior = np.full(10, 0.1)
    for eps in (0.1, 1.0, 5.0):
        np.testing.assert_allclose(rr_with_prior_probabilities(prior, eps), randomized_response_probabilities(10, eps))


def test_zero_epsilon_outputs_the_top_label():
    table = rr_with_prior_probabilities(np.array([0.2, 0.5, 0.3]), 0.0)
    np.testing.assert_allclose(table[:, 1], 1.0)


@settings(max_examples=60, deadline=None)
@given(prior=priors_st, eps=eps_st)
def test_rr_with_prior_is_eps_dp(prior, eps):
    claim("labeldp.cor2.rrwithprior_dp")
    assert max_log_ratio(rr_with_prior_probabilities(prior, eps)) <= eps + 1e-9


@pytest.mark.statistical
def test_rr_with_prior_batch_with_own_priors_matches_tables():
    """Each example has its own prior (three distinct ones, interleaved); eps = 1."""
    rng = np.random.default_rng(2)
    priors = np.stack([random_prior(rng, 5, 0.3) for _ in range(3)])
    eps, n = 1.0, 120_000
    g = torch.Generator().manual_seed(2)
    which = torch.randint(0, 3, (n,), generator=g)
    labels = torch.randint(0, 5, (n,), generator=g)
    out = rr_with_prior(labels, torch.tensor(priors)[which], eps, generator=g)
    tables = [rr_with_prior_probabilities(p, eps) for p in priors]
    assert_matches_table((labels.numpy(), which.numpy()), out.numpy(), tables)


def test_rr_with_prior_value_is_max_w_k():
    prior = np.array([0.5, 0.3, 0.1, 0.1])
    eps = 1.0
    value = prior @ np.diag(rr_with_prior_probabilities(prior, eps))
    w = [np.sort(prior)[::-1][:k].sum() / (1 + (k - 1) * math.exp(-eps)) for k in range(1, 5)]
    assert value == pytest.approx(max(w))


@pytest.mark.parametrize("bad, match", [
    (np.array([0.5, 0.6]), "sum to 1"),
    (np.array([1.2, -0.2]), ">= 0"),
    (np.array([1.0]), "K >= 2"),
    (np.array([0.5, np.nan]), "finite"),
    (np.array([1, 0]), "float"),
])
def test_rr_with_prior_rejects_bad_priors(bad, match):
    with pytest.raises(ValueError, match=match):
        rr_with_prior_probabilities(bad, 1.0)
    with pytest.raises(ValueError, match=match):
        rr_with_prior(torch.tensor([0]), torch.as_tensor(bad)[None], 1.0)


def test_rr_with_prior_rejects_bad_epsilon_and_shapes():
    prior = torch.tensor([[0.5, 0.5]])
    with pytest.raises(ValueError, match="epsilon"):
        rr_with_prior(torch.tensor([0]), prior, -1.0)
    with pytest.raises(ValueError, match="epsilon"):
        rr_with_prior_probabilities(prior[0], -1.0)
    with pytest.raises(ValueError, match="one row per example"):
        rr_with_prior(torch.tensor([0, 1]), prior, 1.0)
    with pytest.raises(ValueError, match="labels"):
        rr_with_prior(torch.tensor([2]), prior, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        optimal_k(prior, -0.5)


# --- Theorem 3: RRWithPrior is optimal among eps-DP randomizers ----------------------------------

def test_lp_uniform_prior_optimum_is_rr_accuracy():
    """An independent check of the LP: for a uniform prior the optimum is RR's e^eps/(e^eps+K-1)."""
    for k, eps in [(2, 0.5), (5, 1.0), (10, 2.0)]:
        value, m = optimal_randomizer(np.full(k, 1 / k), eps)
        assert value == pytest.approx(math.exp(eps) / (math.exp(eps) + k - 1), abs=1e-8)
        np.testing.assert_allclose(m.sum(axis=1), 1, atol=1e-8)
        assert max_log_ratio(np.clip(m, 1e-300, None)) <= eps + 1e-6


def test_rr_with_prior_attains_the_lp_optimum_on_random_priors():
    """Theorem 3 on 50 seeded random priors (K in 2..10, eps in [0, 5])."""
    claim("labeldp.thm3.rrwithprior_optimal")
    rng = np.random.default_rng(3)
    for _ in range(50):
        k = int(rng.integers(2, 11))
        prior = random_prior(rng, k, float(rng.choice([0.2, 1.0, 5.0])))
        eps = float(rng.uniform(0, 5))
        value = prior @ np.diag(rr_with_prior_probabilities(prior, eps))
        lp_value, _ = optimal_randomizer(prior, eps)
        assert value == pytest.approx(lp_value, abs=1e-7), (prior, eps)


def test_fixed_k_below_optimum_can_be_strictly_worse():
    """The LP bound is not vacuous: RRTop-1 and RR (k = K) fall short of it for this prior."""
    prior, eps = np.array([0.4, 0.35, 0.15, 0.1]), 1.0
    lp_value, _ = optimal_randomizer(prior, eps)
    for k in (1, 4):
        assert prior @ np.diag(rr_top_k_probabilities(prior, k, eps)) < lp_value - 1e-3


def test_lp_invalid_input():
    with pytest.raises(ValueError, match="epsilon"):
        optimal_randomizer(np.array([0.5, 0.5]), -1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        optimal_randomizer(np.array([0.5, 0.4]), 1.0)
    with pytest.raises(ValueError, match=r"shape \(K,\)"):
        optimal_randomizer(np.full((2, 2), 0.5), 1.0)
