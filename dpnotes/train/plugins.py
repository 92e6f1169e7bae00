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
``noise_multiplier``) MUST also describe what each step releases (``step_event``): the
run's privacy ledger then holds that event, and the accountants price it. A plug-in never
computes an epsilon itself; any other release of private data goes through ``ctx.release``.

The papers' methods (:mod:`dpnotes.methods`) are built from these hooks.
"""

from __future__ import annotations

from typing import Callable

import torch

# Annotations name "TrainContext" (dpnotes.train.loop) as a string: this module is imported
# by the loop, so it does not import it back.
EXCLUSIVE = ("sampling_probabilities", "noise_multiplier", "per_example_gradients",
             "accept_step", "step_event")
PRIVACY_HOOKS = ("sampling_probabilities", "noise_multiplier", "per_example_gradients", "step_event")
NEEDS_EVENT = ("sampling_probabilities", "noise_multiplier")


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
                    evaluate: Callable[..., float]) -> bool | None:
        """EXCLUSIVE. After the update: True keeps it, False restores the old parameters and
        optimizer state (SA-DPSGD). ``evaluate(params, split="test")`` is the mean loss at
        ``params`` on the test set or on the held-out ``validation`` set given to ``train``.
        Each step goes to the ledger as a ``CandidateStepDpEvent`` saying whether it was
        accepted: sound accountants charge every step, the paper's counts accepted ones."""
        return None

    def on_step_end(self, ctx: "TrainContext", info: dict) -> None:
        """After each step: ``info`` has step, batch_size, noise_multiplier, accepted."""

    def on_epoch_end(self, ctx: "TrainContext", record: dict) -> dict | None:
        """After each epoch's record is built: return extra fields to add to it."""
        return None

    def step_event(self, ctx: "TrainContext", noise_multiplier: float):
        """EXCLUSIVE. The ``DpEvent`` (:mod:`dpnotes.ledger`) that the coming step releases,
        when the plug-in changes sampling or noise (DPIS: its own q and sigma per
        iteration). None = the engine's ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))``."""
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
        if any(overrides(p, h) for h in NEEDS_EVENT) and not overrides(p, "step_event"):
            raise ValueError(f"plug-in {p.name!r} changes sampling or noise, so it must describe "
                             "what each step releases (step_event hook)")
