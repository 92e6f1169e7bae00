"""The results store and the runner: content addressing, atomic writes, skip and resume."""

import json
import os
import types

import pytest

from dpnotes import experiments, provenance, runner, spec
from dpnotes.accounting.registry import price
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.results import Store, atomic_write_text


def config(**kw):
    base = {"paper": "gdp", "profile": "smoke", "experiment": "toy", "seed": 0,
            "model": "gdp-adult", "method": "dpsgd", "train": {"lr": 0.1}}
    base.update(kw)
    return base


def test_run_id_is_content_address():
    module = types.SimpleNamespace(DATA_VERSION=1)
    same = dict(reversed(list(config().items())))
    assert spec.resolve(config(), module).id == spec.resolve(same, module).id
    assert spec.resolve(config(), module).id != spec.resolve(config(train={"lr": 0.2}), module).id
    assert len(spec.resolve(config(), module).id) == 16


def test_atomic_write_leaves_nothing_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "a" / "rec.json"
    atomic_write_text(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new")
    assert target.read_text() == "old"
    assert sorted(p.name for p in target.parent.iterdir()) == ["rec.json"]


def test_store_rejects_incomplete_or_mismatched_records(tmp_path):
    store = Store(tmp_path)
    with pytest.raises(ValueError, match="missing fields"):
        store.put({"id": "x", "spec": config()})
    with pytest.raises(ValueError, match="profile"):
        store.path(spec.resolve(config(profile="huge"), types.SimpleNamespace(DATA_VERSION=1)))


class FakeExperiments(types.SimpleNamespace):
    """An experiments module whose training can be made to die at a chosen epoch."""

    DATA_VERSION = 1

    def configs(self, profile):
        return [config(profile=profile, experiment=f"toy.{i}", seed=i) for i in range(2)]

    def execute(self, s, *, device, progress, checkpoint):
        done = json.loads(checkpoint.read_text()) if checkpoint.exists() else []
        for epoch in range(len(done), 3):
            if self.die_at == (s.experiment, epoch):
                raise KeyboardInterrupt
            done.append({"epoch": epoch + 1, "loss": 1.0 / (epoch + 1)})
            checkpoint.write_text(json.dumps(done))
        self.calls.append(s.experiment)
        ledger = Ledger().append(PoissonSampledDpEvent(0.1, GaussianDpEvent(1.0)), 3)
        privacy = {"delta": 1e-5, "ledger": ledger.to_json(), "epsilon": price(ledger, 1e-5, ["rdp"])}
        return {"epochs": done, "final": {"loss": done[-1]["loss"]}, "privacy": privacy}


@pytest.fixture
def fake(monkeypatch):
    fake = FakeExperiments(die_at=None, calls=[])
    monkeypatch.setattr(experiments, "module", lambda paper: fake)
    monkeypatch.setattr(provenance, "source_state", lambda path=None: {
        "commit": "abc", "dirty": False, "changed": []})
    return fake


def test_runner_skips_existing_records(tmp_path, fake):
    store = Store(tmp_path)
    first = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert [r["spec"]["experiment"] for r in first] == ["toy.0", "toy.1"]
    again = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert fake.calls == ["toy.0", "toy.1"]  # nothing re-run
    assert [r["id"] for r in again] == [r["id"] for r in first]
    rec = first[0]
    for field in ("spec", "epochs", "final", "privacy", "provenance"):
        assert field in rec
    assert rec["provenance"]["segments"][0]["versions"]["torch"]


def test_killed_run_leaves_no_record_and_resumes(tmp_path, fake):
    store = Store(tmp_path)
    fake.die_at = ("toy.1", 1)
    with pytest.raises(KeyboardInterrupt):
        runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert len(list(store.records())) == 1  # toy.0 done, toy.1 has no partial record
    fake.die_at = None
    records = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert [len(r["epochs"]) for r in records] == [3, 3]
    assert fake.calls == ["toy.0", "toy.1"]
    assert not any((tmp_path / ".checkpoints").iterdir())


def test_run_without_missing_returns_only_stored(tmp_path, fake):
    assert runner.run_paper("gdp", "smoke", store=Store(tmp_path), run_missing=False, progress=False) == []
    assert fake.calls == []


@pytest.mark.parametrize("kwargs, message", [
    ({"profile": "huge"}, "profile must be one of"),
    ({"only": "nope*"}, "matches no experiment"),
    ({"device": "tpu"}, "device must be one of"),
    ({"seeds": (9,)}, "--seeds 9 matches no run; available seeds: 0"),
])
def test_runner_rejects_bad_input(tmp_path, fake, kwargs, message):
    args = {"profile": "smoke", **kwargs}
    with pytest.raises(ValueError, match=message):
        runner.run_paper("gdp", args.pop("profile"), store=Store(tmp_path), progress=False, **args)


def test_seeds_select_runs():
    configs = [{"experiment": e, "seed": s} for s in (0, 1, 2) for e in ("a.x", "b.x")]
    assert runner.select(configs, "a.*", (0, 2)) == [configs[0], configs[4]]
    assert runner.select(configs, None, None) == configs


def test_unknown_paper():
    with pytest.raises(ValueError, match="paper must be one of"):
        experiments.module("alexnet")
