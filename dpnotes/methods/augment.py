"""Batch augmentations of Ghazi et al. 2021 (App. B), vectorised over the batch: random crop,
horizontal flip, cutout and mixup. Every draw comes from a CPU ``torch.Generator`` (the
loop's plug-in generator), so a checkpointed run resumes with the same draws.

The authors' JAX code fixes what the paper leaves open: crop = zero-pad 4 and a random crop
back to the input size; flip per image; cutout = one 8 x 8 square set to 0, the SAME square
for the whole batch; mixup = one ``lambda ~ Beta(alpha, alpha)`` per batch, the batch mixed
with its own reversal (inputs and one-hot labels).
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from dpnotes import validate

AUGMENTATIONS = ("crop", "flip", "cutout")
CROP_PAD = 4
CUTOUT_SIZE = 8


def _uniform_ints(high: int, n: int, generator: torch.Generator) -> torch.Tensor:
    return torch.randint(0, high, (n,), generator=generator)


def random_crop(x: torch.Tensor, generator: torch.Generator, pad: int = CROP_PAD) -> torch.Tensor:
    """Zero-pad the last two dims by ``pad`` and crop each image back at a random offset."""
    b, _, h, w = x.shape
    padded = F.pad(x, (pad, pad, pad, pad))
    dy = _uniform_ints(2 * pad + 1, b, generator).to(x.device)
    dx = _uniform_ints(2 * pad + 1, b, generator).to(x.device)
    # every H x W window of each padded image, as a view [B, C, 2 pad + 1, 2 pad + 1, H, W]; image
    # i's crop is window (dy_i, dx_i): a copy of whole blocks, 3x faster than an element-wise
    # gather of rows and columns, and the same values (issue #36)
    windows = padded.unfold(2, h, 1).unfold(3, w, 1)
    return windows[torch.arange(b, device=x.device), :, dy, dx].contiguous()


def random_flip(x: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Mirror each image left-right with probability 1/2."""
    flip = (torch.rand(len(x), generator=generator) < 0.5).to(x.device)
    return torch.where(flip[:, None, None, None], x.flip(-1), x)


def cutout(x: torch.Tensor, generator: torch.Generator, size: int = CUTOUT_SIZE) -> torch.Tensor:
    """Set one ``size`` x ``size`` square (centre uniform over the image, clipped at the
    border), the same for the whole batch, to 0."""
    h, w = x.shape[-2:]
    cy = int(torch.randint(0, h, (1,), generator=generator))
    cx = int(torch.randint(0, w, (1,), generator=generator))
    y0, y1 = max(cy - size // 2, 0), min(cy + size - size // 2, h)
    x0, x1 = max(cx - size // 2, 0), min(cx + size - size // 2, w)
    out = x.clone()
    out[..., y0:y1, x0:x1] = 0
    return out


def augment(x: torch.Tensor, names: tuple[str, ...], generator: torch.Generator) -> torch.Tensor:
    """Apply the named augmentations (in the order crop, flip, cutout) to images ``[B, C, H, W]``."""
    for name in names:
        validate.choice("augment", name, AUGMENTATIONS)
    if names and x.dim() != 4:
        raise ValueError(f"augmentations need images of shape [B, C, H, W], got {tuple(x.shape)}")
    if "crop" in names:
        x = random_crop(x, generator)
    if "flip" in names:
        x = random_flip(x, generator)
    if "cutout" in names:
        x = cutout(x, generator)
    return x


def mixup(x: torch.Tensor, labels: torch.Tensor, num_classes: int, alpha: float,
          generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """``(lam x + (1 - lam) x[::-1], lam onehot(y) + (1 - lam) onehot(y)[::-1])`` with one
    ``lam ~ Beta(alpha, alpha)`` for the batch (Zhang et al. 2018; alpha > 0)."""
    validate.positive("mixup_alpha", alpha)
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    lam = float(np.random.default_rng(seed).beta(alpha, alpha))
    onehot = F.one_hot(labels, num_classes).to(x.dtype)
    return lam * x + (1 - lam) * x.flip(0), lam * onehot + (1 - lam) * onehot.flip(0)
