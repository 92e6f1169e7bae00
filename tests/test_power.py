"""dpnotes.report.power: verdict probabilities of the equivalence rule, and the seeds a claim needs.

Checked against the rule applied literally to simulated seeds (numpy, scipy.stats.t.ppf), against
a dense piecewise Gauss-Legendre integral, by properties, on bad inputs and at sd == 0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.report import power
from dpnotes.report.power import Probabilities, seeds_needed, verdict_probabilities

DRAWS = 20_000
pytestmark = pytest.mark.filterwarnings("error::scipy.integrate.IntegrationWarning")  # quad must converge


def simulate(p, margin, mean, sd, n, sign=False, draws=DRAWS, seed=0):
    """(reproduced, not reproduced) fractions of ``draws`` sets of n Normal(mean, sd^2) seeds,
    by the rule written out literally."""
    from scipy import stats

    x = np.random.default_rng(seed).normal(mean, sd, size=(draws, n))
    m, s = x.mean(axis=1), x.std(axis=1, ddof=1)
    h = stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)
    lo, hi = m - h, m + h
    wrong_side = ((hi < 0) & (0 < p)) | ((lo > 0) & (0 > p)) if sign else np.zeros(draws, bool)
    reproduced = (p - margin <= lo) & (hi <= p + margin) & ~wrong_side
    not_reproduced = (hi < p - margin) | (lo > p + margin) | wrong_side
    return reproduced.mean(), not_reproduced.mean()


def close(exact, fraction, draws=DRAWS):
    """Within 4 Monte-Carlo standard errors (plus one draw, for probabilities near 0 or 1)."""
    return abs(exact - fraction) <= 4 * math.sqrt(exact * (1 - exact) / draws) + 1 / draws


CASES = [  # p, margin, mean, sd, n, sign
    (10.0, 1.0, 10.0, 1.0, 3, False),
    (10.0, 1.0, 10.5, 0.8, 5, False),
    (10.0, 1.0, 11.0, 1.0, 12, False),  # on the edge
    (10.0, 1.0, 12.5, 1.5, 4, False),
    (80.0, 0.5, 79.9, 0.3, 8, False),
    (1.0, 2.0, 0.3, 1.0, 4, True),  # gains: the sign rule matters
    (-1.0, 2.0, 0.5, 1.0, 6, True),
    (0.5, 1.0, -0.5, 0.3, 2, True),
    (0.5, 1.0, -0.2, 0.3, 10, True),  # mostly inside p +- M, but on the wrong side of 0
    (0.0, 1.0, 0.2, 0.5, 3, True),  # a printed gain of 0: no sign
    (2.0, 1.0, 1.5, 1.0, 20, True),
]


@pytest.mark.parametrize("case", CASES)
def test_matches_simulation(case):
    exact = verdict_probabilities(*case)
    rep, out = simulate(*case, seed=CASES.index(case))
    assert close(exact.reproduced, rep), (exact, rep)
    assert close(exact.not_reproduced, out), (exact, out)
    assert close(exact.decided, rep + out)


def dense(p, margin, mean, sd, n, sign=False):
    """The reproduced probability by a 2,000-point Gauss-Legendre rule per piece of the seed-SD
    axis, split where the integrand has kinks (a different code path from the module's)."""
    from scipy import stats
    from scipy.special import roots_legendre

    k = n - 1
    g, sm = stats.t.ppf(0.975, k) / math.sqrt(k), sd / math.sqrt(n)
    top = min(margin / (g * sm), stats.chi.isf(1e-14, k))
    edges = {0.0, top}
    if sign and p != 0:
        edges.add((margin - abs(p)) / (2 * g * sm))
    edges = sorted(e for e in edges if 0 <= e <= top)
    xs, ws = roots_legendre(2000)
    total = 0.0
    for left, right in zip(edges, edges[1:]):
        u, w = left + (xs + 1) / 2 * (right - left), ws * (right - left) / 2
        c = g * sm * u
        lo, hi = p - margin + c, p + margin - c
        if sign and p > 0:
            lo = np.maximum(lo, -c)
        if sign and p < 0:
            hi = np.minimum(hi, c)
        inside = np.clip(stats.norm.cdf((hi - mean) / sm) - stats.norm.cdf((lo - mean) / sm), 0, None)
        total += float((stats.chi.pdf(u, k) * inside * w).sum())
    return total


@pytest.mark.parametrize("case", CASES + [(1.0, 1.0, 1.0, 1e-3, 2, False), (1.0, 1.0, 1.5, 3.0, 2, True)])
def test_quadrature_accuracy(case):
    assert verdict_probabilities(*case).reproduced == pytest.approx(dense(*case), abs=1e-6)


PLANS = [  # p, margin, sd, means, sign
    (10.0, 1.0, 0.5, [10.0, 10.3], False),
    (10.0, 1.0, 0.8, [10.0, 8.5], False),
    (90.0, 1.0, 0.7, [90.0, 88.0], False),
    (1.0, 1.0, 0.4, [1.0, 0.3], True),
]


@pytest.mark.parametrize("plan", PLANS)
def test_planned_seeds_decide(plan):
    p, margin, sd, means, sign = plan
    n = seeds_needed(p, margin, sd, means, sign=sign)
    assert n is not None and 2 < n <= 30, n
    for i, mean in enumerate(means):
        rep, out = simulate(p, margin, mean, sd, n, sign, seed=100 + i)
        assert rep + out >= 0.8 - 4 * math.sqrt(0.16 / DRAWS), (mean, n, rep + out)
    # one fewer seed falls short for at least one true mean, in simulation as in the exact value
    short = [(verdict_probabilities(p, margin, mean, sd, n - 1, sign).decided, mean) for mean in means]
    exact, mean = min(short)
    assert exact < 0.8
    rep, out = simulate(p, margin, mean, sd, n - 1, sign, seed=200)
    assert close(exact, rep + out)
    assert rep + out < 0.8 + 4 * math.sqrt(0.16 / DRAWS)


def test_seeds_needed_ignores_a_dip(monkeypatch):
    curve = {2: 0.5, 3: 0.9, 4: 0.7}  # decided at 3, not at 4, at every n >= 5

    def fake(p, margin, mean, sd, n, sign=False):
        return Probabilities(curve.get(n, 0.95), 0.0)

    monkeypatch.setattr(power, "verdict_probabilities", fake)
    assert seeds_needed(0.0, 1.0, 1.0, [0.0], n_max=10) == 5
    assert seeds_needed(0.0, 1.0, 1.0, [0.0], n_max=3) == 3
    curve[10] = 0.1
    assert seeds_needed(0.0, 1.0, 1.0, [0.0], n_max=10) is None


def test_seeds_needed_plain_cases():
    assert seeds_needed(10.0, 1.0, 1.0, [11.0]) is None  # on the edge: never decided
    assert seeds_needed(10.0, 1.0, 1.0, [9.0]) is None
    assert seeds_needed(10.0, 1.0, 1.0, [10.0, 10.9], n_max=60) is None  # too near the edge for 60
    assert seeds_needed(10.0, 1.0, 0.01, [10.0, 20.0]) == 2  # tiny spread: two seeds decide
    few, more = seeds_needed(10.0, 1.0, 0.5, [10.0]), seeds_needed(10.0, 1.0, 0.5, [10.0], power=0.95)
    assert few is not None and more is not None and few < more
    both = seeds_needed(10.0, 1.0, 0.5, [10.0, 10.4])
    assert both is not None and both >= few


finite = dict(allow_nan=False, allow_infinity=False)


@settings(max_examples=150, deadline=None)
@given(p=st.floats(-10, 10, **finite), margin=st.floats(0.01, 5, **finite), mean=st.floats(-20, 20, **finite),
       sd=st.floats(0, 5, **finite), n=st.integers(2, 40), sign=st.booleans())
def test_probabilities_are_probabilities(p, margin, mean, sd, n, sign):
    r = verdict_probabilities(p, margin, mean, sd, n, sign)
    assert 0 <= r.reproduced <= 1 and 0 <= r.not_reproduced <= 1
    assert r.decided <= 1 and r.inconclusive == pytest.approx(1 - r.decided, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(p=st.floats(-10, 10, **finite), margin=st.floats(0.01, 5, **finite),
       sds=st.lists(st.floats(0, 5, **finite), min_size=2, max_size=2), n=st.integers(2, 40), sign=st.booleans())
def test_reproduced_falls_with_sd_at_the_paper_value(p, margin, sds, n, sign):
    small, large = sorted(sds)
    assert (verdict_probabilities(p, margin, p, small, n, sign).reproduced
            >= verdict_probabilities(p, margin, p, large, n, sign).reproduced - 1e-7)


@settings(max_examples=100, deadline=None)
@given(p=st.floats(-10, 10, **finite), margin=st.floats(0.01, 5, **finite), d=st.floats(1, 100, **finite),
       above=st.booleans(), n=st.integers(2, 40), sign=st.booleans())
def test_far_outside_is_not_reproduced(p, margin, d, above, n, sign):
    mean = p + margin + d if above else p - margin - d
    r = verdict_probabilities(p, margin, mean, d / 1000, n, sign)
    assert r.not_reproduced >= 1 - 1e-9 and r.reproduced <= 1e-9


@pytest.mark.parametrize("kwargs, name", [
    (dict(n=1), "n"), (dict(n=2.0), "n"), (dict(n=True), "n"),
    (dict(margin=0.0), "margin"), (dict(margin=-1.0), "margin"), (dict(margin=math.inf), "margin"),
    (dict(sd=-0.1), "sd"), (dict(sd=math.nan), "sd"),
    (dict(p=math.nan), "p"), (dict(mean=math.inf), "mean"), (dict(mean="1"), "mean"),
])
def test_verdict_probabilities_rejects(kwargs, name):
    args = dict(p=1.0, margin=1.0, mean=1.0, sd=1.0, n=3) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        verdict_probabilities(**args)


@pytest.mark.parametrize("kwargs, name", [
    (dict(means=[]), "means"), (dict(means=[math.nan]), r"means\[\]"), (dict(power=1.0), "power"),
    (dict(power=0.0), "power"), (dict(n_max=1), "n_max"), (dict(sd=-1.0), "sd"), (dict(margin=0), "margin"),
])
def test_seeds_needed_rejects(kwargs, name):
    args = dict(p=1.0, margin=1.0, sd=1.0, means=[1.0]) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must"):
        seeds_needed(**args)


@pytest.mark.parametrize("p, margin, mean, sign, verdict", [
    (10.0, 1.0, 10.0, False, "reproduced"),
    (10.0, 1.0, 11.0, False, "reproduced"),  # the edge is inside: p - M <= lo and hi <= p + M
    (10.0, 1.0, 9.0, False, "reproduced"),
    (10.0, 1.0, 11.5, False, "not_reproduced"),
    (10.0, 1.0, 8.0, False, "not_reproduced"),
    (0.5, 1.0, -0.2, True, "not_reproduced"),  # inside p +- M, but the direction is the other one
    (0.5, 1.0, -0.2, False, "reproduced"),
    (-0.5, 1.0, 0.2, True, "not_reproduced"),
    (0.5, 1.0, 0.0, True, "reproduced"),  # 0 is not excluded
    (0.0, 1.0, -0.5, True, "reproduced"),  # a gain of 0 has no sign
])
def test_sd_zero_is_exact(p, margin, mean, sign, verdict):
    for n in (2, 7):
        r = verdict_probabilities(p, margin, mean, 0.0, n, sign)
        assert (r.reproduced, r.not_reproduced) == ((1.0, 0.0) if verdict == "reproduced" else (0.0, 1.0))
    assert seeds_needed(p, margin, 0.0, [mean], sign=sign) == 2


def test_sd_zero_is_the_limit_of_small_sd():
    assert verdict_probabilities(10.0, 1.0, 10.5, 1e-9, 2).reproduced == pytest.approx(1.0, abs=1e-9)
    assert verdict_probabilities(10.0, 1.0, 12.0, 1e-9, 2).not_reproduced == pytest.approx(1.0, abs=1e-9)
    edge = verdict_probabilities(10.0, 1.0, 11.0, 1e-9, 30)  # sd > 0 on the edge: decided <= 5 %
    assert edge.decided == pytest.approx(0.05, abs=1e-6)
