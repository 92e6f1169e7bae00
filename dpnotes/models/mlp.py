"""Fully connected networks: the DPlis MLPs and the GDP Adult network.

* DPlis (Wang et al. 2021, Sec. 5.1 "Datasets and Models"): "two hidden layers with 512 (1536)
  neurons and 128 (128) neurons for MNIST (CIFAR-10) all using ReLU", on flattened pixels.
* GDP (Bu et al. 2020, Sec. 5 "Adult income"; TF Privacy research/GDP_2019, REFERENCE.md "GDP"):
  Dense(16, ReLU) -> Dense(2) on the 123 binary LIBSVM a9a features.
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate
from dpnotes.models.keras_init import keras_init
from dpnotes.models.registry import ModelSpec, image_spec, register


class MLP(nn.Sequential):
    """Flatten, then Linear-ReLU for each hidden width, then Linear(last, num_classes)."""

    def __init__(self, in_features: int, hidden: tuple[int, ...], num_classes: int):
        in_features = validate.integer("in_features", in_features, minimum=1)
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        layers: list[nn.Module] = [nn.Flatten()]
        for width in hidden:
            layers += [nn.Linear(in_features, validate.integer("hidden width", width, minimum=1)),
                       nn.ReLU()]
            in_features = width
        super().__init__(*layers, nn.Linear(in_features, num_classes))


_DPLIS = "DPlis (Wang et al. 2021) Sec. 5.1 'Datasets and Models': MLP, ReLU, hidden {}"
_ADULT = ("GDP (Bu et al. 2020) Sec. 5 'Adult income' and TF Privacy research/GDP_2019 "
          "(REFERENCE.md 'GDP'): Dense(16, ReLU) -> Dense(2), Keras default init")


@register("dplis-mlp-mnist", lambda num_classes=10:
          image_spec("dplis-mlp-mnist", _DPLIS.format("512-128 (MNIST)"), 1, 28, num_classes))
def dplis_mlp_mnist(num_classes: int = 10) -> nn.Module:
    return MLP(28 * 28, (512, 128), num_classes)


@register("dplis-mlp-cifar", lambda num_classes=10:
          image_spec("dplis-mlp-cifar", _DPLIS.format("1536-128 (CIFAR-10)"), 3, 32, num_classes))
def dplis_mlp_cifar(num_classes: int = 10) -> nn.Module:
    return MLP(3 * 32 * 32, (1536, 128), num_classes)


@register("gdp-adult", lambda in_features=123: ModelSpec(
    name="gdp-adult", source=_ADULT, input_kind="tabular", input_shape=(in_features,),
    input_dtype=torch.float32, num_outputs=2))
def gdp_adult(in_features: int = 123) -> nn.Module:
    return keras_init(MLP(in_features, (16,), 2))
