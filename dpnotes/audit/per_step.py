"""The per-step audit's estimator: what the canaries saw at every step, turned into a whole-run
privacy lower bound with 95 % confidence (numpy and scipy; dp_accounting's optimistic PLD).

Setting (Nasr et al., USENIX Security 2023: Dirac canaries observed at every step; the harness is
:mod:`dpnotes.audit.step_run`). Each step t releases, for every canary slot j, one coordinate of the
noised gradient. The step's ledger event claims a Poisson-subsampled Gaussian: rate ``q_t``, noise
multiplier ``sigma_t`` in units of the sensitivity. In units of the claimed noise std the canary's
observation is ``x = a mu_t 1[j contributed] + b e``, ``e ~ N(0, 1)``, ``mu_t = 1 / sigma_t``, and
j contributes with probability ``c q_t``. The claim is ``a = b = c = 1``; a broken step has other
factors: ``a > 1`` a canary clipped too little, ``b < 1`` too little noise, ``c > 1`` a rate
under-reported to the ledger. Every observation is independent of the others (fresh sampling
and noise per row and step) and the observations of one canary over the steps are the run's
release of its coordinate: so the run is at least as leaky as the T-fold composition of the
pairs ``(PoissonSampled(c q_t, N(a mu_t, b^2)), N(0, b^2))`` (post-processing), which is the
subsampled Gaussian with rate ``c q_t`` and noise multiplier ``sigma_t b / a``.

Estimates, each one-sided at ``significance / 3`` (Bonferroni, so all three hold together with
probability >= 95 %):

* ``a``: the least-squares slope of the contributed observations on ``mu_t`` (white-box: the
  harness knows which rows contributed from the noise-free sum), its lower bound
  ``a_hat - z sqrt(b_hat^2 / sum mu_t^2)``;
* ``b``: from the rows that did not contribute, ``sum x^2 / chi2_{alpha}(n)`` (an exact upper bound
  on b^2 for Gaussian noise);
* ``c``: contributions K against ``sum q_t`` (a sum of independent Bernoullis), lower bound from
  the normal approximation of K (tens of thousands of contributions at the audit's size).

The lower bound is eps at delta of the steps composed with those factors, priced by
dp_accounting's PLD with ``pessimistic_estimate=False`` (its optimistic, lower, estimate), so
discretisation cannot raise it. Assumptions, stated: the noise is Gaussian (the harness reports
a normality test of the residuals) and the broken factors are common to the steps; the bound is
about the mechanism of the observed coordinates, which every sound accountant must cover.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

from dpnotes import validate

SIGNIFICANCE = 0.05
DISCRETIZATION = 1e-4  # loss grid of the optimistic PLD


@dataclass(frozen=True)
class StepSummary:
    """Sufficient statistics of one step's canary observations (x in units of the claimed noise
    std): claimed rate and noise multiplier, slots m, contributions k, the sum of x over the
    contributions, and count, sum and sum of squares of x over the other rows."""

    q: float
    sigma: float
    m: int
    k: int
    sum_in: float
    n_out: int
    sum_out: float
    sumsq_out: float
    accepted: bool = True

    @classmethod
    def of(cls, x: np.ndarray, contributed: np.ndarray, q: float, sigma: float, accepted: bool = True):
        x, c = np.asarray(x, dtype=float), np.asarray(contributed, dtype=bool)
        out = x[~c]
        return cls(float(q), float(sigma), len(x), int(c.sum()), float(x[c].sum()), len(out),
                   float(out.sum()), float((out ** 2).sum()), bool(accepted))


@dataclass(frozen=True)
class Factors:
    """Point estimates and one-sided bounds of a, b, c (module docstring)."""

    a: float
    a_low: float
    b: float
    b_high: float
    c: float
    c_low: float
    contributions: int
    noise_rows: int


def factors(steps: list[StepSummary], significance: float = SIGNIFICANCE) -> Factors:
    """The three factors and their Bonferroni bounds from ``steps`` (module docstring)."""
    if not steps:
        raise ValueError("steps must hold at least one step summary")
    z = stats.norm.isf(validate.probability("significance", significance, high_open=True) / 3)
    mu = np.array([1.0 / s.sigma for s in steps])
    k = np.array([s.k for s in steps], dtype=float)
    n_out = sum(s.n_out for s in steps)
    sumsq = sum(s.sumsq_out for s in steps)
    b2 = sumsq / n_out
    b2_high = sumsq / stats.chi2.ppf(significance / 3, n_out)
    w = float((k * mu ** 2).sum())
    if w == 0:
        raise ValueError("no canary contributed at any step: nothing to estimate a from")
    a = float(sum(s.sum_in * m for s, m in zip(steps, mu)) / w)
    a_low = a - z * math.sqrt(b2 / w)
    expected = np.array([s.m * s.q for s in steps])
    var = np.array([s.m * s.q * (1 - s.q) for s in steps])
    total = float(k.sum())
    c = total / expected.sum()
    c_low = max((total - z * math.sqrt(max(c, 1e-12) * var.sum())) / expected.sum(), 0.0)
    return Factors(a, a_low, math.sqrt(b2), math.sqrt(b2_high), c, c_low, int(total), int(n_out))


def _pld(q: float, sigma: float, count: int):
    from dp_accounting.pld import privacy_loss_distribution as pld

    return pld.from_gaussian_mechanism(sigma, pessimistic_estimate=False, sampling_prob=min(q, 1.0),
                                       value_discretization_interval=DISCRETIZATION,
                                       use_connect_dots=False).self_compose(count)


def composed_epsilon(mechanisms, delta: float) -> float:
    """eps at ``delta`` of Poisson-subsampled Gaussians ``(q, sigma, count)`` composed, by the
    OPTIMISTIC PLD (a lower estimate of the true eps; the accountants use the pessimistic one)."""
    delta = validate.probability("delta", delta, high_open=True)
    merged: dict[tuple[float, float], int] = {}
    for q, sigma, count in mechanisms:
        merged[(float(q), float(sigma))] = merged.get((float(q), float(sigma)), 0) + int(count)
    total = None
    for (q, sigma), count in merged.items():
        if q <= 0 or count == 0:
            continue
        one = _pld(q, sigma, count)
        total = one if total is None else total.compose(one)
    return 0.0 if total is None else float(total.get_epsilon_for_delta(delta))


def claimed_mechanisms(steps: list[StepSummary], accepted_only: bool = False) -> list[tuple[float, float, int]]:
    """The steps' claimed (q, sigma, 1) (the accepted ones only with ``accepted_only``)."""
    return [(s.q, s.sigma, 1) for s in steps if s.accepted or not accepted_only]


