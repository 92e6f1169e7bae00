"""Size guards for the numerical accountants (PLD, PRV): refuse a grid too large to hold.

Both discretise the privacy loss on a grid and compose by FFT, so memory and time grow with
the number of grid points. Tiny noise (sigma 0.01: single-step losses ~ 1/(2 sigma^2) = 5000)
or very long runs (1e9 steps) would need billions of points; such a request raises
:class:`GridTooLargeError`, naming the parameters and what would fit, before anything is
allocated; a numerical failure inside the PRV library is re-raised as
:class:`NumericalAccountantError` naming the inputs. The RDP accountants answer any of these inputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dpnotes.accounting.rdp import rdp_to_epsilon, subsampled_gaussian_rdp

# Measured peak memory: PLD about 230 bytes and PRV about 380 bytes per grid point. PRV's limit
# admits the GDP paper's longest run (sigma 0.5, 100 epochs, q 256/60000: 4.3e6 points).
PLD_MAX_POINTS = 4_000_000  # < 1 GiB
PRV_MAX_POINTS = 6_000_000  # < 2.5 GiB
_TAIL = 1e-15  # dp_accounting's default tail-mass truncation of a composed PLD
_Z = 10.0  # a single-step PLD spans the noise to about 10 standard deviations (mass e^-50)
# Integer orders (cheap closed form); any orders give a valid Chernoff bound, these a close one.
_ORDERS = np.array([2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 128, 256], dtype=float)


class NumericalAccountantError(ValueError):
    """A numerical accountant (PLD, PRV) cannot answer for these inputs; the message names them."""


class GridTooLargeError(NumericalAccountantError):
    """A numerical accountant would need more grid points than its limit (:data:`PLD_MAX_POINTS`,
    :data:`PRV_MAX_POINTS`)."""


def _describe(mechanisms: Sequence[tuple[float, float, float]]) -> str:
    return "; ".join(f"q {q:.3g}, sigma {s:.3g}, steps {t:.3g}" for q, s, t in mechanisms)


def pld_grid_points(mechanisms: Sequence[tuple[float, float, float]], discretization: float) -> float:
    """An estimate of the loss-grid points of the composed PLD of ``(q, sigma, steps)``: the loss
    range it must cover over the grid spacing, plus the drift of the pessimistic rounding.

    The composed loss lies, up to mass ``_TAIL``, below the RDP bound at delta = ``_TAIL``
    (the Chernoff bound: the privacy loss's moment generating function is the RDP curve,
    Mironov 2017, Proposition 3) and above minus that (the other direction); a single step's
    grid spans ``log(1 - q + q exp((1 + 2 Z sigma) / (2 sigma^2)))``; and the pessimistic
    rounding of every step moves the composed loss up by up to one grid step per step.
    """
    total = sum(t * subsampled_gaussian_rdp(q, s, 1, _ORDERS) for q, s, t in mechanisms)
    composed, _ = rdp_to_epsilon(total, _ORDERS, _TAIL, "classic")
    single = max(float(np.logaddexp(math.log1p(-q) if q < 1 else -math.inf,
                                    math.log(q) + (1 + 2 * _Z * s) / (2 * s * s))) for q, s, _ in mechanisms)
    steps = sum(math.ceil(t) for _, _, t in mechanisms)
    return 2 * max(composed, single) / discretization + steps


def check_pld_grid(mechanisms: Sequence[tuple[float, float, float]], discretization: float) -> None:
    """Raise :class:`GridTooLargeError` if :func:`pld_grid_points` exceeds :data:`PLD_MAX_POINTS`."""
    points = pld_grid_points(mechanisms, discretization)
    if points <= PLD_MAX_POINTS:
        return
    steps = sum(math.ceil(t) for _, _, t in mechanisms)
    room = PLD_MAX_POINTS - steps
    fix = (f"a discretization >= {discretization * (points - steps) / room:.3g} "
           "(`dpnotes epsilon --pld-discretization`) "
           "would fit" if room > 0 and math.isfinite(points) else
           f"no discretization fits {steps:.3g} steps (at most about {PLD_MAX_POINTS:.0e})")
    raise GridTooLargeError(
        f"pld: {_describe(mechanisms)} at discretization {discretization:g} needs about {points:.3g} "
        f"loss-grid points (limit {PLD_MAX_POINTS:.0e}); {fix}; or use an rdp accountant")


def check_pld_points(points: int) -> None:
    """Raise :class:`GridTooLargeError` if a composed PLD's window exceeds :data:`PLD_MAX_POINTS`."""
    if points > PLD_MAX_POINTS:
        raise GridTooLargeError(
            f"pld: the composed privacy loss needs {points:.3g} grid points (limit {PLD_MAX_POINTS:.0e}); "
            "use a coarser discretization (`dpnotes epsilon --pld-discretization`) or an rdp accountant")


def check_prv_grid(points: float, mechanisms: Sequence[tuple[float, float, float]], eps_error: float) -> None:
    """Raise :class:`GridTooLargeError` if the PRV accountant's grid (``points``) is too large."""
    if points <= PRV_MAX_POINTS:
        return
    raise GridTooLargeError(
        f"prv: {_describe(mechanisms)} with eps_error {eps_error:g} needs {points:.3g} grid points "
        f"(limit {PRV_MAX_POINTS:.0e}): sigma too small or steps too many for the PRV accountant; "
        "use pld or an rdp accountant")


def prv_failed(mechanisms: Sequence[tuple[float, float, float]], delta: float,
               exc: Exception) -> NumericalAccountantError:
    """The error to raise when the PRV library fails on these inputs (tiny delta or sigma)."""
    return NumericalAccountantError(
        f"prv: the PRV accountant cannot price {_describe(mechanisms)} at delta {delta:g} "
        f"({type(exc).__name__}: {exc}); use pld or an rdp accountant")
