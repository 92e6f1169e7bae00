"""Engine v2: fully resolved run specs and their ids, the ledger in the loop, the release API,
stop conditions, and provenance (clean-tree rule, segments of a resumed run)."""

import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

from dpnotes import experiments, provenance, runner
from dpnotes import spec as specmod
from dpnotes import train as train_pkg
from dpnotes.accounting.registry import price
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.results import Store
from dpnotes.train import TrainConfig, build_context, train
from dpnotes.train.config import LATER_FIELDS

GDP = experiments.module("gdp")


def _base_config(**train):
    return {"paper": "gdp", "profile": "smoke", "experiment": "table1.row2", "seed": 0,
            "model": "tf-mnist-cnn", "model_kwargs": {}, "dataset": "mnist",
            "subset": {"train": 512, "test": 256}, "method": "dpsgd",
            "train": {"epochs": 1, "batch_size": 64, **train}}


def _id(config, module=GDP):
    return specmod.resolve(config, module).id


# ---------------------------------------------------------------- run spec and id

def test_spec_is_fully_resolved_and_frozen():
    s = experiments.resolve(_base_config())
    # every setting, except where a run executes and later fields left at their default
    assert set(s.train) == {f.name for f in dataclasses.fields(TrainConfig)} - {"device"} - set(LATER_FIELDS)
    assert s.model_kwargs == {"activation": "relu", "num_classes": 10}
    assert s.components == {"engine": train_pkg.VERSION, "method:dpsgd": 1, "model:tf-mnist-cnn": 1,
                            "data:mnist": GDP.DATA_VERSION}
    with pytest.raises(TypeError):
        s.train["lr"] = 1.0
    assert specmod.RunSpec.from_dict(json.loads(json.dumps(s.to_dict()))) == s


_CHANGES = {"epochs": 2, "batch_size": 32, "lr": 0.2, "optimizer": "adam", "weight_decay": 0.1,
            "lr_schedule": "cosine", "lr_step_epochs": 2, "lr_gamma": 0.5, "clip": 2.0,
            "clip_mode": "per_layer", "noise_multiplier": 1.5, "sampling": "shuffle",
            "normalize": "none", "grad_backend": "opacus", "steps_per_epoch": 3, "delta": 1e-6,
            "accountants": ["rdp"], "seed": 1, "eval_batch_size": 7, "target_epsilon": 50.0,
            "target_accountant": "clt", "max_accepted_steps": 5, "eps_adam": 1e-6,
            "betas": [0.8, 0.9], "lr_warmup": 0.3, "eval_every": 5,
            "stop_accuracy": 0.5}


@pytest.mark.parametrize("field", [f.name for f in dataclasses.fields(TrainConfig)
                                   if f.name not in ("device", "private", "momentum")])
def test_changing_any_train_field_changes_the_id(field):
    extra = {"optimizer": "adam"} if field in ("betas", "eps_adam") else {}
    extra = {"eval_every": 5} if field == "stop_accuracy" else extra
    assert _id(_base_config(**extra, **{field: _CHANGES[field]})) != _id(_base_config(**extra))


def test_momentum_and_private_change_the_id():
    assert _id(_base_config(optimizer="momentum", momentum=0.9)) != _id(_base_config(optimizer="momentum",
                                                                                    momentum=0.5))
    nonprivate = _base_config(private=False, clip=None, noise_multiplier=0.0, sampling="shuffle",
                              accountants=[])
    assert _id(nonprivate) != _id(_base_config())


def test_changing_a_default_changes_the_id(monkeypatch):
    before = _id(_base_config())
    assert _id(_base_config(lr=0.1)) == before  # the default, written out: the same run
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    monkeypatch.setattr(fields["lr"], "default", 0.3)
    monkeypatch.setattr(TrainConfig.__init__, "__defaults__", tuple(
        0.3 if d == 0.1 and i == 2 else d for i, d in enumerate(TrainConfig.__init__.__defaults__)))
    assert TrainConfig().lr == 0.3
    assert _id(_base_config()) != before


