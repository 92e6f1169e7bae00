"""Executors without Ray: the progress lines, the dry-run cost table, the command line's
executor flags, and the error when Ray is asked for but not installed (the Ray executor
itself: tests/test_executor_ray.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from test_results import fake  # noqa: F401  (the fixture: a fake experiments module)

from dpnotes import executors, provenance, runner
from dpnotes.cli import main
from dpnotes.executors import cost
from dpnotes.results import Store


def test_one_bar_and_a_line_per_finished_run(tmp_path, fake, capsys):
    store = Store(tmp_path)
    runner.run_paper("gdp", "smoke", store=store, progress=False)
    capsys.readouterr()
    (store.path(runner.specs("gdp", "smoke")[1])).unlink()
    records = runner.run_paper("gdp", "smoke", store=store, progress=True)
    err = capsys.readouterr().err
    assert [line.split()[:3] for line in err.splitlines() if line.startswith("done ")] == [
        ["done", records[1]["id"], "toy.1"]]
    assert "2/2" in err and "gdp [smoke]" in err  # one bar over all runs, stored ones counted


def _record(id_, experiment, model, wall):
    return {"id": id_, "spec": {"experiment": experiment, "model": model, "method": "dpsgd"},
            "provenance": {"wall_time_s": wall}}


def test_cost_estimate_prefers_own_record_then_experiment_then_model(tmp_path, fake):
    a, b = runner.specs("gdp", "smoke")
    records = [_record(a.id, "toy.0", "gdp-adult", 2.0), _record("x", "toy.1", "gdp-adult", 7.0),
               _record("y", "toy.1", "gdp-adult", 9.0), _record("z", "other", "gdp-adult", 100.0)]
    assert cost.estimate(a, records) == (2.0, "its record, 1 record(s)")
    assert cost.estimate(b, records) == (8.0, "same experiment, 2 record(s)")
    assert cost.estimate(b, records[3:]) == (100.0, "same model and method, 1 record(s)")
    assert cost.estimate(b, []) == (None, "no stored record to go by")
    for r, device in zip(records[1:3], ("cpu: x86_64, 1 threads", "cuda: NVIDIA H100 80GB HBM3")):
        r["provenance"]["segments"] = [{"device": device}]
    assert cost.estimate(b, records) == (8.0, "same experiment, 2 record(s) on cpu/cuda")


def test_dry_run_lists_runs_stored_state_and_cost(tmp_path, fake, capsys):
    store = Store(tmp_path)
    (first, second) = runner.run_paper("gdp", "smoke", store=store, progress=False)
    store.path(runner.specs("gdp", "smoke")[1]).unlink()
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(tmp_path), "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{first['id']}  stored  toy.0")
    assert lines[1].startswith(f"{second['id']}  to run  toy.1") and "same model and method" in lines[1]
    assert lines[2].startswith("2 run(s), 1 stored, 1 to run: about")
    assert fake.calls == ["toy.0", "toy.1"]  # the dry run trained nothing


@pytest.mark.parametrize("args, message", [
    (["--gpus-per-run", "0.5"], "--gpus-per-run only apply with --executor ray"),
    (["--address", "auto", "--cpus-per-run", "2"], "--address, --cpus-per-run only apply with --executor ray"),
])
def test_ray_flags_without_the_ray_executor_are_refused(tmp_path, capsys, args, message):
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(tmp_path), *args]) == 2
    assert message in capsys.readouterr().err


def test_unknown_executor():
    with pytest.raises(executors.ExecutorError, match="executor must be one of local, ray"):
        executors.create("slurm")


HIDE_RAY = "import sys; sys.modules['ray'] = None; "  # `import ray` then raises ImportError


def test_without_ray_the_ray_executor_says_how_to_install_it(tmp_path):
    (tmp_path / "kept.json").write_text("{}")
    code = (HIDE_RAY + "from dpnotes.cli import main; sys.exit(main(['run', 'gdp', '--profile', "
            f"'smoke', '--results', {str(tmp_path)!r}, '--executor', 'ray']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert "--executor ray needs Ray, which is not installed" in out.stderr
    assert "pip install -c constraints.txt -e '.[ray]'" in out.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["kept.json"]


def test_the_command_line_imports_no_ray():
    code = "import sys; from dpnotes.cli import build_parser; build_parser(); print('ray' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def test_fingerprint_tells_apart_commits_and_uncommitted_contents(tmp_path):
    (tmp_path / "x.py").write_text("a = 1\n")
    state = {"commit": "abc", "dirty": True, "changed": ["x.py"]}
    first = provenance.fingerprint(state, tmp_path)
    assert provenance.fingerprint(dict(state), tmp_path) == first
    assert provenance.fingerprint({**state, "commit": "abd"}, tmp_path) != first
    (tmp_path / "x.py").write_text("a = 2\n")
    assert provenance.fingerprint(state, tmp_path) != first
    (tmp_path / "x.py").unlink()
    assert provenance.fingerprint(state, tmp_path) != first


def test_a_worker_with_another_source_refuses_to_run(tmp_path, fake):
    import torch

    from dpnotes.executors import ray as ray_executor

    spec = runner.specs("gdp", "smoke")[0]
    threads = torch.get_num_threads()
    try:
        with pytest.raises(ray_executor.SourceMismatch, match="not the source this sweep was started from"):
            ray_executor._task(spec.to_dict(), "cpu", str(tmp_path), 1, "0" * 64)
    finally:
        torch.set_num_threads(threads)
    assert fake.calls == [] and not any(tmp_path.iterdir())
