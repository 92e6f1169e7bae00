"""Privacy auditing with one training run (Steinke, Nasr, Jagielski, NeurIPS 2023) and the
GDP estimate of Nasr et al. (USENIX Security 2023), from canary scores.

One-run test. m canaries, each included independently with probability 1/2; after training the
auditor guesses "in" for the k+ highest scores and "out" for the k- lowest, abstaining on the
rest: r = k+ + k- guesses, v of them correct. Under (eps, 0)-DP the number of correct guesses is
stochastically dominated by Binomial(r, e^eps / (1 + e^eps)) (their Theorem 3.1), so
``beta = P[Bin(r, q) >= v]`` is a p-value; with delta > 0 their Theorem 3.2 adds
``alpha * 2 m delta``, ``alpha = max_{1 <= i <= v} P[v - i <= Bin(r, q) < v] / i``. The eps lower
bound is the largest eps whose p-value is at most the significance level (the claim
"the run is (eps, delta)-DP" is rejected there). With all r guesses correct the bound cannot
exceed :func:`ceiling` (about 3.49 / 5.81 / 7.42 at r = 100 / 1,000 / 5,000, 95 %).

Guess counts are fixed before the scores are seen: several are tried, each at level
``significance / len(guesses)`` (Bonferroni), and the largest bound is reported.

GDP estimate (Nasr et al. 2023, Sec. 5; as jax-privacy's ``epsilon_from_gdp``): at every
threshold of the scores, Clopper-Pearson upper bounds on the false positive and false negative
rates (Bonferroni over 2 x thresholds), mu = max (Phi^-1(1 - FPR) - Phi^-1(FNR)) (Dong, Roth,
Su 2022, Eq. 6), converted to eps at delta (Bu et al., Eq. 6). It assumes the trade-off curve
of the run is Gaussian: an estimate, not a bound. Unlike jax-privacy we do not take |mu| (the
"reversed" test would need lower, not upper, confidence bounds on the rates).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from dpnotes import validate
from dpnotes.accounting.gdp import epsilon_from_mu

SIGNIFICANCE = 0.05
EPS_MAX = 50.0  # the search's upper end: no audit of r <= 10^6 guesses certifies more


def _q(eps: float) -> float:
    return float(special.expit(eps))


def p_value(m: int, guesses: int, correct: int, eps: float, delta: float = 0.0) -> float:
    """The one-run p-value of ``correct`` right guesses out of ``guesses`` among ``m`` canaries
    under the claim (eps, delta)-DP (Steinke et al., Theorems 3.1 and 3.2; module docstring)."""
    m = validate.integer("m", m, minimum=1)
    guesses = validate.integer("guesses", guesses, minimum=0)
    correct = validate.integer("correct", correct, minimum=0)
    if guesses > m or correct > guesses:
        raise ValueError(f"need correct <= guesses <= m, got {correct}, {guesses}, {m}")
    eps = validate.nonnegative("eps", eps)
    delta = validate.probability("delta", delta, low_open=False, high_open=True)
    q = _q(eps)
    beta = float(stats.binom.sf(correct - 1, guesses, q))
    if delta == 0 or correct == 0:
        return beta
    i = np.arange(1, correct + 1)
    window = stats.binom.sf(correct - i - 1, guesses, q) - beta  # P[v - i <= Bin < v]
    alpha = float(np.max(window / i))
    return min(beta + alpha * delta * 2 * m, 1.0)


def epsilon_lower_bound(m: int, guesses: int, correct: int, delta: float = 0.0,
                        significance: float = SIGNIFICANCE) -> float:
    """The largest eps at which :func:`p_value` is <= ``significance`` (0 if none)."""
    significance = validate.probability("significance", significance, high_open=True)

    def gap(eps):
        return significance - p_value(m, guesses, correct, eps, delta)

    if guesses == 0 or gap(0.0) <= 0:
        return 0.0
    if gap(EPS_MAX) > 0:
        return EPS_MAX
    return float(optimize.brentq(gap, 0.0, EPS_MAX, xtol=1e-9))


def ceiling(guesses: int, significance: float = SIGNIFICANCE) -> float:
    """The most a one-run audit with ``guesses`` guesses can certify (all correct, delta 0)."""
    guesses = validate.integer("guesses", guesses, minimum=1)
    return epsilon_lower_bound(guesses, guesses, guesses, 0.0, significance)


@dataclass(frozen=True)
class OneRunResult:
    """The bound and the guess count it came from (``correct`` of ``guesses``)."""

    epsilon: float
    guesses: int
    correct: int
    m: int
    significance: float


def _check_scores(scores, included) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(scores, dtype=float)
    inc = np.asarray(included)
    if s.ndim != 1 or inc.shape != s.shape or len(s) == 0:
        raise ValueError("scores and included must be 1-D arrays of one entry per canary")
    if inc.dtype != bool:
        raise ValueError("included must be a boolean array")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite")
    return s, inc


def guess_counts(m: int, guesses: int, two_sided: bool = True) -> tuple[int, int]:
    """(k+, k-): half the guesses on each end (two-sided), or all on the top scores."""
    guesses = validate.integer("guesses", guesses, minimum=1)
    if guesses > m:
        raise ValueError(f"guesses ({guesses}) must be <= m ({m})")
    return ((guesses + 1) // 2, guesses // 2) if two_sided else (guesses, 0)


def correct_guesses(scores, included, k_plus: int, k_minus: int) -> int:
    """How many of the k+ highest scores are in and the k- lowest out (ties broken by index)."""
    s, inc = _check_scores(scores, included)
    if k_plus + k_minus > len(s):
        raise ValueError("k+ + k- must be <= the number of canaries")
    order = np.argsort(s, kind="stable")
    top = order[len(s) - k_plus:] if k_plus else order[:0]
    bottom = order[:k_minus]
    return int(inc[top].sum() + (~inc[bottom]).sum())


def _plan(scores, included, guesses, significance: float):
    """Checked scores and truth, the distinct guess counts (at most the canaries) and the
    Bonferroni level each count is tested at."""
    s, inc = _check_scores(scores, included)
    counts = sorted({min(validate.integer("guesses", g, minimum=1), len(s)) for g in guesses})
    return s, inc, counts, significance / len(counts)


def one_run_audit(scores, included, delta: float, guesses=(100, 1000), *, two_sided: bool = True,
                  significance: float = SIGNIFICANCE) -> OneRunResult:
    """The one-run eps lower bound of canary ``scores`` (higher = "in") against the truth
    ``included``: the best over the fixed ``guesses`` counts, each at significance / len(guesses)."""
    s, inc, counts, level = _plan(scores, included, guesses, significance)
    m = len(s)
    best = None
    for r in counts:
        kp, km = guess_counts(m, r, two_sided)
        v = correct_guesses(s, inc, kp, km)
        eps = epsilon_lower_bound(m, r, v, delta, level)
        if best is None or eps > best.epsilon:
            best = OneRunResult(eps, r, v, m, level)
    return best


def _clopper_pearson_upper(k: np.ndarray, n: int, significance: float) -> np.ndarray:
    """One-sided upper confidence bound on a binomial rate with ``k`` successes of ``n``."""
    return np.where(k < n, stats.beta.ppf(1 - significance, k + 1, np.maximum(n - k, 1)), 1.0)


def gdp_mu(scores, included, significance: float = SIGNIFICANCE) -> float:
    """mu of the module docstring's GDP estimate (0 if the scores separate nothing)."""
    s, inc = _check_scores(scores, included)
    pos, neg = np.sort(s[inc]), np.sort(s[~inc])
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("the GDP estimate needs included and excluded canaries")
    thresholds = np.concatenate([np.union1d(pos, neg), [np.inf]])
    fn = np.searchsorted(pos, thresholds, side="left")  # in-canaries below the threshold
    fp = len(neg) - np.searchsorted(neg, thresholds, side="left")  # out-canaries at or above it
    level = significance / (2 * len(thresholds))
    fnr, fpr = _clopper_pearson_upper(fn, len(pos), level), _clopper_pearson_upper(fp, len(neg), level)
    # mu-GDP gives FNR >= Phi(Phi^-1(1 - FPR) - mu): upper bounds on both rates bound mu from below
    mu = stats.norm.isf(fpr) - stats.norm.ppf(fnr)
    return float(max(np.max(mu[np.isfinite(mu)], initial=0.0), 0.0))


