"""Extreme inputs: every cheap accountant answers with a number (inf allowed), never an
overflow trace, over sigma 0.01..1e4, steps 1..1e9, q 1e-9..1, delta 1e-15..0.1."""

import itertools
import math

import pytest

from dpnotes.accounting import epsilon
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson

SIGMAS = (0.01, 0.03, 0.0377, 0.1, 1.0, 1e4)
GRID = list(itertools.product((1, 1e9), (1e-9, 1.0), (1e-15, 0.1)))


@pytest.mark.parametrize("name", ["rdp", "rdp-classic", "clt"])
@pytest.mark.parametrize("steps, q, delta", GRID)
def test_eps_is_a_number_and_falls_as_sigma_grows(name, steps, q, delta):
    eps = [epsilon(q, s, steps, delta, accountant=name)[name]["epsilon"] for s in SIGMAS]
    assert all(e >= 0 and not math.isnan(e) for e in eps)
    assert all(a >= b for a, b in zip(eps, eps[1:])), eps  # more noise never costs more


def test_clt_beyond_float_range_is_infinite_and_continuous_below_it():
    # exp(1/sigma^2) overflows below sigma ~ 0.0377: mu from its logarithm, equal to the direct
    # formula where both are defined, inf where mu itself overflows.
    s = (700.5) ** -0.5
    assert mu_poisson(0.5, s, 10) == pytest.approx(0.5 * math.sqrt(10 * math.expm1(700.5)), rel=1e-12)
    assert math.isinf(mu_poisson(1e-9, 0.01, 1))
    assert epsilon_from_mu(1e20, 1e-5) == pytest.approx(0.5e40, rel=1e-6)  # eps ~ mu^2 / 2
    assert math.isinf(epsilon_from_mu(2e154, 1e-5)) and math.isinf(epsilon_from_mu(math.inf, 1e-5))
