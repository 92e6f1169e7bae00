"""Renyi DP of the Poisson-subsampled Gaussian mechanism and its conversion to (eps, delta).

The RDP curve is that of Mironov, Talwar, Zhang 2019, "Renyi Differential Privacy of the
Sampled Gaussian Mechanism" (Sec. 3.3): ``A_a = E_{z ~ mu0}[(mu(z)/mu0(z))^a]`` for
``mu = (1 - q) N(0, s^2) + q N(1, s^2)`` and ``mu0 = N(0, s^2)``, ``rdp(a) = log(A_a) / (a - 1)``:
a finite binomial sum at integer orders, two series with erfc terms at fractional ones.
Computed here with math and numpy only (no scipy: ``dpnotes epsilon`` answers at once); tested
against opacus's and dp_accounting's implementations and numerical integration. This module
adds the order lists the papers used and the two RDP -> (eps, delta) conversions found in
their code:

* ``classic``: Mironov 2017, Proposition 3,
  ``eps = min_a rdp(a) + log(1/delta) / (a - 1)`` (TF Privacy before Dec 2020; the
  "MA eps" column of the GDP paper, Table 1);
* ``improved``: Balle et al. 2020, "Hypothesis testing interpretations and Renyi
  differential privacy", Theorem 21,
  ``eps = min_a rdp(a) + log((a - 1)/a) - (log delta + log a) / (a - 1)`` (opacus).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from dpnotes import validate


def log_erfc(x: float) -> float:
    """log(erfc(x)), finite far beyond where erfc underflows (the asymptotic series
    ``erfc(x) ~ exp(-x^2) / (x sqrt(pi)) * sum_n (-1)^n (2n-1)!! / (2x^2)^n`` for x > 25,
    relative error below 1e-12 there)."""
    if x <= 25.0:
        return math.log(math.erfc(x))
    inv = 1.0 / (2.0 * x * x)
    series, term = 1.0, 1.0
    for n in range(1, 6):
        term *= -(2 * n - 1) * inv
        series += term
    return -x * x - math.log(x * math.sqrt(math.pi)) + math.log(series)


@lru_cache(maxsize=32)
def _binomial_parts(alphas: tuple[int, ...]) -> tuple[tuple[np.ndarray, ...], tuple[int, ...]]:
    """For the integer orders ``alphas``, over k = 0..alpha of each, concatenated: log C(alpha, k)
    (from math.lgamma), k, alpha - k and k^2 - k (exact in float); and where each order's run starts."""
    log_binom, ks, rest, quad, starts = [], [], [], [], [0]
    for alpha in alphas:
        log_binom += [math.lgamma(alpha + 1) - math.lgamma(k + 1) - math.lgamma(alpha - k + 1)
                      for k in range(alpha + 1)]
        ks += range(alpha + 1)
        rest += range(alpha, -1, -1)
        quad += [k * k - k for k in range(alpha + 1)]
        starts.append(starts[-1] + alpha + 1)
    parts = tuple(np.array(v, dtype=float) for v in (log_binom, ks, rest, quad))
    for v in parts:
        v.flags.writeable = False
    return parts, tuple(starts)


def _log_a_integers(q: float, sigma: float, alphas: tuple[int, ...]) -> list[float]:
    """log A_alpha at integer orders: the binomial expansion of E[((1-q) + q e^{...})^alpha],
    ``log sum_k C(alpha, k) q^k (1-q)^(alpha-k) exp((k^2 - k) / (2 sigma^2))``.

    The terms are formed with numpy (the same IEEE operations, in the same order, as one term
    at a time in Python) and summed in log space one after the other, k = 0, 1, ..., so every
    value is bit for bit that of the term-by-term loop (tested), at a fraction of its cost: run
    configs are calibrated from these values, and a change in their last bits could move a
    calibrated sigma and with it a stored run's spec id. The sum is ``np.logaddexp.reduceat``, a
    left fold in C of ``x + log1p(exp(y - x))`` for y < x (``y + log1p(exp(x - y))`` otherwise,
    ``x + log 2`` for y = x) with the C library's exp and log1p, which Python's math module calls
    too: the term-by-term loop's operations while every term is finite. A non-finite term (an
    overflowing ``(k^2 - k) / (2 sigma^2)`` for sigma below ~1e-150) takes the Python fold, whose
    NaN from inf - inf the fast fold would not reproduce."""
    two_var = 2 * sigma**2
    if two_var == 0.0:
        raise ValueError(f"sigma must be >= 1e-161 (below, 2 sigma^2 underflows to 0), got {sigma!r}")
    (log_binom, ks, rest, quad), starts = _binomial_parts(alphas)
    terms = log_binom + ks * math.log(q) + rest * math.log1p(-q) + quad / two_var
    if np.isfinite(terms).all():
        return np.logaddexp.reduceat(terms, starts[:-1]).tolist()
    return _log_sum_python(terms.tolist(), starts)


