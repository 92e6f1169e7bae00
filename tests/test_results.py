"""The results store and the runner: content addressing, atomic writes, skip and resume."""

import json
import os
import types

import pytest

from dpnotes import experiments, runner
from dpnotes.results import Store, atomic_write_text, run_id


def config(**kw):
    base = {"paper": "gdp", "profile": "smoke", "experiment": "toy", "seed": 0, "lr": 0.1}
    base.update(kw)
    return base


def test_run_id_is_content_address():
    assert run_id(config()) == run_id(dict(reversed(list(config().items()))))
    assert run_id(config()) != run_id(config(lr=0.2))
    assert len(run_id(config())) == 16


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
        store.put({"id": "x", "config": config()})
    with pytest.raises(ValueError, match="profile"):
        store.path(config(profile="huge"))


class FakeExperiments(types.SimpleNamespace):
    """An experiments module whose training can be made to die at a chosen epoch."""

    def configs(self, profile):
        return [config(profile=profile, experiment=f"toy.{i}", seed=i) for i in range(2)]

    def execute(self, cfg, *, device, progress, checkpoint):
        done = json.loads(checkpoint.read_text()) if checkpoint.exists() else []
        for epoch in range(len(done), 3):
            if self.die_at == (cfg["experiment"], epoch):
                raise KeyboardInterrupt
            done.append({"epoch": epoch + 1, "loss": 1.0 / (epoch + 1)})
            checkpoint.write_text(json.dumps(done))
        self.calls.append(cfg["experiment"])
        return {"epochs": done, "final": {"loss": done[-1]["loss"]}, "privacy": {"accountant": "none"}}


@pytest.fixture
def fake(monkeypatch):
    fake = FakeExperiments(die_at=None, calls=[])
    monkeypatch.setattr(experiments, "module", lambda paper: fake)
    return fake


def test_runner_skips_existing_records(tmp_path, fake):
    store = Store(tmp_path)
    first = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert [r["config"]["experiment"] for r in first] == ["toy.0", "toy.1"]
    again = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert fake.calls == ["toy.0", "toy.1"]  # nothing re-run
    assert [r["id"] for r in again] == [r["id"] for r in first]
    rec = first[0]
    for field in ("config", "seed", "epochs", "final", "privacy", "wall_time_s", "device", "versions",
                  "git_commit", "created"):
        assert field in rec
    assert rec["versions"]["torch"]


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
])
def test_runner_rejects_bad_input(tmp_path, fake, kwargs, message):
    args = {"profile": "smoke", **kwargs}
    with pytest.raises(ValueError, match=message):
        runner.run_paper("gdp", args.pop("profile"), store=Store(tmp_path), progress=False, **args)


def test_unknown_paper():
    with pytest.raises(ValueError, match="paper must be one of"):
        experiments.module("alexnet")
