"""K-ary randomized response (Warner 1965), as LabelDP's LP-1ST uses it.

Ghazi et al. 2021 ("Deep Learning with Label Differential Privacy", Sections 3 and 5):
the true label is kept with probability ``e^eps / (e^eps + K - 1)`` and otherwise
replaced by a uniformly drawn *other* label, which is eps-label-DP. RRTop-k
(:mod:`dpnotes.mechanisms.rr_prior`) is the same rule run on a subset of the labels,
so both share :func:`respond_within`.
"""

from __future__ import annotations

import numpy as np
import torch

from dpnotes import validate


def keep_probability(epsilon: float, k):
    """``e^eps / (e^eps + k - 1)``, written as ``1 / (1 + (k - 1) e^-eps)`` so large eps cannot overflow."""
    return 1.0 / (1.0 + (k - 1) * np.exp(-epsilon))


def check_labels(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """``labels``: a 1-D integer tensor with values in ``[0, num_classes)``."""
    if not isinstance(labels, torch.Tensor) or labels.dim() != 1 or labels.dtype not in (
        torch.int64, torch.int32, torch.int16, torch.uint8,
    ):
        raise ValueError("labels must be a 1-D integer tensor")
    if labels.numel() and (int(labels.min()) < 0 or int(labels.max()) >= num_classes):
        raise ValueError(f"labels must be in [0, {num_classes}), got values in "
                         f"[{int(labels.min())}, {int(labels.max())}]")
    return labels.long()


def respond_within(
    labels: torch.Tensor, in_set: torch.Tensor, epsilon: float, generator: torch.Generator | None
) -> torch.Tensor:
    """Randomized response restricted to a per-example label set (Ghazi et al., Algorithm 1, steps 2-3).

    ``in_set`` is an ``(n, K)`` boolean mask with at least one label per row. If the
    true label is in its row's set (of size ``k``), it is kept with probability
    ``e^eps / (e^eps + k - 1)`` and otherwise replaced by one of the other ``k - 1``
    set members uniformly; if it is not in the set, a set member is drawn uniformly.
    """
    n, _ = in_set.shape
    k = in_set.sum(dim=1)
    rows = torch.arange(n, device=labels.device)
    true_in_set = in_set[rows, labels]
    keep_p = keep_probability(epsilon, k.double())
    keep = true_in_set & (torch.rand(n, generator=generator, device=labels.device, dtype=torch.float64) < keep_p)
    candidates = in_set.clone()
    candidates[rows, labels] &= ~true_in_set  # exclude the true label when it is in the set
    # Uniform draw among candidates: the argmax of i.i.d. uniform scores on them.
    scores = torch.rand(in_set.shape, generator=generator, device=labels.device)
    other = scores.masked_fill(~candidates, -1.0).argmax(dim=1)
    return torch.where(keep, labels, other)


def table_within(in_set: torch.Tensor, epsilon: float) -> np.ndarray:
    """Exact ``P[true, output]`` of :func:`respond_within` for one set mask of shape ``(K,)``."""
    in_set = in_set.numpy().astype(bool)
    num_classes, k = in_set.size, int(in_set.sum())
    keep = keep_probability(epsilon, k)
    table = np.zeros((num_classes, num_classes))
    table[in_set] = np.where(in_set, (1.0 - keep) / max(k - 1, 1), 0.0)  # true label in the set
    table[~in_set] = np.where(in_set, 1.0 / k, 0.0)  # true label outside: uniform on the set
    members = np.flatnonzero(in_set)
    table[members, members] = keep
    return table


def randomized_response(
    labels: torch.Tensor, num_classes: int, epsilon: float, *, generator: torch.Generator | None = None
) -> torch.Tensor:
    """eps-label-DP randomized labels over ``num_classes`` classes (LabelDP's LP-1ST)."""
    num_classes = validate.integer("num_classes", num_classes, minimum=2)
    epsilon = validate.nonnegative("epsilon", epsilon)
    labels = check_labels(labels, num_classes)
    in_set = torch.ones(labels.numel(), num_classes, dtype=torch.bool, device=labels.device)
    return respond_within(labels, in_set, epsilon, generator)


def randomized_response_probabilities(num_classes: int, epsilon: float) -> np.ndarray:
    """Exact ``P[true, output]`` of :func:`randomized_response`: ``e^eps/(e^eps+K-1)`` on the diagonal."""
    num_classes = validate.integer("num_classes", num_classes, minimum=2)
    epsilon = validate.nonnegative("epsilon", epsilon)
    return table_within(torch.ones(num_classes, dtype=torch.bool), epsilon)
