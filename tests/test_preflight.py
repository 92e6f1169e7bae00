"""Long work says what it will do before it starts (dpnotes.preflight through dpnotes.runner.run_paper):
the device checked first with the fix in the caller's terms, the plan printed, a confirmation asked
before work over the threshold (the command line's --yes, the notebooks' ``yes`` parameter), and
Ctrl-C ending in a message that says what is stored and kept, without a traceback."""

from __future__ import annotations

import re

import pytest
from test_results import fake  # noqa: F401  (the fixture: a fake experiments module)

from dpnotes import preflight, runner
from dpnotes.cli import main
from dpnotes.results import Store


class Recorder:
    """An executor that trains nothing: it notes the specs it was handed."""

    def __init__(self):
        self.handed = []

    def run(self, specs, *, device, store, progress):
        self.handed += [s.id for s in specs]
        return iter(())


def test_a_long_sweep_prints_its_plan_and_stops_until_confirmed_on_the_command_line(tmp_path, capsys):
    """GDP at the paper profile into an empty store: 64 runs, hours of CPU (the committed records
    price them). Nothing is trained: the question comes before the first run."""
    code = main(["run", "gdp", "--profile", "paper", "--device", "cpu", "--results", str(tmp_path)])
    err = capsys.readouterr().err
    head = next(line for line in err.splitlines() if line.startswith("gdp [paper]: "))
    assert re.search(r" run\(s\) to train on cpu, 0 already stored; estimated CPU [\d.]+ h, GPU ", head)
    assert "... and " in err and "--list" in err  # the first runs one a line, then a count
    assert code == 2 and "dpnotes run: error: not started: " in err and "to start them, add --yes" in err
    assert "Traceback" not in err and not (tmp_path / ".checkpoints").exists()


def test_the_notebook_path_stops_with_its_own_fix_and_starts_when_confirmed(tmp_path, capsys):
    """What a chapter's run cell calls (run_paper(..., yes=yes, caller="notebook")), at the paper profile."""
    store, executor = Store(tmp_path), Recorder()
    with pytest.raises(preflight.NotConfirmed) as stop:
        runner.run_paper("gdp", "paper", device="cpu", yes=False, caller="notebook", store=store, executor=executor)
    message = str(stop.value)
    assert message.startswith("not started: 64 run(s) of gdp [paper] on cpu, about ")
    assert "set yes = True in the parameters cell (papermill: -p yes True; make book: YES=1)" in message
    assert stop.value._render_traceback_() == [message]  # a notebook shows the message, not a traceback
    assert executor.handed == []
    assert "gdp [paper]: 64 run(s) to train on cpu" in capsys.readouterr().err  # the plan came first
    runner.run_paper("gdp", "paper", device="cpu", yes=True, caller="notebook", store=store, executor=executor,
                     progress=False)
    assert len(executor.handed) == 64


def test_a_terminal_is_asked_and_only_yes_starts(tmp_path, fake, monkeypatch):
    monkeypatch.setattr(preflight, "ASK_OVER_HOURS", -1.0)  # the fake's two runs count as long work
    questions, executor = [], Recorder()
    with pytest.raises(preflight.NotConfirmed, match=r"not started: 2 run\(s\) of gdp \[quick\] on cpu"):
        runner.run_paper("gdp", "quick", caller="cli", yes=False, ask=lambda q: questions.append(q) or False,
                         store=Store(tmp_path), executor=executor, progress=False)
    assert questions and questions[0].startswith("Start 2 run(s) of gdp [quick] on cpu") and executor.handed == []
    runner.run_paper("gdp", "quick", caller="cli", yes=False, ask=lambda q: True, store=Store(tmp_path),
                     executor=executor, progress=False)
    assert len(executor.handed) == 2


