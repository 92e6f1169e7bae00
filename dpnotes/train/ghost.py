"""Per-example gradient norms and clipped sums without per-example gradients (ghost clipping).

:class:`GhostGrads` is the third per-example gradient backend (``grad_backend="ghost"``).
One call runs the forward pass with hooks on the layers that own trainable parameters (each
call's input is kept), then ONE backward pass to those layers' outputs (not to the
parameters), and returns the batch's per-example gradients as :class:`FactoredGrads`: for
each layer, the inputs and output gradients from which :mod:`dpnotes.train.ghost_layers`
forms the per-example norms (Goodfellow 2015; Li et al. 2022, ghost clipping; per layer the
cheaper of Gram matrices and materialised gradients, Bu et al. 2022, mixed ghost clipping)
and the clipped sum ``sum_i w_i g_i`` directly (Bu et al. 2023, book-keeping: no second
backward pass).

The loop's interfaces take :class:`FactoredGrads` wherever they take a dict of per-example
gradients (:mod:`dpnotes.train.grads`: ``grad_norms``, ``add_examples``, ``scale_examples``;
:mod:`dpnotes.train.privatize`): DP-SGD's clipped sum, DPIS' norms of every record and its
rescaled gradients, DPlis' sum over K parameter draws (the draws' factors are concatenated,
which is exactly the per-example gradient of the sum, clipped after the sum), SA-DPSGD.

A layer's parameters must be used only through calls of that layer (the hooks see calls,
not parameters): the first call of a backend checks that the factored gradients sum to
autograd's batch gradient and refuses the model otherwise. On a GPU the Embedding rule's
``torch.unique`` and that one check wait for the device; nothing else does.
"""

from __future__ import annotations

from typing import Callable

import torch
from torch import nn
from torch.func import functional_call

from dpnotes.train.ghost_layers import RECORDS

_CHECK_RTOL = 1e-3  # float32 sums of a batch; a parameter used outside its layer is off by O(1)


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """``a`` is a view of all of ``b`` (the same numbers in the same place)."""
    return (a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
            and a.dtype == b.dtype)


def check_supported(name: str, module: nn.Module) -> None:
    """``ValueError`` naming the module when the ghost backend cannot handle it."""
    why = None
    if type(module) not in RECORDS:
        why = f"type {type(module).__name__} has no ghost rule (supported: {sorted(t.__name__ for t in RECORDS)})"
    elif isinstance(module, (nn.Conv1d, nn.Conv2d)) and (module.groups != 1 or module.padding_mode != "zeros"):
        why = "only groups=1 and padding_mode='zeros' convolutions are supported"
    elif isinstance(module, nn.Embedding) and (module.max_norm is not None or module.scale_grad_by_freq
                                                 or module.sparse):
        why = "Embedding with max_norm, scale_grad_by_freq or sparse is not supported"
    elif isinstance(module, nn.modules.batchnorm._BatchNorm) and module.training:
        why = "BatchNorm in training mode mixes the examples of a batch"
    if why:
        raise ValueError(f"grad_backend='ghost': module {name!r}: {why}; use grad_backend='func'")


