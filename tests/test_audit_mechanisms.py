"""Exact mechanism audits: randomized response and RRWithPrior leak exactly eps (0 when k* = 1),
and every sound accountant prices one Gaussian release at no less than its exact eps."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.audit import mechanisms as audit
from dpnotes.mechanisms import randomized_response_probabilities


@pytest.mark.parametrize("k", [2, 3, 10])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0])
def test_randomized_response_leaks_exactly_eps(k, eps):
    assert audit.max_log_ratio(randomized_response_probabilities(k, eps)) == pytest.approx(eps, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.001, 1.0), min_size=2, max_size=10), st.floats(0.05, 6.0))
def test_rr_with_prior_leaks_eps_or_nothing(weights, eps):
    prior = np.asarray(weights) / sum(weights)
    out = audit.label_randomizer_audit(prior, eps)
    expected = eps if out["k_star"] >= 2 else 0.0
    assert out["max_log_ratio"] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_confident_prior_gives_k_star_one():
    out = audit.label_randomizer_audit([0.97, 0.01, 0.01, 0.01], 0.5)
    assert out["k_star"] == 1 and out["max_log_ratio"] == 0.0


def test_max_log_ratio_sees_impossible_outputs():
    assert audit.max_log_ratio(np.array([[1.0, 0.0], [0.5, 0.5]])) == math.inf
    with pytest.raises(ValueError, match="rows are output distributions"):
        audit.max_log_ratio(np.array([[0.5, 0.2]]))


@pytest.mark.parametrize("sigma", [0.7, 1.0, 3.0])
def test_gaussian_accountants_never_below_exact(sigma):
    out = audit.gaussian_audit(sigma, 1e-5)
    assert out["rdp"] >= out["exact"] and out["pld"] >= out["exact"] - 1e-9
    assert out["pld"] == pytest.approx(out["exact"], abs=0.02)  # tight accountant: the exact profile
    assert audit.gaussian_delta(out["exact"], sigma) == pytest.approx(1e-5, rel=1e-6)