def _log_sum_python(terms: list[float], starts: tuple[int, ...]) -> list[float]:
    """log sum exp of each run ``terms[start:stop]``, one term after the other."""
    exp, log1p, out = math.exp, math.log1p, []
    for start, stop in zip(starts, starts[1:]):
        log_a = -math.inf
        for t in terms[start:stop]:  # log_a = log(e^log_a + e^t)
            hi, lo = (t, log_a) if t > log_a else (log_a, t)
            log_a = hi if lo == -math.inf else hi + log1p(exp(lo - hi))
        out.append(log_a)
    return out


def _log_erfc_array(x: np.ndarray) -> np.ndarray:
    return np.array([log_erfc(float(v)) for v in x])


def _log_a_fractional(q: float, sigma: float, alpha: np.ndarray) -> np.ndarray:
    """log A_alpha at fractional orders (all at once): Mironov, Talwar, Zhang 2019, Sec. 3.3,
    the two series split at z0 = sigma^2 log(1/q - 1) + 1/2, each order's summed until its
    terms fall below e^-30 (and past i = alpha)."""
    alpha = np.asarray(alpha, dtype=float)
    z0 = sigma**2 * math.log(1 / q - 1) + 0.5
    scale = math.sqrt(2) * sigma
    pos = np.full((2, alpha.size), -np.inf)  # log of the positive and negative parts of each series
    neg = np.full((2, alpha.size), -np.inf)
    log_binom, sign = np.zeros(alpha.size), np.ones(alpha.size)  # generalised C(alpha, i), term by term
    active = np.ones(alpha.size, dtype=bool)
    i = 0
    while active.any():
        j = alpha - i
        e0 = math.log(0.5) + log_erfc((i - z0) / scale)
        e1 = np.full(alpha.size, -np.inf)  # finished orders need no more terms
        e1[active] = math.log(0.5) + _log_erfc_array((z0 - j[active]) / scale)
        t0 = log_binom + i * math.log(q) + j * math.log1p(-q) + (i * i - i) / (2 * sigma**2) + e0
        t1 = log_binom + j * math.log(q) + i * math.log1p(-q) + (j * j - j) / (2 * sigma**2) + e1
        for part, term in ((0, t0), (1, t1)):
            target = np.where(sign > 0, pos[part], neg[part])
            updated = np.where(active, np.logaddexp(target, term), target)
            pos[part] = np.where(sign > 0, updated, pos[part])
            neg[part] = np.where(sign > 0, neg[part], updated)
        active &= ~((np.maximum(t0, t1) < -30) & (i > alpha))  # t1 = -inf only where inactive
        factor = alpha - i  # C(alpha, i + 1) = C(alpha, i) (alpha - i) / (i + 1)
        i += 1
        log_binom = log_binom + np.log(np.abs(factor)) - math.log(i)
        sign = sign * np.where(factor > 0, 1.0, -1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        parts = [np.where(neg[k] == -np.inf, pos[k], pos[k] + np.log(-np.expm1(neg[k] - pos[k]))) for k in (0, 1)]
    return np.logaddexp(*[np.where(pos[k] <= neg[k], -np.inf, parts[k]) for k in (0, 1)])


def _rdp_one_step(q: float, sigma: float, alpha: np.ndarray) -> np.ndarray:
    """RDP at each order of one Poisson-subsampled Gaussian step."""
    alpha = np.asarray(alpha, dtype=float)
    if q == 1.0:
        return alpha / (2 * sigma**2)
    log_a = np.empty(alpha.size)
    integer = np.array([a.is_integer() for a in alpha.tolist()], dtype=bool)
    log_a[integer] = _log_a_integers(q, sigma, tuple(int(a) for a in alpha[integer]))
    fractional = ~integer
    if fractional.any():
        log_a[fractional] = _log_a_fractional(q, sigma, alpha[fractional])
    with np.errstate(invalid="ignore"):
        return np.maximum(log_a, 0.0) / (alpha - 1)  # A_alpha >= 1 (Jensen); rounding can dip below


ORDERS: dict[str, tuple[float, ...]] = {
    # TF Privacy MNIST tutorial (the GDP paper's MA column).
    "tf-tutorial": tuple([1 + x / 10 for x in range(1, 100)] + [float(a) for a in range(12, 64)]),
    # TF Privacy compute_dp_sgd_privacy.
    "tf-compute": tuple(
        [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5]
        + [float(a) for a in range(5, 64)]
        + [128.0, 256.0, 512.0]
    ),
    # opacus RDPAccountant.DEFAULT_ALPHAS (opacus 1.x), written out here so that the
    # torch-importing opacus package is not needed: 1.1, 1.2, ..., 10.9, then 12..63.
    "opacus": tuple([1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)]),
    # Integer orders, as SA-DPSGD and DPlis use.
    "integer": tuple(float(a) for a in range(2, 65)),
}

