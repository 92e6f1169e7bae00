"""One run of the comparison (:func:`execute`): a tuned run trains its K trials and releases the
best; a default run trains the paper's setting once.

Data: the training images (a fixed subset at the small profiles) are the private data set; the
test set is split once (a fixed permutation) into a validation half that selects and a report
half that measures the released model. Neither half is private training data, as every
chapter's test set (SA-DPSGD's energy reads part of the validation half), so the selection's
score adds no release: the tuning event alone charges the selection (Papernot and Steinke
2022, whose Q outputs its score with its model).

A tuned record holds only what the tuning releases: the best trial's model metrics, its
candidate (and which one it was), K (drawn from the seed before any data was read); the other
trials' scores are not kept. Its ledger is one ``RepeatAndSelectDpEvent`` over the trial's
releases (:mod:`dpnotes.experiments.compare.privacy`). Each trial is its own training run with
its own seed (``1000 seed + trial + 1``: independent runs, as the theorem asks); trials are not
checkpointed (a stopped tuned run starts again).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

from dpnotes.experiments.compare import privacy as P
from dpnotes.record import Record

SPLIT_SEED = 5100  # the permutation of the test set into validation and report halves


@lru_cache(maxsize=2)
def load(dataset: str, train_size, validation: int, model: str):
    """(train, validation, report) tensors, images / 255, ScatterNet features where the model has them."""
    import torch

    from dpnotes import models
    from dpnotes.data.prepare import fixed_subset, images

    features = models.preprocessor(model)

    def prep(x):
        if features is None:
            return x
        with torch.no_grad():
            return torch.cat([features(x[i:i + 1024]) for i in range(0, len(x), 1024)])

    x, y = fixed_subset(images(dataset, "train"), train_size)
    tx, ty = images(dataset, "test")
    order = torch.randperm(len(ty), generator=torch.Generator().manual_seed(SPLIT_SEED))
    val, rep = order[:validation], order[validation:2 * validation]
    return (prep(x), y.long()), (prep(tx[val]), ty[val].long()), (prep(tx[rep]), ty[rep].long())


def accuracy(model, data, device: str) -> float:
    import torch

    x, y = data
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(y), 1000):
            correct += int((model(x[i:i + 1000].to(device)).argmax(1).cpu() == y[i:i + 1000]).sum())
    return correct / len(y)


def _trial_spec(spec, knobs: dict, trial: int):
    lr = knobs["lr"] / spec.train["batch_size"] if spec.train.get("normalize") == "none" else knobs["lr"]
    train = {**spec.train, "lr": lr, "clip": knobs["clip"], "seed": 1000 * spec.seed + trial + 1}
    own = {k: v for k, v in knobs.items() if k not in ("lr", "clip")}
    return SimpleNamespace(seed=train["seed"], method=spec.method, method_config={**spec.method_config, **own},
                           model=spec.model, model_kwargs=spec.model_kwargs, train=train)


def _one(spec, trial_spec, data, device, progress, checkpoint):
    from dpnotes.experiments import train_spec

    train, validation, report = data
    energy = None
    if spec.method == "sadpsgd":
        n = int(spec.analysis["energy_images"])
        energy = (validation[0][:n], validation[1][:n])
    out = train_spec(trial_spec, train, validation, device=device, progress=progress, checkpoint=checkpoint,
                     validation_data=energy, analyse=lambda model: {"report_acc": accuracy(model, report, device)})
    final = out.get("final")  # this module writes the record's final metrics (Record reads them)
    final["validation_acc"] = final["test_acc"]  # the test set given to train is the validation half
    return out


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Train one resolved spec: every trial of a tuned run (the best released), or the default run."""
    from dpnotes.accounting.registry import accountant, price
    from dpnotes.ledger import Ledger

    data = load(spec.dataset, spec.subset.get("train"), int(spec.analysis["validation"]), spec.model)
    tuning = spec.analysis.get("tuning")
    if tuning is None:
        return _one(spec, spec, data, device, progress, checkpoint)
    best, best_i, trials = None, None, []
    rdp = accountant(P.S.ACCOUNTANT)
    for i, knobs in enumerate(tuning["candidates"]):
        out = _one(spec, _trial_spec(spec, dict(knobs), i), data, device, progress, None)
        trials.append(Ledger.from_json(out["privacy"]["ledger"]))
        if best is None or Record.of(out).metric("validation_acc") > Record.of(best).metric("validation_acc"):
            best, best_i = out, i
    plan = tuning["planned_trial"]
    planned = P.trial_ledger(spec.experiment.split(".")[-2], plan["scale"], plan["q"], plan["steps_per_epoch"],
                             plan["epochs"])
    if spec.method == "dpis":  # data-dependent releases: the largest realised trial (privacy.py)
        inner, bound = max(trials, key=lambda t: price(t, spec.train["delta"], P.S.ACCOUNTANT)[P.S.ACCOUNTANT]
                           ["epsilon"]), "realised"
    else:
        for t in trials:
            if (rdp.curve(t) > rdp.curve(planned) * (1 + 1e-9) + 1e-12).any():
                raise RuntimeError(f"{spec.experiment}: a trial released more than the planned trial; "
                                   "the tuning event would not bound it")
        inner, bound = planned, "planned"
    ledger = Ledger().append(P.tuning_event(inner))
    best["privacy"]["ledger"] = ledger.to_json()
    best["privacy"]["epsilon"] = price(ledger, spec.train["delta"], list(spec.train["accountants"]))
    best.get("final")["tuning"] = {"trials": len(trials), "selected": best_i,
                               "candidate": dict(tuning["candidates"][best_i]), "trial_bound": bound}
    return best
