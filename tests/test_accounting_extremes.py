"""Extreme inputs: every cheap accountant answers with a number (inf allowed), never an
overflow trace, over sigma 0.01..1e4, steps 1..1e9, q 1e-9..1, delta 1e-15..0.1; the
numerical ones (pld, prv) answer within proven bounds or raise a named error
(:class:`GridTooLargeError`, :class:`NumericalAccountantError`) before allocating."""

import itertools
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpnotes.accounting import epsilon
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.grid import PLD_MAX_POINTS, GridTooLargeError, NumericalAccountantError, pld_grid_points
from dpnotes.cli import main

SIGMAS = (0.01, 0.03, 0.0377, 0.1, 1.0, 1e4)
GRID = list(itertools.product((1, 1e9), (1e-9, 1.0), (1e-15, 0.1)))


@pytest.mark.parametrize("name", ["rdp", "rdp-classic", "clt", "dpis", "sadpsgd-accepted-only"])
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


# --- pld and prv -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["pld", "prv"])
@pytest.mark.parametrize("sigma, q, delta", list(itertools.product((0.01, 1.0, 1e4), (1e-9, 1.0), (1e-15, 0.1))))
def test_numerical_accountants_refuse_1e9_steps_before_allocating(name, sigma, q, delta):
    # PRV would allocate up to 1e20 grid points here, PLD 1e16: a named error instead, at once.
    with pytest.raises(GridTooLargeError, match=re.escape(f"{name}: q {q:.3g}, sigma {sigma:.3g}, steps 1e+09")):
        epsilon(q, sigma, 1e9, delta, accountant=name)


@pytest.mark.parametrize("q", [1e-9, 1.0])
def test_pld_names_the_discretization_that_fits_tiny_sigma(q):
    advice = r"discretization >= 0\.00[0-9]+ \(`dpnotes epsilon --pld-discretization`\)"
    with pytest.raises(GridTooLargeError, match=advice):
        epsilon(q, 0.01, 1, 1e-5, accountant="pld")


@pytest.mark.slow
def test_prv_tiny_sigma_is_a_named_error():
    # The PRV library's own "Floating point errors will dominate" ValueError, re-raised naming the inputs.
    with pytest.raises(NumericalAccountantError, match=r"prv: the PRV accountant cannot price q 1, sigma 0\.01"):
        epsilon(1.0, 0.01, 1, 1e-15, accountant="prv")


def test_cli_refusal_is_one_line(capsys):
    argv = ["epsilon", "--sample-rate", "1", "--steps", "1e9", "--delta", "1e-5", "--noise-multiplier", "1"]
    for name in ("pld", "prv"):
        assert main([*argv, "--accountant", name]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{name}: q 1, sigma 1, steps 1e+09" in err


def _check_numerical(name, q, sigma, steps, delta):
    """eps from ``name`` within proven bounds, or a named refusal; returns eps or None."""
    try:
        out = epsilon(q, sigma, steps, delta, accountant=name, pld_discretization=1e-3)[name]
    except NumericalAccountantError as exc:
        assert str(exc).startswith(f"{name}: ")
        return None
    eps = out["upper"] if name == "prv" else out["epsilon"]
    assert eps >= 0 and not math.isnan(eps)
    if q == 1.0:  # exact: T Gaussian steps are sqrt(T)/sigma-GDP (Dong, Roth, Su 2022, Corollary 3.3)
        assert eps >= epsilon_from_mu(math.sqrt(math.ceil(steps)) / sigma, delta) - 1e-9
    rdp = epsilon(q, sigma, math.ceil(steps), delta, accountant="rdp")["rdp"]["epsilon"]
    if name == "prv":
        assert out["lower"] <= rdp + 1e-9 and (out["lower"] <= eps or eps == 0)
        assert eps <= rdp + 2 * 0.01  # upper - estimate <= eps_error, estimate ~ true eps <= rdp
    elif delta >= 1e-12:  # below, PLD's truncated tail (mass ~1e-15) can make its bound inf
        # Pessimistic rounding raises each step's loss by at most one grid step (1e-3).
        assert eps <= rdp + math.ceil(steps) * 1e-3 + 1e-9
    return eps


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.floats(0.3, 1e4), q=st.one_of(st.just(1.0), st.floats(1e-9, 1.0)),
       steps=st.integers(1, 1000), delta=st.floats(1e-15, 0.1))
def test_pld_within_proven_bounds(sigma, q, steps, delta):
    _check_numerical("pld", q, sigma, steps, delta)


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.floats(0.8, 1e4), q=st.one_of(st.just(1.0), st.floats(1e-9, 1.0)),
       steps=st.integers(1, 100), delta=st.floats(1e-12, 0.1))
def test_prv_within_proven_bounds(sigma, q, steps, delta):
    _check_numerical("prv", q, sigma, steps, delta)


def test_pld_grid_estimate_admits_the_papers_settings():
    # GDP Table 1's longest run at the default grid (1e-4, library and CLI) and a coarser one (1e-3).
    assert pld_grid_points([(256 / 60000, 0.5, 23438)], 1e-4) <= PLD_MAX_POINTS
    assert pld_grid_points([(256 / 60000, 0.5, 23438)], 1e-3) <= PLD_MAX_POINTS / 10
