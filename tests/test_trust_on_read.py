"""Fault injection (issue 35): what a reader gets when a store, a checkpoint or an input is bad.

Each case of the issue's "Why", tried as an adversarial user would: an edited metric, spec or
eps, a record copied over another seed's file, truncated record / checkpoint / segments files,
two identical runs at once, an unwritable store, extreme noise multipliers, a checkpoint
carrying a pickled object, and the CLI's unnamed failures. A bad record is excluded and named
(never used); a bad input is one line naming the file or parameter, exit code 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from test_results import fake  # noqa: F401  (the fixture: a fake experiments module)

from dpnotes import digest_file, runner
from dpnotes.cli import main
from dpnotes.results import Store

REPO = Path(__file__).resolve().parents[1]
CHEAP = "gdp/quick/10fe1cb5e1701218"  # a committed record priced by rdp, rdp-classic and clt only


def _store_of_two(tmp_path, fake) -> tuple[Store, list[dict]]:  # noqa: F811
    store = Store(tmp_path / "store")
    records = runner.run_paper("gdp", "smoke", store=store, progress=False)
    return store, records


def _edit(path: Path, change, reseal: bool = False) -> None:
    """Rewrite the record at ``path`` with ``change(record)`` applied (and, with ``reseal``,
    its seal and its manifest line recomputed, as an editor who knows about both would: the
    checks behind them must still catch the edit)."""
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    if reseal:
        import hashlib

        from dpnotes import record_manifest
        from dpnotes.record_checks import seal_path, seal_text

        seal_path(path).write_text(seal_text(path, path.read_bytes()))
        entries = record_manifest.read(path.parent)
        entries[path.name] = hashlib.sha256(path.read_bytes()).hexdigest()
        record_manifest.write(path.parent, entries)


def _excluded(store: Store) -> dict[str, str]:
    return {e["path"]: e["reason"] for e in store.excluded()}


def _one_error_line(capsys, *needles) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


# ---------------------------------------------------------------- records verified on read

def test_edited_metric_is_excluded_and_named(tmp_path, fake):  # noqa: F811
    store, (a, b) = _store_of_two(tmp_path, fake)
    path = store.root / "gdp" / "smoke" / f"{a['id']}.json"
    _edit(path, lambda r: r["final"].update(loss=0.10))
    assert [r["id"] for r in store.records()] == [b["id"]]
    assert "does not match its seal" in _excluded(store)[f"gdp/smoke/{a['id']}.json"]


@pytest.mark.parametrize("reseal", [False, True])
def test_edited_spec_is_excluded_and_named(tmp_path, fake, reseal):  # noqa: F811
    store, (a, b) = _store_of_two(tmp_path, fake)
    path = store.root / "gdp" / "smoke" / f"{a['id']}.json"
    _edit(path, lambda r: r["spec"]["train"].update(noise_multiplier=0.5), reseal=reseal)  # id unchanged
    assert [r["id"] for r in store.records()] == [b["id"]]
    assert "is not the hash of its spec" in _excluded(store)[f"gdp/smoke/{a['id']}.json"]


@pytest.mark.parametrize("reseal", [False, True])
def test_edited_eps_is_excluded_and_named(tmp_path, fake, reseal):  # noqa: F811
    store, (a, b) = _store_of_two(tmp_path, fake)
    path = store.root / "gdp" / "smoke" / f"{a['id']}.json"
    _edit(path, lambda r: r["privacy"]["epsilon"]["rdp"].update(epsilon=0.01), reseal=reseal)
    assert [r["id"] for r in store.records()] == [b["id"]]
    reason = _excluded(store)[f"gdp/smoke/{a['id']}.json"]
    assert ("does not reprice" in reason and "0.01" in reason) if reseal else "does not match its seal" in reason


def test_record_copied_over_another_seeds_file_is_excluded_not_counted_twice(tmp_path, fake):  # noqa: F811
    store, (a, b) = _store_of_two(tmp_path, fake)
    folder = store.root / "gdp" / "smoke"
    shutil.copy(folder / f"{a['id']}.json", folder / f"{b['id']}.json")
    shutil.copy(folder / f"{a['id']}.sha256", folder / f"{b['id']}.sha256")
    assert [r["id"] for r in store.records()] == [a["id"]]  # seed 0 once; the copy is no seed-1 run
    assert "a copy or a renamed file" in _excluded(store)[f"gdp/smoke/{b['id']}.json"]


def test_truncated_record_is_excluded_and_named_and_refused_by_a_run(tmp_path, fake, capsys):  # noqa: F811
    store, (a, b) = _store_of_two(tmp_path, fake)
    path = store.root / "gdp" / "smoke" / f"{a['id']}.json"
    path.write_bytes(path.read_bytes()[:100])
    assert [r["id"] for r in store.records()] == [b["id"]]
    assert "not a complete JSON record" in _excluded(store)[f"gdp/smoke/{a['id']}.json"]
    capsys.readouterr()
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(store.root), "--no-progress"]) == 2
    _one_error_line(capsys, str(path), "not a complete JSON record")


def test_scoreboard_and_verify_name_excluded_records(tmp_path, capsys):
    root = tmp_path / "store"
    (root / "gdp" / "quick").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(REPO / "results" / f"{CHEAP}{suffix}", root / f"{CHEAP}{suffix}")
    assert main(["results", "manifest", "--results", str(root)]) == 0  # copied without its folder's manifest
    assert main(["results", "verify", "--results", str(root)]) == 0
    _edit(root / f"{CHEAP}.json", lambda r: r["final"].update(test_acc=0.10))
    capsys.readouterr()
    assert main(["results", "verify", "--results", str(root)]) == 2
    assert f"EXCLUDED {CHEAP}.json: its content does not match its seal" in capsys.readouterr().out
    assert main(["scoreboard", "--paper", "gdp", "--results", str(root), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(e["path"], e["reason"].split(":")[0]) for e in out["excluded_records"]] == [
        (f"{CHEAP}.json", "its content does not match its seal 10fe1cb5e1701218.sha256")]
    assert all("10fe1cb5e1701218" not in json.dumps(c["evidence"]) for c in out["claims"])


def test_scoreboard_of_a_missing_store_is_an_error(tmp_path, capsys):
    assert main(["scoreboard", "--results", str(tmp_path / "nonexistent")]) == 2
    _one_error_line(capsys, "--results", "no such directory")


# ---------------------------------------------------------------- one run at a time

def test_a_second_identical_run_stops_before_training_and_touches_nothing(tmp_path, fake, capsys):  # noqa: F811
    from dpnotes.executors.lock import RunLocked, run_lock

    store = Store(tmp_path / "store")
    spec = runner.specs("gdp", "smoke")[0]
    folder = store.root / ".checkpoints"
    folder.mkdir(parents=True)
    live = {f"{spec.id}.pt": b"[]", f"{spec.id}.segments.json": json.dumps(
        {"spec": spec.to_dict(), "segments": [{"open": True, "started_unix": 0.0}]}).encode()}
    for name, data in live.items():  # the first run's checkpoint and its live segment
        (folder / name).write_bytes(data)
    with run_lock(folder, spec.id):  # the first run, still training
        with pytest.raises(RunLocked, match=f"run {spec.id} .* is already running in another process"):
            runner.execute(spec, store=store, progress=False)
        capsys.readouterr()
        assert main(["run", "gdp", "--profile", "smoke", "--results", str(store.root), "--no-progress"]) == 2
        _one_error_line(capsys, spec.id, "already running")
        assert fake.calls == []  # nothing trained
        assert {p.name: p.read_bytes() for p in folder.iterdir() if p.suffix != ".lock"} == live
    assert not list(store.records())


def test_a_run_that_finds_its_record_stored_meanwhile_returns_it(tmp_path, fake):  # noqa: F811
    store = Store(tmp_path / "store")
    first = runner.run_paper("gdp", "smoke", store=store, progress=False)[0]
    again = runner.execute(runner.specs("gdp", "smoke")[0], store=store, progress=False)
    assert again == first and fake.calls == ["toy.0", "toy.1"]
    assert sorted(p.name for p in (store.root / ".checkpoints").iterdir()) == []  # lock file removed


def test_two_processes_same_run(tmp_path):
    """A real second process (the CLI, GDP smoke, no data needed to get to the lock)."""
    from dpnotes.executors.lock import run_lock

    spec = runner.specs("gdp", "smoke", "table1.row2", (0,))[0]
    store = tmp_path / "store"
    with run_lock(store / ".checkpoints", spec.id):
        out = subprocess.run([sys.executable, "-m", "dpnotes", "run", "gdp", "--profile", "smoke", "--only",
                              "table1.row2", "--seeds", "0", "--results", str(store), "--no-progress",
                              "--device", "cpu"], capture_output=True, text=True, timeout=300,
                             env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert out.stderr.strip().endswith("(--only, --seeds)") and "already running" in out.stderr
    assert sorted(p.name for p in (store / ".checkpoints").iterdir()) == []


# ---------------------------------------------------------------- checkpoints

def _toy(checkpoint, epochs=2):
    from toy_runs import run

    from dpnotes.train import TrainConfig

    return run(TrainConfig(epochs=epochs, batch_size=20, noise_multiplier=1.0, accountants=("rdp",)),
               checkpoint=checkpoint)[0]


def test_truncated_checkpoint_is_named(tmp_path):
    path = tmp_path / "run.pt"
    _toy(path, epochs=1)
    path.write_bytes(path.read_bytes()[:500])
    with pytest.raises(ValueError, match=f"checkpoint {path} cannot be read .*truncated"):
        _toy(path)


def test_checkpoint_with_non_finite_parameters_is_refused(tmp_path):
    path = tmp_path / "run.pt"
    _toy(path, epochs=1)
    state = torch.load(path, weights_only=True)
    name = next(iter(state["model"]))
    state["model"][name].view(-1)[0] = float("nan")
    digest_file.write(path, digest_file.torch_bytes(state))  # re-sealed, as whoever edits it can
    with pytest.raises(ValueError, match=f"checkpoint {path} holds non-finite model parameters \\({name}\\)"):
        _toy(path)


class Payload:
    """A pickled object that runs code when unpickled (it touches a file)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (Path(self.marker),))