CONVERSIONS = ("classic", "improved")


def resolve_orders(orders: str | Sequence[float]) -> np.ndarray:
    """The RDP orders named by ``orders`` (a key of :data:`ORDERS`) or given as numbers.

    Every order must be finite and > 1.
    """
    if isinstance(orders, str):
        return np.array(ORDERS[validate.choice("orders", orders, ORDERS)])
    if isinstance(orders, np.ndarray) and orders.dtype == np.float64 and orders.ndim == 1 and orders.size:
        if np.isfinite(orders).all() and orders.min() > 1:  # the common case, checked at once
            return orders.copy()
    values = [validate.positive("orders", a) for a in orders]
    if not values:
        raise ValueError("orders must not be empty")
    if min(values) <= 1:
        raise ValueError(f"orders must all be > 1, got {min(values)!r}")
    return np.array(values, dtype=float)


def _check_sgm(q, sigma, steps) -> tuple[float, float, float]:
    return (
        validate.probability("q", q),
        validate.positive("sigma", sigma),
        validate.positive("steps", steps),
    )


def integer_steps(steps: float) -> int:
    """``ceil(steps)``: accountants that compose a whole number of steps round a
    fractional count (``epochs * n / B``) UP, which can only increase eps."""
    steps = validate.positive("steps", steps)
    return math.ceil(steps - 1e-9 * steps)  # 14062.500000001 from float noise stays 14063, 60.0 stays 60


def subsampled_gaussian_rdp(q: float, sigma: float, steps: float, orders) -> np.ndarray:
    """RDP at each order of ``steps`` compositions of the Poisson-subsampled Gaussian.

    ``q`` is the sampling rate, ``sigma`` the noise multiplier (noise std / L2
    sensitivity). RDP composes additively, so ``steps`` may be fractional (e.g.
    ``epochs * n / B``, as the GDP paper's code does). Values may be ``inf``.
    """
    q, sigma, steps = _check_sgm(q, sigma, steps)
    a = resolve_orders(orders)
    return steps * _rdp_one_step(q, sigma, a)


def _epsilons(rdp: np.ndarray, a: np.ndarray, delta: float, conversion: str) -> np.ndarray:
    if conversion == "classic":
        return rdp + np.log(1 / delta) / (a - 1)
    return rdp + np.log((a - 1) / a) - (np.log(delta) + np.log(a)) / (a - 1)


def rdp_to_epsilon(rdp, orders, delta: float, conversion: str = "classic") -> tuple[float, float]:
    """Smallest eps over the orders for the given ``delta``; returns ``(eps, order)``.

    ``conversion`` is ``"classic"`` (Mironov 2017) or ``"improved"`` (Balle et al.
    2020, as opacus). If every order has infinite RDP, returns ``(inf, nan)``.
    """
    delta = validate.probability("delta", delta, high_open=True)
    validate.choice("conversion", conversion, CONVERSIONS)
    a = resolve_orders(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != a.shape:
        raise ValueError(f"rdp must have one value per order ({a.size}), got shape {rdp.shape}")
    if np.isnan(rdp).any() or (rdp < 0).any():
        raise ValueError("rdp must be >= 0 (inf allowed), got a negative or NaN value")
    eps = _epsilons(rdp, a, delta, conversion)
    if not np.isfinite(eps).any():
        return float("inf"), float("nan")
    i = int(np.argmin(eps))
    return max(float(eps[i]), 0.0), float(a[i])  # (eps<0, delta)-DP implies (0, delta)-DP


def rdp_epsilon(
    q: float,
    sigma: float,
    steps: float,
    delta: float,
    *,
    orders: str | Sequence[float] = "tf-tutorial",
    conversion: str = "classic",
) -> tuple[float, float]:
    """(eps, best order) of ``steps`` Poisson-subsampled Gaussian steps under RDP accounting."""
    a = resolve_orders(orders)
    return rdp_to_epsilon(subsampled_gaussian_rdp(q, sigma, steps, a), a, delta, conversion)
