"""Gaussian differential privacy (GDP) of noisy SGD through the privacy central limit theorem.

Bu, Dong, Long, Su, "Deep Learning with Gaussian Differential Privacy" (HDSR 2020),
Section 3 and Appendix B (Theorem 5), and Dong, Roth, Su, "Gaussian Differential
Privacy" (JRSS-B 2022), Section 5 (uniform subsampling, Corollary 5.4).
The CLT is an asymptotic approximation (T -> inf with q sqrt(T) fixed); for finite T it
can UNDER-estimate eps (see :mod:`dpnotes.accounting.prv` for a tight accountant).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpnotes import validate
from dpnotes.accounting.rdp import _check_sgm, log_erfc

_EXP_MAX = 700.0  # math.exp overflows beyond about 709.78
_MU_MAX = 1e154  # mu^2 / 2 overflows a float beyond about 1.9e154


def _norm_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2))


def _log_norm_cdf(x: float) -> float:
    return math.log(0.5) + log_erfc(-x / math.sqrt(2))


def _root(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a monotone ``f`` with a sign change on [lo, hi], by bisection to float
    resolution (no scipy: the accounting CLI answers without importing it)."""
    f_lo = f(lo)
    while True:
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            return mid
        f_mid = f(mid)
        if f_mid == 0:
            return mid
        if (f_mid > 0) == (f_lo > 0):
            lo, f_lo = mid, f_mid
        else:
            hi = mid


def mu_poisson(q: float, sigma: float, steps: float) -> float:
    """mu of T Poisson-subsampled Gaussian steps (Bu et al., Eq. 5):
    ``mu = q sqrt(T (exp(1/sigma^2) - 1))``."""
    q, sigma, steps = _check_sgm(q, sigma, steps)
    x = sigma**-2
    if x > _EXP_MAX:  # exp(1/sigma^2) overflows a float: mu from its logarithm (e^x - 1 ~ e^x)
        log_mu = math.log(q) + 0.5 * (math.log(steps) + x)
        return math.exp(log_mu) if log_mu < _EXP_MAX else math.inf
    return q * math.sqrt(steps * math.expm1(x))


def mu_uniform(q: float, sigma: float, steps: float) -> float:
    """mu of T steps with fixed-size batches drawn uniformly without replacement, q = B/n
    (Dong, Roth, Su 2022, Corollary 5.4, quoted by Bu et al. Section 3.1):
    ``mu = sqrt(2) q sqrt(T (exp(1/sigma^2) Phi(1.5/sigma) + 3 Phi(-0.5/sigma) - 2))``."""
    q, sigma, steps = _check_sgm(q, sigma, steps)
    inner = math.exp(sigma**-2) * _norm_cdf(1.5 / sigma) + 3 * _norm_cdf(-0.5 / sigma) - 2
    return math.sqrt(2) * q * math.sqrt(steps * inner)


def _delta(eps: float, mu: float) -> float:
    # Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), the second term in log space.
    log_second = eps + _log_norm_cdf(-eps / mu - mu / 2)
    if log_second > _EXP_MAX:  # far above the root: delta = -inf, still the right sign
        return -math.inf
    return _norm_cdf(-eps / mu + mu / 2) - math.exp(log_second)


def delta_from_mu(mu: float, eps: float) -> float:
    """delta(eps; mu): mu-GDP implies (eps, delta)-DP for every eps >= 0 (Bu et al., Eq. 6)."""
    mu = validate.positive("mu", mu)
    eps = validate.nonnegative("eps", eps)
    return max(_delta(eps, mu), 0.0)


def epsilon_from_mu(mu: float, delta: float) -> float:
    """The eps >= 0 at which delta(eps; mu) = delta (root of the decreasing map of Eq. 6).

    Returns 0 when mu-GDP already gives (0, delta)-DP.
    """
    mu = validate.positive("mu", mu, allow_inf=True)
    delta = validate.probability("delta", delta, high_open=True)
    if mu > _MU_MAX:  # eps >= mu^2 / 2 for delta < 1/2: beyond a float's range
        return math.inf
    if _delta(0.0, mu) <= delta:
        return 0.0
    hi = 1.0
    while _delta(hi, mu) > delta:
        hi *= 2
    return _root(lambda e: _delta(e, mu) - delta, 0.0, hi)


def mu_from_epsilon(eps: float, delta: float) -> float:
    """The largest mu such that mu-GDP implies (eps, delta)-DP (inverse of :func:`epsilon_from_mu`)."""
    eps = validate.nonnegative("eps", eps)
    delta = validate.probability("delta", delta, high_open=True)
    # delta(eps; mu) increases with mu, from 0 (mu -> 0) to 1 (mu -> inf).
    hi = 1.0
    while _delta(eps, hi) < delta:
        hi *= 2
    return _root(lambda m: _delta(eps, m) - delta, 1e-12, hi)
