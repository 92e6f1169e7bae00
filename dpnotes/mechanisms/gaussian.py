"""The Gaussian mechanism: release ``value + N(0, (sigma * sensitivity)^2)`` per coordinate.

Used by DP-SGD (Abadi et al. 2016, Algorithm 1, "add noise") and by every paper here that
builds on it; ``sigma`` is the noise multiplier (noise std / L2 sensitivity), the
quantity the RDP accountants take.
"""

from __future__ import annotations

import torch

from dpnotes import validate


def gaussian_mechanism(
    value: torch.Tensor,
    sigma: float,
    sensitivity: float = 1.0,
    *,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """``value`` plus i.i.d. ``N(0, (sigma * sensitivity)^2)`` noise on every coordinate."""
    sigma = validate.positive("sigma", sigma)
    sensitivity = validate.positive("sensitivity", sensitivity)
    if not torch.is_floating_point(value):
        raise ValueError(f"value must be a floating-point tensor, got dtype {value.dtype}")
    noise = torch.randn(value.shape, generator=generator, dtype=value.dtype, device=value.device)
    return value + (sigma * sensitivity) * noise