def lower_bound(steps: list[StepSummary], delta: float, significance: float = SIGNIFICANCE,
                observed=None) -> dict:
    """The whole-run eps lower bound (95 %) from the canaries of ``steps``: every step's claimed
    mechanism with the factors' bounds (rate ``c_low q``, multiplier ``sigma b_high / a_low``),
    composed. ``observed``: which steps' releases the bound composes (default all; SA-DPSGD's
    released iterates: the accepted ones). Also the point estimate (factors at their estimates)."""
    f = factors(steps, significance)
    use = [s for i, s in enumerate(steps) if observed is None or observed[i]]

    def eps(c, a, b):
        if a <= 0:
            return 0.0
        return composed_epsilon([(min(c * s.q, 1.0), s.sigma * b / a, 1) for s in use], delta)

    return {"epsilon": eps(f.c_low, f.a_low, f.b_high), "estimate": eps(f.c, f.a, f.b),
            "steps": len(use), "factors": asdict(f), "significance": significance}


def simulate(q, sigma, m: int, rng: np.random.Generator, a: float = 1.0, b: float = 1.0, c: float = 1.0,
             raw: bool = False) -> list[StepSummary]:
    """Step summaries of the observation model (module docstring) with true factors a, b, c at
    claimed rates ``q`` and multipliers ``sigma`` (arrays, one entry per step): drawn from the
    summaries' exact laws (binomial, normal, chi-square), or with ``raw`` from m rows per step."""
    q, sigma = np.atleast_1d(np.asarray(q, dtype=float)), np.atleast_1d(np.asarray(sigma, dtype=float))
    q, sigma = np.broadcast_arrays(q, sigma)
    m = validate.integer("m", m, minimum=1)
    out = []
    for qt, st in zip(q, sigma):
        if raw:
            hit = rng.random(m) < min(c * qt, 1.0)
            x = a / st * hit + b * rng.standard_normal(m)
            out.append(StepSummary.of(x, hit, qt, st))
            continue
        k = int(rng.binomial(m, min(c * qt, 1.0)))
        n_out = m - k
        s_in = k * a / st + b * math.sqrt(k) * rng.standard_normal()
        s_out = float(b * math.sqrt(n_out) * rng.standard_normal())
        out.append(StepSummary(float(qt), float(st), m, k, float(s_in), n_out, s_out,
                               float(b * b * rng.chisquare(n_out)) if n_out else 0.0))
    return out
