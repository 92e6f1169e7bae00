"""Per-example losses and per-example gradients (the input of DP-SGD's clipping step).

Two backends compute the same thing, the gradient of each example's loss with respect to
every trainable parameter, stacked along a leading batch axis:

* :class:`FuncGrads` (what run configs that name no backend use) with ``torch.func`` (``vmap`` of ``grad`` of a
  ``functional_call``), which also evaluates the gradient at parameters other than the
  model's own (DPlis' perturbed parameters) without touching the model;
* :class:`OpacusGrads` with opacus' ``GradSampleModule`` hooks, kept as an independent check.

A third, :class:`dpnotes.train.ghost.GhostGrads` (``TrainConfig``'s default), returns them factored (never materialised,
:class:`~dpnotes.train.ghost.FactoredGrads`); :func:`grad_norms`, :func:`add_examples` and
:func:`scale_examples` take either form, so methods need not know which backend runs.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, grad_and_value, vmap

from dpnotes import validate
from dpnotes.train.ghost import FactoredGrads, GhostGrads

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]
Params = dict[str, torch.Tensor]
LOSSES = ("cross_entropy", "mse")


def _cross_entropy(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(outputs, targets, reduction="none")


def _mse(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    diff = outputs - targets.reshape(outputs.shape).to(outputs.dtype)
    return diff.pow(2).reshape(len(outputs), -1).mean(1)


def per_example_loss(loss: str | LossFn) -> LossFn:
    """``(outputs, targets) -> losses`` with one loss per example (shape [B]).

    "cross_entropy" takes class indices or probability rows (soft labels, e.g. mixup);
    "mse" averages the squared error over each example's outputs. A callable must already
    return per-example losses.
    """
    if callable(loss):
        return loss
    return {"cross_entropy": _cross_entropy, "mse": _mse}[validate.choice("loss", loss, LOSSES)]


def trainable(model: nn.Module) -> Params:
    """The model's trainable parameters by name (detached views of the live tensors)."""
    return {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}


class FuncGrads:
    """Per-example gradients by ``vmap(grad_and_value(loss of one example))``.

    Calling it with ``(params, inputs, targets)`` returns ``(grads, losses, outputs)``:
    ``grads[name]`` has shape ``[B, *param.shape]``; ``losses`` [B]; ``outputs`` [B, ...].
    """

    def __init__(self, model: nn.Module, loss_fn: LossFn):
        self.model, self.loss_fn = model, loss_fn
        self.buffers = dict(model.named_buffers())

        def one(params, *sample):
            *xs, y = (t.unsqueeze(0) for t in sample)
            out = functional_call(self.model, (params, self.buffers), tuple(xs))
            loss = self.loss_fn(out, y).sum()
            return loss, (loss, out.squeeze(0))

        self._grad_one = grad_and_value(one, has_aux=True)

    def __call__(self, params: Params, inputs: tuple[torch.Tensor, ...], targets: torch.Tensor):
        in_dims = (None,) + (0,) * (len(inputs) + 1)
        grads, (_, (losses, outputs)) = vmap(self._grad_one, in_dims=in_dims,
                                             randomness="error")(params, *inputs, targets)
        return grads, losses, outputs

    def close(self) -> None:
        """Nothing to undo (the model is not modified)."""


class OpacusGrads:
    """Per-example gradients from opacus' ``GradSampleModule`` (hooks on the model's layers).

    The model is wrapped in place on construction; :meth:`close` removes the hooks.
    Parameters other than the model's own are copied in for the call and restored after.
    """

    def __init__(self, model: nn.Module, loss_fn: LossFn):
        from opacus import GradSampleModule

        self.model, self.loss_fn = model, loss_fn
        self.gsm = GradSampleModule(model, batch_first=True, loss_reduction="sum")

    @contextmanager
    def _parameters(self, params: Params):
        live = dict(self.model.named_parameters())
        same = all(params[k].data_ptr() == live[k].data_ptr() for k in params)
        saved = {} if same else {k: live[k].detach().clone() for k in params}
        with torch.no_grad():
            for k, v in saved.items():
                live[k].copy_(params[k])
        try:
            yield live
        finally:
            with torch.no_grad():
                for k, v in saved.items():
                    live[k].copy_(v)

    def __call__(self, params: Params, inputs: tuple[torch.Tensor, ...], targets: torch.Tensor):
        with self._parameters(params) as live:
            outputs = self.gsm(*inputs)
            losses = self.loss_fn(outputs, targets)
            losses.sum().backward()
            grads = {k: live[k].grad_sample.detach() for k in params}
            for p in live.values():
                p.grad, p.grad_sample = None, None
        return grads, losses.detach(), outputs.detach()

    def close(self) -> None:
        self.gsm._close()


BACKENDS = {"func": FuncGrads, "opacus": OpacusGrads, "ghost": GhostGrads}


def make_backend(name: str, model: nn.Module, loss_fn: LossFn):
    """The per-example gradient backend ``name`` ("func", "opacus" or "ghost") for ``model``."""
    return BACKENDS[validate.choice("grad_backend", name, tuple(BACKENDS))](model, loss_fn)


def grad_norms(grads: Params | FactoredGrads) -> torch.Tensor:
    """Per-example L2 norm of the whole gradient (all parameters together), shape [B]."""
    if isinstance(grads, FactoredGrads):
        return grads.norms()
    norms = [torch.linalg.vector_norm(g.reshape(len(g), -1), dim=1) for g in grads.values()]
    return torch.linalg.vector_norm(torch.stack(norms), dim=0)


def param_norms(grads: Params | FactoredGrads) -> dict[str, torch.Tensor]:
    """Per-example L2 norm [B] of each parameter's gradient."""
    if isinstance(grads, FactoredGrads):
        return {k: v.sqrt() for k, v in grads.sq_norms().items()}
    return {k: grad_norms({k: g}) for k, g in grads.items()}


def add_examples(a: Params | FactoredGrads, b: Params | FactoredGrads) -> Params | FactoredGrads:
    """Per-example gradients ``a + b`` (the same examples; e.g. at two parameter draws)."""
    return a + b if isinstance(a, FactoredGrads) else {k: a[k] + b[k] for k in a}


def scale_examples(grads: Params | FactoredGrads, s: torch.Tensor | float) -> Params | FactoredGrads:
    """Example i's gradient times ``s[i]`` (a [B] tensor) or times the number ``s``."""
    if isinstance(grads, FactoredGrads):
        return grads.scaled(s)
    if not torch.is_tensor(s):
        return {k: g * s for k, g in grads.items()}
    return {k: g * s.view(-1, *([1] * (g.dim() - 1))).to(g) for k, g in grads.items()}
