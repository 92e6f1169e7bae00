"""Convolution helpers of the ghost backend (:mod:`dpnotes.train.ghost_layers`): the Gram
matrix of a call's input patches without unfolding them, and per-example weight gradients.

A convolution computes ``z_t = W a_t (+ b)`` at output positions t, ``a_t`` the input patch of t
(C channels x k kernel offsets); its per-example weight gradient is ``G_i = sum_t g_it a_it^T``.
Ghost clipping (Li et al. 2022) needs the patch Gram matrix
``(A A^T)[t, t'] = sum_{c, k} x[c, u_t + k] x[c, u_t' + k]`` (u_t: the patch's corner in the
padded input). Grouping the sum by kernel offset,

    (A A^T)[t, t'] = sum_k M[u_t + k, u_t' + k],   M[u, v] = sum_c x[c, u] x[c, v],

so one Gram matrix ``M`` of the input's positions (channels summed, C (HW)^2 multiply-adds
per example) and a sum of k shifted blocks of it replace the unfolded patches (a copy of
T C k numbers) and their Gram matrix (T^2 C k multiply-adds): k times fewer operations for a
stride-1 convolution, and no copy. Padding positions are zero, so their terms are left out
(:func:`patch_gram`).

``G_i`` itself comes from the convolution's own backward kernel, the batch as B groups of one
(:func:`conv_weight_grad`), or from channels-last patches and one batched matmul
(:func:`patch_weight_grads`), the fast way on a CPU for many input channels (used for several
calls of a layer, DPlis' draws).
"""

from __future__ import annotations

import math
from weakref import WeakKeyDictionary

import torch
import torch.nn.functional as F
from torch import nn


def as_2d(m: nn.Module, x: torch.Tensor):
    """The padded input as an image, and kernel, stride, dilation and padding per axis (a
    Conv1d call is a 1 x L image)."""
    x, pad = padded(m, x)
    if isinstance(m, nn.Conv1d):
        return x.unsqueeze(-2), (1, *m.kernel_size), (1, *m.stride), (1, *m.dilation), (0, *pad)
    return x, tuple(m.kernel_size), tuple(m.stride), tuple(m.dilation), pad


