"""LP-MST's privacy invariants, observed on the real pipeline (Ghazi et al., NeurIPS 2021,
Algorithm 3 and Observation 4).

LP-MST is eps-label-DP as a whole by parallel composition only if the code keeps three promises
that no mechanism table can show: (1) every training label goes through the randomizer exactly
once; (2) the prior with which an example's label is released comes from a model that never
trained on that example (so never on its label, true or released); (3) the stages' parts are a
partition of the training set drawn without looking at the labels. And the ledger must hold the
one label release that the whole run costs.

:func:`trace` runs :func:`dpnotes.methods.labeldp.run` itself, the code of every LP-MST record,
on a small synthetic set built so that everything can be seen from outside: n rows, K = n
classes, every label distinct (a permutation of the rows, so a label names its row), and the
row number in the first input column (the model ignores it). It watches

* every call of the module's randomizer (``labeldp.rr_with_prior``, a spy): which rows, the
  priors given, the released labels, and, at that moment, the rows the model has trained on and
  the model's own softmax on the rows (to tell where the priors came from);
* every training batch, after the method's own batch transform (a plug-in beside LabelDP's):
  which rows the loss sees, with which labels.

Only stage structure is taken from a setting (stages, fractions, temperature, filter, k* rule,
eps): augmentation and mixup are turned off (they transform a batch the method already holds,
and mixup would blur the labels the observer reads). :func:`check` turns a trace into the
invariants; :func:`settings` lists the distinct LP-MST settings of the LabelDP chapter's runs.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from unittest import mock

import torch
from torch import nn

from dpnotes import validate
from dpnotes.train import Plugin, TrainConfig

ROWS = 60  # rows (and classes) of the synthetic set
FEATURES = 4
TRAIN = {"epochs": 1, "batch_size": 4, "lr": 0.1}  # batch <= the smallest stage (LP-3ST: 9 rows)


class RowBlindLinear(nn.Module):
    """Logits from every input column but the first (the row number)."""

    def __init__(self, num_classes: int):
        super().__init__()
        self.linear = nn.Linear(FEATURES, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x[:, 1:])


class BatchObserver(Plugin):
    """Records the rows and labels of every training batch (after earlier plug-ins' transforms)."""

    name = "lpmst-batch-observer"

    def __init__(self, log: list):
        self.log = log

    def transform_batch(self, ctx, inputs, targets, indices):
        if targets.dim() != 1:
            raise ValueError("the LP-MST trace reads integer labels: run it without mixup")
        self.log.append((inputs[0][:, 0].round().long().cpu(), targets.long().cpu()))
        return inputs, targets


@dataclass
class Trace:
    """What :func:`trace` saw (module docstring)."""

    config: object
    true_labels: torch.Tensor  # label of each row
    releases: list[dict]  # per randomizer call: rows, released, priors, trained_before, model_priors
    batches: list[tuple[torch.Tensor, torch.Tensor]]  # rows and labels of each training batch
    result: dict


def data(permutation_seed: int, rows: int = ROWS):
    """``((x, labels), permutation)``: row i has x[i, 0] = i and label permutation[i]."""
    g = torch.Generator().manual_seed(validate.integer("permutation_seed", permutation_seed, minimum=0))
    perm = torch.randperm(rows, generator=g)
    x = torch.cat([torch.arange(rows, dtype=torch.float32)[:, None], torch.randn(rows, FEATURES, generator=g)], 1)
    return (x, perm), perm


def structural(method_config: dict, rows: int = ROWS):
    """A :class:`~dpnotes.methods.labeldp.Config` with the stage structure of ``method_config``
    on K = ``rows`` classes, no augmentation, no mixup, a uniform first prior."""
    from dpnotes.methods import labeldp

    keep = {k: method_config[k] for k in ("epsilon", "stages", "stage_fractions", "temperature", "filter",
                                           "k_star") if method_config.get(k) is not None}
    stages = int(keep.get("stages", 1))
    if stages < 2 or not math.isfinite(float(keep["epsilon"])):
        raise ValueError("the LP-MST trace takes settings with stages >= 2 and a finite epsilon")
    return labeldp.Config(num_classes=rows, mechanism="rr_prior", mixup_alpha=(0.0,) * stages, **keep)


def trace(config, seed: int = 0, permutation_seed: int = 0) -> Trace:
    """One LP-MST run of ``config`` (K must equal :data:`ROWS`) through ``labeldp.run``, watched
    (module docstring)."""
    from dpnotes.methods import labeldp

    if config.num_classes != ROWS:
        raise ValueError(f"config.num_classes must be {ROWS} (one class per row), got {config.num_classes}")
    (x, y), _ = data(permutation_seed)
    row_of = torch.argsort(y)  # label -> its row
    torch.manual_seed(seed)
    model = RowBlindLinear(ROWS)
    batches, releases = [], []
    randomizer = labeldp.rr_with_prior

    def spy(labels, priors, epsilon, **kwargs):
        rows = row_of[labels.long()]
        with torch.no_grad():
            was = model.training
            model.eval()
            softmax = torch.softmax(model(x[rows]) / config.temperature, dim=1).double()
            model.train(was)
        released = randomizer(labels, priors, epsilon, **kwargs)
        trained = torch.cat([b[0] for b in batches]).unique() if batches else torch.empty(0, dtype=torch.long)
        releases.append({"rows": rows, "released": released.clone(), "priors": priors.detach().clone(),
                         "epsilon": epsilon, "trained_before": trained, "model_priors": softmax})
        return released

    train_config = TrainConfig.non_private(**TRAIN, seed=seed)
    with mock.patch.object(labeldp, "rr_with_prior", spy):
        result = labeldp.run(model, (x, y), None, train_config, config, plugins=(BatchObserver(batches),),
                             progress=False)
    return Trace(config, y, releases, batches, result)


def check(t: Trace) -> dict:
    """The invariants of one trace, each True or False, with the numbers behind them."""
    from dpnotes.ledger import LabelRandomizedResponseDpEvent, Ledger
    from dpnotes.methods import labeldp

    n, cfg = len(t.true_labels), t.config
    counts = torch.zeros(n, dtype=torch.long)
    released = torch.full((n,), -1, dtype=torch.long)
    parts, unseen, from_model = [], True, True
    for i, r in enumerate(t.releases):
        counts.index_add_(0, r["rows"], torch.ones_like(r["rows"]))
        released[r["rows"]] = r["released"].long()
        parts.append(set(r["rows"].tolist()))
        unseen &= not set(r["trained_before"].tolist()) & parts[-1]
        want = cfg.priors(len(r["rows"])) if i == 0 else r["model_priors"]
        from_model &= bool(torch.allclose(r["priors"].double(), want.double(), atol=1e-6))
    disjoint = all(not (a & b) for i, a in enumerate(parts) for b in parts[i + 1:])
    sizes = [len(p) for p in parts]
    ends = [round(n * sum(cfg.fractions()[:i + 1])) for i in range(cfg.stages - 1)] + [n]
    expected = [e - s for s, e in zip([0] + ends[:-1], ends)]  # Algorithm 3's sizes, rounded
    trained_rows = torch.cat([b[0] for b in t.batches]) if t.batches else torch.empty(0, dtype=torch.long)
    trained_labels = torch.cat([b[1] for b in t.batches]) if t.batches else torch.empty(0, dtype=torch.long)
    ledger = Ledger.from_json(t.result["privacy"]["ledger"])
    label_events = [e for e, c in ledger.entries for _ in range(c) if isinstance(e, LabelRandomizedResponseDpEvent)]
    return {
        "releases": len(t.releases), "stage sizes": sizes,
        "each label released once": bool((counts == 1).all()),
        "priors from a model that never saw the rows": bool(unseen and from_model),
        "parts disjoint and covering": disjoint and set().union(*parts) == set(range(n)) and sizes == expected,
        "trained on released labels only": bool(len(trained_rows) > 0 and (released[trained_rows] >= 0).all()
                                                and torch.equal(trained_labels, released[trained_rows])),
        "one label event, label eps = eps": (label_events == [cfg.event()]
                                             and labeldp.label_epsilon(ledger) == cfg.epsilon),
    }


def label_blind_split(config, seed: int = 0) -> bool:
    """True if the rows of each stage are the same under two different label permutations
    (the split is drawn without looking at the labels)."""
    a, b = (trace(config, seed, p) for p in (0, 1))
    return [set(r["rows"].tolist()) for r in a.releases] == [set(r["rows"].tolist()) for r in b.releases]


def settings(profile: str = "paper") -> list[dict]:
    """The distinct LP-MST settings (stage structure and eps) of the LabelDP chapter's runs at
    ``profile``, with the experiments that use each."""
    from dpnotes.experiments import labeldp as runs

    out: dict[tuple, dict] = {}
    for c in runs.configs(profile):
        mc = c["method_config"]
        if mc.get("stages", 1) < 2 or not math.isfinite(mc["epsilon"]):
            continue
        config = structural(mc)
        key = tuple(sorted(dataclasses.asdict(config).items()))
        names = out.setdefault(key, {"config": config, "experiments": []})["experiments"]
        if c["experiment"] not in names:
            names.append(c["experiment"])
    return list(out.values())
