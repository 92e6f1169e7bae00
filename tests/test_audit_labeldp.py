"""LP-MST's pipeline invariants on the real code (dpnotes.methods.labeldp.run with the stage
settings of dpnotes.experiments.labeldp): each label released once, priors only from a model
that never trained on the example, disjoint parts drawn without the labels, training on released
labels only, one label event in the ledger. Each invariant is also broken on purpose once, and
the check must say so."""

import math

import pytest
import torch
import torch.nn.functional as F

from dpnotes.audit import labeldp as lpmst
from dpnotes.audit import report
from dpnotes.experiments import labeldp as runs
from dpnotes.methods import labeldp

INVARIANTS = ("each label released once", "priors from a model that never saw the rows",
              "parts disjoint and covering", "trained on released labels only", "one label event, label eps = eps")


def _config(**kw):
    settings = {"epsilon": 1.0, "stages": 2, "stage_fractions": (0.7, 0.3), "temperature": 0.5, **kw}
    return lpmst.structural(settings)


def test_every_lp_mst_setting_of_the_labeldp_runs_keeps_the_invariants():
    settings = lpmst.settings("paper")
    covered = {e for s in settings for e in s["experiments"]}
    wanted = {c["experiment"] for c in runs.configs("paper")
              if c["method_config"].get("stages", 1) >= 2 and math.isfinite(c["method_config"]["epsilon"])}
    assert covered == wanted and len(wanted) > 10
    assert {s["config"].stages for s in settings} == {2, 3}
    for s in settings:
        checks = lpmst.check(lpmst.trace(s["config"]))
        assert all(checks[k] for k in INVARIANTS), (s["experiments"], checks)
        assert checks["releases"] == s["config"].stages
        assert lpmst.label_blind_split(s["config"])


def test_table_has_a_row_per_setting_and_every_check_holds():
    frame = report.lpmst_frame()
    assert len(frame) == len(lpmst.settings("paper"))
    assert frame[[*INVARIANTS, "split blind to the labels"]].all().all()


def test_overlapping_parts_are_caught(monkeypatch):
    real = labeldp.stage_parts

    def overlapping(n, fractions, generator):
        first, second = real(n, fractions, generator)
        return [first, torch.cat([second, first[:5]])]  # five rows released twice, after training on them

    monkeypatch.setattr(labeldp, "stage_parts", overlapping)
    checks = lpmst.check(lpmst.trace(_config()))
    assert not checks["each label released once"]
    assert not checks["priors from a model that never saw the rows"]
    assert not checks["parts disjoint and covering"]


def test_a_model_trained_on_the_true_labels_is_caught(monkeypatch):
    real = labeldp.train
    (x, y), _ = lpmst.data(0)

    def leaky(model, data, test, config, *, plugins=(), **kw):
        if not getattr(leaky, "done", False):  # first: every row with its true label, then the stage
            leaky.done = True
            real(model, (x, y), test, config, plugins=tuple(p for p in plugins if p.name != "labeldp"), **kw)
        return real(model, data, test, config, plugins=plugins, **kw)

    monkeypatch.setattr(labeldp, "train", leaky)
    checks = lpmst.check(lpmst.trace(_config()))
    assert not checks["priors from a model that never saw the rows"]
    assert not checks["trained on released labels only"]
    assert checks["each label released once"]


def test_priors_from_the_true_labels_are_caught(monkeypatch):
    (_, y), _ = lpmst.data(0)
    monkeypatch.setattr(labeldp, "_logits", lambda model, inputs, idx, cfg: 50.0 * F.one_hot(y[idx], lpmst.ROWS))
    checks = lpmst.check(lpmst.trace(_config()))
    assert not checks["priors from a model that never saw the rows"]
    assert checks["each label released once"] and checks["parts disjoint and covering"]


def test_a_split_that_reads_the_labels_is_caught(monkeypatch):
    seen = {}
    real_check = labeldp.check_labels

    def keep(labels, k):
        seen["labels"] = labels
        return real_check(labels, k)

    def by_label(n, fractions, generator):
        order = torch.argsort(seen["labels"])
        cut = round(n * fractions[0])
        return [order[:cut], order[cut:]]

    monkeypatch.setattr(labeldp, "check_labels", keep)
    monkeypatch.setattr(labeldp, "stage_parts", by_label)
    assert all(lpmst.check(lpmst.trace(_config()))[k] for k in INVARIANTS)  # a partition, just not label-blind
    assert not lpmst.label_blind_split(_config())


def test_a_second_label_release_in_the_ledger_is_caught():
    config = _config()
    t = lpmst.trace(config)
    ledger = labeldp.Ledger.from_json(t.result["privacy"]["ledger"])
    ledger.append(config.event())
    t.result["privacy"]["ledger"] = ledger.to_json()
    assert not lpmst.check(t)["one label event, label eps = eps"]


def test_bad_settings_are_refused():
    with pytest.raises(ValueError, match="stages >= 2"):
        lpmst.structural({"epsilon": 1.0, "stages": 1})
    with pytest.raises(ValueError, match="finite epsilon"):
        lpmst.structural({"epsilon": math.inf, "stages": 2})
    with pytest.raises(ValueError, match="num_classes"):
        lpmst.trace(labeldp.Config(epsilon=1.0, num_classes=10, mechanism="rr_prior", stages=2,
                                   mixup_alpha=(0.0, 0.0)))
    with pytest.raises(ValueError, match="permutation_seed"):
        lpmst.data(-1)