def test_checkpoint_carrying_a_pickled_object_is_refused_and_runs_nothing(tmp_path):
    path, marker = tmp_path / "run.pt", tmp_path / "code-ran"
    _toy(path, epochs=1)
    state = torch.load(path, weights_only=True)
    state["plugins"] = [{"x": Payload(marker)}]
    digest_file.write(path, digest_file.torch_bytes(state))  # re-sealed, as whoever edits it can
    with pytest.raises(ValueError, match=f"checkpoint {path} holds pickled objects .* refused") as info:
        _toy(path)
    assert type(info.value).__name__ == "UnsafeCheckpoint"
    assert not marker.exists()


def test_truncated_segments_file_is_named(tmp_path, fake, capsys):  # noqa: F811
    store = Store(tmp_path / "store")
    spec = runner.specs("gdp", "smoke")[0]
    folder = store.root / ".checkpoints"
    folder.mkdir(parents=True)
    (folder / f"{spec.id}.pt").write_text("[]")
    segments = folder / f"{spec.id}.segments.json"
    segments.write_text(json.dumps({"spec": spec.to_dict(), "segments": []})[:40])
    with pytest.raises(ValueError, match=f"{segments}: not a complete segments file"):
        runner.execute(spec, store=store, progress=False)
    capsys.readouterr()
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(store.root), "--no-progress"]) == 2
    _one_error_line(capsys, str(segments))


