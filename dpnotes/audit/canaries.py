"""White-box Dirac gradient canaries in the one training loop (Nasr et al., USENIX Security 2023,
Sec. 4; Steinke, Nasr, Jagielski, NeurIPS 2023, Sec. 5 "white-box").

Canary i owns coordinate i of an extra parameter vector ``w`` (length m) that no real example
touches; its loss is ``a * w[i]``, so its per-example gradient is ``a e_i`` on every parameter
set (also DPlis' perturbed ones) and 0 elsewhere. Each canary is *included* with probability 1/2
(decided by the audit's seed); an excluded canary's slot holds a *blank*: an example whose loss
is 0 * (anything), a zero gradient, which no sampler, clip or sum can tell apart from its
absence. So the data set always has N = n + m rows (q = B/N is known when the run is defined)
and canary i's in/out pair is exactly the add/remove pair of the accountants (for DPIS the
noisy count N~ is the same on both sides, a pair the add/remove guarantee covers). Canaries and
blanks are drawn by the engine's own sampler (Poisson at q, or DPIS's probabilities), clipped
by its clip (``a`` = ``magnitude`` x C, above C by default so that the clip is exercised) and
noised by its noise: nothing of the loop is replaced.

:class:`CanaryModel` wraps any classifier: inputs ``(x, canary_id)``, outputs the K logits and
one canary column; targets K mark a canary, K + 1 a blank (:func:`canary_loss`). Real examples
have id -1 and their canary column is -1e4, so it never wins an arg-max.

:class:`CanaryObserver` (a plug-in that overrides no exclusive hook) reads, after every step,
the canary coordinates of the noised gradient the optimizer received (the loop hands it
``p.grad``; SGD, momentum and Adam read it without changing it), undoes the loop's
normalisation, and divides by the step's noise std: ``z_t[i] = (a_t 1[i sampled] +
N(0, s_t^2)) / s_t``. Per step it adds, per canary, ``z_t / sigma'_t`` (the linear score) and
the log-likelihood ratio of the step's claimed release ``PoissonSampledDpEvent(q', sigma')``
(from the ledger: DPIS iterations as their Lemma 3.1 equivalent, SA-DPSGD candidates as
their inner step) between "in" and "out",
``log(1 - q' + q' exp(z/sigma' - 1/(2 sigma'^2)))`` (the Neyman-Pearson score of the
subsampled Gaussian pair; any score gives a valid test, this one the most powerful when the
ledger tells the truth).
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from dpnotes import validate
from dpnotes.ledger import CandidateStepDpEvent, DpisIterationDpEvent, PoissonSampledDpEvent
from dpnotes.train import Plugin

REAL_ID = -1
REAL_CANARY_LOGIT = -1e4


class CanaryModel(nn.Module):
    """``base`` plus a canary vector ``w`` of length ``m``: ``forward(x, canary_id)``."""

    def __init__(self, base: nn.Module, m: int, num_classes: int, magnitude: float):
        super().__init__()
        self.base = base
        self.num_classes = validate.integer("num_classes", num_classes, minimum=2)
        self.magnitude = validate.positive("magnitude", magnitude)
        self.canary = nn.Parameter(torch.zeros(validate.integer("m", m, minimum=1)))

    def forward(self, x: torch.Tensor, canary_id: torch.Tensor) -> torch.Tensor:
        logits = self.base(x)
        ids = torch.arange(len(self.canary), device=canary_id.device)
        onehot = (canary_id.unsqueeze(-1) == ids).to(self.canary.dtype)
        column = self.magnitude * (onehot @ self.canary) + REAL_CANARY_LOGIT * (canary_id < 0).to(logits.dtype)
        return torch.cat([logits, column.unsqueeze(-1)], dim=-1)


def canary_loss(num_classes: int, twin_weight: float = 0.0):
    """Per-example loss for :class:`CanaryModel`: cross-entropy on the K logits for targets < K,
    the canary column for target K (gradient ``magnitude e_i``), 0 for target K + 1 (a blank),
    and ``-twin_weight`` times the column for target K + 2 (an energy "twin" of canary i, never a
    training row: :mod:`dpnotes.audit.step_run`)."""
    K = validate.integer("num_classes", num_classes, minimum=2)
    twin = -validate.nonnegative("twin_weight", twin_weight)

    def loss(outputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        ce = F.cross_entropy(outputs[..., :K], targets.clamp(max=K - 1), reduction="none")
        column = outputs[..., K]
        other = torch.where(targets == K + 2, twin * column, ce)
        return torch.where(targets == K, column, torch.where(targets == K + 1, 0.0 * column, other))

    return loss


def inclusion(m: int, seed: int) -> np.ndarray:
    """Which of the m canaries are included: independent fair coins from ``seed``'s own stream."""
    rng = np.random.default_rng(np.random.SeedSequence((validate.integer("seed", seed, minimum=0), 0xA0D17)))
    return rng.random(validate.integer("m", m, minimum=1)) < 0.5


