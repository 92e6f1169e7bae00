"""Privacy of SA-DPSGD (Fu, Chen, Ling 2022): the paper's accepted-steps bound and a sound bound.

Theorem 1 of the paper composes the Poisson-subsampled Gaussian RDP (q = B/N, noise
multiplier sigma) over the ``tau`` ACCEPTED steps only, converts with the classic
``eps = rdp(a) + log(1/delta)/(a - 1)`` (its Lemma 2) and minimizes over integer orders
2..64. (Its printed Eqs. (4) and (9) omit the ``log`` in front of the sum; we use the
RDP of Mironov, Talwar, Zhang 2019 that its proof cites.)

Counting only accepted steps is not a sound DP bound. Every one of the T generated steps
draws a batch from the private data and releases a noisy gradient to the accept test,
and the accept decision depends on that noisy gradient; the final model is a function
of all T releases (the rejected ones decide which updates survive), and ``tau`` itself
is data-dependent. The transcript of all T noisy gradients is a T-fold composition of
the subsampled Gaussian, and the model is post-processing of it, so counting all T
steps is sound -- provided the accept rule reads nothing else private (the paper's
energy is the TEST loss; a loss on training data would add its own cost, not counted here).
"""

from __future__ import annotations

from dpnotes import validate
from dpnotes.accounting.rdp import rdp_epsilon


def sadpsgd_epsilon(
    q: float, sigma: float, accepted_steps: int, delta: float, *, conversion: str = "classic",
    orders="integer",
) -> tuple[float, float]:
    """``(eps, order)`` as the paper reports it (Theorem 1): ``accepted_steps`` compositions only."""
    accepted_steps = validate.integer("accepted_steps", accepted_steps, minimum=1)
    return rdp_epsilon(q, sigma, accepted_steps, delta, orders=orders, conversion=conversion)


def sadpsgd_epsilon_sound(
    q: float, sigma: float, total_steps: int, delta: float, *, conversion: str = "classic",
    orders="integer",
) -> tuple[float, float]:
    """``(eps, order)`` counting all ``total_steps`` generated steps, accepted or rejected (sound)."""
    total_steps = validate.integer("total_steps", total_steps, minimum=1)
    return rdp_epsilon(q, sigma, total_steps, delta, orders=orders, conversion=conversion)
