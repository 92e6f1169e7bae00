"""Tight numerical accounting of the Poisson-subsampled Gaussian via privacy random variables.

Gopi, Lee, Wutschitz, "Numerical Composition of Differential Privacy" (NeurIPS 2021):
the privacy loss random variable of one step is discretised and composed by FFT; the
result is an estimate of eps with rigorous lower and upper bounds (Theorem 5.5),
computed here by the authors' library ``prv_accountant``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from dpnotes import validate
from dpnotes.accounting.grid import check_prv_grid, prv_failed
from dpnotes.accounting.rdp import _check_sgm, integer_steps


class PRVEpsilon(NamedTuple):
    """eps estimate and the bounds lower <= true eps <= upper (for the given delta)."""

    epsilon: float
    lower: float
    upper: float


def prv_epsilon(
    q: float, sigma: float, steps: float, delta: float, *, eps_error: float = 0.01
) -> PRVEpsilon:
    """eps of ``steps`` Poisson-subsampled Gaussian steps by the PRV accountant.

    ``eps_error`` bounds ``upper - epsilon`` and ``epsilon - lower``; the delta error is
    ``delta / 1000`` (as opacus). Fractional ``steps`` are rounded up (the PRV composes
    whole steps), which can only increase eps. Report ``upper`` when a guarantee is needed.
    """
    return prv_compose([(q, sigma, steps)], delta, eps_error=eps_error)


def prv_compose(
    mechanisms: Sequence[tuple[float, float, float]], delta: float, *, eps_error: float = 0.01
) -> PRVEpsilon:
    """eps of a heterogeneous composition: ``steps`` Poisson-subsampled Gaussian steps with
    sampling rate ``q`` and noise multiplier ``sigma`` for each ``(q, sigma, steps)``
    (q = 1 is the plain Gaussian mechanism). Gopi et al. 2021, Section 5: the PRVs are
    discretised on one grid and composed together; errors and rounding as :func:`prv_epsilon`.
    A grid of more than :data:`~dpnotes.accounting.grid.PRV_MAX_POINTS` points (tiny sigma,
    very many steps) raises :class:`~dpnotes.accounting.grid.GridTooLargeError`, a failure of
    the library (tiny delta) :class:`~dpnotes.accounting.grid.NumericalAccountantError`.
    """
    if not mechanisms:
        raise ValueError("mechanisms must not be empty")
    delta = validate.probability("delta", delta, high_open=True)
    eps_error = validate.positive("eps_error", eps_error)
    # prv_accountant imports scipy.signal (about 0.6 s): only where a PRV is composed.
    from prv_accountant import PoissonSubsampledGaussianMechanism, PRVAccountant
    from prv_accountant.accountant import compute_safe_domain_size

    prvs, counts = [], []
    for q, sigma, steps in mechanisms:
        q, sigma, _ = _check_sgm(q, sigma, steps)
        prvs.append(PoissonSubsampledGaussianMechanism(noise_multiplier=sigma, sampling_probability=q))
        counts.append(integer_steps(steps))
    # The grid PRVAccountant allocates: [-L, L] at this mesh (its __init__, prv_accountant 0.2.0).
    try:
        domain = compute_safe_domain_size(prvs, counts, eps_error=eps_error, delta_error=delta / 1000)
    except (ArithmeticError, ValueError) as exc:
        raise prv_failed(mechanisms, delta, exc) from exc
    mesh = eps_error / np.sqrt(sum(counts) / 2 * np.log(12 / (delta / 1000)))
    check_prv_grid(2 * domain / mesh, mechanisms, eps_error)
    try:
        accountant = PRVAccountant(
            prvs=prvs, max_self_compositions=counts, eps_error=eps_error, delta_error=delta / 1000
        )
        lower, estimate, upper = accountant.compute_epsilon(delta=delta, num_self_compositions=counts)
    except (ArithmeticError, RuntimeError, ValueError) as exc:  # e.g. "Floating point errors will dominate"
        raise prv_failed(mechanisms, delta, exc) from exc
    # (eps < 0, delta)-DP implies (0, delta)-DP: every value is clipped at 0.
    return PRVEpsilon(max(float(estimate), 0.0), max(float(lower), 0.0), max(float(upper), 0.0))
