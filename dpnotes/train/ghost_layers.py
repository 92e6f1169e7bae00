"""Layer rules of the ghost-norm backend (:mod:`dpnotes.train.ghost`): one layer's per-example
gradients, held as the factors autograd already has, and their norms and weighted sums.

A layer computing ``z_t = W a_t (+ b)`` at positions t = 1..T of an example (Linear on
``[B, ..., p]`` inputs; Conv1d/Conv2d on the unfolded input patches) has the per-example
weight gradient ``G_i = sum_t g_it a_it^T`` (g = dL_i/dz, the output gradient). Its squared
norm needs no ``G_i`` (Goodfellow 2015 for T = 1; Li et al. 2022, "ghost clipping", for T > 1):

    ||G_i||_F^2 = ||a_i||^2 ||g_i||^2                     (T = 1)
    ||G_i||_F^2 = < A_i A_i^T, Gr_i Gr_i^T >_F            (A_i: [T, p], Gr_i: [T, d])

The Gram form costs ``T^2 (p + d)`` per example (a convolution's ``A_i A_i^T`` from its
unfolded patches, or from the Gram matrix of its input's positions), materialising ``G_i``
costs ``T p d``: each layer takes the cheapest (:meth:`OuterRecord.rule`). The clipped sum
``sum_i w_i G_i = (w * Gr)^T A`` is then formed from the same factors, without a second
backward pass ("book-keeping", Bu et al. 2023). Several calls of one layer in a forward pass
(a recurrent cell), or several parameter draws (DPlis), add their gradients: their factors are
concatenated along t. Embedding rows are one-hot ``a``; LayerNorm, GroupNorm and BatchNorm (in
eval mode) affine parameters are small and materialised.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dpnotes.train.ghost_conv import channels_last_weight, conv_weight_grad, gram_sq_norms, patch_weight_grads, unfolded

CHUNK = 2 ** 24  # elements of one temporary (Gram matrices, per-example gradients)


def _view(s: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    return s.view(-1, *([1] * (like.dim() - 1))).to(like)


def _sq(x: torch.Tensor) -> torch.Tensor:
    """Squared L2 norm of each row of ``x`` [B, ...] (no squared copy of ``x``)."""
    return torch.linalg.vector_norm(x.flatten(1), dim=1).square()


def _cat(parts: list[torch.Tensor], dim: int) -> torch.Tensor:
    """``torch.cat`` that does not copy a single tensor."""
    return parts[0] if len(parts) == 1 else torch.cat(parts, dim)


def _total(parts):
    """The sum of the tensors ``parts`` (the first is not copied when it is the only one)."""
    parts = iter(parts)
    out = next(parts)
    for p in parts:
        out = out + p
    return out


class Record:
    """Per-example gradients of one module's trainable parameters ``names`` (local name ->
    full name) over the calls seen; ``calls`` holds each call's ``(input, output_grad)``."""

    def __init__(self, module: nn.Module, names: dict[str, str], calls=()):
        self.module, self.names, self.calls = module, names, list(calls)
        self._cache: dict = {}

    def batch(self) -> int:
        return len(self.calls[0][1])

    def merged(self, other: "Record") -> "Record":
        """Both records' gradients summed; a call reading the very input of a held call (a first layer
        at DPlis' draws) adds its output gradient to that call's (every rule is linear in it)."""
        calls = list(self.calls)
        for x, gy in other.calls:
            key = (x.data_ptr(), x.dtype, x.shape, x.stride(), gy.shape)  # both alive: the same values
            i = next((i for i, (x0, g0) in enumerate(calls)
                      if (x0.data_ptr(), x0.dtype, x0.shape, x0.stride(), g0.shape) == key), None)
            if i is None:
                calls.append((x, gy))
            else:
                calls[i] = (x, calls[i][1] + gy)
        return type(self)(self.module, self.names, calls)

    def scaled(self, s: torch.Tensor) -> "Record":
        """Example i's gradient times ``s[i]`` (the output gradient scales with it)."""
        return type(self)(self.module, self.names, [(x, gy * _view(s, gy)) for x, gy in self.calls])


