"""Pre-activation ResNet-18 ("ResNet18 v2", He et al. ECCV 2016) adapted to 32x32 inputs, as used
by LabelDP (Ghazi et al. 2021, Supplementary "Architectures"): the ImageNet stem (7x7 conv and
max pooling) is replaced by one 3x3 convolution with stride 1; the upper layers are those of
the standard ResNet-18 (stages of 64, 128, 256, 512 channels, two basic blocks each).

``norm="batch"`` is the paper's; ``norm="group"`` (GroupNorm) is the per-sample-gradient
friendly variant: BatchNorm mixes the examples of a batch in train mode, so DP-SGD with
per-example gradients (and our per-sample-gradient tests) use GroupNorm. LabelDP itself trains
non-privately on privatised labels, where BatchNorm is fine.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from dpnotes import validate
from dpnotes.models.registry import image_spec, register

NORMS = ("batch", "group")


def _norm(kind: str, channels: int, num_groups: int) -> nn.Module:
    return nn.BatchNorm2d(channels) if kind == "batch" else nn.GroupNorm(num_groups, channels)


class PreActBlock(nn.Module):
    """norm-ReLU-conv3x3-norm-ReLU-conv3x3 plus shortcut; a strided or widening block projects
    the pre-activated input with a 1x1 convolution, otherwise the shortcut is the identity."""

    def __init__(self, in_channels: int, out_channels: int, stride: int, norm: str,
                 num_groups: int):
        super().__init__()
        self.norm1 = _norm(norm, in_channels, num_groups)
        self.conv1 = nn.Conv2d(in_channels, out_channels, 3, stride, 1, bias=False)
        self.norm2 = _norm(norm, out_channels, num_groups)
        self.conv2 = nn.Conv2d(out_channels, out_channels, 3, 1, 1, bias=False)
        self.projection = (nn.Conv2d(in_channels, out_channels, 1, stride, bias=False)
                           if stride != 1 or in_channels != out_channels else None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.norm1(x))
        shortcut = x if self.projection is None else self.projection(out)
        out = self.conv1(out)
        out = self.conv2(F.relu(self.norm2(out)))
        return out + shortcut


class PreActResNet18(nn.Module):
    """3x3 stem, 4 stages x 2 pre-activation blocks, final norm-ReLU, global average pooling,
    Linear. ``width`` is the first stage's channels (64 in ResNet-18; smaller only for tests)."""

    def __init__(self, num_classes: int = 10, norm: str = "batch", num_groups: int = 32,
                 width: int = 64, in_channels: int = 3):
        super().__init__()
        num_classes = validate.integer("num_classes", num_classes, minimum=2)
        validate.choice("norm", norm, NORMS)
        width = validate.integer("width", width, minimum=1)
        num_groups = validate.integer("num_groups", num_groups, minimum=1)
        if norm == "group" and width % num_groups:
            raise ValueError(f"num_groups must divide width ({width}), got {num_groups}")
        self.stem = nn.Conv2d(validate.integer("in_channels", in_channels, minimum=1), width, 3,
                              1, 1, bias=False)
        blocks, channels = [], width
        for stage in range(4):
            out = width * 2 ** stage
            blocks += [PreActBlock(channels, out, 1 if stage == 0 else 2, norm, num_groups),
                       PreActBlock(out, out, 1, norm, num_groups)]
            channels = out
        self.blocks = nn.Sequential(*blocks)
        self.final_norm = _norm(norm, channels, num_groups)
        self.classifier = nn.Linear(channels, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.final_norm(self.blocks(self.stem(x))))
        return self.classifier(out.mean(dim=(2, 3)))


_SOURCE = ("LabelDP (Ghazi et al. 2021) Supplementary 'Architectures': ResNet18 v2 (pre-activation, "
           "He et al. 2016) with a single stride-1 3x3 convolution as the stem for 32x32 inputs")


@register("resnet18v2", lambda num_classes=10, norm="batch", num_groups=32, width=64:
          image_spec("resnet18v2", _SOURCE, 3, 32, num_classes))
def resnet18v2(num_classes: int = 10, norm: str = "batch", num_groups: int = 32,
               width: int = 64) -> nn.Module:
    return PreActResNet18(num_classes, norm, num_groups, width)
