"""LabelDP (Ghazi, Golowich, Kumar, Manurangsi, Zhang, NeurIPS 2021): LP-1ST and LP-MST.

LP-1ST. At train start the training labels are released ONCE through a label randomizer --
RR (Section 3, Eq. 1: keep the label with probability ``e^eps / (e^eps + K - 1)``) or
RRWithPrior (Algorithm 2, RRTop-k* of Algorithm 1) with one prior for every example, uniform
by default (a uniform prior gives k* = K, i.e. RR) -- and ``ctx.train_targets`` is replaced
by the randomized labels, so every later use (batches, train-split evaluation) sees only them.
Training is the loop's non-private path (``TrainConfig.non_private``).

LP-MST (Algorithm 3; :func:`run` with ``stages = T >= 2``). The training set is split into
S_1..S_T by a permutation that does not look at the labels. Stage t releases the labels of
S_t through RRWithPrior with each example's prior = softmax(logits / ``temperature``) of the
stage-(t-1) model (stage 1: the config's prior, uniform by default), and trains, starting
from the stage-(t-1) weights with a fresh optimizer and schedule, on S_t's released labels
plus the earlier stages' examples whose released label is among the stage-(t-1) model's
top-k̄ predictions, k̄ = floor(mean k* of stage t's queries) (App. B; ``filter=False`` keeps
them all). Each example's label is randomized exactly once, so the whole run is
eps-label-DP by parallel composition (Observation 4); the ledger holds that as ONE
``LabelRandomizedResponseDpEvent(eps, K, "lp-mst")``.

Training as App. B: optional mixup (one Beta(alpha, alpha) per batch, ``mixup_alpha`` per
stage) and crop / flip / cutout (:mod:`dpnotes.methods.augment`); the LR schedule and weight
decay are the TrainConfig's (``lr_schedule="warmup_linear"``, ``weight_decay``).

Privacy notion and pricing (explicit, never silent). Label-DP (Definition 2.2) protects the
LABEL of one example under substitution; the features are treated as public and are NOT
protected. The ledger records both: the label release event, appended to ``ctx.ledger``
directly (it is not a Gaussian, so ``ctx.release`` does not fit), and the loop's
``NonPrivateDpEvent`` for every gradient step, which reads the features. Priced as a whole,
the ledger has eps = inf under ``pure`` (and every accountant): correct for record-level DP,
since the features are used in the clear. The label-DP guarantee is :func:`label_epsilon`:
it prices the label events with ``pure`` (basic composition, Dwork & Roth Thm 3.16) after
checking that every other event is such a feature-only step (it reads labels only through
the released ones: post-processing), and refuses any other release. Each epoch record
carries it as ``label_epsilon`` with ``privacy_notion = "label"``.

``epsilon = inf`` releases the labels as they are (both mechanisms), as the event allows.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from pathlib import Path

import torch

from dpnotes import validate
from dpnotes.accounting.registry import price
from dpnotes.ledger import LabelRandomizedResponseDpEvent, Ledger, NonPrivateDpEvent
from dpnotes.mechanisms.randomized_response import check_labels, randomized_response
from dpnotes.mechanisms.rr_prior import K_RULES, check_priors, rr_with_prior, top_k_mask
from dpnotes.methods import augment
from dpnotes.record import add_final
from dpnotes.train import Plugin, train
from dpnotes.train.loop import split_data

VERSION = 2
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
                 example (LP-MST: stage 1's); None = uniform (then RRWithPrior is RR).
    stages       T: 1 = LP-1ST; T >= 2 = LP-MST (needs mechanism "rr_prior").
    stage_fractions  LP-MST: the sizes of S_1..S_T as fractions of the training set, each in
                 (0, 1), summing to 1; None = equal parts.
    temperature  LP-MST: prior = softmax(logits / temperature) (App. E), > 0.
    filter       LP-MST: keep earlier stages' examples only where their released label is in
                 the previous model's top-k̄ (App. B); False keeps them all.
    mixup_alpha  one per stage: Beta(alpha, alpha) mixup of inputs and one-hot labels; 0 = off.
    augment      names from ``augment.AUGMENTATIONS`` ("crop", "flip", "cutout") for image batches.
    k_star       "paper": Algorithm 2's k*; "jax": the authors' JAX code's (denominator of k - 1,
                 :func:`~dpnotes.mechanisms.rr_prior.jax_k`), for RRWithPrior and the filter's k̄.
                 Both are eps-DP (k depends on the prior only). Below eps = ln 2 the JAX rule gives
                 k = 1 for a uniform prior (stage 1): every label comes out as the top class.
    label_seed   None: the label release (and LP-MST's split) draws from the run's seed, so every
                 repetition (seed) sees new randomized labels; an int fixes them across seeds, as the
                 authors' JAX repetitions do (their spread then leaves out the label noise).
    """

    epsilon: float
    num_classes: int
    mechanism: str = "rr"
    prior: tuple[float, ...] | None = None
    stages: int = 1
    stage_fractions: tuple[float, ...] | None = None
    temperature: float = 1.0
    filter: bool = True
    mixup_alpha: tuple[float, ...] = (0.0,)
    augment: tuple[str, ...] = ()
    k_star: str = "paper"
    label_seed: int | None = None

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
        validate.integer("stages", self.stages, minimum=1)
        if self.stages > 1 and self.mechanism != "rr_prior":
            raise ValueError(f"stages = {self.stages} (LP-MST) needs mechanism='rr_prior', not {self.mechanism!r}")
        if self.stage_fractions is not None:
            object.__setattr__(self, "stage_fractions", tuple(float(f) for f in self.stage_fractions))
            if len(self.stage_fractions) != self.stages:
                raise ValueError(f"stage_fractions must have stages = {self.stages} entries, "
                                 f"got {len(self.stage_fractions)}")
            for i, f in enumerate(self.stage_fractions):
                validate.probability(f"stage_fractions[{i}]", f, high_open=True)
            if not math.isclose(sum(self.stage_fractions), 1.0, abs_tol=1e-9):
                raise ValueError(f"stage_fractions must sum to 1, got {sum(self.stage_fractions)!r}")
        validate.positive("temperature", self.temperature)
        if not isinstance(self.filter, bool):
            raise ValueError(f"filter must be True or False, got {self.filter!r}")
        object.__setattr__(self, "mixup_alpha", tuple(float(a) for a in self.mixup_alpha))
        if len(self.mixup_alpha) != self.stages:
            raise ValueError(f"mixup_alpha must have one value per stage ({self.stages}), got {len(self.mixup_alpha)}")
        for i, a in enumerate(self.mixup_alpha):
            validate.nonnegative(f"mixup_alpha[{i}]", a)
        validate.choice("k_star", self.k_star, tuple(K_RULES))
        if self.k_star != "paper" and self.mechanism != "rr_prior":
            raise ValueError(f"k_star is used by mechanism='rr_prior' only, not {self.mechanism!r}")
        if self.label_seed is not None:
            validate.integer("label_seed", self.label_seed, minimum=0)
        object.__setattr__(self, "augment", tuple(self.augment))
        for name in self.augment:
            validate.choice("augment", name, augment.AUGMENTATIONS)

    def priors(self, n: int) -> torch.Tensor:
        """The ``(n, K)`` prior rows (uniform unless ``prior`` is given)."""
        row = (torch.tensor(self.prior, dtype=torch.float64) if self.prior is not None
               else torch.full((self.num_classes,), 1.0 / self.num_classes, dtype=torch.float64))
        return row.expand(n, -1)

    def event(self) -> LabelRandomizedResponseDpEvent:
        mechanism = "lp-mst" if self.stages > 1 else MECHANISMS[self.mechanism]
        return LabelRandomizedResponseDpEvent(self.epsilon, self.num_classes, mechanism)

    def fractions(self) -> tuple[float, ...]:
        return self.stage_fractions or (1.0 / self.stages,) * self.stages