# ---------------------------------------------------------------- bad inputs, named

@pytest.mark.parametrize("make", ["file", "under a file"])
def test_unwritable_or_non_directory_store_is_named(tmp_path, capsys, make):
    target = tmp_path / "f"
    target.write_text("not a folder")
    root = target if make == "file" else target / "sub"
    assert main(["run", "gdp", "--profile", "smoke", "--results", str(root), "--no-progress"]) == 2
    _one_error_line(capsys, f"--results {root}")


@pytest.mark.parametrize("sigma", ["1e200", "1e-300"])
def test_extreme_noise_multiplier_is_named(capsys, sigma):
    assert main(["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5",
                 "--noise-multiplier", sigma, "--accountant", "rdp"]) == 2
    _one_error_line(capsys, "--noise-multiplier")


def test_noise_finds_an_answer_inside_its_range(capsys):
    # eps 1.01 under rdp at q = 1 and 1e8 steps needs sigma near 4e4 (the bracket once jumped from
    # e^10.2 to e^20.5, past 1e6, and said no sigma in [1e-6, 1e6] would do)
    assert main(["noise", "--sample-rate", "1", "--steps", "1e8", "--delta", "1e-5", "--target-epsilon", "1.01",
                 "--json"]) == 0
    sigma = json.loads(capsys.readouterr().out)["rdp"]["noise_multiplier"]
    assert 3e4 < sigma < 5e4