def test_short_work_and_the_smoke_profile_never_ask(tmp_path, fake):
    """The nbval references execute every chapter at smoke into an empty store: no question there."""
    executor = Recorder()
    runner.run_paper("gdp", "smoke", yes=False, caller="notebook", ask=lambda q: pytest.fail(q),
                     store=Store(tmp_path), executor=executor, progress=False)
    assert len(executor.handed) == 2


def test_bad_yes_is_named(tmp_path, fake):
    with pytest.raises(ValueError, match="yes must be True or False, got 'False'"):
        runner.run_paper("gdp", "smoke", yes="False", store=Store(tmp_path), progress=False)


@pytest.mark.parametrize("caller, fix", [
    ("cli", "use --device cpu"),
    ("notebook", 'use device = "cpu" in the parameters cell (papermill: -p device cpu; make book: DEVICE=cpu)'),
    ("python", 'use device="cpu"'),
])
def test_a_missing_gpu_is_named_first_with_the_fix_in_the_callers_terms(tmp_path, fake, monkeypatch, capsys,
                                                                        caller, fix):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    executor = Recorder()
    with pytest.raises(preflight.DeviceMissing) as missing:
        runner.run_paper("gdp", "smoke", device="cuda", caller=caller, store=Store(tmp_path), executor=executor)
    assert str(missing.value).startswith("device 'cuda' was asked for but torch sees no CUDA device (torch ")
    assert str(missing.value).endswith(fix)
    assert missing.value._render_traceback_() == [str(missing.value)]
    assert executor.handed == [] and "run(s) to train" not in capsys.readouterr().err  # before the plan


def test_the_command_line_names_a_missing_gpu_in_one_line(tmp_path, fake, monkeypatch, capsys):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["run", "gdp", "--profile", "smoke", "--device", "cuda", "--results", str(tmp_path)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("dpnotes run: error: device 'cuda' was asked for") and line.endswith("use --device cpu")


def test_ctrl_c_keeps_the_checkpoint_and_says_how_to_resume(tmp_path, fake):
    """The fake's second run is interrupted (KeyboardInterrupt) after its first epoch's checkpoint."""
    store = Store(tmp_path)
    fake.die_at = ("toy.1", 1)
    with pytest.raises(preflight.Stopped) as stop:  # a KeyboardInterrupt still
        runner.run_paper("gdp", "smoke", store=store, progress=False, caller="notebook")
    second = runner.specs("gdp", "smoke")[1]
    checkpoint = tmp_path / ".checkpoints" / f"{second.id}.pt"
    assert checkpoint.is_file()
    assert str(stop.value) == (f"stopped; 1 run(s) finished and stored in {tmp_path}, checkpoint kept at "
                               f"{checkpoint}; execute the notebook again with the same parameters to resume")
    assert stop.value._render_traceback_() == [str(stop.value)] and stop.value.__suppress_context__
    fake.die_at = None
    assert len(runner.run_paper("gdp", "smoke", store=store, progress=False)) == 2
    assert fake.calls == ["toy.0", "toy.1"]  # resumed: toy.1 finished once


def test_ctrl_c_on_the_command_line_exits_130_without_a_traceback(tmp_path, fake, capsys):
    fake.die_at = ("toy.0", 0)  # before any checkpoint
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1] == (
        f"dpnotes run: stopped; 0 run(s) finished and stored in {tmp_path}, no checkpoint yet (the interrupted "
        "run restarts from its first epoch); re-run the same command to resume")
    assert "Traceback" not in err


def test_progress_says_the_plan_each_start_and_each_finish(tmp_path, fake, capsys):
    records = runner.run_paper("gdp", "smoke", store=Store(tmp_path), progress=True)
    err = capsys.readouterr().err
    assert "gdp [smoke]: 2 run(s) to train on cpu, 0 already stored" in err
    starts = [line.split()[:3] for line in err.splitlines() if line.startswith("start ")]
    assert starts == [["start", r["id"], r["spec"]["experiment"]] for r in records]
    assert [line.split()[1] for line in err.splitlines() if line.startswith("done ")] == [r["id"] for r in records]
