"""Which training examples form each batch.

Poisson subsampling (Abadi et al. 2016, Sec. 3.1; Mironov et al. 2019): each of the N examples
joins the batch independently with probability q (or its own probability p_i, DPIS), so the
batch size is Binomial(N, q) and may be 0. This is the sampling the subsampled-Gaussian
accountants assume. Shuffled fixed-size batches are offered for comparison only.
"""

from __future__ import annotations

import torch

from dpnotes import validate


def poisson_batch(probs: torch.Tensor | float, n: int, generator: torch.Generator) -> torch.Tensor:
    """Indices (sorted, int64) of one Poisson-sampled batch of ``n`` examples.

    ``probs`` is q for all examples or a tensor of ``n`` per-example inclusion probabilities.
    Uniforms are drawn in float64 so that P(included) equals q to 1e-16.
    """
    n = validate.integer("n", n, minimum=1)
    if isinstance(probs, torch.Tensor):
        if probs.shape != (n,):
            raise ValueError(f"probs must have shape ({n},), got {tuple(probs.shape)}")
        if not bool(((probs >= 0) & (probs <= 1)).all()):
            raise ValueError("probs must lie in [0, 1]")
        probs = probs.to(torch.float64)
    else:
        validate.probability("q", probs)
    u = torch.rand(n, generator=generator, dtype=torch.float64, device=generator.device)
    return torch.nonzero(u < probs).squeeze(1)


def shuffled_batches(n: int, batch_size: int, steps: int, generator: torch.Generator) -> torch.Tensor:
    """``steps`` disjoint batches of ``batch_size`` indices from one random permutation, as rows."""
    n = validate.integer("n", n, minimum=1)
    batch_size = validate.integer("batch_size", batch_size, minimum=1)
    steps = validate.integer("steps", steps, minimum=1)
    if steps * batch_size > n:
        raise ValueError(f"steps * batch_size = {steps * batch_size} exceeds n = {n}")
    perm = torch.randperm(n, generator=generator, device=generator.device)
    return perm[: steps * batch_size].view(steps, batch_size)


def to_device(indices: torch.Tensor, device: torch.device | str) -> torch.Tensor:
    """``indices`` (drawn on the CPU) on ``device``, without making the host wait for the GPU.

    A plain ``.to("cuda")`` of a pageable CPU tensor synchronises the stream: the host waits
    for every kernel already queued (the previous step's), so it cannot queue step t+1 while
    the GPU runs step t. Through pinned memory with ``non_blocking=True`` the copy is queued
    like a kernel (the pinned buffer is kept alive by torch's caching host allocator until the
    copy is done). To the CPU, or for a tensor already on a device, this is ``.to(device)``.
    """
    device = torch.device(device)
    if device.type != "cuda" or indices.device.type != "cpu":
        return indices.to(device)
    return indices.pin_memory().to(device, non_blocking=True)