@pytest.mark.parametrize("change", [
    {"seed": 1}, {"experiment": "table1.row3"}, {"profile": "quick"}, {"model": "dplis-mlp-mnist"},
    {"model_kwargs": {"activation": "tanh"}}, {"subset": {"train": 256, "test": 256}},
    {"dataset": "fashion-mnist"}])
def test_changing_any_other_field_changes_the_id(change):
    assert _id({**_base_config(), **change}) != _id(_base_config())


def test_component_versions_enter_the_id(monkeypatch):
    before = _id(_base_config())
    monkeypatch.setattr(train_pkg, "VERSION", train_pkg.VERSION + 1)
    assert _id(_base_config()) != before
    monkeypatch.undo()
    monkeypatch.setattr(GDP, "DATA_VERSION", GDP.DATA_VERSION + 1)
    assert _id(_base_config()) != before


@pytest.mark.parametrize("change, message", [
    ({"method": "magic"}, "method must be one of"),
    ({"model_kwargs": {"width": 3}}, "no parameter"),
    ({"surprise": 1}, "unknown keys"),
    ({"train": {"device": "cuda"}}, "device"),
    ({"train": {"accountants": ["nope"]}}, "accountants"),
])
def test_bad_specs_are_refused(change, message):
    with pytest.raises(ValueError, match=message):
        experiments.resolve({**_base_config(), **change})


# ---------------------------------------------------------------- ledger, release, stops