def gdp_epsilon(scores, included, delta: float, significance: float = SIGNIFICANCE) -> float:
    """eps at ``delta`` of the GDP estimate :func:`gdp_mu` (module docstring)."""
    mu = gdp_mu(scores, included, significance)
    return 0.0 if mu == 0 else epsilon_from_mu(mu, delta)


def bernoulli_one_run(eps: float, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(scores, included) of m canaries under the extremal eps-DP randomized response: each
    canary's bit is reported truthfully with probability e^eps / (1 + e^eps). Under it the correct
    guesses are exactly Binomial(r, q): the case where Theorem 3.1 is tight (for tests)."""
    eps = validate.nonnegative("eps", eps)
    included = rng.random(validate.integer("m", m, minimum=1)) < 0.5
    truthful = rng.random(m) < _q(eps)
    bit = np.where(truthful, included, ~included)
    return bit + 1e-9 * rng.random(m), included



def _fdp_rejects(m: int, guesses: int, correct: int, mu: float, significance: float) -> bool:
    """Whether ``correct`` of ``guesses`` (top-score guesses) reject the claim "mu-GDP" in the
    f-DP one-run test (Mahloujifar, Melis, Chaudhuri 2024, arXiv 2410.22235, Algorithm 3 with
    the cap): r and h bound the expected correct and wrong guesses, raised step by step along the
    blow-up f^-1(x) = Phi(Phi^-1(x) - mu) of the Gaussian trade-off; rejected if r + h > guesses/m."""
    r = significance * correct / m
    h = significance * (guesses - correct) / m
    for i in range(correct - 1, -1, -1):
        h_new = max(h, float(stats.norm.cdf(stats.norm.ppf(r) - mu)))
        if h_new == h:
            break
        r, h = min(r + i / (guesses - i) * (h_new - h), 1.0), h_new
    return r + h > guesses / m


def gdp_mu_lower_bound(m: int, guesses: int, correct: int, significance: float = SIGNIFICANCE) -> float:
    """The largest mu such that "the run is mu-GDP" is rejected by :func:`_fdp_rejects` (0 if
    none). A lower bound on mu for a mechanism whose trade-off curve is Gaussian-shaped (the
    Gaussian mechanism itself; a good fit for many composed subsampled steps); it says nothing
    about (eps, delta) claims of other shapes."""
    m = validate.integer("m", m, minimum=1)
    if not 0 < correct <= guesses <= m or not _fdp_rejects(m, guesses, correct, 1e-9, significance):
        return 0.0
    hi = 1.0
    while _fdp_rejects(m, guesses, correct, hi, significance):
        hi *= 2
        if hi > 64:
            return 64.0
    return float(optimize.brentq(lambda mu: 0.5 - _fdp_rejects(m, guesses, correct, mu, significance),
                                 1e-9, hi, xtol=1e-9))


def one_run_fdp_audit(scores, included, delta: float, guesses=(100, 1000), *,
                      significance: float = SIGNIFICANCE) -> OneRunResult:
    """The f-DP one-run bound (:func:`gdp_mu_lower_bound`, top-score guesses only) as eps at
    ``delta`` of the rejected mu-GDP claim: the best over the fixed ``guesses``, Bonferroni."""
    s, inc, counts, level = _plan(scores, included, guesses, significance)
    m = len(s)
    best = None
    for r in counts:
        v = correct_guesses(s, inc, r, 0)
        mu = gdp_mu_lower_bound(m, r, v, level)
        eps = 0.0 if mu == 0 else epsilon_from_mu(mu, delta)
        if best is None or eps > best.epsilon:
            best = OneRunResult(eps, r, v, m, level)
    return best
