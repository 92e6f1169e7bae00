"""Loss/accuracy bookkeeping and evaluation passes."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.func import functional_call

from dpnotes.train.grads import LossFn, Params


def correct(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor | None:
    """Number of examples whose arg-max output is the (arg-max) target; None for non-classifiers.

    Class-index targets and probability-row targets (soft labels) are both accepted.
    """
    if outputs.ndim != 2 or outputs.shape[1] < 2:
        return None
    labels = targets if not targets.is_floating_point() else targets.argmax(1)
    return (outputs.argmax(1) == labels).sum()


@dataclass
class Running:
    """Sums of per-example losses and correct predictions over an epoch (kept as tensors,
    so that no step waits for the device)."""

    loss: torch.Tensor | float = 0.0
    hits: torch.Tensor | float = 0.0
    count: int = 0
    classifier: bool = True

    def add(self, losses: torch.Tensor, outputs: torch.Tensor, targets: torch.Tensor) -> None:
        if len(losses) == 0:
            return
        self.loss = self.loss + losses.detach().sum()
        hits = correct(outputs.detach(), targets)
        self.classifier = self.classifier and hits is not None
        if hits is not None:
            self.hits = self.hits + hits
        self.count += len(losses)

    def result(self) -> tuple[float | None, float | None]:
        """(mean loss, accuracy); None where undefined (no examples, or not a classifier)."""
        if self.count == 0:
            return None, None
        acc = float(self.hits) / self.count if self.classifier else None
        return float(self.loss) / self.count, acc


@torch.no_grad()
def evaluate(model: nn.Module, inputs: tuple[torch.Tensor, ...], targets: torch.Tensor,
             loss_fn: LossFn, batch_size: int, params: Params | None = None) -> dict:
    """Mean loss and accuracy of ``model`` (or of ``model`` with ``params``) on a dataset.

    The model is put in eval mode for the pass and restored after.
    """
    was_training = model.training
    model.eval()
    run = Running()
    try:
        for start in range(0, len(targets), batch_size):
            xs = tuple(x[start:start + batch_size] for x in inputs)
            y = targets[start:start + batch_size]
            out = model(*xs) if params is None else functional_call(model, params, xs)
            run.add(loss_fn(out, y), out, y)
    finally:
        model.train(was_training)
    loss, acc = run.result()
    return {"loss": loss, "acc": acc}
