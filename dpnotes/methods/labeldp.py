"""LabelDP (Ghazi, Golowich, Kumar, Manurangsi, Zhang, NeurIPS 2021): LP-1ST.

At train start the training labels are released ONCE through a label randomizer -- RR
(Section 3, Eq. 1: keep the label with probability ``e^eps / (e^eps + K - 1)``) or
RRWithPrior (Algorithm 2, RRTop-k* of Algorithm 1) with one prior for every example, uniform
by default (LP-1ST; a uniform prior gives k* = K, i.e. RR) -- and ``ctx.train_targets`` is
replaced by the randomized labels, so every later use (batches, train-split evaluation)
sees only them. Training is the loop's non-private path (``TrainConfig.non_private``).

Privacy notion and pricing (explicit, never silent). Label-DP (Definition 2.2) protects the
LABEL of one example under substitution; the features are treated as public and are NOT
protected. The ledger records both: one ``LabelRandomizedResponseDpEvent(eps, K, mechanism)``
for the label release, appended to ``ctx.ledger`` directly (it is not a Gaussian, so
``ctx.release`` does not fit), and the loop's ``NonPrivateDpEvent`` for every gradient step,
which reads the features. Priced as a whole, the ledger has eps = inf under ``pure`` (and
every accountant): correct for record-level DP, since the features are used in the clear.
The label-DP guarantee is :func:`label_epsilon`: it prices the label events with ``pure``
(basic composition, Dwork & Roth Thm 3.16) after checking that every other event is such a
feature-only step (it reads labels only through the released ones: post-processing), and
refuses any other release. Each epoch record carries it as ``label_epsilon`` with
``privacy_notion = "label"``.

``epsilon = inf`` releases the labels as they are (both mechanisms), as the event allows.

Not yet implemented: LP-2ST / LP-MST (Algorithm 3). The design allows it:
:func:`randomize_labels` takes one prior per example (stage t: the stage-(t-1) model's
softmax on S_t), and each example's label is randomized once over all stages, so the stages
together are one eps-label-DP release by parallel composition (Observation 4) -- stage 2 must
record that single release, not a second event (``pure`` would add the two).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from dpnotes import validate
from dpnotes.accounting.registry import price
from dpnotes.ledger import LabelRandomizedResponseDpEvent, Ledger, NonPrivateDpEvent
from dpnotes.mechanisms.randomized_response import check_labels, randomized_response
from dpnotes.mechanisms.rr_prior import check_priors, rr_with_prior
from dpnotes.train import Plugin

VERSION = 1
MECHANISMS = {"rr": "rr", "rr_prior": "rr-with-prior"}  # setting -> the ledger event's name
PRIVACY_NOTION = "label"


@dataclass(frozen=True)
class Config:
    """LabelDP settings.

    epsilon      eps > 0 of the label randomizer (pure eps-label-DP), or inf (no randomization).
    num_classes  K >= 2; every training label must lie in [0, K).
    mechanism    "rr": K-ary randomized response (Sec. 3, Eq. 1; LP-1ST);
                 "rr_prior": RRWithPrior (Algorithm 2).
    prior        "rr_prior" only: a probability vector over the K classes, the same for every
                 example; None = uniform (LP-1ST: then RRWithPrior is RR).
    """

    epsilon: float
    num_classes: int
    mechanism: str = "rr"
    prior: tuple[float, ...] | None = None

    def __post_init__(self):
        validate.positive("epsilon", self.epsilon, allow_inf=True)
        validate.integer("num_classes", self.num_classes, minimum=2)
        validate.choice("mechanism", self.mechanism, tuple(MECHANISMS))
        if self.prior is not None:
            if self.mechanism != "rr_prior":
                raise ValueError(f"prior is used by mechanism='rr_prior' only, not {self.mechanism!r}")
            object.__setattr__(self, "prior", tuple(float(p) for p in self.prior))
            if len(self.prior) != self.num_classes:
                raise ValueError(f"prior must have num_classes = {self.num_classes} entries, got {len(self.prior)}")
            check_priors(torch.tensor(self.prior, dtype=torch.float64), name="prior")

    def priors(self, n: int) -> torch.Tensor:
        """The ``(n, K)`` prior rows (uniform unless ``prior`` is given)."""
        row = (torch.tensor(self.prior, dtype=torch.float64) if self.prior is not None
               else torch.full((self.num_classes,), 1.0 / self.num_classes, dtype=torch.float64))
        return row.expand(n, -1)

    def event(self) -> LabelRandomizedResponseDpEvent:
        return LabelRandomizedResponseDpEvent(self.epsilon, self.num_classes, MECHANISMS[self.mechanism])


def resolve(settings: dict) -> dict:
    resolved = dataclasses.asdict(Config(**settings))
    resolved["prior"] = None if resolved["prior"] is None else list(resolved["prior"])
    return resolved


def hooks(config: Config) -> tuple:
    return (LabelDP(config),)


def randomize_labels(labels: torch.Tensor, config: Config, generator: torch.Generator,
                     priors: torch.Tensor | None = None) -> torch.Tensor:
    """The labels through the configured randomizer; ``priors`` (one row per example) overrides
    the config's prior (for LP-MST stages). ValueError names ``labels`` outside [0, K)."""
    labels = check_labels(labels, config.num_classes)
    if math.isinf(config.epsilon):
        return labels.clone()
    if config.mechanism == "rr":
        return randomized_response(labels, config.num_classes, config.epsilon, generator=generator)
    priors = config.priors(len(labels)) if priors is None else priors
    return rr_with_prior(labels, priors, config.epsilon, generator=generator)


def label_epsilon(ledger: Ledger) -> float:
    """The label-DP eps of a run's ledger (module docstring): ``pure`` over its label events;
    ``NonPrivateDpEvent`` entries count as feature-only uses; anything else is refused."""
    labels = Ledger()
    for event, count in ledger.entries:
        if isinstance(event, LabelRandomizedResponseDpEvent):
            labels.append(event, count)
        elif not isinstance(event, NonPrivateDpEvent):
            raise ValueError(f"label-DP pricing covers label releases and feature-only steps; the ledger "
                             f"also holds {type(event).__name__}")
    return price(labels, 0.5, "pure")["pure"]["epsilon"]  # pure eps-DP: delta is unused


class LabelDP(Plugin):
    """Replaces the training labels by one randomized release at train start (module docstring)."""

    name = "labeldp"

    def __init__(self, config: Config):
        if not isinstance(config, Config):
            raise ValueError(f"config must be a labeldp.Config, got {type(config).__name__}")
        self.config = config
        self.labels: torch.Tensor | None = None

    def on_train_start(self, ctx) -> None:
        if ctx.config.private:
            raise ValueError("LabelDP trains on the randomized labels without DP-SGD: "
                             "use TrainConfig.non_private(...)")
        if self.labels is None:  # not resumed: release the labels now, once
            self.labels = randomize_labels(ctx.train_targets.cpu(), self.config, ctx.release_gen)
            ctx.ledger.append(self.config.event())
        ctx.train_targets = self.labels.to(ctx.device)

    def on_epoch_end(self, ctx, record: dict) -> dict:
        return {"privacy_notion": PRIVACY_NOTION, "label_epsilon": label_epsilon(ctx.ledger)}

    def state_dict(self) -> dict:
        return {"labels": self.labels}

    def load_state_dict(self, state: dict) -> None:
        self.labels = state["labels"]
