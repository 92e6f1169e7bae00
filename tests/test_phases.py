"""Phase timers of the training loop (issue #36 item 3): exclusive, cheap, in provenance only.

The timers must not change what a run computes (same record, same run id), must account for
the loop's wall time, must put a method's extra passes in their own phases (an accept rule's
candidate tests: ``accept``; per-record norms in an epoch hook: ``method``), and a record
carrying them must pass verification on read while an edit of them is still caught.
"""

from __future__ import annotations

import json
import time

import pytest
import toy_runs
from toy_plugins import AcceptIfLossDecreases

from dpnotes import experiments, phases, provenance, runner
from dpnotes.bench_e2e import cut, new_seed_config
from dpnotes.cli import main
from dpnotes.results import Store
from dpnotes.train import Plugin, TrainConfig


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


def test_phases_are_exclusive(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(phases, "perf_counter", clock)
    timer = phases.Timer()
    with timer.phase("loop"):
        clock.t += 1.0
        with timer.phase("step"):
            clock.t += 2.0
            with timer.phase("eval"):
                clock.t += 4.0
            clock.t += 8.0
        clock.t += 16.0
    out = timer.to_json(wall_s=100.0)
    assert out["seconds"]["loop"] == 17.0 and out["seconds"]["step"] == 10.0 and out["seconds"]["eval"] == 4.0
    assert out["seconds"]["outside"] == 100.0 - 31.0
    assert sum(out["seconds"].values()) == pytest.approx(100.0)


def test_unknown_phase_is_named():
    with pytest.raises(ValueError, match="phase must be one of"):
        with phases.Timer().phase("sleeping"):
            pass


def test_summary_rates_and_shares():
    measured = {"wall_s": 10.0, "samples": 600, "steps": 3,
                "seconds": {**dict.fromkeys(phases.PHASES, 0.0), "step": 3.0, "accept": 1.0, "eval": 2.0,
                            "setup": 1.0, "outside": 1.0}}
    s = phases.summary(measured)
    assert s["steps_samples_per_s"] == 200.0 and s["run_samples_per_s"] == 75.0  # 600 / (10 - 2 once)
    assert s["ratio"] == 0.375 and s["method_share"] == 1.0 / 8.0 and s["once_s"] == 2.0
    assert "outside" not in s["shares"] and s["shares"]["eval"] == 0.25


class Sizes(Plugin):
    """Records every step's batch size; an epoch hook reads every record's gradient norm (DPIS)."""

    name = "sizes"

    def __init__(self):
        self.sizes = []

    def on_epoch_start(self, ctx, epoch):
        time.sleep(0.01)
        ctx.per_example_norms()

    def on_step_end(self, ctx, info):
        self.sizes.append(info["batch_size"])


def test_loop_phases_cover_its_time_and_name_the_method_passes():
    cfg = TrainConfig(epochs=2, batch_size=16, lr=0.1, accountants=("rdp",), seed=3)
    sizes = Sizes()
    start = time.perf_counter()
    with phases.collect() as timer:
        out, _ = toy_runs.run(cfg, plugins=(sizes, AcceptIfLossDecreases()))
    wall = time.perf_counter() - start
    measured = timer.to_json(wall)
    seconds = measured["seconds"]
    assert measured["samples"] == sum(sizes.sizes) and measured["steps"] == out["final"]["steps"] == len(sizes.sizes)
    for name in ("setup", "batch", "step", "accept", "eval", "method", "accounting", "final"):
        assert seconds[name] > 0, name
    assert seconds["method"] >= 0.02  # two epochs' hooks, their sleeps included
    inside = sum(v for k, v in seconds.items() if k != "outside")
    assert inside <= wall and seconds["outside"] < 0.5 * wall


def test_timers_change_no_number():
    cfg = TrainConfig(epochs=2, batch_size=16, lr=0.1, accountants=("rdp",), seed=5)
    plain, _ = toy_runs.run(cfg, plugins=(AcceptIfLossDecreases(),))
    with phases.collect():
        timed, _ = toy_runs.run(cfg, plugins=(AcceptIfLossDecreases(),))
    assert toy_runs.strip(plain) == toy_runs.strip(timed)


class ToyPaper:
    """An experiments module whose one run trains the toy model through the real loop."""

    DATA_VERSION = 1

    def configs(self, profile):
        return [{"paper": "gdp", "profile": profile, "experiment": "toy", "seed": 0, "method": "dpsgd",
                 "model": "gdp-adult", "train": {"epochs": 2, "batch_size": 16, "lr": 0.1, "accountants": ["rdp"]}}]

    def execute(self, spec, *, device, progress, checkpoint):
        cfg = TrainConfig(**spec.train, device=device)
        return toy_runs.run(cfg, checkpoint=checkpoint)[0]


@pytest.fixture
def toy_paper(monkeypatch):
    paper = ToyPaper()
    monkeypatch.setattr(experiments, "module", lambda name: paper)
    monkeypatch.setattr(provenance, "source_state", lambda path=None: {"commit": "abc", "dirty": False,
                                                                       "changed": []})
    return paper


def test_record_keeps_its_phases_in_provenance_and_its_id(tmp_path, toy_paper):
    store = Store(tmp_path)
    spec = runner.specs("gdp", "smoke")[0]
    [record] = runner.run_paper("gdp", "smoke", store=store, progress=False)
    assert record["id"] == spec.id  # phases are provenance, not spec
    segment = record["provenance"]["segments"][-1]
    assert segment["phases"]["steps"] == record["final"]["steps"]
    assert segment["phases"]["seconds"]["step"] > 0
    assert "phases" not in json.dumps(record["spec"])
    assert [r["id"] for r in store.records("gdp")] == [spec.id] and not store.excluded()


def test_an_edited_phase_time_is_caught_on_read(tmp_path, toy_paper):
    store = Store(tmp_path)
    [record] = runner.run_paper("gdp", "smoke", store=store, progress=False)
    [path] = (tmp_path / "gdp" / "smoke").glob("*.json")
    edited = json.loads(path.read_text())
    edited["provenance"]["segments"][-1]["phases"]["seconds"]["step"] *= 0.5  # a faster-looking run
    path.write_text(json.dumps(edited, indent=1, sort_keys=True) + "\n")
    [excluded] = store.excluded()
    assert "does not match its seal" in excluded["reason"]
    assert list(store.records("gdp")) == []


def test_end_to_end_config_is_a_new_seed_on_its_backend_cut_to_one_epoch():
    config = new_seed_config("sadpsgd", "paper", "table3.fmnist.dpsgd")  # ghost from seed 1
    assert config["seed"] >= 1 and config["train"]["grad_backend"] == "ghost"
    short = cut(config, 7, None)
    assert short["train"]["epochs"] == 1 and short["train"]["steps_per_epoch"] == 7
    assert short["train"]["target_epsilon"] is None and short["seed"] == config["seed"]
    assert cut(config, None, "func")["train"]["grad_backend"] == "func"
    gdp = new_seed_config("gdp", "paper", "table1.row3")  # no GHOST_FROM_SEED: the engine's default
    assert gdp["train"].get("grad_backend", "func") == "func"
    with pytest.raises(ValueError, match="steps"):
        cut(config, 0, None)


@pytest.mark.parametrize("argv, message", [
    (["bench", "--only", "x"], "--only only apply with --end-to-end"),
    (["bench", "--end-to-end", "gdp", "--models", "gdp-adult"], "give no --models or --paper"),
    (["bench", "--end-to-end", "gdp", "--markdown"], "apply to the step bench"),
    (["bench", "--end-to-end", "gdp", "--max-memory", "10"], "apply to the step bench"),
])
def test_bench_end_to_end_options_are_checked(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bench_end_to_end_runs_the_papers_execute_and_reports_its_phases(toy_paper, capsys):
    assert main(["bench", "--end-to-end", "gdp", "--profile", "smoke", "--steps", "2", "--threads", "1",
                 "--json"]) == 0
    [result] = json.loads(capsys.readouterr().out)["results"]
    assert result["experiment"] == "toy" and result["seed"] == 1  # a new seed, past the configured 0
    assert result["steps"] == 2 and result["backend"] == "func"
    assert 0 < result["ratio"] <= 1 and result["steps_samples_per_s"] >= result["run_samples_per_s"] > 0
    assert sum(result["shares"].values()) == pytest.approx(1.0, abs=1e-2)  # up to the 1e-6 s rounding
    assert set(result["seconds"]) == set(phases.PHASES)
