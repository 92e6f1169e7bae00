"""Privacy-loss distributions (PLD) of composed Poisson-subsampled Gaussian mechanisms.

Koskela, Jalko, Honkela 2020 ("Computing tight differential privacy guarantees using FFT");
Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022 ("Connect the dots"), whose library
dp_accounting is the reference the tests compare with. numpy and math only, so that
``dpnotes epsilon`` answers without importing scipy or dp_accounting.

One step with sampling rate q and noise multiplier sigma (L2 sensitivity 1) under add/remove
adjacency has two dominating pairs (P, Q), with ``m(x) = (1 - q) + q exp((2x - 1) / (2 sigma^2))``:

* remove: P = (1 - q) N(0, sigma^2) + q N(1, sigma^2), Q = N(0, sigma^2), loss L(x) = log m(x);
* add: P = N(0, sigma^2), Q = the mixture, loss L(x) = -log m(x).

For each pair, ``delta(eps) = P(L = inf) + E_P[(1 - exp(eps - L))_+]`` (the hockey-stick
divergence), composition adds independent losses (their PMFs convolve), and the mechanism is
(eps, delta)-DP at the larger eps of the two pairs. The integrand is non-decreasing in L and
convex in e^-L, so moving probability mass to a larger loss, or spreading it over two losses
with the same E_P[e^-L], can only increase delta(eps), for every eps, and the increase survives
composition. Every approximation here is one of the two, so the eps returned is an upper bound
(up to float rounding of the FFT, about 1e-16 per grid point, as in dp_accounting):

* each step's losses are spread onto the grid ``k h`` keeping E_P[e^-L] ("connect the dots",
  :func:`_single_step`): no drift with the number of steps, unlike rounding every loss up;
* the upper tail of P beyond mass 1e-16 goes to L = inf, the lower tail up to the grid's first
  point; the composition is one FFT power on a window that holds all but ``TAIL`` of the
  composed mass, and ``TAIL`` is added to the mass at +inf for what wraps around.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpnotes import validate
from dpnotes.accounting.grid import check_pld_points

# The one default loss grid (library, training ledgers, `dpnotes epsilon`): within 1e-3 of the exact
# Gaussian mechanism, and still a certified upper bound (pessimistic); stored records are priced on it.
DEFAULT_DISCRETIZATION = 1e-4

TAIL = 1e-15  # composed mass allowed outside the FFT window; added to the mass at +inf
_Z_TAIL = 8.3  # P(N(0, 1) > 8.3) < 1e-16: the noise range a single step's grid covers
_erfc = np.frompyfunc(math.erfc, 1, 1)


@dataclass(frozen=True)
class _Pmf:
    """Mass ``p[i]`` at loss ``(offset + i) h`` and mass ``inf`` at loss +inf."""

    p: np.ndarray
    offset: int
    inf: float


def _normal_sf(x: np.ndarray) -> np.ndarray:
    """P(N(0, 1) > x), accurate in the upper tail (erfc, not 1 - cdf)."""
    return 0.5 * _erfc(x / math.sqrt(2)).astype(float)


def _mixture_sf(x: np.ndarray, q: float, sigma: float) -> np.ndarray:
    return (1 - q) * _normal_sf(x / sigma) + q * _normal_sf((x - 1) / sigma)


def _mixture_cdf(x: np.ndarray, q: float, sigma: float) -> np.ndarray:
    return (1 - q) * _normal_sf(-x / sigma) + q * _normal_sf((1 - x) / sigma)


def _log_m(x: float, q: float, sigma: float) -> float:
    """log m(x) = log((1 - q) + q exp((2x - 1) / (2 sigma^2))), without overflow."""
    with np.errstate(divide="ignore"):
        return float(np.logaddexp(np.log1p(-q), math.log(q) + (2 * x - 1) / (2 * sigma**2)))


def _x_of_loss(loss: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """The x at which log m(x) = loss: ``sigma^2 (loss + log(1 - (1 - q) e^-loss) - log q) + 1/2``
    (``-inf`` where loss <= log(1 - q), below the range of log m)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rest = np.log1p(-(1 - q) * np.exp(-loss))
    rest = np.where((1 - q) * np.exp(np.minimum(-loss, 700.0)) < 1, rest, -np.inf)
    return sigma**2 * (loss + rest - math.log(q)) + 0.5


