"""Hyperparameter tuning, charged: the RDP of running a DP mechanism a random number of times
and releasing only the best run (Papernot and Steinke, "Hyperparameter Tuning with Renyi
Differential Privacy", ICLR 2022; arXiv:2110.03620v2).

The tuning algorithm A: draw K from a distribution fixed in advance, run the base mechanism Q
(one training run with a candidate drawn at random from the search space, independently of
the data) K times, release the output with the best score (and nothing of the other runs).
The ledger event is dp_accounting's ``RepeatAndSelectDpEvent(event, mean, shape)``: ``event``
is Q's release (it must bound EVERY candidate: a trial whose candidates differ in privacy needs
their pointwise-worst RDP curve), ``mean = E[K]``, ``shape`` the distribution of K:

* ``shape = inf``: K ~ Poisson(mean) (Theorem 6; K = 0 releases nothing). If Q is
  (lambda, eps)-RDP and (eps^, delta^)-DP with ``e^eps^ <= 1 + 1/(lambda - 1)``, then A is
  (lambda, eps')-RDP with ``eps' = eps + mean delta^ + log(mean) / (lambda - 1)``. We take
  ``eps^ = log(1 + 1/(lambda - 1))`` and delta^ from Q's RDP curve (:func:`delta_from_rdp`).
* ``0 <= shape < inf``: K ~ the truncated negative binomial D_{eta, gamma} of Definition 1
  (``eta = shape``; ``eta = 0`` the logarithmic, ``eta = 1`` the geometric distribution),
  ``P[K = k] = (1 - gamma)^k / (gamma^-eta - 1) prod_{l<k} (l + eta) / (l + 1)``, mean
  ``eta (1 - gamma) / (gamma (1 - gamma^eta))`` (``(1/gamma - 1) / log(1/gamma)`` at eta = 0).
  Theorem 2: if Q is (lambda, eps)- and (lambda^, eps^)-RDP (lambda > 1, lambda^ >= 1), A is
  (lambda, eps')-RDP with
  ``eps' = eps + (1 + eta)(1 - 1/lambda^) eps^ + (1 + eta) log(1/gamma) / lambda^ + log(E[K]) / (lambda - 1)``,
  minimised over lambda^ among the accountant's orders; then RDP's monotonicity in the order
  (``eps(lambda) <= eps(lambda')`` for ``lambda <= lambda'``) bounds each order by the smallest
  bound at any order at least as large.

This is the computation of dp_accounting's ``_compute_rdp_repeat_and_select`` (tested against
it, against the theorem's formula evaluated term by term, and against the exact Renyi
divergence of the best-of-K output of small discrete mechanisms, ``tests/test_tuning.py``),
written here with numpy only, as :mod:`dpnotes.accounting.rdp`.
"""

from __future__ import annotations

import math

import numpy as np

from dpnotes import validate


def check_distribution(mean, shape) -> tuple[float, float]:
    """``(mean, shape)`` of the number of trials: ``mean`` >= 1 and finite, ``shape`` >= 0 (inf: Poisson)."""
    mean = validate.positive("mean", mean)
    if mean < 1:
        raise ValueError(f"mean (the expected number of trials) must be >= 1, got {mean!r}")
    shape = validate.positive("shape", shape, allow_inf=True) if shape != 0 else 0.0
    return mean, shape


def tnb_mean(gamma: float, shape: float) -> float:
    """E[K] of the truncated negative binomial D_{shape, gamma} (Definition 1), gamma in (0, 1]."""
    gamma = validate.probability("gamma", gamma)
    if gamma == 1:
        return 1.0
    if shape == 0:
        return (1 / gamma - 1) / math.log(1 / gamma)
    if shape == 1:
        return 1 / gamma
    return shape * (1 / gamma - 1) / -math.expm1(shape * math.log(gamma))


def tnb_gamma(shape: float, mean: float, rtol: float = 1e-9) -> float:
    """gamma of D_{shape, gamma} with E[K] = ``mean``, by bisection (E[K] falls as gamma grows);
    returns the lower end of the final bracket: a gamma whose mean is at least ``mean``, so
    ``log(1/gamma)`` and the bound err on the conservative side (as dp_accounting)."""
    mean, shape = check_distribution(mean, shape)
    if math.isinf(shape):
        raise ValueError("shape must be finite for a truncated negative binomial (inf is Poisson)")
    if shape == 1:
        return 1 / mean
    lo, hi = 0.0, min(1.0, 2 * (shape + 1) / mean)  # E[K] <= 2 (eta + 1) / gamma bounds gamma
    while hi > lo * (1 + rtol):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if tnb_mean(mid, shape) < mean else (mid, hi)
    return lo


