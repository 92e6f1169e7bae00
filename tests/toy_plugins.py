"""Toy plug-ins that exercise the loop's hooks in tests (not the papers' methods, which live
in dpnotes.methods)."""

from typing import Callable

import numpy as np
import torch
from dp_accounting.dp_event import UnsupportedDpEvent

from dpnotes import validate
from dpnotes.ledger import GaussianDpEvent, PoissonSampledDpEvent
from dpnotes.train import Plugin
from dpnotes.train.grads import add_examples
from dpnotes.train.sampling import to_device


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
            total = grads if total is None else add_examples(total, grads)  # dense or factored
            losses = losses + loss_k / self.draws
        return total, losses, outputs


class ImportanceSampling(Plugin):
    """Example of ``on_epoch_start`` + ``sampling_probabilities`` + ``epsilon`` (DPIS-like):
    each epoch, probabilities proportional to the clipped gradient norms (mean q), weights
    q / p_i. Its steps go to the ledger as ``UnsupportedDpEvent``: no accountant prices it
    (it exists to test the hooks, and the refusal)."""

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

    def step_event(self, ctx, noise_multiplier):
        return UnsupportedDpEvent()  # weights before clipping: no accountant prices this toy

    def state_dict(self):
        return {"max_prob": self.max_prob}

    def load_state_dict(self, state):
        self.max_prob = state["max_prob"]


class NoiseSchedule(Plugin):
    """Example of ``noise_multiplier`` + ``step_event``: sigma_t from a function of the global
    step, each step a Poisson-subsampled Gaussian with that sigma in the ledger."""

    name = "noise-schedule"

    def __init__(self, schedule: Callable[[int], float]):
        self.schedule, self.used = schedule, []

    def noise_multiplier(self, ctx):
        return self.schedule(ctx.step)

    def on_step_end(self, ctx, info):
        self.used.append(info["noise_multiplier"])

    def step_event(self, ctx, noise_multiplier):
        return PoissonSampledDpEvent(ctx.q, GaussianDpEvent(noise_multiplier))

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