def _span(n_in: int, n_out: int, offset: int, stride: int) -> tuple[slice, slice] | None:
    """Output positions o (a slice) whose input index ``o * stride + offset`` lies in
    [0, n_in), and those input indices (a slice); None when there are none."""
    lo, hi = max(0, -(offset // stride)), min(n_out, (n_in - 1 - offset) // stride + 1)
    if hi <= lo:
        return None
    first = lo * stride + offset
    return slice(lo, hi), slice(first, first + (hi - lo - 1) * stride + 1, stride)


def patch_gram(m: nn.Module, x1: torch.Tensor, x2: torch.Tensor) -> torch.Tensor:
    """``A1 A2^T`` [b, T, T] of the unfolded input patches of two calls of convolution ``m``
    (module docstring), inputs ``x1``, ``x2`` of one shape, without unfolding them."""
    x1, (k0, k1), (s0, s1), (d0, d1), (p0, p1) = as_2d(m, x1)
    x2 = as_2d(m, x2)[0]
    b, _, h, w = x1.shape
    ho, wo = (h + 2 * p0 - d0 * (k0 - 1) - 1) // s0 + 1, (w + 2 * p1 - d1 * (k1 - 1) - 1) // s1 + 1
    f1, f2 = x1.flatten(2), x2.flatten(2)  # [b, C, HW] (a view for contiguous and channels-last inputs)
    gram = torch.bmm(f1.transpose(1, 2), f2).view(b, h, w, h, w)
    out = gram.new_zeros(b, ho, wo, ho, wo)
    for i in range(k0):
        rows = _span(h, ho, i * d0 - p0, s0)
        for j in range(k1):
            cols = _span(w, wo, j * d1 - p1, s1)
            if rows is not None and cols is not None:
                (oi, ii), (oj, ij) = rows, cols
                out[:, oi, oj, oi, oj] += gram[:, ii, ij, ii, ij]
    return out.view(b, ho * wo, ho * wo)


def unfolded(m: nn.Module, x: torch.Tensor, gy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A convolution call's unfolded input patches ``A`` [b, T, p] and output gradients ``Gr``
    [b, T, d] (the Gram form from copies of the patches: cheapest when T is small)."""
    x, k, s, dil, pad = as_2d(m, x)
    a = F.unfold(x, k, dilation=dil, padding=pad, stride=s).transpose(1, 2)
    g = gy.reshape(len(gy), m.out_channels, -1).transpose(1, 2)
    if a.shape[1] != g.shape[1]:
        raise RuntimeError(f"ghost conv rule: {a.shape[1]} patches for {g.shape[1]} outputs")
    return a, g


def gram_sq_norms(m: nn.Module, calls) -> torch.Tensor:
    """``||G_i||^2`` [b] of the gradient summed over a convolution's ``calls`` ((input, output
    gradient) pairs): ``sum_{c, c'} < A_c A_c'^T, Gr_c Gr_c'^T >`` over calls c, c' (the
    concatenated factors' Gram matrices, block by block; Li et al. 2022).

    The sum is ``||G_i||^2 >= 0``, but in float32 it can round below 0 when the example's
    output gradients are denormal (a saturated softmax, loss ~ 0: products of 1e-23s underflow
    to multiples of 1.4e-45 while the input Gram holds thousands). Clamped at 0: the square root
    of a negative would make the example's norm, its clip factor and the whole update NaN (it
    did: SA-DPSGD Fashion-MNIST seed 1, step 1,087). Gram forms elsewhere are clamped alike."""
    gs = [gy.reshape(len(gy), m.out_channels, -1) for _, gy in calls]
    total = None
    for i, (x, _) in enumerate(calls):
        for j in range(i, len(calls)):
            term = (patch_gram(m, x, calls[j][0]) * torch.bmm(gs[i].transpose(1, 2), gs[j])).sum((1, 2))
            total = term if total is None else total + (term if i == j else 2 * term)
    return total.clamp_(min=0)


def conv_weight_grad(m: nn.Module, x: torch.Tensor, gy: torch.Tensor, per_example: bool) -> torch.Tensor:
    """The weight gradient of a convolution call by the convolution's own backward kernel:
    summed over the batch, or per example ([B * d, C, *k]: the batch as B groups of one)."""
    x, pad = padded(m, x)
    b, shape = len(x), m.weight.shape
    if per_example:
        x, gy, shape = x.reshape(1, -1, *x.shape[2:]), gy.reshape(1, -1, *gy.shape[2:]), (b * shape[0], *shape[1:])
    nd = len(m.kernel_size)
    return torch.ops.aten.convolution_backward(
        gy, x, x.new_empty(shape), None, list(m.stride), list(pad), list(m.dilation), False, [0] * nd,
        b if per_example else 1, [False, True, False])[1]


# Each convolution's patch buffer, kept across calls and steps: a fresh one per call took most of
# the DPlis CNNs' per-example gradient time in page faults (issue #36: 8 ms against 0.5 ms for the
# copy itself, tf-mnist-cnn's second layer, B = 256, one thread).
_PATCHES: WeakKeyDictionary = WeakKeyDictionary()


def _patch_buffer(m: nn.Module, numel: int, like: torch.Tensor) -> torch.Tensor:
    """A flat buffer of at least ``numel`` elements of ``like``'s dtype and device, kept for ``m``."""
    buf = _PATCHES.get(m)
    if buf is None or buf.numel() < numel or buf.dtype != like.dtype or buf.device != like.device:
        buf = _PATCHES[m] = like.new_empty(numel)
    return buf[:numel]


def patch_weight_grads(m: nn.Module, calls, chunk: int) -> torch.Tensor:
    """Per-example weight gradients summed over ``calls`` ((input, output gradient) pairs), as
    [B, d, p] with p ordered (*kernel, C): the weight's channels-last order (see
    :func:`channels_last_weight`). The patches are a strided view of the channels-last input,
    copied ``chunk`` elements at a time into a buffer kept for ``m`` (:data:`_PATCHES`)."""
    b, nd = len(calls[0][0]), len(m.kernel_size)
    p = m.in_channels * math.prod(m.kernel_size)
    t = math.prod(calls[0][1].shape[2:])
    step = max(1, chunk // (t * p))
    out = calls[0][0].new_empty(b, m.out_channels, p)
    for s in range(0, b, step):
        sl = slice(s, min(s + step, b))
        total = None
        for x, gy in calls:
            x, pad = padded(m, x[sl])
            if any(pad):
                x = F.pad(x, [q for n in reversed(pad) for q in (n, n)])
            xc = x.movedim(1, -1)  # [b, *spatial, C]: a view when x is channels-last
            st = xc.stride()
            size = (len(xc), *gy.shape[2:], *m.kernel_size, m.in_channels)
            strides = (st[0], *(st[1 + i] * m.stride[i] for i in range(nd)),
                       *(st[1 + i] * m.dilation[i] for i in range(nd)), st[-1])
            a = _patch_buffer(m, math.prod(size), xc).view(size)
            a = a.copy_(xc.as_strided(size, strides)).view(len(xc), -1, p)
            g = gy[sl].movedim(1, -1).reshape(len(xc), -1, m.out_channels)
            total = torch.bmm(g.transpose(1, 2), a) if total is None \
                else total.baddbmm_(g.transpose(1, 2), a)
        out[sl] = total
    return out


def channels_last_weight(m: nn.Module, t: torch.Tensor) -> torch.Tensor:
    """``t`` [..., d, p] in :func:`patch_weight_grads`' order as [..., d, C, *kernel] (a view)."""
    return t.unflatten(-1, (*m.kernel_size, m.in_channels)).movedim(-1, -len(m.kernel_size) - 1)


def padded(m: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, tuple[int, ...]]:
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