def _single_step(q: float, sigma: float, h: float, remove: bool) -> _Pmf:
    """One step's PMF on the loss grid ``k h``, by "connecting the dots" (Doroshenko et al.
    2022): the P-mass m of the losses in a bin (a, b] is split between a and b so that its
    Q-mass y = E_P[e^-L; L in (a, b]] is kept: ``w_b = (m - y e^a) / (1 - e^-h)``, ``w_a = m - w_b``.
    delta(eps) = E_P[(1 - e^eps e^-L)_+] is convex in e^-L, so the split can only raise it
    (Jensen), for every eps; losses below the grid go up to its first point, P-mass above it
    to +inf (both pessimistic)."""
    x_lo, x_hi = -_Z_TAIL * sigma, 1 + _Z_TAIL * sigma  # P-mass outside: below TAIL
    lo_loss, hi_loss = _log_m(x_lo, q, sigma), _log_m(x_hi, q, sigma)
    if not remove:
        lo_loss, hi_loss = -hi_loss, -lo_loss
    k = np.arange(math.floor(lo_loss / h), math.ceil(hi_loss / h) + 1)
    edges = k * h
    if remove:  # L = log m(x) increases with x; P the mixture, Q = N(0, sigma^2)
        x = _x_of_loss(edges, q, sigma)
        p_above, q_above = _mixture_sf(x, q, sigma), _normal_sf(x / sigma)  # P(L > edge), Q(L > edge)
    else:  # L = -log m(x) decreases with x: L > edge <=> x < x(-edge); P = N(0, sigma^2), Q the mixture
        x = _x_of_loss(-edges, q, sigma)
        p_above, q_above = _normal_sf(-x / sigma), _mixture_cdf(x, q, sigma)
    m = np.maximum(p_above[:-1] - p_above[1:], 0.0)  # P-mass of the bin (edges[i], edges[i + 1]]
    y = np.maximum(q_above[:-1] - q_above[1:], 0.0)  # its Q-mass
    upper = np.clip((m - y * np.exp(edges[:-1])) / -np.expm1(-h), 0.0, m)
    p = np.zeros(len(edges))
    p[0] = 1.0 - p_above[0]  # every loss up to the first grid point, moved up onto it
    p[:-1] += m - upper
    p[1:] += upper
    return _Pmf(p, int(k[0]), float(p_above[-1]))


def _log_mgf(pmf: _Pmf, t: np.ndarray) -> np.ndarray:
    """log E[e^(t K)] of the grid index K over the PMF's finite part, for each t."""
    with np.errstate(divide="ignore"):
        log_p = np.log(pmf.p)
    k = pmf.offset + np.arange(len(pmf.p))
    z = log_p[None, :] + np.outer(t, k)
    top = z.max(axis=1)
    return top + np.log(np.exp(z - top[:, None]).sum(axis=1))


def _window(pmfs: Sequence[tuple[_Pmf, int]], h: float) -> tuple[int, int]:
    """Grid indices [lo, hi] holding the composed loss up to mass TAIL (Chernoff bounds:
    P(S >= u) <= exp(log E[e^(tS)] - t u) for every t > 0, and likewise below)."""
    lam = np.geomspace(1e-3, 1e3, 25) * h  # per grid index
    log_tail = math.log(TAIL / 2)
    up = sum(count * _log_mgf(pmf, lam) for pmf, count in pmfs)
    down = sum(count * _log_mgf(pmf, -lam) for pmf, count in pmfs)
    hi = math.ceil(np.min((up - log_tail) / lam))
    lo = math.floor(np.max(-(down - log_tail) / lam))
    return lo, hi