class OuterRecord(Record):
    """Linear, Conv1d, Conv2d: ``G_i = sum_t g_it a_it^T``, ghost or materialised by cost."""

    def _dims(self) -> tuple[int, int, int]:
        """(p, d, T): inputs and outputs per position, positions over all calls."""
        if "dims" not in self._cache:
            m = self.module
            d = m.out_features if isinstance(m, nn.Linear) else m.out_channels
            p = m.in_features if isinstance(m, nn.Linear) else m.in_channels * math.prod(m.kernel_size)
            self._cache["dims"] = p, d, sum(gy[0].numel() // d for _, gy in self.calls)
        return self._cache["dims"]

    def _positions(self) -> int:
        """A convolution's input positions (H x W) over all calls."""
        return sum(x[0].numel() // self.module.in_channels for x, _ in self.calls)

    def rule(self) -> str:
        """How the weight's per-example norms are formed, the cheapest by flop count (Bu et al.
        2022's mixed ghost clipping): ``"materialise"`` the per-example gradients (T p d; a
        convolution's from the grouped backward kernel, measured on a CPU at about half the
        speed per flop of a batched matmul: 2 T p d), or the Gram form from ``"patches"``
        (T^2 (p + d); a convolution's unfolded patches are a copy costing about 8 T p) or, for a
        convolution, from the Gram matrix of its input ``"positions"`` (C (HW)^2 + T^2 d,
        :func:`~dpnotes.train.ghost_conv.patch_gram`). The positions form is taken only where it
        is cheaper than the choice between the other two, which is the engine's choice before it
        existed (version 1): runs whose layers it does not win keep their stored numbers."""
        p, d, t = self._dims()
        if isinstance(self.module, nn.Linear):
            return "patches" if t * (p + d) < p * d else "materialise"
        patches, materialise = t * (t * (p + d) + 8 * p), 2 * t * p * d
        positions = self.module.in_channels * self._positions() ** 2 + t * t * d
        first = ("patches", patches) if patches < materialise else ("materialise", materialise)
        return "positions" if positions < first[1] else first[0]

    def _factors(self, sl: slice) -> tuple[torch.Tensor, torch.Tensor]:
        """``A`` [b, T, p] and ``Gr`` [b, T, d] of examples ``sl`` (a convolution's unfolded
        patches), all calls concatenated (kept when one chunk holds the batch of several calls)."""
        if self._cache.get("factors", (None,))[0] == (sl.start, sl.stop):
            return self._cache["factors"][1]
        m = self.module
        if isinstance(m, nn.Linear):
            pairs = [(x[sl].reshape(len(x[sl]), -1, m.in_features), gy[sl].reshape(len(gy[sl]), -1, m.out_features))
                     for x, gy in self.calls]
        else:
            pairs = [unfolded(m, x[sl], gy[sl]) for x, gy in self.calls]
        out = _cat([a for a, _ in pairs], 1), _cat([g for _, g in pairs], 1)
        if sl.start == 0 and sl.stop == self.batch() and len(self.calls) > 1:
            self._cache["factors"] = (sl.start, sl.stop), out
        return out

    def _chunks(self, per_example: int | None = None):
        """Slices of the batch whose temporaries (``per_example`` numbers each) fit CHUNK."""
        p, d, t = self._dims()
        step = max(1, CHUNK // (per_example or t * max(p, d)))
        b = self.batch()
        return [slice(s, min(s + step, b)) for s in range(0, b, step)]

    def _bias_rows(self) -> torch.Tensor:
        """Per-example bias gradients [B, d]: the output gradient summed over positions."""
        if "bias" not in self._cache:
            linear, d = isinstance(self.module, nn.Linear), self._dims()[1]
            self._cache["bias"] = _total(gy.reshape(len(gy), -1, d).sum(1) if linear
                                         else gy.reshape(len(gy), d, -1).sum(2) for _, gy in self.calls)
        return self._cache["bias"]

    def _patches(self) -> bool:
        """Per-example convolution gradients from channels-last patches and batched matmuls
        (:func:`~dpnotes.train.ghost_conv.patch_weight_grads`), for a convolution called more than
        once (DPlis' draws) with >= 16 input channels: 7-11x faster than the grouped backward
        kernel on one CPU thread for the DPlis CNNs' second layer (16 -> 32 channels, 4x4), which
        is faster for their first (1 or 3 -> 16 channels, 8x8); single calls keep that kernel."""
        m = self.module
        return not isinstance(m, nn.Linear) and len(self.calls) > 1 and m.in_channels >= 16

    def _weight_shaped(self, t: torch.Tensor) -> torch.Tensor:
        """``t`` [..., d, p] (:meth:`_per_example_weight`'s layout) as [..., *weight.shape]."""
        if self._patches():
            return channels_last_weight(self.module, t)
        return t.reshape(*t.shape[:-2], *self.module.weight.shape)

    def _per_example_weight(self) -> torch.Tensor:
        """Materialised per-example weight gradients [B, d, p] (p in :meth:`_weight_shaped`'s order)."""
        if isinstance(self.module, nn.Linear):
            return _cat([torch.bmm(g.transpose(1, 2), a) for a, g in map(self._factors, self._chunks())], 0)
        if self._patches():
            return patch_weight_grads(self.module, self.calls, CHUNK)
        b, (p, d, _) = self.batch(), self._dims()
        return _total(conv_weight_grad(self.module, x, gy, per_example=True) for x, gy in self.calls).view(b, d, p)

    def sq_norms(self) -> dict[str, torch.Tensor]:
        out = {}
        if "bias" in self.names:
            out["bias"] = _sq(self._bias_rows())
        if "weight" not in self.names:
            return out
        rule = self.rule()
        if rule == "materialise":
            self._cache["weight"] = w = self._per_example_weight()
            out["weight"] = _sq(w)
            return out
        if rule == "positions":  # temporaries: input-position and output Gram matrices
            hw, t = self._positions(), self._dims()[2]
            out["weight"] = _cat([gram_sq_norms(self.module, [(x[sl], gy[sl]) for x, gy in self.calls])
                                  for sl in self._chunks(hw * hw + 2 * t * t)], 0)
            return out
        parts = []
        for a, g in map(self._factors, self._chunks()):
            if a.shape[1] == 1:
                parts.append(_sq(a) * _sq(g))
            else:
                gram = (torch.bmm(a, a.transpose(1, 2)) * torch.bmm(g, g.transpose(1, 2))).sum((1, 2))
                parts.append(gram.clamp_(min=0))  # see ghost_conv.gram_sq_norms on rounding below 0
        out["weight"] = _cat(parts, 0)
        return out

    def weighted_sum(self, factors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = {}
        if "weight" in self.names:
            f = factors["weight"]
            if "weight" in self._cache:
                w = self._cache["weight"]
                out["weight"] = self._weight_shaped((f.to(w) @ w.flatten(1)).view(w.shape[1:]))
            elif isinstance(self.module, nn.Linear):
                out["weight"] = _total((g * _view(f[sl], g)).flatten(0, 1).T @ a.flatten(0, 1)
                                       for sl in self._chunks() for a, g in [self._factors(sl)])
            else:
                out["weight"] = _total(conv_weight_grad(self.module, x, gy * _view(f, gy), per_example=False)
                                       for x, gy in self.calls)
        if "bias" in self.names:
            rows = self._bias_rows()
            out["bias"] = factors["bias"].to(rows) @ rows
        return out

    def materialize(self) -> dict[str, torch.Tensor]:
        out = {}
        if "weight" in self.names:
            out["weight"] = self._weight_shaped(self._per_example_weight())
        if "bias" in self.names:
            out["bias"] = self._bias_rows()
        return out


class EmbeddingRecord(Record):
    """Embedding: ``G_i`` adds the output gradient of each position to its token's row, so it
    is the per-(example, token) sums of output gradients (formed by one sort, without the
    [B, V, d] tensor): ``||G_i||^2`` is their squared norm summed over example i's tokens, and
    the weighted sum adds each sum, times its example's weight, to its token's row."""

    def _sums(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(example, token, summed output gradient) of each distinct (example, token) pair."""
        if "sums" not in self._cache:
            m = self.module
            idx = _cat([x.reshape(len(x), -1) for x, _ in self.calls], 1)
            g = _cat([gy.reshape(len(gy), -1, m.embedding_dim) for _, gy in self.calls], 1)
            if m.padding_idx is not None:  # the padding row gets no gradient
                g = g * (idx != m.padding_idx).unsqueeze(-1).to(g)
            b, v = len(idx), m.num_embeddings
            example = torch.arange(b, device=idx.device)
            if idx.shape[1] == 1:  # one token per example: its pair is already distinct
                self._cache["sums"] = (example, idx[:, 0], g[:, 0])
                return self._cache["sums"]
            keys = (example.unsqueeze(1) * v + idx).flatten()
            uniq, inv = torch.unique(keys, return_inverse=True)
            rows = g.new_zeros(len(uniq), g.shape[-1]).index_add_(0, inv, g.flatten(0, 1))
            self._cache["sums"] = (uniq // v, uniq % v, rows)
        return self._cache["sums"]

    def sq_norms(self) -> dict[str, torch.Tensor]:
        example, _, rows = self._sums()
        return {"weight": rows.new_zeros(self.batch()).index_add_(0, example, _sq(rows))}

    def weighted_sum(self, factors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        example, token, rows = self._sums()
        w = self.module.weight
        scaled = rows * factors["weight"].to(rows)[example].unsqueeze(1)
        return {"weight": w.new_zeros(w.shape).index_add_(0, token, scaled.to(w))}

    def materialize(self) -> dict[str, torch.Tensor]:
        example, token, rows = self._sums()
        b, (v, d) = self.batch(), self.module.weight.shape
        return {"weight": rows.new_zeros(b * v, d).index_add_(0, example * v + token, rows).view(b, v, d)}


class DenseRecord(Record):
    """Normalisation layers' affine parameters: per-example gradients materialised (C values)."""

    def materialize(self) -> dict[str, torch.Tensor]:
        if "rows" not in self._cache:
            rows: dict[str, torch.Tensor] = {}
            for x, gy in self.calls:
                for k, r in norm_affine_grads(self.module, x, gy).items():
                    if k in self.names:
                        rows[k] = rows[k] + r if k in rows else r
            self._cache["rows"] = rows
        return self._cache["rows"]

    def sq_norms(self) -> dict[str, torch.Tensor]:
        return {k: _sq(r) for k, r in self.materialize().items()}

    def weighted_sum(self, factors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return {k: (factors[k].to(r) @ r.flatten(1)).view(r.shape[1:]) for k, r in self.materialize().items()}


RECORDS = {nn.Linear: OuterRecord, nn.Conv1d: OuterRecord, nn.Conv2d: OuterRecord,
           nn.Embedding: EmbeddingRecord, nn.LayerNorm: DenseRecord, nn.GroupNorm: DenseRecord,
           nn.BatchNorm1d: DenseRecord, nn.BatchNorm2d: DenseRecord}


def norm_affine_grads(m: nn.Module, x: torch.Tensor, gy: torch.Tensor) -> dict[str, torch.Tensor]:
    """Per-example gradients of a LayerNorm / GroupNorm / eval-mode BatchNorm's weight and bias."""
    if isinstance(m, nn.LayerNorm):
        xhat = F.layer_norm(x, m.normalized_shape, eps=m.eps)
        dims = tuple(range(1, x.dim() - len(m.normalized_shape)))
    else:
        if isinstance(m, nn.GroupNorm):
            xhat = F.group_norm(x, m.num_groups, eps=m.eps)
        else:
            xhat = F.batch_norm(x, m.running_mean, m.running_var, training=False, eps=m.eps)
        dims = tuple(range(2, x.dim()))
    grads = {"weight": (gy * xhat).sum(dims) if dims else gy * xhat, "bias": gy.sum(dims) if dims else gy}
    return {k: v for k, v in grads.items() if getattr(m, k, None) is not None}
