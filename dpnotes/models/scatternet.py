"""ScatterNet + CNN of Tramer & Boneh (ICLR 2021, "Differentially private learning needs better
features"), the DP-SGD-HF baseline and image model of DPIS (Wei et al. 2022, Sec. 5.1).

Fixed features: kymatio ``Scattering2D(J=2, L=8)``, 81 maps per input channel at 1/4 of the
resolution (81 x 7 x 7 on 28x28 MNIST / Fashion-MNIST, 243 x 8 x 8 on 32x32x3 CIFAR-10).
The transform has no parameters, so it is applied once to the data
(:func:`dpnotes.models.preprocessor`) and the registered models consume the features: kymatio's
torch backend uses in-place ops that ``torch.func.vmap`` cannot batch.

Trainable head (layers from the authors' code, read for facts; REFERENCE.md "DPIS"):
* 28x28 (``scatternet-cnn``): norm, Conv(81->16, k3, s2, p1) Tanh, Conv(16->32, k3, s1, p1)
  Tanh, Flatten (512), Linear(512, 32) Tanh, Linear(32, 10).
* 32x32x3 (``scatternet-cifar-cnn``): norm, Conv(243->64, k3, p1) Tanh, MaxPool(2),
  Conv(64->64, k3, p1) Tanh, Flatten (1024), Linear(1024, 10).
Input normalisation ``input_norm``: ``"group"`` = GroupNorm(num_groups, K, affine=False) (27
groups on Fashion-MNIST in the paper), ``"standardize"`` = per-channel (x - mean)/sqrt(var + 1e-5)
with ``stats=(mean, var)`` estimated elsewhere (the paper's private "BN" statistics on MNIST and
CIFAR-10, which carry their own privacy cost), or ``"none"``.

kymatio 0.3 cannot be imported through ``kymatio.torch`` with scipy >= 1.17 (its 3-D code
imports ``scipy.special.sph_harm``); we construct the 2-D torch frontend from its own submodule.
kymatio is optional (``pip install 'dpnotes[scatter]'``); only the feature extractor needs it.
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate
from dpnotes.models.registry import image_spec, register

SCATTER_MAPS = 81  # 1 + J L + L^2 J (J - 1) / 2 with J = 2, L = 8
INPUT_NORMS = ("group", "standardize", "none")


class ScatteringFeatures(nn.Module):
    """Fixed kymatio Scattering2D(J=2, L=8): ``(B, C, S, S)`` -> ``(B, 81 C, S/4, S/4)``."""

    def __init__(self, image_size: int):
        super().__init__()
        image_size = validate.integer("image_size", image_size, minimum=4)
        try:
            from kymatio.scattering2d.frontend.torch_frontend import ScatteringTorch2D
        except ImportError as err:
            raise ImportError("ScatterNet features need kymatio: pip install 'dpnotes[scatter]'"
                              ) from err
        self.scattering = ScatteringTorch2D(J=2, shape=(image_size, image_size), L=8)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.scattering(images).flatten(1, 2)


class Standardize(nn.Module):
    """(x - mean) / sqrt(var + 1e-5) per channel; channels with zero variance are set to 0."""

    def __init__(self, mean: torch.Tensor, var: torch.Tensor):
        super().__init__()
        if mean.shape != var.shape or mean.dim() != 1:
            raise ValueError(f"stats must be two 1-D tensors of one shape, got {tuple(mean.shape)}"
                             f" and {tuple(var.shape)}")
        if (var < 0).any():
            raise ValueError("stats variance must be >= 0")
        self.register_buffer("mean", mean.detach().clone())
        self.register_buffer("var", var.detach().clone())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        view = (-1, 1, 1)
        scaled = (x - self.mean.view(view)) / torch.sqrt(self.var.view(view) + 1e-5)
        return scaled * (self.var.view(view) != 0)


def input_normalization(channels: int, input_norm: str, num_groups: int,
                        stats: tuple[torch.Tensor, torch.Tensor] | None) -> nn.Module:
    validate.choice("input_norm", input_norm, INPUT_NORMS)
    if (stats is None) == (input_norm == "standardize"):
        raise ValueError("stats=(mean, var) is required by, and only by, input_norm='standardize'")
    if input_norm == "group":
        num_groups = validate.integer("num_groups", num_groups, minimum=1)
        if channels % num_groups:
            raise ValueError(f"num_groups must divide {channels} channels, got {num_groups}")
        return nn.GroupNorm(num_groups, channels, affine=False)
    if input_norm == "standardize":
        if stats[0].shape != (channels,):
            raise ValueError(f"stats must have {channels} channels, got {tuple(stats[0].shape)}")
        return Standardize(*stats)
    return nn.Identity()


_SOURCE = ("Tramer & Boneh (ICLR 2021) ScatterNet+CNN on {} (authors' code; REFERENCE.md 'DPIS'); "
           "DPIS (Wei et al. 2022) Sec. 5.1 DP-SGD-HF/DPIS model. Input: Scattering2D(J=2) "
           "features, see dpnotes.models.preprocessor")



def _spec(name, dataset, channels, size):
    return lambda input_norm="group", num_groups=27, stats=None, num_classes=10: image_spec(
        name, _SOURCE.format(dataset), channels, size, num_classes)


@register("scatternet-cnn", _spec("scatternet-cnn", "28x28 MNIST / Fashion-MNIST", SCATTER_MAPS, 7),
          preprocess=lambda **_: ScatteringFeatures(28))
def scatter_cnn_mnist(input_norm="group", num_groups=27, stats=None, num_classes=10) -> nn.Module:
    k = SCATTER_MAPS
    return nn.Sequential(
        input_normalization(k, input_norm, num_groups, stats),
        nn.Conv2d(k, 16, 3, stride=2, padding=1), nn.Tanh(),
        nn.Conv2d(16, 32, 3, stride=1, padding=1), nn.Tanh(),
        nn.Flatten(), nn.Linear(32 * 4 * 4, 32), nn.Tanh(),
        nn.Linear(32, validate.integer("num_classes", num_classes, minimum=2)))


@register("scatternet-cifar-cnn", _spec("scatternet-cifar-cnn", "32x32x3 CIFAR-10",
                                        3 * SCATTER_MAPS, 8),
          preprocess=lambda **_: ScatteringFeatures(32))
def scatter_cnn_cifar(input_norm="group", num_groups=27, stats=None, num_classes=10) -> nn.Module:
    k = 3 * SCATTER_MAPS
    return nn.Sequential(
        input_normalization(k, input_norm, num_groups, stats),
        nn.Conv2d(k, 64, 3, padding=1), nn.Tanh(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.Tanh(),
        nn.Flatten(), nn.Linear(64 * 4 * 4, validate.integer("num_classes", num_classes, minimum=2)))