def with_canaries(train_data, included: np.ndarray, num_classes: int):
    """``(x, ids, y)``: the real examples (id -1) then one row per canary slot: canary i (id i,
    target K, input zeros) if included, else a blank (id -1, target K + 1)."""
    x, y = train_data
    m = len(included)
    inc = torch.as_tensor(included)
    slots = torch.arange(m)
    ids = torch.cat([torch.full((len(y),), REAL_ID), torch.where(inc, slots, torch.full((m,), REAL_ID))])
    targets = torch.cat([y.long(), torch.where(inc, num_classes, num_classes + 1)])
    xs = torch.cat([x, torch.zeros((m, *x.shape[1:]), dtype=x.dtype)])
    return xs, ids, targets


def with_real_ids(data):
    """``(x, ids, y)`` of real examples only (test / validation sets)."""
    x, y = data
    return x, torch.full((len(y),), REAL_ID), y


def released_step(event) -> tuple[float, float]:
    """(q', sigma') of one step's ledger event, in units of its sensitivity."""
    if isinstance(event, CandidateStepDpEvent):
        event = event.event
    if isinstance(event, DpisIterationDpEvent):
        event = event.as_subsampled_gaussian()
    if not isinstance(event, PoissonSampledDpEvent):
        raise ValueError(f"the canary audit reads Poisson-subsampled Gaussian steps, got {type(event).__name__}")
    return float(event.sampling_probability), float(event.event.noise_multiplier)


def step_llr(z: np.ndarray, q: float, sigma: float) -> np.ndarray:
    """log(1 - q + q exp(z/sigma - 1/(2 sigma^2))), stably (module docstring)."""
    shift = z / sigma - 0.5 / sigma**2
    return np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + shift)


class CanaryObserver(Plugin):
    """Scores every canary slot from the noised gradients (module docstring)."""

    name = "canary-observer"

    def __init__(self, model: CanaryModel):
        if not isinstance(model, CanaryModel):
            raise ValueError("CanaryObserver needs the run's CanaryModel")
        self.model = model
        m = len(model.canary)
        self.llr = np.zeros(m)
        self.linear = np.zeros(m)
        self.steps = 0

    def on_step_end(self, ctx, info: dict) -> None:
        cfg = ctx.config
        grad = self.model.canary.grad
        std = info["noise_multiplier"] * cfg.clip
        if grad is None or std == 0:
            raise ValueError("the canary audit needs a private run with noise (no noised gradient to read)")
        scale = 1.0 / (ctx.q * ctx.n) if cfg.normalize == "expected" else 1.0
        z = grad.detach().double().cpu().numpy() / scale / std
        q, sigma = released_step(ctx.ledger.entries[-1][0])
        self.llr += step_llr(z, q, sigma)
        self.linear += z / sigma
        self.steps += 1

    def scores(self) -> dict:
        return {"llr": self.llr.tolist(), "linear": self.linear.tolist(), "steps": self.steps}

    def state_dict(self) -> dict:
        return {"llr": self.llr.tolist(), "linear": self.linear.tolist(), "steps": self.steps}

    def load_state_dict(self, state: dict) -> None:
        self.llr, self.linear = np.asarray(state["llr"]), np.asarray(state["linear"])
        self.steps = state["steps"]
