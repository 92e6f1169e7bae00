"""The simplified Inception network of LabelDP (Ghazi et al., NeurIPS 2021, Appendix B
"Architectures"), its model for MNIST, Fashion-MNIST and KMNIST::

    Inception :: Conv(3x3, 96) S1 S2 S3 GlobalMaxPool Linear
    S1        :: Block(32, 32) Block(32, 48) Conv(3x3, 160, stride 2)
    S2        :: Block(112, 48) Block(96, 64) Block(80, 80) Block(48, 96) Conv(3x3, 240, stride 2)
    S3        :: Block(176, 160) Block(176, 160)
    Block(a, b) :: Concat(Conv(1x1, a), Conv(3x3, b))
    Conv      :: Convolution BatchNormalization ReLU

(the small Inception of Zhang et al. 2017, "Understanding deep learning requires rethinking
generalization", with each downsampling module reduced to its strided convolution, as App. B
prints it). Ours, where App. B is silent: "same" padding (3x3 convolutions pad 1, so a 1x28x28
input gives 96x28x28, 160x14x14 after S1, 240x7x7 after S2 and 336x7x7 after S3); convolutions
without bias (the BatchNorm's shift takes its place); PyTorch's default initialisation.

On 1x28x28 inputs (the MNIST path's pixels / 255, ``(N, 1, 28, 28)``) it has 1,894,058
parameters (:data:`PARAMETERS`, 10 classes) and takes 223,299,104 multiply-accumulates per
image forward (:func:`forward_macs`): the convolutions and the Linear layer.

BatchNorm in train mode mixes a batch's examples, so DP-SGD cannot train it (registered with
``per_example=False``); LabelDP trains it non-privately, on privatised labels.
"""

from __future__ import annotations

import torch
from torch import nn

from dpnotes import validate
from dpnotes.models.registry import image_spec, register

STEM = 96
# ("block", a, b) = Concat(Conv1x1(a), Conv3x3(b)); ("down", c) = Conv3x3(c, stride 2)
STAGES = (
    (("block", 32, 32), ("block", 32, 48), ("down", 160)),
    (("block", 112, 48), ("block", 96, 64), ("block", 80, 80), ("block", 48, 96), ("down", 240)),
    (("block", 176, 160), ("block", 176, 160)),
)
PARAMETERS = 1_894_058  # with 1 input channel and 10 classes (tests check it)
FORWARD_MACS = 223_299_104  # per 1x28x28 image, 10 classes (forward_macs; tests check it)


class ConvBNReLU(nn.Sequential):
    """Convolution (no bias, "same" padding) BatchNorm ReLU: App. B's Conv."""

    def __init__(self, in_channels: int, out_channels: int, kernel: int, stride: int = 1):
        super().__init__(nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, bias=False),
                         nn.BatchNorm2d(out_channels), nn.ReLU())


class Block(nn.Module):
    """App. B's Block(a, b): Concat(Conv(1x1, a), Conv(3x3, b)) along the channels (a + b out)."""

    def __init__(self, in_channels: int, a: int, b: int):
        super().__init__()
        self.branch1 = ConvBNReLU(in_channels, a, 1)
        self.branch3 = ConvBNReLU(in_channels, b, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([self.branch1(x), self.branch3(x)], dim=1)


class SimplifiedInception(nn.Module):
    """App. B's simplified Inception (module docstring): stem, stages S1-S3, global max pooling
    over the spatial axes, Linear(336, classes)."""

    def __init__(self, in_channels: int = 1, num_classes: int = 10):
        super().__init__()
        in_channels = validate.integer("in_channels", in_channels, minimum=1)
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        self.stem = ConvBNReLU(in_channels, STEM, 3)
        stages, channels = [], STEM
        for stage in STAGES:
            layers = []
            for kind, *widths in stage:
                if kind == "block":
                    layers.append(Block(channels, *widths))
                    channels = sum(widths)
                else:
                    layers.append(ConvBNReLU(channels, widths[0], 3, stride=2))
                    channels = widths[0]
            stages.append(nn.Sequential(*layers))
        self.stages = nn.Sequential(*stages)
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.stages(self.stem(x)).amax(dim=(2, 3)))


def forward_macs(model: nn.Module, input_shape: tuple[int, ...] = (1, 28, 28)) -> int:
    """Multiply-accumulates of one forward pass of ``model`` on one image of ``input_shape``:
    every Conv2d (output positions x output channels x kernel area x input channels / groups)
    and Linear layer (in x out), from the shapes a forward pass gives; BatchNorm, ReLU, the
    concatenations and the pooling (a few MACs per activation) are left out."""
    total = 0

    def count(module, inputs, output):
        nonlocal total
        if isinstance(module, nn.Conv2d):
            kh, kw = module.kernel_size
            total += output[0].numel() * kh * kw * module.in_channels // module.groups
        elif isinstance(module, nn.Linear):
            total += module.in_features * module.out_features

    hooks = [m.register_forward_hook(count) for m in model.modules() if isinstance(m, (nn.Conv2d, nn.Linear))]
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(torch.zeros(1, *input_shape))
    finally:
        model.train(was_training)
        for h in hooks:
            h.remove()
    return total


_SOURCE = ("LabelDP (Ghazi et al. 2021) App. B 'Architectures': the simplified Inception for MNIST, "
           "Fashion-MNIST and KMNIST (Conv(3x3, 96), stages S1-S3 of Blocks = Concat(Conv1x1, Conv3x3) "
           "and stride-2 3x3 Convs, global max pooling, Linear; Conv = conv, BatchNorm, ReLU)")


@register("labeldp-inception", lambda num_classes=10: image_spec("labeldp-inception", _SOURCE, 1, 28, num_classes),
          per_example=False)
def labeldp_inception(num_classes: int = 10) -> nn.Module:
    return SimplifiedInception(1, num_classes)