def resolve(settings: dict) -> dict:
    resolved = dataclasses.asdict(Config(**settings))
    for key in ("prior", "stage_fractions"):
        resolved[key] = None if resolved[key] is None else list(resolved[key])
    resolved["mixup_alpha"], resolved["augment"] = list(resolved["mixup_alpha"]), list(resolved["augment"])
    for key, default in (("k_star", "paper"), ("label_seed", None)):
        if resolved[key] == default:  # defaults are left out: records made before the options keep their ids
            del resolved[key]
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
    return rr_with_prior(labels, priors, config.epsilon, generator=generator, k_rule=config.k_star)


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
    """Trains on released labels only (module docstring), with the configured augmentations.

    ``stage``: 0-based LP-MST stage. ``released``: the labels of this stage's training set,
    already released by :func:`run` (None: release them here at train start, LP-1ST).
    ``history``: the ledger of everything released before this stage, replayed once into the
    run's ledger so that it stays the ledger of the whole run."""

    name = "labeldp"

    def __init__(self, config: Config, *, stage: int = 0, released: torch.Tensor | None = None,
                 history: Ledger | None = None):
        if not isinstance(config, Config):
            raise ValueError(f"config must be a labeldp.Config, got {type(config).__name__}")
        self.config, self.stage = config, validate.integer("stage", stage, minimum=0)
        if stage >= config.stages:
            raise ValueError(f"stage must be in [0, {config.stages}), got {stage}")
        self.labels, self.history, self.replayed = released, history, False

    def on_train_start(self, ctx) -> None:
        if ctx.config.private:
            raise ValueError("LabelDP trains on the randomized labels without DP-SGD: "
                             "use TrainConfig.non_private(...)")
        if self.labels is None:  # LP-1ST, not resumed: release the labels now, once
            gen = ctx.release_gen if self.config.label_seed is None else label_generator(self.config.label_seed)
            self.labels = randomize_labels(ctx.train_targets.cpu(), self.config, gen)
            ctx.ledger.append(self.config.event())
        elif self.history is not None and not self.replayed:
            for event, count in self.history.entries:
                ctx.ledger.append(event, count)
            self.replayed = True
        if len(self.labels) != len(ctx.train_targets):
            raise ValueError(f"released has {len(self.labels)} labels for {len(ctx.train_targets)} examples")
        ctx.train_targets = self.labels.to(ctx.device)

    def transform_batch(self, ctx, inputs, targets, indices):
        alpha = self.config.mixup_alpha[self.stage]
        if not self.config.augment and alpha == 0:
            return inputs, targets
        x = augment.augment(inputs[0], self.config.augment, ctx.aux_gen)
        if alpha > 0:
            x, targets = augment.mixup(x, targets, self.config.num_classes, alpha, ctx.aux_gen)
        return (x, *inputs[1:]), targets

    def on_epoch_end(self, ctx, record: dict) -> dict:
        out = {"privacy_notion": PRIVACY_NOTION, "label_epsilon": label_epsilon(ctx.ledger)}
        if self.config.stages > 1:
            out["stage"] = self.stage + 1
        return out

    def state_dict(self) -> dict:
        return {"labels": self.labels, "replayed": self.replayed}

    def load_state_dict(self, state: dict) -> None:
        self.labels, self.replayed = state["labels"], state.get("replayed", False)


