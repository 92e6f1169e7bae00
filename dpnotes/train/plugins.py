"""Plug-in points of the training loop, and small example plug-ins that exercise them.

A paper's method is a :class:`Plugin` subclass overriding some hooks; :func:`dpnotes.train.train`
calls them at the places named below. Per step (private path)::

    sampling_probabilities  -> Poisson batch -> transform_batch -> noise_multiplier
    -> per_example_gradients -> clip (weights applied first) -> noise on the sum
    -> optimizer step -> accept_step -> on_step_end

and ``on_train_start`` / ``on_epoch_start`` / ``on_epoch_end`` / ``epsilon`` around them.
The non-private path (``private=False``) calls transform_batch, accept_step and the
start/end hooks only.

Hooks marked EXCLUSIVE may be overridden by at most one plug-in of a run. A plug-in that
changes who is sampled or how much noise is added (``sampling_probabilities``,
``noise_multiplier``) MUST also supply its own accountant (``epsilon``): the engine's
accountants assume a fixed q and sigma, and are then not reported.

The example plug-ins at the end only check that the hooks are called with the right data;
the papers' methods live with their experiments.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np
import torch

from dpnotes import validate
from dpnotes.train.sampling import to_device

if TYPE_CHECKING:  # pragma: no cover
    from dpnotes.train.loop import TrainContext

EXCLUSIVE = ("sampling_probabilities", "noise_multiplier", "per_example_gradients",
             "accept_step", "epsilon")
PRIVACY_HOOKS = ("sampling_probabilities", "noise_multiplier", "per_example_gradients", "epsilon")
NEEDS_ACCOUNTANT = ("sampling_probabilities", "noise_multiplier")


class Plugin:
    """Base class: every hook is a no-op (or returns None = "engine default")."""

    name = "plugin"

    def on_train_start(self, ctx: "TrainContext") -> None:
        """Once, before the first step (also when resuming from a checkpoint)."""

    def on_epoch_start(self, ctx: "TrainContext", epoch: int) -> None:
        """Before each epoch (0-based). ``ctx.per_example_norms()`` gives every training
        example's unclipped gradient norm at the current parameters (DPIS)."""

    def sampling_probabilities(self, ctx: "TrainContext") -> tuple[torch.Tensor, torch.Tensor | None] | None:
        """EXCLUSIVE. Before each Poisson draw: ``(probs, weights)``, each of shape [N];
        example i is included with probability probs[i] and its gradient multiplied by
        weights[i] (None: 1) BEFORE clipping, so the sensitivity stays C (DPIS). The draw is
        made on the CPU: return ``probs`` as a CPU tensor (``weights`` may stay on the
        training device), or every step copies them back from the GPU and waits for it."""
        return None

    def transform_batch(self, ctx: "TrainContext", inputs: tuple[torch.Tensor, ...],
                        targets: torch.Tensor, indices: torch.Tensor):
        """Return the ``(inputs, targets)`` to train on (e.g. mixup of privatized labels,
        LP-MST). Chained over plug-ins in order."""
        return inputs, targets

    def noise_multiplier(self, ctx: "TrainContext") -> float | None:
        """EXCLUSIVE. The noise multiplier of the current step (DPIS); None = config's."""
        return None

    def per_example_gradients(self, ctx: "TrainContext", grad_fn: Callable, params: dict,
                              inputs: tuple[torch.Tensor, ...], targets: torch.Tensor):
        """EXCLUSIVE. Return ``(grads, losses, outputs)`` to be clipped; ``grad_fn(params,
        inputs, targets)`` computes them at any parameters (DPlis: sum over K perturbed
        copies, before clipping). None = ``grad_fn(params, inputs, targets)``."""
        return None

    def accept_step(self, ctx: "TrainContext", old_params: dict, new_params: dict,
                    evaluate: Callable[[dict], float]) -> bool | None:
        """EXCLUSIVE. After the update: True keeps it, False restores the old parameters and
        optimizer state (SA-DPSGD). ``evaluate(params)`` is the test loss at ``params``.
        Accepted steps are counted in the history; privacy is charged for every step."""
        return None

    def on_step_end(self, ctx: "TrainContext", info: dict) -> None:
        """After each step: ``info`` has step, batch_size, noise_multiplier, accepted."""

    def on_epoch_end(self, ctx: "TrainContext", record: dict) -> dict | None:
        """After each epoch's record is built: return extra fields to add to it."""
        return None

    def epsilon(self, ctx: "TrainContext", final: bool) -> dict | None:
        """EXCLUSIVE. The plug-in's own accountant: ``{name: {"epsilon": ..., ...}}`` for the
        steps taken so far (``final``: end of training, slow accountants allowed)."""
        return None

    def state_dict(self) -> dict:
        """What a checkpoint must keep for an exact resume."""
        return {}

    def load_state_dict(self, state: dict) -> None:
        """Restore :meth:`state_dict`."""


def overrides(plugin: Plugin, hook: str) -> bool:
    return getattr(type(plugin), hook) is not getattr(Plugin, hook)