def _compose(pmfs: Sequence[tuple[_Pmf, int]], h: float) -> _Pmf:
    """The composition of ``count`` copies of each PMF: one FFT per PMF on a circular window
    that holds the composed loss up to mass TAIL (:func:`_window`), raised to the power
    ``count``. The mass outside the window wraps around to wrong losses, possibly lower ones:
    adding its bound TAIL to the mass at +inf keeps delta(eps) an upper bound (the wrapped mass
    adds at most TAIL to delta, the mass at +inf adds exactly that)."""
    lo, hi = _window(pmfs, h)
    size = 1 << (hi - lo).bit_length()  # >= hi - lo + 1
    check_pld_points(size)
    spectrum = np.ones(size // 2 + 1, dtype=complex)
    log_finite = 0.0
    for pmf, count in pmfs:
        index = (pmf.offset + np.arange(len(pmf.p))) % size  # loss index modulo the window
        spectrum *= np.fft.rfft(np.bincount(index, weights=pmf.p, minlength=size)) ** count
        log_finite += count * math.log1p(-pmf.inf)
    circular = np.fft.irfft(spectrum, size)  # circular[j] = P(S = j mod size)
    p = np.maximum(circular[(lo + np.arange(size)) % size], 0.0)
    return _Pmf(p, lo, min(-math.expm1(log_finite) + TAIL, 1.0))


def _epsilon(pmf: _Pmf, h: float, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta (delta(eps) is decreasing; exact between
    grid points, where the set of losses above eps does not change)."""
    if pmf.inf > delta:
        return math.inf
    loss = (pmf.offset + np.arange(len(pmf.p))) * h
    # tail sums over k >= j: A_j = sum p_k, log B_j = log sum p_k exp(-loss_k)
    tail_a = np.cumsum(pmf.p[::-1])[::-1]
    with np.errstate(divide="ignore"):
        log_b = np.logaddexp.accumulate((np.log(pmf.p) - loss)[::-1])[::-1]
    # delta just below loss_j (losses >= loss_j count): inf + A_j - exp(loss_j + log B_j)
    at = pmf.inf + tail_a - np.exp(np.minimum(loss + log_b, 0.0))
    j = int(np.searchsorted(-at, -delta, side="left"))  # first j with delta(loss_j-) <= delta
    if j >= len(loss):
        j = len(loss) - 1  # delta(eps) <= delta only beyond the top loss: eps in (loss[-2], loss[-1]]
    top = pmf.inf + tail_a[j] - delta
    if top <= 0:
        return 0.0
    eps = math.log(top) - float(log_b[j])  # exp(eps) B_j = inf + A_j - delta
    low = loss[j - 1] if j > 0 else -math.inf
    return max(min(max(eps, low), float(loss[j])), 0.0)


def pld_epsilon(mechanisms: Sequence[tuple[float, float, int]], delta: float,
                discretization: float = DEFAULT_DISCRETIZATION) -> float:
    """eps at ``delta`` of the composition of ``(q, sigma, count)`` Poisson-subsampled Gaussian
    mechanisms (q = 1: the Gaussian mechanism), pessimistic PLD on a loss grid of spacing
    ``discretization``: an upper bound. Connecting the dots keeps E[e^-L] exact, so the error
    does not grow with the number of steps (tests: within 1e-3 of the exact Gaussian mechanism
    at grid 1e-4; equal to dp_accounting's to 1e-3). ``count`` must be an integer >= 1."""
    delta = validate.probability("delta", delta, high_open=True)
    h = validate.positive("discretization", discretization)
    mechanisms = [(validate.probability("q", q), validate.positive("sigma", sigma),
                   validate.integer("count", count, minimum=1)) for q, sigma, count in mechanisms]
    eps = 0.0
    for remove in (True, False):
        if mechanisms:
            total = _compose([(_single_step(q, sigma, h, remove), count) for q, sigma, count in mechanisms], h)
            eps = max(eps, _epsilon(total, h, delta))
    return eps
