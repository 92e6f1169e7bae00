"""A sweep of bad command lines (issue 35): none prints a traceback; each ends in argparse's
usage error or one line naming what is wrong, exit code 2.

Run in this process through :func:`dpnotes.cli.main` (an uncaught exception fails the case),
with the cheap accountants only, so the whole sweep takes seconds.
"""

from __future__ import annotations

import pytest

from dpnotes.cli import main

RUN = ["--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5"]
EPS = ["epsilon", *RUN, "--accountant", "rdp", "--noise-multiplier"]
NOISE = ["noise", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5", "--accountant", "rdp",
         "--target-epsilon"]


def _cases(tmp) -> list[list[str]]:
    file = str(tmp / "a-file")
    under = str(tmp / "a-file" / "sub")
    missing = str(tmp / "missing")
    cases = [
        [], ["nope"], ["--version-typo"], ["-x"],
        # epsilon: the noise multiplier
        *([*EPS, s] for s in ("1e200", "1e-300", "0", "-1", "nan", "inf", "-inf", "abc", "", "1e7", "1e-7")),
        # epsilon: sampling rate, sizes, length, delta
        *(["epsilon", "--sample-rate", q, "--steps", "100", "--delta", "1e-5", "--noise-multiplier", "1"]
          for q in ("0", "-0.1", "1.5", "nan", "inf", "x")),
        ["epsilon", "--batch-size", "0", "--dataset-size", "100", "--steps", "10", "--delta", "1e-5",
         "--noise-multiplier", "1"],
        ["epsilon", "--batch-size", "200", "--dataset-size", "100", "--steps", "10", "--delta", "1e-5",
         "--noise-multiplier", "1"],
        ["epsilon", "--batch-size", "10", "--dataset-size", "-5", "--steps", "10", "--delta", "1e-5",
         "--noise-multiplier", "1"],
        ["epsilon", "--batch-size", "10", "--steps", "10", "--delta", "1e-5", "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.1", "--batch-size", "10", "--dataset-size", "100", "--steps", "10",
         "--delta", "1e-5", "--noise-multiplier", "1"],
        *(["epsilon", "--sample-rate", "0.01", "--steps", t, "--delta", "1e-5", "--noise-multiplier", "1"]
          for t in ("0", "-3", "nan", "inf", "1e400")),
        ["epsilon", "--sample-rate", "0.01", "--steps", "10", "--epochs", "1", "--delta", "1e-5",
         "--noise-multiplier", "1"],
        ["epsilon", "--sample-rate", "0.01", "--delta", "1e-5", "--noise-multiplier", "1"],
        *(["epsilon", "--sample-rate", "0.01", "--epochs", e, "--delta", "1e-5", "--noise-multiplier", "1"]
          for e in ("0", "-1", "nan")),
        *(["epsilon", "--sample-rate", "0.01", "--steps", "10", "--delta", d, "--noise-multiplier", "1"]
          for d in ("0", "1", "2", "-1e-5", "nan")),
        ["epsilon", *RUN, "--noise-multiplier", "1", "--accountant", "moments"],
        ["epsilon", *RUN, "--noise-multiplier", "1", "--orders", "all"],
        *(["epsilon", *RUN, "--noise-multiplier", "1", "--accountant", "pld", "--pld-discretization", h]
          for h in ("100", "0.5", "0", "-1e-3", "nan", "inf")),
        ["epsilon", *RUN],
        # noise: the target and the search range
        *([*NOISE, t] for t in ("0", "-1", "nan", "inf", "1e-4", "1e9", "x")),
        ["noise", *RUN, "--target-epsilon", "1", "--accountant", "all-of-them"],
        ["noise", "--sample-rate", "2", "--steps", "10", "--delta", "1e-5", "--target-epsilon", "1"],
        ["noise", "--sample-rate", "0.01", "--steps", "10", "--delta", "1e-5", "--target-epsilon", "1",
         "--pld-discretization", "1e-3"],
        # run: papers, profiles, selections, stores, executors
        ["run"], ["run", "alexnet"], ["run", "gdp", "--profile", "huge"],
        ["run", "gdp", "--profile", "smoke", "--only", "nothing*", "--results", missing],
        ["run", "gdp", "--profile", "smoke", "--seeds", "99", "--results", missing],
        *(["run", "gdp", "--seeds", s] for s in ("", "-1", "a,b", "1,,2", "1.5")),
        ["run", "gdp", "--threads", "0", "--results", missing],
        ["run", "gdp", "--threads", "-4", "--results", missing],
        ["run", "gdp", "--threads", "two"],
        ["run", "gdp", "--device", "tpu"],
        ["run", "gdp", "--executor", "slurm"],
        ["run", "gdp", "--profile", "smoke", "--gpus-per-run", "0.5", "--results", missing],
        ["run", "gdp", "--profile", "smoke", "--address", "auto", "--results", missing],
        ["run", "gdp", "--profile", "smoke", "--cpus-per-run", "2", "--results", missing],
        ["run", "gdp", "--profile", "smoke", "--results", file, "--no-progress"],
        ["run", "gdp", "--profile", "smoke", "--results", under, "--no-progress"],
        ["run", "gdp", "--list", "--results", file],
        ["run", "gdp", "--profile", "smoke", "--results", "/proc/dpnotes-results", "--no-progress"],
        # scoreboard and results
        ["scoreboard", "--results", missing], ["scoreboard", "--results", file],
        ["scoreboard", "--paper", "alexnet"],
        ["results"], ["results", "check"], ["results", "verify", "--results", missing],
        ["results", "verify", "--results", file], ["results", "seal", "--results", missing],
        ["results", "verify", "--paper", "alexnet"],
        # data
        ["data"], ["data", "fetch"], ["data", "fetch", "imagenet", "--cache-dir", str(tmp / "c")],
        ["data", "fetch", "mnist", "--cache-dir", file],
        ["data", "fetch", "mnist", "--mirror", missing, "--cache-dir", str(tmp / "c2")],
        ["data", "verify", "--mirror", missing],
        ["data", "list", "--cache-dir", file],
        # bench
        ["bench", "--steps", "0"], ["bench", "--steps", "-1"], ["bench", "--batch-size", "zero"],
        ["bench", "--models", "nope"], ["bench", "--methods", "nope"], ["bench", "--device", "tpu"],
        ["bench", "--threads", "0"], ["bench", "--dplis-k", "0"],
    ]
    return cases


def test_the_sweep_has_a_hundred_cases(tmp_path):
    assert len(_cases(tmp_path)) >= 100


@pytest.mark.parametrize("index", range(len(_cases(__import__("pathlib").Path("/tmp")))))
def test_bad_command_line_gives_a_named_error_not_a_traceback(tmp_path, monkeypatch, capsys, index):
    monkeypatch.delenv("DPNOTES_DATA_MIRROR", raising=False)  # nothing is fetched: a missing mirror is named
    monkeypatch.setenv("DPNOTES_CACHE", str(tmp_path / "cache"))
    (tmp_path / "a-file").write_text("not a folder")
    argv = _cases(tmp_path)[index]
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse: usage and one error line
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert lines and ("error:" in lines[-1]), (argv, err)
        assert not lines[0].startswith("dpnotes") or len(lines) == 1, (argv, err)  # ours: one line
