"""A sweep of bad command lines (issue 35): none prints a traceback; each ends in argparse's
usage error or one line naming what is wrong, exit code 2.

Run in this process through :func:`dpnotes.cli.main` (an uncaught exception fails the case),
with the cheap accountants only, so the whole sweep takes seconds.
"""

from __future__ import annotations

import pytest
from test_results import fake  # noqa: F401  (the fixture: a fake experiments module)

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


# ---------------------------------------------------------------- issue 53: probes 6-12, each named or fixed

def _one_line(capsys, *needles) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


def test_bench_batch_too_large_for_memory_is_named(capsys):
    assert main(["bench", "--batch-size", "100000000000", "--steps", "1", "--methods", "ghost",
                 "--models", "tf-mnist-cnn"]) == 2
    _one_line(capsys, "--batch-size 100000000000 does not fit in the memory of cpu", "give a smaller one")


def test_closed_stdout_is_named():
    import os
    import subprocess
    import sys

    repo = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    proc = subprocess.run([sys.executable, "-m", "dpnotes", *EPS, "1"], capture_output=False, stderr=subprocess.PIPE,
                          preexec_fn=lambda: os.close(1), env={**os.environ, "PYTHONPATH": repo}, timeout=120)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "standard output is closed" in err


def test_noise_target_above_every_eps_names_the_eps_there(capsys):
    assert main([*NOISE, "1e300"]) == 2
    _one_line(capsys, "is met by every noise multiplier down to 1e-06", "eps is 5.5e+13")


def test_noise_target_above_the_cap_is_solved_not_called_met(capsys):
    assert main([*NOISE, "1e9", "--json"]) == 0  # eps at sigma 1e-6 is 5.5e13 > 1e9: not "met by every sigma"
    out = __import__("json").loads(capsys.readouterr().out)["rdp"]
    assert 1e-6 < out["noise_multiplier"] < 1e-3 and out["epsilon"] <= 1e9


@pytest.mark.parametrize("argv", [["results", "verify"], ["scoreboard"], ["cost", "--no-claims"],
                                  ["run", "gdp", "--dry-run"]])
def test_empty_results_variable_is_named_not_the_current_directory(monkeypatch, tmp_path, capsys, argv):
    monkeypatch.setenv("DPNOTES_RESULTS", "")
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    _one_line(capsys, "DPNOTES_RESULTS is set but empty")


def test_cost_of_a_missing_store_is_named(tmp_path, capsys):
    assert main(["cost", "--results", str(tmp_path / "nonexistent"), "--no-claims"]) == 2
    _one_line(capsys, "--results", "does not exist")


def test_dry_run_does_not_list_a_truncated_record_as_stored(tmp_path, fake, capsys):  # noqa: F811
    from dpnotes import runner
    from dpnotes.results import Store

    store = Store(tmp_path / "store")
    a, b = runner.run_paper("gdp", "smoke", store=store, progress=False)
    path = store.root / "gdp" / "smoke" / f"{a['id']}.json"
    path.write_bytes(path.read_bytes()[:100])
    capsys.readouterr()
    assert main(["run", "gdp", "--profile", "smoke", "--dry-run", "--results", str(store.root)]) == 0
    out = capsys.readouterr().out
    assert f"{a['id']}  BAD" in out and f"{b['id']}  stored" in out, out
    assert "not a complete JSON record" in out and "1 stored, 1 to run" in out, out


def test_records_and_seals_keep_their_bytes_in_a_crlf_checkout(tmp_path):
    """``.gitattributes`` marks results/ ``-text``: a checkout with ``core.autocrlf=true`` (as on
    Windows) writes the records' bytes unchanged, so their seals still match (``git archive``
    converts line endings as a checkout does)."""
    import hashlib
    import io
    import subprocess
    import tarfile

    repo = __import__("pathlib").Path(__file__).resolve().parents[1]
    if not (repo / ".git").exists():
        pytest.skip("not a git checkout")
    tar = subprocess.run(["git", "-c", "core.autocrlf=true", "-c", "core.eol=crlf", "archive", "--worktree-attributes",
                          "HEAD", "results/gdp/paper"], cwd=repo, capture_output=True, check=True).stdout
    members = {m.name: m for m in tarfile.open(fileobj=io.BytesIO(tar)).getmembers() if m.isfile()}
    files = {name: tarfile.open(fileobj=io.BytesIO(tar)).extractfile(m).read() for name, m in members.items()}
    seals = [name for name in files if name.endswith(".sha256")]
    assert len(seals) >= 50
    for name in seals:
        digest, record = files[name].decode().split()
        assert b"\r\n" not in files[name]
        assert hashlib.sha256(files[name.removesuffix(".sha256") + ".json"]).hexdigest() == digest, record