def check_plugins(plugins, config) -> None:
    """Reject plug-in combinations (for a :class:`TrainConfig`) that make no sense or would
    report a wrong epsilon."""
    private = config.private
    for p in plugins:
        if not isinstance(p, Plugin):
            raise ValueError(f"plugins must be Plugin instances, got {type(p).__name__}")
    for hook in EXCLUSIVE:
        owners = [p.name for p in plugins if overrides(p, hook)]
        if len(owners) > 1:
            raise ValueError(f"hook {hook!r} is overridden by several plug-ins: {owners}")
    for p in plugins:
        if not private and any(overrides(p, h) for h in PRIVACY_HOOKS):
            raise ValueError(f"plug-in {p.name!r} changes DP-SGD, but private=False")
        if overrides(p, "sampling_probabilities") and config.sampling != "poisson":
            raise ValueError(f"plug-in {p.name!r} sets sampling probabilities, which needs "
                             f"sampling='poisson' (got {config.sampling!r})")
        if any(overrides(p, h) for h in NEEDS_ACCOUNTANT) and not overrides(p, "epsilon"):
            raise ValueError(f"plug-in {p.name!r} changes sampling or noise, so it must supply "
                             "its own accountant (epsilon hook)")


class ParameterSmoothing(Plugin):
    """Example of ``per_example_gradients`` (DPlis' loss smoothing, REFERENCE.md): for each of
    ``draws`` draws, ALL parameters are perturbed by ``radius * lr * N(0, (sigma C)^2)``, one
    draw shared by the batch; per-example gradients are summed over the draws (then clipped by
    the engine). Losses returned are the mean over draws."""

    name = "parameter-smoothing"

    def __init__(self, draws: int, radius: float):
        self.draws = validate.integer("draws", draws, minimum=1)
        self.radius = validate.nonnegative("radius", radius)

    def per_example_gradients(self, ctx, grad_fn, params, inputs, targets):
        cfg = ctx.config
        std = self.radius * cfg.lr * cfg.noise_multiplier * (cfg.clip or 0.0)
        total, losses, outputs = None, 0.0, None
        for _ in range(self.draws):  # K draws of the parameters, not a loop over samples
            shifted = {k: v + std * torch.randn(v.shape, generator=ctx.noise_gen, dtype=v.dtype,
                                                device=v.device) for k, v in params.items()}
            grads, loss_k, outputs = grad_fn(shifted, inputs, targets)
            total = grads if total is None else {k: total[k] + grads[k] for k in grads}
            losses = losses + loss_k / self.draws
        return total, losses, outputs


class ImportanceSampling(Plugin):
    """Example of ``on_epoch_start`` + ``sampling_probabilities`` + ``epsilon`` (DPIS-like):
    each epoch, probabilities proportional to the clipped gradient norms (mean q), weights
    q / p_i. Its accountant is a placeholder that reports the largest probability used, NOT
    a privacy guarantee; it exists to test the hooks."""

    name = "importance-sampling"

    def __init__(self):
        self.probs = self.weights = None
        self.max_prob = 0.0

    def on_epoch_start(self, ctx, epoch):
        c = ctx.config.clip
        norms = ctx.per_example_norms().clamp(max=c, min=1e-3 * c)
        probs = (ctx.q * norms / norms.mean()).clamp(max=1.0).double()
        self.weights = ctx.q / probs  # on the training device, indexed there each step
        self.probs = probs.cpu()  # the Poisson draw is on the CPU: copied once per epoch
        self.max_prob = max(self.max_prob, float(self.probs.max()))

    def sampling_probabilities(self, ctx):
        return self.probs, self.weights

    def epsilon(self, ctx, final):
        return {"importance-sampling-test": {"max_prob": self.max_prob, "steps": ctx.step}}

    def state_dict(self):
        return {"max_prob": self.max_prob}

    def load_state_dict(self, state):
        self.max_prob = state["max_prob"]


class NoiseSchedule(Plugin):
    """Example of ``noise_multiplier`` + ``epsilon``: sigma_t from a function of the global
    step; records the multipliers used (its ``epsilon`` is a test placeholder)."""

    name = "noise-schedule"

    def __init__(self, schedule: Callable[[int], float]):
        self.schedule, self.used = schedule, []

    def noise_multiplier(self, ctx):
        return self.schedule(ctx.step)

    def on_step_end(self, ctx, info):
        self.used.append(info["noise_multiplier"])

    def epsilon(self, ctx, final):
        return {"noise-schedule-test": {"steps": len(self.used)}}

    def state_dict(self):
        return {"used": list(self.used)}

    def load_state_dict(self, state):
        self.used = list(state["used"])


class AcceptIfLossDecreases(Plugin):
    """Example of ``accept_step`` (SA-DPSGD-like, greedy): keep an update only if the test
    loss does not increase; ``on_epoch_end`` adds nothing (the engine counts accepted steps)."""

    name = "accept-if-loss-decreases"

    def accept_step(self, ctx, old_params, new_params, evaluate):
        return evaluate(new_params) <= evaluate(old_params)


class Mixup(Plugin):
    """Example of ``transform_batch`` (LP-MST trains on privatized labels with mixup): convex
    combinations of the batch with a permutation of itself, lambda ~ Beta(alpha, alpha),
    targets turned into probability rows over ``num_classes``."""

    name = "mixup"

    def __init__(self, alpha: float, num_classes: int):
        self.alpha = validate.positive("alpha", alpha)
        self.num_classes = validate.integer("num_classes", num_classes, minimum=2)

    def transform_batch(self, ctx, inputs, targets, indices):
        g = ctx.aux_gen
        seed = int(torch.randint(2**62, (1,), generator=g))
        lam = float(np.random.default_rng(seed).beta(self.alpha, self.alpha))
        perm = to_device(torch.randperm(len(targets), generator=g), targets.device)
        y = torch.nn.functional.one_hot(targets, self.num_classes).to(inputs[0].dtype) \
            if not targets.is_floating_point() else targets
        mixed = tuple(lam * x + (1 - lam) * x[perm] if x.is_floating_point() else x for x in inputs)
        return mixed, lam * y + (1 - lam) * y[perm]
