"""The dpnotes command line: help, run, scoreboard, and one-line errors for bad input."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpnotes.cli import main


def dpnotes(*args):
    return subprocess.run([sys.executable, "-m", "dpnotes", *args], capture_output=True, text=True)


def test_help_lists_subcommands():
    out = dpnotes("--help")
    assert out.returncode == 0
    for cmd in ("run", "scoreboard"):
        assert cmd in out.stdout


@pytest.mark.parametrize("args, message", [
    (["run", "alexnet"], "invalid choice: 'alexnet'"),
    (["run", "gdp", "--profile", "huge"], "invalid choice: 'huge'"),
    (["run", "gdp", "--device", "tpu"], "invalid choice: 'tpu'"),
])
def test_run_rejects_bad_arguments(args, message):
    out = dpnotes(*args)
    assert out.returncode == 2
    assert message in out.stderr


def test_run_only_matching_nothing_is_one_line_error(tmp_path, capsys):
    code = main(["run", "gdp", "--profile", "smoke", "--only", "no-such-*", "--results", str(tmp_path),
                 "--list"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "matches no experiment" in err


def test_scoreboard_json_has_every_claim(tmp_path):
    out = dpnotes("scoreboard", "--json", "--results", str(tmp_path))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)["claims"]
    from dpnotes import claims
    assert [r["id"] for r in rows] == [c.id for c in claims.load()]
    for row in rows:
        assert row["id"].split(".")[0] in ("dplis", "dpis", "gdp", "labeldp", "sadpsgd")
        assert row["kind"] in ("exact", "training", "statement")
        assert row["verdict"] in ("reproduced", "not_reproduced", "inconclusive", "not_run", "passes", "fails")
        assert row["category"] in ("claim", "check", "quoted", "lost") and row["basis"]
        assert {"paper_value", "ours", "evidence"} <= set(row)
        if row["verdict"] == "not_run":
            assert row["evidence"], f"{row['id']} is not run without a reason"


def test_scoreboard_table(tmp_path):
    out = dpnotes("scoreboard", "--results", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "gdp:" in out.stdout and "verdict" in out.stdout


def test_cuda_requested_without_cuda(monkeypatch):
    import torch

    from dpnotes.runner import resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA device"):
        resolve_device("cuda")
    assert resolve_device("auto") == "cpu"


@pytest.mark.mirror
def test_a_run_with_everything_stored_says_nothing_to_run_and_that_quick_records_feed_no_verdict(tmp_path):
    import shutil

    src = Path(__file__).resolve().parent.parent / "results" / "gdp" / "quick"
    shutil.copytree(src, tmp_path / "gdp" / "quick")
    out = dpnotes("run", "gdp", "--profile", "quick", "--no-progress", "--results", str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "nothing to run: all" in out.stdout and "feed no verdict" in out.stdout
