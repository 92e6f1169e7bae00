"""Calibration: the noise multiplier for a privacy budget, and the steps a budget allows.

For every accountant of :mod:`dpnotes.accounting.accountants`, eps decreases in sigma
and increases in the number of steps, so both questions are one-dimensional root
finding. The returned values always satisfy the budget: eps(sigma) <= target_epsilon.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

from dpnotes import calc_cache, validate
from dpnotes.accounting.accountants import CONVERSION, DEFAULT_ORDERS, accountant_names, epsilon
from dpnotes.accounting.gdp import epsilon_from_mu, mu_from_epsilon, mu_poisson
from dpnotes.accounting.rdp import _epsilons, rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.registry import accountant as registered
from dpnotes.accounting.registry import price
from dpnotes.ledger import Ledger

_EPS_CAP = 1e6  # eps values above this (or twice the target; inf included) count as "far above it"
SIGMA_RANGE = (1e-6, 1e6)  # where the noise multiplier is searched


def _one(accountant: str) -> str:
    if accountant == "all":
        raise ValueError("accountant must name one accountant, not 'all'")
    return accountant_names(accountant)[0]


def _guaranteed_eps(accountant: str, q: float, sigma: float, steps: float, delta: float) -> float:
    """The eps an accountant guarantees (``upper`` for ``prv``), priced through the registry."""
    return epsilon(q, sigma, steps, delta, accountant)[accountant][registered(accountant).epsilon_key]


def _orders(accountant: str, orders) -> np.ndarray:
    return resolve_orders(DEFAULT_ORDERS[accountant] if orders is None else orders)


def _solve_log_sigma(eps_of: Callable[[float], float], target: float, tol: float, start: float = 1.0) -> float:
    """Root in sigma of eps_of(sigma) = target: bracket from ``start`` with geometrically
    growing steps, then brentq on log sigma."""
    raw: dict[float, float] = {}  # eps at each log sigma tried (for the message: g loses it above the cap)
    cap = min(max(_EPS_CAP, 2 * target), sys.float_info.max)  # above any target, so a capped eps is not "met"

    def g(s: float) -> float:
        raw[s] = eps_of(math.exp(s))
        return min(raw[s], cap) - target

    x0 = math.log(start)
    g0 = g(x0)
    direction = 1.0 if g0 > 0 else -1.0  # eps too large: more noise; within budget: less
    step, limit = 0.02, math.log(SIGMA_RANGE[1])
    while True:
        x1 = min(max(x0 + direction * step, -limit), limit)  # the last bracket ends at the range's end
        if x1 == x0:
            at = f"at sigma {math.exp(x0):g} eps is {raw[x0]:.6g}"
            if direction > 0:
                raise ValueError(f"target_epsilon {target!r} is not met by any noise multiplier in "
                                 f"[{SIGMA_RANGE[0]:g}, {SIGMA_RANGE[1]:g}]: {at}, the accountant's floor")
            raise ValueError(f"target_epsilon {target!r} is met by every noise multiplier down to "
                             f"{SIGMA_RANGE[0]:g} ({at}): the smallest lies below the searched range "
                             f"[{SIGMA_RANGE[0]:g}, {SIGMA_RANGE[1]:g}]")
        g1 = g(x1)
        if (g1 > 0) != (g0 > 0):
            break
        x0, g0, step = x1, g1, 2 * step
    lo, hi = sorted((x0, x1))
    from scipy import optimize  # about 0.4 s: only where sigma is solved for

    return math.exp(optimize.brentq(g, lo, hi, xtol=tol / 4, rtol=4 * np.finfo(float).eps))


def _rdp_sigma(target, q, steps, delta, orders, conversion, tol) -> float:
    """RDP calibration, fast: solve on every ``stride``-th order and the largest (a root
    above the true one), then on a window of orders around the optimal one there; accept the window's
    root once the full list's optimal order at it lies strictly inside the window (where
    the window's eps equals the full list's eps); else re-centre, at last use all orders."""
    def eps_of(sub):
        return lambda s: rdp_to_epsilon(subsampled_gaussian_rdp(q, s, steps, sub), sub, delta, conversion)[0]

    stride = max(1, orders.size // 16)
    coarse = np.unique(np.r_[np.arange(0, orders.size, stride), orders.size - 1])  # keeps the largest order
    sigma = _solve_log_sigma(eps_of(orders[coarse]), target, tol)
    center = int(coarse[np.argmin(_epsilons(
        subsampled_gaussian_rdp(q, sigma, steps, orders[coarse]), orders[coarse], delta, conversion))])
    for _ in range(3):
        lo, hi = max(center - stride, 0), min(center + stride + 1, orders.size)
        sigma = _solve_log_sigma(eps_of(orders[lo:hi]), target, tol, start=sigma)
        center = int(np.argmin(_epsilons(subsampled_gaussian_rdp(q, sigma, steps, orders), orders, delta, conversion)))
        if (lo < center or lo == 0) and (center < hi - 1 or hi == orders.size):
            return sigma
    return _solve_log_sigma(eps_of(orders), target, tol, start=sigma)


def noise_multiplier(
    target_epsilon: float,
    q: float,
    steps: float,
    delta: float,
    *,
    accountant: str = "rdp",
    orders: str | Sequence[float] | None = None,
    tol: float = 1e-6,
    digits: int | None = None,
) -> float:
    """The smallest noise multiplier sigma (to relative ``tol``) with eps(sigma) <= target.

    ``digits``: instead, the smallest sigma with that many significant digits whose eps is
    <= target. Run configs use it: a root found to ``tol`` moves in its last digits with any
    change to an accountant's arithmetic (and with it a run's spec id); a grid far coarser
    than ``tol`` does not, unless the root lies within float noise of a grid point.

    ``accountant`` names one accountant of :data:`~dpnotes.accounting.accountants.SGM_ACCOUNTANTS`
    (``rdp``, ``rdp-classic``, ``clt``, ``prv``, ``pld``, ...). For ``prv`` the UPPER bound
    of eps is calibrated; ``prv`` and ``pld`` take up to seconds per evaluation, so use a
    coarse ``tol`` such as 1e-3. ``orders`` replaces the default RDP order list.
    """
    accountant = _one(accountant)
    target = validate.positive("target_epsilon", target_epsilon)
    q = validate.probability("q", q)
    steps = validate.positive("steps", steps)
    delta = validate.probability("delta", delta, high_open=True)
    tol = validate.positive("tol", tol)
    if digits is not None:
        digits = validate.integer("digits", digits, minimum=1)
    if orders is not None and not isinstance(orders, str):
        orders = tuple(resolve_orders(orders).tolist())
    inputs = (target, q, steps, delta, accountant, orders, tol, digits)
    # a pure value: within dpnotes scoreboard, from dpnotes.calc_cache (no root finding, no scipy)
    return calc_cache.cached("calibrate.noise_multiplier", inputs, lambda: _noise_multiplier(*inputs))


@lru_cache(maxsize=1024)
def _noise_multiplier(target: float, q: float, steps: float, delta: float, accountant: str,
                      orders: str | tuple[float, ...] | None, tol: float, digits: int | None) -> float:
    """:func:`noise_multiplier` on checked, hashable inputs, cached by them: a pure function, and
    the book and ``dpnotes scoreboard`` ask for the same calibrations many times (run configs)."""
    if accountant in CONVERSION:
        a = _orders(accountant, orders)
        conversion = CONVERSION[accountant]
        sigma = _rdp_sigma(target, q, steps, delta, a, conversion, tol)
        eps_of = lambda s: rdp_to_epsilon(subsampled_gaussian_rdp(q, s, steps, a), a, delta, conversion)[0]  # noqa: E731
    elif accountant == "clt":
        # Closed form: invert mu = q sqrt(T (exp(1/sigma^2) - 1)) at mu = mu(target, delta).
        mu = mu_from_epsilon(target, delta)
        sigma = 1 / math.sqrt(math.log1p((mu / q) ** 2 / steps))
        eps_of = lambda s: epsilon_from_mu(q * math.sqrt(steps * math.expm1(s**-2)), delta)  # noqa: E731
    else:
        eps_of = lambda s: _guaranteed_eps(accountant, q, s, steps, delta)  # noqa: E731
        sigma = _solve_log_sigma(eps_of, target, tol)
    while eps_of(sigma) > target:  # the root finder may stop just below the root
        sigma *= 1 + tol
    return sigma if digits is None else _on_grid(sigma, eps_of, target, digits)


def _on_grid(sigma: float, eps_of: Callable[[float], float], target: float, digits: int) -> float:
    """The smallest sigma of ``digits`` significant digits with eps_of(sigma) <= target, from a
    ``sigma`` at most a step above the root (eps decreases in sigma)."""
    exponent = math.floor(math.log10(sigma)) - digits + 1
    step = 10.0**exponent
    k = math.floor(sigma / step)
    value = lambda k: float(f"{k * step:.{max(-exponent, 0)}f}")  # noqa: E731  exact decimal
    while k > 1 and eps_of(value(k - 1)) <= target:
        k -= 1
    while eps_of(value(k)) > target:
        k += 1
    return value(k)


def ledger_scale(
    ledger_of: Callable[[float], Ledger],
    target_epsilon: float,
    delta: float,
    *,
    accountant: str = "rdp",
    tol: float = 1e-6,
    digits: int | None = None,
) -> float:
    """The smallest noise scale s with eps(``ledger_of(s)``) <= target under ``accountant``.

    For a run whose noise multipliers follow a schedule scaled by one number (DP-SGD-Decay:
    sigma_e = s exp(-k e)): ``ledger_of(s)`` is the ledger of the whole run, and eps decreases
    in s. ``digits`` as in :func:`noise_multiplier`.
    """
    accountant = _one(accountant)
    target = validate.positive("target_epsilon", target_epsilon)
    delta = validate.probability("delta", delta, high_open=True)
    tol = validate.positive("tol", tol)
    key = registered(accountant).epsilon_key
    eps_of = lambda s: price(ledger_of(s), delta, accountant)[accountant][key]  # noqa: E731
    sigma = _solve_log_sigma(eps_of, target, tol)
    while eps_of(sigma) > target:  # the root finder may stop just below the root
        sigma *= 1 + tol
    return sigma if digits is None else _on_grid(sigma, eps_of, target, validate.integer("digits", digits, minimum=1))


def max_steps(
    target_epsilon: float,
    q: float,
    sigma: float,
    delta: float,
    *,
    accountant: str = "rdp",
    orders: str | Sequence[float] | None = None,
) -> int:
    """The largest whole number of steps T with eps(T) <= target (0 if even one step exceeds it).

    RDP: RDP is linear in T, so T = floor(max_a (target - c_a) / rdp_1(a)) with c_a the
    conversion's delta term. CLT: closed form. Both are checked at T + 1 against float
    rounding. Others (PRV: its upper bound; PLD): bisection.
    Divide by n / B for epochs.
    """
    accountant = _one(accountant)
    target = validate.positive("target_epsilon", target_epsilon)
    q = validate.probability("q", q)
    sigma = validate.positive("sigma", sigma)
    delta = validate.probability("delta", delta, high_open=True)
    if accountant in CONVERSION:
        a = _orders(accountant, orders)
        per_step = subsampled_gaussian_rdp(q, sigma, 1, a)
        slack = target - _epsilons(np.zeros_like(a), a, delta, CONVERSION[accountant])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(slack > 0, slack / per_step, 0.0)
        if not np.isfinite(t.max()):
            raise ValueError(f"sigma {sigma!r} is so large that the per-step RDP is 0: no step limit")
        t = int(np.floor(t.max()))
        eps_at = lambda n: rdp_to_epsilon(n * per_step, a, delta, CONVERSION[accountant])[0]  # noqa: E731
    elif accountant == "clt":
        t = int(math.floor((mu_from_epsilon(target, delta) / q) ** 2 / math.expm1(sigma**-2)))
        eps_at = lambda n: epsilon_from_mu(mu_poisson(q, sigma, n), delta)  # noqa: E731
    if accountant in CONVERSION or accountant == "clt":  # the closed forms may lose the last step to rounding
        while eps_at(t + 1) <= target:
            t += 1
        return t
    within = lambda t: _guaranteed_eps(accountant, q, sigma, t, delta) <= target  # noqa: E731
    if not within(1):
        return 0
    lo, hi = 1, 2
    while within(hi):
        lo, hi = hi, hi * 2
        if hi > 2**40:
            raise ValueError("target_epsilon allows more than 2**40 steps")
    while hi - lo > 1:  # within(lo) and not within(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if within(mid) else (lo, mid)
    return lo