def test_noise_names_the_true_limit(capsys):
    assert main(["noise", "--sample-rate", "1", "--steps", "1", "--delta", "1e-5", "--target-epsilon", "1e-4"]) == 2
    _one_error_line(capsys, "is not met by any noise multiplier in [1e-06, 1e+06]", "floor")


def test_pld_grid_error_suggests_a_flag_of_the_command_that_takes_it():
    from dpnotes.accounting import noise_multiplier

    with pytest.raises(ValueError, match="dpnotes epsilon --pld-discretization"):
        noise_multiplier(100, 1.0, 1, 1e-5, accountant="pld")


def test_epsilon_json_is_strict(capsys):
    assert main(["epsilon", "--sample-rate", "0.01", "--steps", "100", "--delta", "1e-5",
                 "--noise-multiplier", "0.001", "--accountant", "clt", "--json"]) == 0

    def refuse(name):
        raise AssertionError(f"{name} is not JSON")

    out = json.loads(capsys.readouterr().out, parse_constant=refuse)
    assert out["clt"]["epsilon"] is None and out["clt"]["non_finite"]["epsilon"] == "inf"


def test_coarse_pld_grid_is_refused_not_printed_as_a_certified_bound(capsys):
    assert main(["epsilon", "--sample-rate", "0.01", "--steps", "1000", "--delta", "1e-5",
                 "--noise-multiplier", "1", "--accountant", "pld", "--pld-discretization", "100"]) == 2
    _one_error_line(capsys, "--pld-discretization must be in (0, 0.01]")


def test_listing_into_a_closed_pipe_is_quiet(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "dpnotes", "run", "labeldp", "--list", "--results",
                             str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    proc.stdout.close()  # the reader is gone before anything is written (`| head` that exited)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) == 141 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_listing_gdp_runs_needs_no_dataset(tmp_path):
    code = ("import socket, sys\n"
            "def refuse(*a, **k):\n    raise AssertionError('network')\n"
            "socket.create_connection = refuse\nsocket.socket.connect = refuse\n"
            "from dpnotes.cli import main\n"
            f"sys.exit(main(['run', 'gdp', '--list', '--results', {str(tmp_path / 'store')!r}]))")
    env = {k: v for k, v in os.environ.items() if k != "DPNOTES_DATA_MIRROR"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**env, "PYTHONPATH": str(REPO), "DPNOTES_CACHE": str(tmp_path / "empty-cache")})
    assert out.returncode == 0, out.stderr
    assert "table4.private" in out.stdout
