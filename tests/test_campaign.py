"""The compute campaign (``dpnotes campaign``): budget parsing, value order, CPU/CUDA scaling,
packing onto workers, and the dry run on the real paper profiles."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpnotes import campaign as c


def _record(paper, experiment, model, kind, wall, seed=0, method="dpsgd"):
    return {"id": f"{paper}-{experiment}-{kind}-{seed}",
            "spec": {"paper": paper, "experiment": experiment, "model": model, "method": method, "seed": seed},
            "provenance": {"wall_time_s": wall, "segments": [{"device": f"{kind}: x"}]}}


@pytest.mark.parametrize("text,seconds", [("900", 900), ("15m", 900), ("1.5h", 5400), ("30s", 30), ("2M", 120)])
def test_budget_units(text, seconds):
    assert c.parse_budget(text) == seconds


@pytest.mark.parametrize("text", ["", "0", "-5m", "abc", "5x", "inf", "nan", "m"])
def test_bad_budget_names_the_option(text):
    with pytest.raises(ValueError, match="--budget"):
        c.parse_budget(text)


def test_the_seeds_plans_gpu_queue_comes_first():
    from dpnotes.experiments import plan

    gpu = [r for r in plan.load().rows if r.where == "gpu"]
    assert gpu
    for row in gpu:
        paper = row.claim.split(".", 1)[0]
        assert all(c.tier(paper, e) == 0 for e in row.experiments)


def test_tiers_follow_the_seeds_plan():
    from dpnotes.experiments import plan

    plan._OVERRIDE.append(plan.Plan("", ()))  # the tiers below the seeds plan's GPU queue
    try:
        _tiers()
    finally:
        plan._OVERRIDE.pop()


def _tiers():
    assert c.tier("dplis", "table2.mnist_cnn.eps1_99.r10") == 1
    assert c.tier("dpis", "mnist.eps3.dpis") == 2
    assert c.tier("dpis", "mnist.eps3.dpsgd_hf") == 2
    assert c.tier("dpis", "mnist.eps3.dpsgd") == 3
    assert c.tier("sadpsgd", "table1.fmnist.sa_dpsgd") == 4
    assert c.tier("labeldp", "table4.mnist.lp_2st.eps3") == 5
    assert c.tier("labeldp", "table4.mnist.lp_2st.eps3.appb") == 1  # fidelity runs right after the plan's GPU part
    assert c.tier("dpis", "mnist.eps1.dpsgd_decay_tanh.rate0_001") == 1  # DP-SGD-Decay over the paper's rate range
    assert c.tier("dpis", "mnist.eps1.dpsgd_decay_tanh") == 3  # the probe stays with the raw-pixel baselines
    assert c.tier("dpis", "mnist.eps1.dpis.k6") == 7  # ablations (Tables 4-7) after the seeds
    assert c.tier("dplis", "table2.mnist_mlp.eps9_9.r10") == c.LAST_TIER
    assert c.tier("gdp", "table1.mnist") == c.LAST_TIER


def test_device_factor_per_model_and_overall():
    records = [_record("p", "a", "m1", "cpu", 100), _record("p", "a", "m1", "cuda", 20, seed=1),
               _record("p", "b", "m2", "cpu", 100), _record("p", "b", "m2", "cuda", 40, seed=1),
               _record("p", "c", "m3", "cpu", 50)]
    f = c.device_factor(records)
    assert f["m1"] == pytest.approx(0.2) and f["m2"] == pytest.approx(0.4) and f["*"] == pytest.approx(0.3)
    assert "m3" not in f
    assert c.device_factor([_record("p", "c", "m3", "cpu", 50)]) == {}


def test_estimates_scale_the_other_device_by_the_model_ratio():
    records = [_record("p", "a", "m1", "cpu", 100), _record("p", "a", "m1", "cuda", 20, seed=1),
               _record("p", "c", "m3", "cpu", 50)]
    factors = c.device_factor(records)

    class Spec:  # the fields estimate() reads
        def __init__(self, experiment, model):
            self.id, self.experiment, self.model, self.method = "new", experiment, model, "dpsgd"
            self.method_config, self.train, self.dataset, self.subset = {}, {}, None, {}
            self.paper = "gdp"  # no cost model of its own: records, then the bench

    seconds, basis = c.estimate_on(Spec("a", "m1"), records, "cuda", factors)
    assert seconds == 20 and "cuda" in basis
    seconds, basis = c.estimate_on(Spec("c", "m3"), records, "cuda", factors)
    assert seconds == pytest.approx(50 * 0.2) and "all models'" in basis
    seconds, _ = c.estimate_on(Spec("c", "m3"), records, "cpu", factors)
    assert seconds == 50
    assert c.estimate_on(Spec("z", "m9"), records, "cuda", factors)[0] is None  # real specs: the dry run below


def _picks(seconds):
    return [c.Pick("p", f"e{i}", 0, f"id{i}", 1, s, "test") for i, s in enumerate(seconds)]


def test_packing_keeps_value_order_and_the_budget():
    camp = c.plan(_picks([50, 60, 200, 30, None, 10]), budget_s=100, workers=2, device="cuda")
    assert [p.experiment for p in camp.picked] == ["e0", "e1", "e3", "e5"]
    assert [p.experiment for p in camp.left] == ["e2", "e4"]
    assert all(camp.load(w) <= 100 for w in range(2))
    lines = "\n".join(camp.lines())
    assert "1 without an estimate" in lines and "worker 1" in lines


@given(st.lists(st.one_of(st.none(), st.floats(0.1, 500)), max_size=30), st.integers(1, 6),
       st.floats(1, 1000))
def test_packing_property(seconds, workers, budget):
    camp = c.plan(_picks(seconds), budget_s=budget, workers=workers, device="cpu")
    assert len(camp.picked) + len(camp.left) == len(seconds)
    assert all(camp.load(w) <= budget + 1e-9 for w in range(workers))
    assert all(p.seconds is not None for p in camp.picked)
    # a run left out with an estimate did not fit on the least-loaded worker when its turn came
    assert all(p.seconds is None or p.seconds > 0 for p in camp.left)


def test_zero_workers_refused():
    with pytest.raises(ValueError, match="--workers"):
        c.plan([], budget_s=10, workers=0, device="cpu")


def test_execute_runs_the_queues_and_writes_a_summary(tmp_path, monkeypatch):
    """The queues run their commands; a command that outlives the budget is stopped."""
    camp = c.plan(_picks([1, 1, 1]), budget_s=3, workers=2, device="cpu")
    scripts = {"id0": "pass", "id1": "raise SystemExit(3)", "id2": "import time; time.sleep(60)"}
    monkeypatch.setattr(c, "_command", lambda run, **_: [sys.executable, "-c", scripts[run.id]])
    summary = c.execute(camp, results=tmp_path)
    outcome = {p["id"]: p["outcome"] for p in json.loads(summary.read_text())["picked"]}
    assert outcome["id0"] == "stored"
    assert outcome["id1"].startswith("failed (exit 3")
    assert outcome["id2"].startswith("stopped at the budget's end")


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "dpnotes", "campaign", *args], capture_output=True, text=True,
                          env=env)


@pytest.mark.parametrize("args,needle", [(["--budget", "soon"], "--budget"),
                                         (["--papers", "dpis,nope"], "--papers"),
                                         (["--exclude", "dpis"], "--exclude"),
                                         (["--workers", "0"], "--workers"),
                                         (["--threads", "0"], "--threads")])
def test_bad_arguments_get_one_line(args, needle):
    out = _cli("--dry-run", "--papers", "labeldp", *args) if "--papers" not in args else _cli("--dry-run", *args)
    assert out.returncode == 2
    assert needle in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_dry_run_on_cpu_shows_a_15_minute_plan(tmp_path):
    """The dry run lists, per worker, runs within the budget, from the committed records."""
    out = _cli("--dry-run", "--device", "cpu", "--workers", "2", "--budget", "15m", "--papers", "labeldp,dpis",
               "--results", str(tmp_path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "campaign: budget 15 min, 2 worker(s) on cpu"
    scale = {"s": 1, "min": 60, "h": 3600}
    loads = [float(a) * scale[u] for a, u in (line.split("about ")[1].split()[:2] for line in lines
                                               if line.startswith("worker "))]
    assert len(loads) == 2 and all(load <= 900 + 30 for load in loads)  # durations are rounded to the minute
    left = next(i for i, line in enumerate(lines) if line.startswith("left for later:"))
    assert lines[left + 1] == "tiers (lower runs first):" and all(line.startswith("  ") for line in lines[left + 2:])
    assert "no CUDA device" not in out.stderr  # a CPU plan on a CPU
    assert not any(tmp_path.iterdir())  # a dry run writes nothing


def test_chunks_fill_the_time_left_with_the_most_valuable_run_that_does_not_fit():
    camp = c.plan(_picks([80, 500, 400, None]), budget_s=100, workers=2, device="cuda", chunks=True,
                  min_chunk_s=30)
    chunks = [p for p in camp.picked if p.chunk]
    # worker 1 is idle (100 s left): it takes e1, the most valuable run left; worker 0 has 20 s left: none
    assert [(p.experiment, p.worker) for p in chunks] == [("e1", 1)]
    assert [p.experiment for p in camp.left] == ["e2", "e3"]
    assert "[chunk:" in "\n".join(camp.lines())
    assert not any(p.chunk for p in c.plan(_picks([80, 500]), budget_s=100, workers=2, device="cuda").picked)


def test_a_checkpointed_run_is_estimated_from_what_is_left(tmp_path):
    """done_seconds reads the run's earlier segments (only when a checkpoint exists)."""
    from dpnotes.executors.local import done_seconds
    from dpnotes.runner import specs

    spec = specs("labeldp", "smoke")[0]
    folder = tmp_path / ".checkpoints"
    folder.mkdir()
    segments = {"spec": spec.to_dict(), "segments": [{"wall_s": 40.0, "dirty": False}, {"wall_s": 2.5}]}
    (folder / f"{spec.id}.segments.json").write_text(json.dumps(segments))
    assert done_seconds(folder, spec) == 0.0  # no checkpoint: the run would start afresh
    (folder / f"{spec.id}.pt").write_bytes(b"x")
    assert done_seconds(folder, spec) == 42.5
    (folder / f"{spec.id}.segments.json").write_text("{trunc")
    assert done_seconds(folder, spec) == 0.0


@pytest.mark.parametrize("seconds, text", [(45, "45 s"), (720, "12 min"), (12600, "3.5 h"), (None, "—")])
def test_durations_read_in_s_min_or_h(seconds, text):
    assert c.duration(seconds) == text


def test_every_tier_of_the_plan_is_explained():
    assert {t for t, _, _ in c.PLAN} | {0} <= set(c.TIERS)