def delta_from_rdp(orders, rdp, epsilon: float) -> float:
    """The smallest delta such that an RDP curve implies (epsilon, delta)-DP: at each order a,
    Canonne, Kamath, Steinke 2020, Proposition 12,
    ``log delta = (a - 1)(rdp - eps + log(1 - 1/a)) - log a`` (orders above 1.01), and
    ``delta <= sqrt(1 - e^-rdp)`` (total variation from KL <= rdp); as dp_accounting's ``compute_delta``."""
    logs = []
    for a, r in zip(np.asarray(orders, float).tolist(), np.asarray(rdp, float).tolist()):
        log_delta = -math.inf if r <= 0 else 0.5 * math.log1p(-math.exp(-r))
        if a > 1.01:
            log_delta = min(log_delta, (a - 1) * (r - epsilon + math.log1p(-1 / a)) - math.log(a))
        logs.append(log_delta)
    best = min(logs) if logs else 0.0
    return min(math.exp(best), 1.0)


def repeat_and_select_rdp(orders, rdp, mean: float, shape: float) -> np.ndarray:
    """The RDP curve (at ``orders``) of the best of K runs of a mechanism whose RDP curve is
    ``rdp``, K of mean ``mean`` and shape ``shape`` (module docstring: Theorem 6 for
    ``shape = inf``, Theorem 2 otherwise). Orders <= 1 get ``inf`` (the theorems need lambda > 1)."""
    mean, shape = check_distribution(mean, shape)
    a = np.asarray(orders, dtype=float)
    r = np.asarray(rdp, dtype=float)
    if a.shape != r.shape or a.ndim != 1:
        raise ValueError(f"rdp must have one value per order ({a.size}), got shape {r.shape}")
    if np.isnan(r).any() or (r < 0).any():
        raise ValueError("rdp must be >= 0 (inf allowed), got a negative or NaN value")
    out = np.full(a.size, np.inf)
    valid = a > 1
    if not np.isfinite(r[valid]).any():
        return out
    if math.isinf(shape):  # Theorem 6 (Poisson)
        for i in np.flatnonzero(valid):
            delta_hat = delta_from_rdp(a, r, math.log1p(1 / (a[i] - 1)))
            out[i] = r[i] + mean * delta_hat + math.log(mean) / (a[i] - 1)
        return out
    gamma = tnb_gamma(shape, mean)  # Theorem 2 (truncated negative binomial)
    with np.errstate(invalid="ignore"):
        c = (1 + shape) * np.min((1 - 1 / a) * r - math.log(gamma) / a)
    out[valid] = r[valid] + math.log(mean) / (a[valid] - 1) + c
    return np.minimum.accumulate(out[::-1])[::-1] if np.all(np.diff(a) > 0) else _monotone(a, out)


def _monotone(a: np.ndarray, out: np.ndarray) -> np.ndarray:
    """``out[i] = min(out[j] for a[j] >= a[i])`` for orders in any order."""
    return np.array([out[a >= x].min() for x in a])


def sample_trials(mean: float, shape: float, rng) -> int:
    """One draw of K (``rng``: a ``numpy.random.Generator``): Poisson(mean) for ``shape = inf``, else
    the truncated negative binomial of Definition 1 by inverting its CDF (pmf term by term)."""
    mean, shape = check_distribution(mean, shape)
    if math.isinf(shape):
        return int(rng.poisson(mean))
    gamma, u = tnb_gamma(shape, mean), float(rng.random())
    if gamma == 1:
        return 1
    k, cdf = 0, 0.0
    prod = 1.0  # prod_{l < k} (l + eta) / (l + 1)
    while cdf < u and k < 10**6:
        k += 1
        if shape == 0:
            p = (1 - gamma) ** k / (k * math.log(1 / gamma))
        else:
            prod *= (k - 1 + shape) / k
            p = (1 - gamma) ** k / (gamma ** -shape - 1) * prod
        cdf += p
    return k