class FactoredGrads:
    """A batch's per-example gradients as layer factors (``records``: one per layer).

    ``like`` maps each parameter name, in the model's order, to a tensor of its shape: the
    dicts returned follow that order, with zeros for a parameter that no call used.
    """

    def __init__(self, records: dict[nn.Module, object], like: dict[str, torch.Tensor], batch: int):
        self.records, self.like, self.batch = records, like, batch

    def __len__(self) -> int:
        return self.batch

    def _by_name(self, fn, zero) -> dict[str, torch.Tensor]:
        out = {}
        for rec in self.records.values():
            out.update({rec.names[k]: v for k, v in fn(rec).items()})
        return {k: out[k] if k in out else zero(v) for k, v in self.like.items()}

    def sq_norms(self) -> dict[str, torch.Tensor]:
        """Squared per-example norm [B] of each parameter's gradient."""
        return self._by_name(lambda r: r.sq_norms(), lambda v: v.new_zeros(self.batch))

    def norms(self) -> torch.Tensor:
        """Per-example L2 norm [B] of the whole gradient."""
        return torch.stack(list(self.sq_norms().values())).sum(0).sqrt()

    def weighted_sum(self, factors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """``sum_i factors[name][i] * g_i[name]`` for each parameter name."""
        return self._by_name(lambda r: r.weighted_sum({k: factors[n] for k, n in r.names.items()}),
                             torch.zeros_like)

    def materialize(self) -> dict[str, torch.Tensor]:
        """The per-example gradients themselves, [B, *shape] per parameter (for checks)."""
        return self._by_name(lambda r: r.materialize(), lambda v: v.new_zeros(self.batch, *v.shape))

    def __add__(self, other: "FactoredGrads") -> "FactoredGrads":
        """Per-example gradients summed (same examples, e.g. at another parameter draw)."""
        if set(self.like) != set(other.like) or len(self) != len(other):
            raise ValueError("can only add factored gradients of the same model and examples")
        records = dict(self.records)
        for m, r in other.records.items():
            records[m] = records[m].merged(r) if m in records else r
        return FactoredGrads(records, self.like, self.batch)

    def scaled(self, s: torch.Tensor | float) -> "FactoredGrads":
        """Example i's gradient times ``s[i]`` (or times the number ``s``)."""
        s = torch.as_tensor(s)
        s = s.expand(self.batch) if s.dim() == 0 else s
        return FactoredGrads({m: r.scaled(s) for m, r in self.records.items()}, self.like, self.batch)


class GhostGrads:
    """``grad_backend="ghost"``: ``(params, inputs, targets) -> (FactoredGrads, losses, outputs)``.

    ``params`` may differ from the model's own (DPlis' draws): the forward pass is then a
    ``functional_call`` (a plain call of the model when they are its own parameters). Every
    module owning a trainable parameter must have a ghost rule
    (:data:`dpnotes.train.ghost_layers.RECORDS`), else ``ValueError`` names it.
    """

    def __init__(self, model: nn.Module, loss_fn: Callable):
        self.model, self.loss_fn = model, loss_fn
        self.own = {k: p for k, p in model.named_parameters() if p.requires_grad}
        self.order = list(self.own)
        self.layers: dict[nn.Module, dict[str, str]] = {}
        seen: set[int] = set()
        for prefix, module in model.named_modules():
            own = {k: f"{prefix}.{k}" if prefix else k
                   for k, p in module.named_parameters(recurse=False) if p.requires_grad}
            if own:
                check_supported(prefix, module)
                if any(id(p) in seen for p in module.parameters(recurse=False)):
                    raise ValueError(f"grad_backend='ghost': module {prefix!r} shares a parameter with "
                                     "another module; use grad_backend='func'")
                seen.update(id(p) for p in module.parameters(recurse=False))
                self.layers[module] = own
        self._calls: list | None = None
        self._checked = False
        self._handles = [m.register_forward_hook(self._capture) for m in self.layers]

    def _capture(self, module, args, output) -> None:
        if self._calls is not None:
            self._calls.append((module, args[0], output, output._version))

    def __call__(self, params: dict, inputs: tuple[torch.Tensor, ...], targets: torch.Tensor):
        if set(params) != set(self.order):
            raise ValueError("params must hold exactly the model's trainable parameters")
        direct = all(_same(v, self.own[k]) for k, v in params.items())
        live = self.own if direct else {k: v.detach().requires_grad_(True) for k, v in params.items()}
        self._calls = calls = []
        try:  # the model's own parameters: a plain call, without functional_call's swaps
            outputs = self.model(*inputs) if direct else functional_call(self.model, live, tuple(inputs))
        finally:
            self._calls = None
        losses = self.loss_fn(outputs, targets)
        for module, _, out, version in calls:
            if out._version != version:
                raise ValueError(f"grad_backend='ghost': the output of {type(module).__name__} is "
                                 "modified in place (e.g. ReLU(inplace=True)); use grad_backend='func'")
        wrt = [out for _, _, out, _ in calls] + ([] if self._checked else list(live.values()))
        found = torch.autograd.grad(losses.sum(), wrt, allow_unused=True)
        records: dict[nn.Module, object] = {}
        for (module, x, out, _), gy in zip(calls, found):
            gy = torch.zeros_like(out) if gy is None else gy
            rec = RECORDS[type(module)](module, self.layers[module], [(x.detach(), gy)])
            records[module] = records[module].merged(rec) if module in records else rec
        grads = FactoredGrads(records, params, len(targets))
        if not self._checked:
            self._check(grads, dict(zip(live, found[len(calls):])))
        return grads, losses.detach(), outputs.detach()

    def _check(self, grads: FactoredGrads, batch_grads: dict) -> None:
        """Refuse a model whose parameters are used outside their layers' calls."""
        total = grads.weighted_sum({k: v.new_ones(len(grads)) for k, v in grads.like.items()})
        for k, ref in batch_grads.items():
            ref = torch.zeros_like(total[k]) if ref is None else ref
            got = total[k]
            if (got - ref).norm() > _CHECK_RTOL * ref.norm() + 1e-12:
                raise ValueError(f"grad_backend='ghost': parameter {k!r} is used outside the calls of "
                                 "its layer, so its per-example gradient cannot be factored; "
                                 "use grad_backend='func'")
        self._checked = True

    def close(self) -> None:
        """Remove the hooks."""
        for h in self._handles:
            h.remove()
        self._handles = []
