"""Small convolutional networks of the DPlis, GDP and SA-DPSGD papers.

* :class:`TutorialCNN`: the TF Privacy MNIST tutorial CNN, used by GDP (Bu et al. 2020, Sec. 5,
  MNIST) and DPlis (Wang et al. 2021, Sec. 5; the authors' code fixes the layers, see
  REFERENCE.md "DPlis"), and with Tanh by SA-DPSGD (Fu et al. 2022, "4-layer CNN"; layers as in
  the first author's DPSUR code, REFERENCE.md "SA-DPSGD").
* :class:`CifarCNN9`: the (tanh) CIFAR-10 CNN of Papernot et al. (AAAI 2021, "Tempered sigmoid
  activations for deep learning with differential privacy"), the DP-SGD/DP-SGD-TS model of DPIS
  (Sec. 5.1). The same layers are Tramer & Boneh's end-to-end CIFAR-10 CNN (their code) and the
  CIFAR-10 CNN of SA-DPSGD's lineage (DPSUR code; REFERENCE.md "SA-DPSGD").
"""

from __future__ import annotations

from torch import nn

from dpnotes import validate
from dpnotes.models.registry import image_spec, register

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


def make_activation(name: str) -> nn.Module:
    """A fresh activation module (never in-place, so per-sample vmap works)."""
    return ACTIVATIONS[validate.choice("activation", name, ACTIVATIONS)]()


class TutorialCNN(nn.Sequential):
    """Conv(c->16, k8, s2, p2) act MaxPool(2, s1) Conv(16->32, k4, s2) act MaxPool(2, s1)
    Flatten Linear(32*s*s, 32) act Linear(32, classes); s = 4 on 28x28 inputs (512 features),
    5 on 32x32 inputs (800 features)."""

    def __init__(self, in_channels: int = 1, image_size: int = 28, activation: str = "relu",
                 num_classes: int = 10):
        in_channels = validate.integer("in_channels", in_channels, minimum=1)
        image_size = validate.integer("image_size", image_size, minimum=16)
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        side = ((image_size + 4 - 8) // 2 + 1 - 1 - 4) // 2 + 1 - 1
        super().__init__(
            nn.Conv2d(in_channels, 16, 8, stride=2, padding=2), make_activation(activation),
            nn.MaxPool2d(2, stride=1),
            nn.Conv2d(16, 32, 4, stride=2), make_activation(activation),
            nn.MaxPool2d(2, stride=1),
            nn.Flatten(),
            nn.Linear(32 * side * side, 32), make_activation(activation),
            nn.Linear(32, num_classes),
        )


class CifarCNN9(nn.Sequential):
    """3x3 convolutions (padding 1) [32, 32, M, 64, 64, M, 128, 128, M] with ``activation``
    (tanh in Papernot et al. and SA-DPSGD; M = MaxPool(2)), then Flatten Linear(128*4*4 = 2048,
    128) activation Linear(128, classes), on 32x32 inputs."""

    def __init__(self, in_channels: int = 3, num_classes: int = 10, activation: str = "tanh"):
        in_channels = validate.integer("in_channels", in_channels, minimum=1)
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        layers: list[nn.Module] = []
        for width in (32, 64, 128):
            for _ in range(2):
                layers += [nn.Conv2d(in_channels, width, 3, padding=1), make_activation(activation)]
                in_channels = width
            layers.append(nn.MaxPool2d(2))
        super().__init__(*layers, nn.Flatten(), nn.Linear(128 * 4 * 4, 128), make_activation(activation),
                         nn.Linear(128, num_classes))


_TUTORIAL = ("TF Privacy MNIST tutorial CNN; GDP (Bu et al. 2020) Sec. 5 MNIST; DPlis (Wang et al. "
             "2021) Sec. 5, layers from the authors' code (REFERENCE.md 'DPlis')")
_DPLIS_CIFAR = ("DPlis (Wang et al. 2021) Sec. 5 CIFAR-10 CNN: the tutorial CNN with 3 input "
                "channels, Linear(800, 32) (authors' code, REFERENCE.md 'DPlis')")
_SADPSGD = ("SA-DPSGD (Fu et al. 2022) Sec. 5 '4-layer CNN' (MNIST, Fashion-MNIST): the tutorial "
            "CNN with Tanh, as in the first author's DPSUR code (REFERENCE.md 'SA-DPSGD')")
_PAPERNOT = ("Papernot et al. 2021 (AAAI, tempered sigmoids) CIFAR-10 CNN with tanh, cited by DPIS "
             "Sec. 5.1; layers as in Tramer & Boneh's code for it (end-to-end CIFAR-10 CNN)")
_SADPSGD_CIFAR = ("SA-DPSGD (Fu et al. 2022) Sec. 5 CIFAR-10 CNN as in the first author's DPSUR "
                  "code (REFERENCE.md 'SA-DPSGD'; whether it is the paper's '9-layer' CNN is "
                  "unverified); same layers as papernot-cifar-cnn")


@register("tf-mnist-cnn", lambda activation="relu", num_classes=10:
          image_spec("tf-mnist-cnn", _TUTORIAL, 1, 28, num_classes))
def tf_mnist_cnn(activation: str = "relu", num_classes: int = 10) -> nn.Module:
    return TutorialCNN(1, 28, activation, num_classes)


@register("dplis-cifar-cnn", lambda activation="relu", num_classes=10:
          image_spec("dplis-cifar-cnn", _DPLIS_CIFAR, 3, 32, num_classes))
def dplis_cifar_cnn(activation: str = "relu", num_classes: int = 10) -> nn.Module:
    return TutorialCNN(3, 32, activation, num_classes)


@register("sadpsgd-cnn", lambda num_classes=10:
          image_spec("sadpsgd-cnn", _SADPSGD, 1, 28, num_classes))
def sadpsgd_cnn(num_classes: int = 10) -> nn.Module:
    return TutorialCNN(1, 28, "tanh", num_classes)


@register("papernot-cifar-cnn", lambda num_classes=10:
          image_spec("papernot-cifar-cnn", _PAPERNOT, 3, 32, num_classes))
def papernot_cifar_cnn(num_classes: int = 10) -> nn.Module:
    return CifarCNN9(3, num_classes)


@register("sadpsgd-cifar-cnn", lambda activation="tanh", num_classes=10:
          image_spec("sadpsgd-cifar-cnn", _SADPSGD_CIFAR, 3, 32, num_classes))
def sadpsgd_cifar_cnn(activation: str = "tanh", num_classes: int = 10) -> nn.Module:
    """``activation="relu"``: the DP-SGD (ReLU) baseline of SA-DPSGD Table 1."""
    return CifarCNN9(3, num_classes, activation)