def _data(n=120, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return x, (x[:, 0] > 0).long()


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


def test_ledger_of_a_dpsgd_run_prices_to_its_epsilon():
    cfg = TrainConfig(epochs=2, batch_size=20, noise_multiplier=1.1, accountants=("rdp", "clt"))
    out = train(_model(), _data(), None, cfg, progress=False)
    ledger = Ledger.from_json(out["privacy"]["ledger"])
    assert ledger.entries == ((PoissonSampledDpEvent(20 / 120, GaussianDpEvent(1.1)), 12),)
    assert out["privacy"]["epsilon"] == price(ledger, 1e-5, ["rdp", "clt"])


def test_release_adds_noise_and_an_event():
    ctx = build_context(_model(), _data(), None, TrainConfig(batch_size=20, accountants=()))
    values = torch.zeros(20000)
    noisy = ctx.release(values, sensitivity=2.0, noise_multiplier=3.0)
    assert noisy.std().item() == pytest.approx(6.0, rel=0.03)  # 5 sd of the sample sd: 0.025
    assert ctx.ledger.entries == ((GaussianDpEvent(3.0), 1),)
    for kwargs, name in (({"sensitivity": 0.0, "noise_multiplier": 1.0}, "sensitivity"),
                         ({"sensitivity": 1.0, "noise_multiplier": -1.0}, "noise_multiplier")):
        with pytest.raises(ValueError, match=name):
            ctx.release(values, **kwargs)
    assert len(ctx.ledger) == 1  # refused releases leave no event


def test_stop_at_target_epsilon_is_the_last_step_within_budget():
    cfg = TrainConfig(epochs=20, batch_size=20, noise_multiplier=1.0, accountants=("rdp",),
                      target_epsilon=3.0, target_accountant="rdp")
    out = train(_model(), _data(), None, cfg, progress=False)
    steps = out["final"]["steps"]
    step = PoissonSampledDpEvent(20 / 120, GaussianDpEvent(1.0))
    eps = lambda t: price(step if t == 1 else Ledger().append(step, t), 1e-5, ["rdp"])["rdp"]["epsilon"]  # noqa: E731
    assert out["final"]["stopped_by"] == "target_epsilon"
    assert eps(steps) <= 3.0 < eps(steps + 1)
    assert out["privacy"]["epsilon"]["rdp"]["epsilon"] == eps(steps)
    assert out["epochs"][-1]["steps"] == steps


def test_unreachable_or_too_small_targets_are_errors():
    cfg = TrainConfig(epochs=1, batch_size=20, noise_multiplier=1.0, target_epsilon=100.0)
    with pytest.raises(ValueError, match="target_epsilon=100.0 is not reached within epochs=1"):
        train(_model(), _data(), None, cfg, progress=False)
    with pytest.raises(ValueError, match="below the eps of a single step"):
        train(_model(), _data(), None, cfg.replace(target_epsilon=1e-4), progress=False)
    with pytest.raises(ValueError, match="target_epsilon"):
        TrainConfig(target_epsilon=-1.0)
    with pytest.raises(ValueError, match="target_accountant"):
        TrainConfig(target_accountant="moments")


def test_stop_after_accepted_steps():
    cfg = TrainConfig(epochs=5, batch_size=20, max_accepted_steps=7, accountants=())
    out = train(_model(), _data(), None, cfg, progress=False)
    assert out["final"]["accepted_steps"] == 7 and out["final"]["stopped_by"] == "max_accepted_steps"
    assert [e["steps"] for e in out["epochs"]] == [6, 7]


# ---------------------------------------------------------------- provenance and runner

class Toy:
    """A tiny experiments module: one real DP-SGD run on synthetic data, killable per epoch."""

    DATA_VERSION = 1

    def __init__(self):
        self.die_at_epoch = None
        self.hard_kill = False
        self.suffix = ""  # a method may derive its checkpoint files from the path (LP-MST: ".stage1")

    def configs(self, profile):
        return [{"paper": "gdp", "profile": profile, "experiment": "toy", "seed": 0,
                 "model": "gdp-adult", "model_kwargs": {"in_features": 5}, "method": "dpsgd", "dataset": "toy",
                 "train": {"epochs": 3, "batch_size": 20, "accountants": ["rdp"]}}]

    def execute(self, spec, *, device, progress, checkpoint):
        from dpnotes.train import Plugin

        toy = self

        class Die(Plugin):
            def on_epoch_start(self, ctx, epoch):
                if epoch == toy.die_at_epoch:
                    if toy.hard_kill:  # no chance to close anything, as at the end of a session
                        os.kill(os.getpid(), signal.SIGKILL)
                    raise KeyboardInterrupt

        torch.manual_seed(spec.seed)
        from dpnotes import models
        model = models.create(spec.model, **spec.model_kwargs)
        return train(model, _data(), None, TrainConfig(**spec.train, device=device),
                     plugins=[Die()], progress=False, checkpoint=f"{checkpoint}{toy.suffix}")


@pytest.fixture
def toy(monkeypatch):
    module = Toy()
    monkeypatch.setattr(experiments, "module", lambda paper: module)
    return module


def _clean(monkeypatch, dirty):
    monkeypatch.setattr(provenance, "source_state", lambda path=None: {
        "commit": "abc", "dirty": dirty, "changed": ["dpnotes/x.py"] if dirty else []})


def test_paper_profile_refuses_a_dirty_tree_quick_says_so(tmp_path, toy, monkeypatch):
    _clean(monkeypatch, dirty=True)
    with pytest.raises(RuntimeError, match="clean git tree.*dpnotes/x.py"):
        runner.run_paper("gdp", "paper", store=Store(tmp_path), progress=False)
    assert not list(Store(tmp_path).records())
    (record,) = runner.run_paper("gdp", "quick", store=Store(tmp_path), progress=False)
    assert record["provenance"]["dirty"] is True


def test_resumed_run_has_every_segment_and_equals_an_uninterrupted_one(tmp_path, toy, monkeypatch):
    _clean(monkeypatch, dirty=False)
    (whole,) = runner.run_paper("gdp", "paper", store=Store(tmp_path / "a"), progress=False)
    toy.die_at_epoch = 2
    with pytest.raises(KeyboardInterrupt):
        runner.run_paper("gdp", "paper", store=Store(tmp_path / "b"), progress=False)
    toy.die_at_epoch = None
    (resumed,) = runner.run_paper("gdp", "paper", store=Store(tmp_path / "b"), progress=False)
    assert resumed["id"] == whole["id"]
    assert resumed["privacy"] == whole["privacy"]  # the ledger included
    strip = lambda r: [{k: v for k, v in e.items() if k != "wall_s"} for e in r["epochs"]]  # noqa: E731
    assert strip(resumed) == strip(whole)
    segs = resumed["provenance"]["segments"]
    assert len(segs) == 2 and len(whole["provenance"]["segments"]) == 1
    assert segs[0]["interrupted"] is True and "interrupted" not in segs[1]
    assert resumed["provenance"]["wall_time_s"] == pytest.approx(sum(s["wall_s"] for s in segs), abs=2e-3)
    assert {"commit", "dirty", "started", "wall_s", "device", "cpu", "isa", "versions"} <= set(segs[0])
    assert segs[0]["isa"].startswith("torch ")  # the kernel set: float rounding differs between them


def test_segments_without_a_checkpoint_are_not_part_of_the_run(tmp_path, toy, monkeypatch):
    """A run interrupted before its first checkpoint, or whose checkpoint was deleted (e.g. one
    from another device, which cannot resume here), starts afresh: its record lists only the
    segments that trained it."""
    _clean(monkeypatch, dirty=False)
    store = Store(tmp_path)
    toy.die_at_epoch = 2
    with pytest.raises(KeyboardInterrupt):
        runner.run_paper("gdp", "paper", store=store, progress=False)
    for f in (tmp_path / ".checkpoints").glob("*.pt*"):
        f.unlink()  # the segments file stays
    toy.die_at_epoch = None
    (record,) = runner.run_paper("gdp", "paper", store=store, progress=False)
    (seg,) = record["provenance"]["segments"]
    assert "interrupted" not in seg


def test_a_record_the_store_refuses_keeps_its_segment_once(tmp_path, toy, monkeypatch):
    """A finished run whose record the store refuses (it did: a NaN train loss) keeps its
    checkpoint and its finished segment, once: the next attempt's record lists it and its own."""
    _clean(monkeypatch, dirty=False)
    store = Store(tmp_path)
    put = Store.put

    def refuse(self, record):
        raise ValueError("refused")

    monkeypatch.setattr(Store, "put", refuse)
    with pytest.raises(ValueError, match="refused"):
        runner.run_paper("gdp", "paper", store=store, progress=False)
    (saved,) = (tmp_path / ".checkpoints").glob("*.segments.json")
    assert len(json.loads(saved.read_text())["segments"]) == 1
    monkeypatch.setattr(Store, "put", put)
    (record,) = runner.run_paper("gdp", "paper", store=store, progress=False)
    segs = record["provenance"]["segments"]
    assert len(segs) == 2 and not any(s.get("interrupted") for s in segs)


KILLED_CHILD = """
import sys
sys.path.insert(0, {tests!r})
import test_engine_v2
from dpnotes import experiments, provenance, runner
from dpnotes.results import Store
toy = test_engine_v2.Toy()
toy.hard_kill, toy.die_at_epoch, toy.suffix = True, {epoch}, {suffix!r}
experiments.module = lambda paper: toy
provenance.source_state = lambda path=None: {{"commit": "abc", "dirty": False, "changed": []}}
runner.run_paper("gdp", "paper", store=Store({store!r}), progress=False)
"""


@pytest.mark.parametrize("kills, kept, suffix", [
    ((2,), 1, ""), ((0,), 0, ""), ((2,), 1, ".stage1"),
    ((1, 1), 1, ""),  # the second attempt dies before its own first checkpoint: dropped
    ((1, 2), 2, "")])
def test_killed_segments_are_kept_as_interrupted_or_dropped_if_they_saved_nothing(
        tmp_path, toy, monkeypatch, kills, kept, suffix):
    _clean(monkeypatch, dirty=False)
    toy.hard_kill, toy.suffix = True, suffix
    for epoch in kills:  # each attempt killed with no chance to close anything (end of a session),
        # in a fresh interpreter (a forked child of a process that ran torch may hang in OpenMP)
        child = subprocess.run([sys.executable, "-c", KILLED_CHILD.format(
            tests=str(Path(__file__).parent), epoch=epoch, suffix=suffix, store=str(tmp_path))],
            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=300)
        assert child.returncode == -signal.SIGKILL
    toy.die_at_epoch = None
    (resumed,) = runner.run_paper("gdp", "paper", store=Store(tmp_path), progress=False)
    segs = resumed["provenance"]["segments"]
    assert len(segs) == kept + 1 and all(s["interrupted"] is True for s in segs[:-1])
    assert "interrupted" not in segs[-1] and all(0 < s["wall_s"] < 60 for s in segs)
    # a killed segment never wrote its phase times (dpnotes.phases): they are saved when a segment closes
    assert all(set(s) - {"phases"} == (set(segs[-1]) - {"phases"}) | {"interrupted"} for s in segs[:-1])
    assert resumed["provenance"]["wall_time_s"] == pytest.approx(sum(s["wall_s"] for s in segs), abs=2e-3)
    assert not list((tmp_path / ".checkpoints").iterdir())  # stage files too


def test_store_never_overwrites_and_checks_the_ledger(tmp_path, toy, monkeypatch):
    _clean(monkeypatch, dirty=False)
    store = Store(tmp_path)
    (record,) = runner.run_paper("gdp", "quick", store=store, progress=False)
    with pytest.raises(FileExistsError):
        store.put(record)
    forged = json.loads(json.dumps(record))
    forged["privacy"]["epsilon"]["rdp"]["epsilon"] *= 0.5
    (tmp_path / "gdp" / "quick" / f"{record['id']}.json").unlink()
    with pytest.raises(ValueError, match="does not equal"):
        store.put(forged)
    wrong = {**record, "id": "0" * 16}
    with pytest.raises(ValueError, match="does not match its spec"):
        store.put(wrong)


def test_stale_records_are_found(tmp_path, toy, monkeypatch):
    _clean(monkeypatch, dirty=False)
    store = Store(tmp_path)
    runner.run_paper("gdp", "quick", store=store, progress=False)
    assert runner.stale("gdp", store) == []
    monkeypatch.setattr(Toy, "DATA_VERSION", 2)  # the pipeline changed: the record is stale
    (old,) = runner.stale("gdp", store)
    assert old["spec"]["experiment"] == "toy"


def test_a_copy_without_git_proves_its_commit_with_a_manifest(tmp_path, monkeypatch):
    import shutil
    import subprocess

    repo, copy = tmp_path / "repo", tmp_path / "copy"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    (repo / "results").mkdir()
    (repo / "results" / "r.json").write_text("{}\n")
    git = lambda *a: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *a], cwd=repo,  # noqa: E731
                                    check=True, capture_output=True, text=True).stdout
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "x")
    manifest = provenance.write_manifest(tmp_path / "manifest.json", repo)
    assert manifest["commit"] == git("rev-parse", "HEAD").strip()
    assert manifest["files"]["pkg/a.py"] == provenance.blob_hash(b"x = 1\n")
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    monkeypatch.setenv("DPNOTES_SOURCE_MANIFEST", str(tmp_path / "manifest.json"))
    assert provenance.source_state(copy) == {"commit": manifest["commit"], "dirty": False, "changed": []}
    (copy / "results" / "r.json").write_text("[]\n")  # data, not code
    assert not provenance.source_state(copy)["dirty"]
    (copy / "pkg" / "a.py").write_text("x = 2\n")
    assert provenance.source_state(copy)["changed"] == ["pkg/a.py"]
    monkeypatch.delenv("DPNOTES_SOURCE_MANIFEST")
    assert provenance.source_state(copy)["commit"] is None
    (repo / "pkg" / "a.py").write_text("x = 3\n")
    with pytest.raises(RuntimeError, match="clean git checkout"):
        provenance.write_manifest(tmp_path / "m2.json", repo)
