"""Convolution factors of the ghost backend (:mod:`dpnotes.train.ghost_layers`): a call's
unfolded input patches and output gradients, and its per-example weight gradients.

A convolution ``z_t = W a_t + b`` at output positions t has the per-example weight gradient
``G_i = sum_t g_it a_it^T`` (a: the input patch read at t; Li et al. 2022, ghost clipping).
:func:`factors` unfolds the patches for the Gram form of its norm; :func:`conv_weight_grad`
forms ``G_i`` with the convolution's own backward kernel (the batch as B groups of one);
:func:`patch_weight_grads` forms it from channels-last patches and one batched matmul, the
fast way on a CPU for many input channels (used for several calls of a layer, DPlis' draws).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def factors(m: nn.Module, x: torch.Tensor, gy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``A`` [b, T, p] (inputs, or unfolded patches) and ``Gr`` [b, T, d] of one call."""
    b = len(x)
    if isinstance(m, nn.Linear):
        return x.reshape(b, -1, m.in_features), gy.reshape(b, -1, m.out_features)
    x, pad = _padded(m, x)
    if isinstance(m, nn.Conv1d):  # as a 1 x L image
        x, k, s, dil, pad = x.unsqueeze(-2), (1, *m.kernel_size), (1, *m.stride), (1, *m.dilation), (0, *pad)
    else:
        k, s, dil = m.kernel_size, m.stride, m.dilation
    a = F.unfold(x, k, dilation=dil, padding=pad, stride=s).transpose(1, 2)
    g = gy.reshape(b, m.out_channels, -1).transpose(1, 2)
    if a.shape[1] != g.shape[1]:
        raise RuntimeError(f"ghost conv rule: {a.shape[1]} patches for {g.shape[1]} outputs")
    return a, g


def conv_weight_grad(m: nn.Module, x: torch.Tensor, gy: torch.Tensor, per_example: bool) -> torch.Tensor:
    """The weight gradient of a convolution call by the convolution's own backward kernel:
    summed over the batch, or per example ([B * d, C, *k]: the batch as B groups of one)."""
    x, pad = _padded(m, x)
    b, shape = len(x), m.weight.shape
    if per_example:
        x, gy, shape = x.reshape(1, -1, *x.shape[2:]), gy.reshape(1, -1, *gy.shape[2:]), (b * shape[0], *shape[1:])
    nd = len(m.kernel_size)
    return torch.ops.aten.convolution_backward(
        gy, x, x.new_empty(shape), None, list(m.stride), list(pad), list(m.dilation), False, [0] * nd,
        b if per_example else 1, [False, True, False])[1]


def patch_weight_grads(m: nn.Module, calls, chunk: int) -> torch.Tensor:
    """Per-example weight gradients summed over ``calls`` ((input, output gradient) pairs), as
    [B, d, p] with p ordered (*kernel, C): the weight's channels-last order (see
    :func:`channels_last_weight`). The patches are a strided view of the channels-last input,
    copied ``chunk`` elements at a time."""
    b, nd = len(calls[0][0]), len(m.kernel_size)
    p = m.in_channels * math.prod(m.kernel_size)
    t = math.prod(calls[0][1].shape[2:])
    step = max(1, chunk // (t * p))
    out = calls[0][0].new_empty(b, m.out_channels, p)
    for s in range(0, b, step):
        sl = slice(s, min(s + step, b))
        total = None
        for x, gy in calls:
            x, pad = _padded(m, x[sl])
            if any(pad):
                x = F.pad(x, [q for n in reversed(pad) for q in (n, n)])
            xc = x.movedim(1, -1)  # [b, *spatial, C]: a view when x is channels-last
            st = xc.stride()
            size = (len(xc), *gy.shape[2:], *m.kernel_size, m.in_channels)
            strides = (st[0], *(st[1 + i] * m.stride[i] for i in range(nd)),
                       *(st[1 + i] * m.dilation[i] for i in range(nd)), st[-1])
            a = xc.as_strided(size, strides).reshape(len(xc), -1, p)
            g = gy[sl].movedim(1, -1).reshape(len(xc), -1, m.out_channels)
            total = torch.bmm(g.transpose(1, 2), a) if total is None \
                else total.baddbmm_(g.transpose(1, 2), a)
        out[sl] = total
    return out


def channels_last_weight(m: nn.Module, t: torch.Tensor) -> torch.Tensor:
    """``t`` [..., d, p] in :func:`patch_weight_grads`' order as [..., d, C, *kernel] (a view)."""
    return t.unflatten(-1, (*m.kernel_size, m.in_channels)).movedim(-1, -len(m.kernel_size) - 1)


def _padded(m: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, ...]]:
    """The input and the symmetric padding per spatial axis that reproduce the convolution's;
    ``padding="same"`` pads explicitly (its odd remainder goes to the right, as torch does)."""
    nd = len(m.kernel_size)
    if not isinstance(m.padding, str):
        return x, tuple(m.padding)
    if m.padding == "valid":
        return x, (0,) * nd
    pads = []
    for d, k in reversed(list(zip(m.dilation, m.kernel_size))):
        total = d * (k - 1)
        pads += [total // 2, total - total // 2]
    return F.pad(x, pads), (0,) * nd