# --------------------------------------------------------------------------------------
# LP-MST (Algorithm 3).

SPLIT_SEED_OFFSET = 10  # the method's own stream (split, releases): seed + 10, apart from the loop's


def label_generator(seed: int) -> torch.Generator:
    """The stream of the label release (LP-1ST) or of LP-MST's split and releases for ``seed``."""
    return torch.Generator("cpu").manual_seed(seed + SPLIT_SEED_OFFSET)


def run(model, train_data, test_data, train_config, config: Config, *, plugins=(), progress: bool = True,
        checkpoint=None) -> dict:
    """Train LP-1ST (one call of the loop) or LP-MST (``config.stages`` calls, module
    docstring); returns the last stage's result with every stage's epochs and the staged
    release in ``final["lp_mst"]``: stage and training-set sizes, each filtering stage's k̄ and
    the previous model's top-k̄ accuracy on the test data (App. E, Fig. 5). A checkpoint path gets
    one file per stage (suffix ``.stage<t>``), so an interrupted run resumes in the stage it was in."""
    if config.stages == 1:
        return train(model, train_data, test_data, train_config, plugins=hooks(config) + tuple(plugins),
                     progress=progress, checkpoint=checkpoint)
    inputs, labels = split_data(train_data, "train_data")
    labels = check_labels(labels.cpu(), config.num_classes)
    gen = label_generator(train_config.seed if config.label_seed is None else config.label_seed)
    parts = stage_parts(len(labels), config.fractions(), gen)
    ledger = Ledger()
    ledger.append(config.event())
    seen_idx, seen_labels = torch.empty(0, dtype=torch.long), torch.empty(0, dtype=labels.dtype)
    epochs, result = [], None
    info = {"stage_sizes": [len(p) for p in parts], "train_sizes": [], "k_bar": [], "test_top_k_bar_acc": []}
    for t, part in enumerate(parts):
        if t == 0:
            priors = config.priors(len(part))
        else:
            priors = torch.softmax(_logits(model, inputs, part, train_config) / config.temperature, dim=1)
        released = (labels[part].clone() if math.isinf(config.epsilon)
                    else rr_with_prior(labels[part], priors.double(), config.epsilon, generator=gen,
                                       k_rule=config.k_star))
        if t > 0 and config.filter and len(seen_idx):
            k_bar = int(K_RULES[config.k_star](priors.double(), config.epsilon).double().mean().floor())
            top = top_k_mask(_logits(model, inputs, seen_idx, train_config), torch.full((len(seen_idx),), k_bar))
            keep = top[torch.arange(len(seen_idx)), seen_labels]
            seen_idx, seen_labels = seen_idx[keep], seen_labels[keep]
            info["k_bar"].append(k_bar)
            if test_data is not None:
                info["test_top_k_bar_acc"].append(_top_k_accuracy(model, test_data, k_bar, train_config))
        seen_idx, seen_labels = torch.cat([seen_idx, part]), torch.cat([seen_labels, released])
        info["train_sizes"].append(len(seen_idx))
        stage_data = (tuple(x[seen_idx] for x in inputs), seen_labels)
        plugin = LabelDP(config, stage=t, released=seen_labels, history=ledger)
        path = None if checkpoint is None else Path(f"{checkpoint}.stage{t + 1}")
        result = train(model, stage_data, test_data, train_config, plugins=(plugin, *plugins),
                       progress=progress, checkpoint=path)
        ledger = Ledger.from_json(result["privacy"]["ledger"])
        epochs += result["epochs"]
    result["epochs"] = epochs
    add_final(result, lp_mst=info)
    return result


