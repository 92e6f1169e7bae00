"""Clip per-example gradients and add Gaussian noise to their sum (Abadi et al. 2016, Alg. 1).

    g_i <- g_i * min(1, C / ||g_i||_2)        (clip)
    g   <- sum_i g_i + N(0, (sigma C)^2 I)     (noise on the SUM)

Clipping is fused with the sum: the per-example scale factors are computed from the norms
and the clipped sum is one matrix-vector product per parameter, so clipped per-example
gradients are never materialized. Factored per-example gradients (``grad_backend="ghost"``,
:mod:`dpnotes.train.ghost`) form the same weighted sum from their layer factors.
"""

from __future__ import annotations

import math

import torch

from dpnotes import validate
from dpnotes.train.ghost import FactoredGrads
from dpnotes.train.grads import Params, grad_norms, param_norms

_TINY = 1e-6  # keeps ||g_i|| * factor <= C when ||g_i|| is 0 or at the float limit
AUTO_S_GAMMA = 0.01  # AUTO-S stability constant (Bu et al. 2022, "Automatic clipping")


def clip_factors(grads: Params | FactoredGrads, clip: float | None, mode: str = "flat",
                 weights: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """Per-example scale factor (shape [B]) for each parameter, so that the scaled gradient
    ``factor * g_i`` has norm <= C.

    ``mode="flat"``: one factor per example, min(1, C / ||g_i||) over all parameters.
    ``mode="per_layer"``: each of the L parameter tensors is clipped to C / sqrt(L), so the
    whole gradient still has norm <= C (the same sensitivity as flat clipping).
    ``mode="auto-s"``: AUTO-S (Bu et al. 2022), every gradient normalised,
    C / (||g_i|| + gamma) with gamma = :data:`AUTO_S_GAMMA`: norm below C, never above.
    ``weights`` (DPIS importance weights, one per example) multiply the gradient BEFORE
    clipping, so the sensitivity stays C whatever the weights. ``clip=None``: no clipping.
    """
    validate.choice("mode", mode, ("flat", "per_layer", "auto-s"))
    if clip is not None:
        validate.positive("clip", clip)
    names = list(grads.like if isinstance(grads, FactoredGrads) else grads)
    some = next(iter(grads.like.values() if isinstance(grads, FactoredGrads) else grads.values()))
    if clip is not None and mode == "flat" and weights is None:  # w = 1: the same numbers, fewer operations
        f = (clip / (grad_norms(grads) + _TINY)).clamp(max=1.0)
        return {k: f for k in names}
    b = len(grads) if isinstance(grads, FactoredGrads) else len(some)
    w = torch.ones(b, dtype=some.dtype, device=some.device) if weights is None else weights.to(some)
    if w.shape != (b,):
        raise ValueError(f"weights must have shape ({b},), got {tuple(w.shape)}")
    if clip is None:
        return {k: w for k in names}
    if mode == "flat":
        f = w * (clip / (w.abs() * grad_norms(grads) + _TINY)).clamp(max=1.0)
        return {k: f for k in names}
    if mode == "auto-s":
        f = w * clip / (w.abs() * grad_norms(grads) + AUTO_S_GAMMA)
        return {k: f for k in names}
    c = clip / math.sqrt(len(names))
    return {k: w * (c / (w.abs() * n + _TINY)).clamp(max=1.0) for k, n in param_norms(grads).items()}


def clipped_sum(grads: Params | FactoredGrads, factors: dict[str, torch.Tensor]) -> Params:
    """sum_i factor_i * g_i for each parameter (a [B] x [B, P] product, no [B, P] temporary;
    factored gradients form it from their layer factors)."""
    if isinstance(grads, FactoredGrads):
        return grads.weighted_sum(factors)
    return {k: (factors[k] @ g.reshape(len(g), -1)).view(g.shape[1:]) for k, g in grads.items()}


def add_noise(total: Params, std: float, generator: torch.Generator) -> Params:
    """``total + N(0, std^2)`` entrywise, the noise drawn from ``generator``."""
    std = validate.nonnegative("std", std)
    if std == 0:
        return dict(total)
    # in place on the fresh noise: the same numbers as v + std * z, without two temporaries
    return {k: torch.randn(v.shape, generator=generator, dtype=v.dtype, device=v.device).mul_(std).add_(v)
            for k, v in total.items()}
