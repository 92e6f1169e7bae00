"""Trade-off functions (f-DP) used by the GDP paper's figures.

Bu, Dong, Long, Su, "Deep Learning with Gaussian Differential Privacy" (HDSR 2020):
Section 2 (G_mu, f_{eps,delta}), Figure 3 (an accountant's (eps, delta) curve seen as
a trade-off function, and the minimum sum of type I and type II errors), and
Appendix A (numerical composition of the subsampled Gaussian, Theorem 3). A
trade-off function maps the type I error alpha of a test to the smallest type II
error; larger curves mean more privacy.
"""

from __future__ import annotations

import math

import numpy as np

from dpnotes import validate
from dpnotes.accounting.rdp import _check_sgm, integer_steps


def _alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if a.size == 0 or np.isnan(a).any() or (a < 0).any() or (a > 1).any():
        raise ValueError("alpha must be a non-empty array of type I errors in [0, 1]")
    return a


def gaussian_tradeoff(mu: float, alpha) -> np.ndarray:
    """G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu), the trade-off of N(0,1) vs N(mu,1)."""
    mu = validate.nonnegative("mu", mu)
    from scipy.special import ndtr, ndtri  # scipy.stats.norm's cdf and isf, as it evaluates them

    return ndtr(-ndtri(_alpha(alpha)) - mu)


def epsdelta_tradeoff(eps: float, delta: float, alpha) -> np.ndarray:
    """f_{eps,delta}(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha)),
    the trade-off function equivalent to (eps, delta)-DP."""
    return envelope_tradeoff([eps], [delta], alpha)


def envelope_tradeoff(eps, delta, alpha) -> np.ndarray:
    """sup over the pairs i of f_{eps_i, delta_i}(alpha): the f-DP bound implied by an
    accountant that certifies (eps_i, delta_i)-DP for every i (GDP paper, Figure 3)."""
    e = np.atleast_1d(np.asarray(eps, dtype=float))
    d = np.atleast_1d(np.asarray(delta, dtype=float))
    if e.shape != d.shape or e.ndim != 1 or e.size == 0:
        raise ValueError(f"eps and delta must be 1-d arrays of one shape, got {e.shape} and {d.shape}")
    for x in e:
        validate.nonnegative("eps", float(x))
    for x in d:
        validate.probability("delta", float(x), low_open=False, high_open=False)
    a = _alpha(alpha)[..., None]
    curves = np.maximum(1 - d - np.exp(e) * a, np.exp(-e) * (1 - d - a))
    return np.maximum(curves.max(axis=-1), 0.0)


def composed_subsampled_gaussian_tradeoff(
    q: float, sigma: float, steps: float, alpha, *, discretization: float = 1e-3
) -> np.ndarray:
    """Trade-off function of ``steps`` Poisson-subsampled Gaussian steps, computed numerically.

    This is min{f, f^-1}** with f = (q G_{1/sigma} + (1 - q) Id)^{(x) T} (GDP paper,
    Theorem 3 and the Appendix A figure), obtained from the privacy-loss distribution
    (PLD) of dp_accounting: its hockey-stick curve delta(eps), taken over both neighbouring
    directions, gives f(alpha) = sup_eps max(0, 1 - delta(eps) - e^eps alpha) (convex
    duality, Dong, Roth, Su 2022, Proposition 2.12). The sup runs over every point of the
    PLD's loss grid (spacing ``discretization``) between -eps_hi and eps_hi, where
    delta(eps_hi) <= 1e-12. The PLD is pessimistic, so the curve is a lower bound on the
    true trade-off (never claims more privacy), within about ``discretization`` in eps.
    Fractional ``steps`` are rounded up (:func:`integer_steps`).
    """
    q, sigma, _ = _check_sgm(q, sigma, steps)
    h = validate.positive("discretization", discretization)
    a = _alpha(alpha)
    from dp_accounting.pld import privacy_loss_distribution  # scipy.signal: only where it composes

    pld = privacy_loss_distribution.from_gaussian_mechanism(
        sigma, sampling_prob=q, value_discretization_interval=h
    ).self_compose(integer_steps(steps))
    eps_hi = max(pld.get_epsilon_for_delta(1e-12), h)
    grid = np.arange(-math.ceil(eps_hi / h), math.ceil(eps_hi / h) + 1) * h
    one_minus_delta = 1 - np.asarray(pld.get_delta_for_epsilon(grid))
    out = np.empty_like(a.ravel())
    for start in range(0, out.size, 256):  # blocks of alpha keep the (alpha x eps) matrix small
        block = a.ravel()[start : start + 256, None]
        out[start : start + 256] = (one_minus_delta - np.exp(grid) * block).max(axis=1)
    return np.clip(out, 0.0, 1.0).reshape(a.shape)


def min_error_sum(alpha, beta) -> float:
    """min over the grid of alpha + beta: the smallest sum of type I and type II errors of
    any test, given a trade-off curve ``beta`` = f(``alpha``) (GDP paper, Section 4.1).
    The grid minimum over-estimates the true minimum by at most the grid's resolution."""
    a = _alpha(alpha)
    b = np.asarray(beta, dtype=float)
    if b.shape != a.shape:
        raise ValueError(f"beta must have the shape of alpha {a.shape}, got {b.shape}")
    if np.isnan(b).any() or (b < 0).any() or (b > 1).any():
        raise ValueError("beta must hold type II errors in [0, 1]")
    return float((a + b).min())