def stage_parts(n: int, fractions: tuple[float, ...], generator: torch.Generator) -> list[torch.Tensor]:
    """A random partition of ``range(n)`` into parts of sizes ``fractions`` (rounded; the last
    part takes the rest), drawn without looking at any label."""
    perm = torch.randperm(n, generator=generator)
    ends = [round(n * sum(fractions[:i + 1])) for i in range(len(fractions) - 1)] + [n]
    starts = [0] + ends[:-1]
    if any(e <= s for s, e in zip(starts, ends)):
        raise ValueError(f"stage_fractions {fractions} leave a stage without examples at n = {n}")
    return [perm[s:e] for s, e in zip(starts, ends)]


def _top_k_accuracy(model, test_data, k: int, train_config) -> float:
    """How often the true test label is among the model's top-``k`` predictions (App. D-E's
    stage-1 top-k accuracy; the test labels never reach training)."""
    inputs, labels = split_data(test_data, "test_data")
    top = top_k_mask(_logits(model, inputs, torch.arange(len(labels)), train_config),
                     torch.full((len(labels),), k))
    return float(top[torch.arange(len(labels)), labels.cpu().long()].double().mean())


@torch.no_grad()
def _logits(model, inputs: tuple[torch.Tensor, ...], idx: torch.Tensor, train_config) -> torch.Tensor:
    """The model's logits (eval mode, no augmentation) on the examples ``idx``, on the CPU."""
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        out = [model(*(x[idx[s:s + train_config.eval_batch_size]].to(device) for x in inputs)).float().cpu()
               for s in range(0, len(idx), train_config.eval_batch_size)]
    finally:
        model.train(was_training)
    return torch.cat(out)
