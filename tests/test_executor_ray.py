"""The Ray executor (dpnotes.executors.ray) on a Ray instance started here with 2 CPUs: the
records it writes equal the local executor's apart from timing and host fields, a worker
killed mid-run has its run retried from its checkpoint, a restarted sweep runs only what is
missing, and a sweep that cannot start keeps the store as it was.

Skipped without Ray, the optional extra ``dpnotes[ray]`` (``make setup`` installs it, so CI
runs these). One Ray instance serves the whole module: starting one costs seconds.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed: it is the optional extra dpnotes[ray] "
                                        "(make setup installs it)")

from dpnotes import executors, runner  # noqa: E402
from dpnotes.cli import main  # noqa: E402
from dpnotes.results import Store  # noqa: E402

pytestmark = [pytest.mark.mirror, pytest.mark.skipif(not os.environ.get("DPNOTES_DATA_MIRROR"),
                                                 reason="set DPNOTES_DATA_MIRROR to the dataset mirror")]
ONLY = "table1.row[1-4]"  # four GDP smoke-profile runs of a second or so each
TIMING = {"wall_s", "wall_time_s", "started", "finished", "phases"}  # phases: seconds per loop phase
HOST = {"device", "cpu"}  # "cpu: <processor>, <n> threads"; the CPU model


def _kill_once_after_a_checkpoint(folder: str):
    """A Ray worker set-up hook: the first checkpoint written after ``folder/armed`` appears
    kills its worker (SIGKILL, right after the save); every checkpoint load is noted in
    ``folder/resumed``. Pickled by value into the workers."""
    def setup():
        from dpnotes.train import checkpoint

        save, load = checkpoint.save, checkpoint.load

        def killing_save(path, ctx, history):
            save(path, ctx, history)
            try:
                os.rename(os.path.join(folder, "armed"), os.path.join(folder, "fired"))
            except FileNotFoundError:
                return
            os.kill(os.getpid(), signal.SIGKILL)

        def noting_load(path, ctx):
            with open(os.path.join(folder, "resumed"), "a") as out:
                out.write(f"{path}\n")
            return load(path, ctx)

        checkpoint.save, checkpoint.load = killing_save, noting_load
    return setup


@pytest.fixture(scope="module")
def hooks(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ray-hooks")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING",
             runtime_env={"worker_process_setup_hook": _kill_once_after_a_checkpoint(str(folder))})
    yield folder
    ray.shutdown()


@pytest.fixture(scope="module")
def local_records(tmp_path_factory):
    """The four runs on the local executor, torch on 1 thread as the Ray tasks will be."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        store = Store(tmp_path_factory.mktemp("local"))
        runner.run_paper("gdp", "smoke", only=ONLY, device="cpu", store=store, progress=False)
    finally:
        torch.set_num_threads(threads)
    return {r["id"]: r for r in store.records()}


def _without_timing_and_host(value):
    if isinstance(value, dict):
        return {k: _without_timing_and_host(v) for k, v in value.items() if k not in TIMING | HOST}
    if isinstance(value, list):
        return [_without_timing_and_host(v) for v in value]
    return value


def _text(record: dict) -> str:
    """The record as the store writes it, less its timing and host fields."""
    return json.dumps(_without_timing_and_host(record), indent=1, sort_keys=True, allow_nan=False)


def _ray_sweep(store: Store, **options) -> list[dict]:
    return runner.run_paper("gdp", "smoke", only=ONLY, device="cpu", store=store, progress=False,
                            executor=executors.create("ray", threads=1, **options))


def _check_equal(store: Store, local_records: dict, killed: int = 0) -> None:
    """Every stored record equals the local one, but for ``killed`` interrupted segments that
    precede the last one (a killed worker's, kept in its record's provenance)."""
    files = sorted((store.root / "gdp" / "smoke").glob("*.json"))
    assert sorted(p.stem for p in files) == sorted(local_records)
    without_segments = lambda r: _text({**r, "provenance": {k: v for k, v in r["provenance"].items()  # noqa: E731
                                                            if k != "segments"}})
    interrupted = 0
    for path in files:
        stored, local = json.loads(path.read_bytes()), local_records[path.stem]
        assert without_segments(stored) == without_segments(local)
        *earlier, segment = stored["provenance"]["segments"]
        assert all(s["interrupted"] is True for s in earlier)
        interrupted += len(earlier)
        local_segment = local["provenance"]["segments"][-1]
        assert _text(segment) == _text(local_segment)
        assert (segment["commit"], segment["dirty"]) == (local_segment["commit"], local_segment["dirty"])
    assert interrupted == killed
    assert not list((store.root / ".checkpoints").iterdir())


def test_ray_records_equal_the_local_executors(hooks, local_records, tmp_path):
    assert len(local_records) == 4
    records = _ray_sweep(Store(tmp_path))
    assert [r["id"] for r in records] == [s.id for s in runner.specs("gdp", "smoke", ONLY)]
    _check_equal(Store(tmp_path), local_records)


def test_a_killed_worker_is_retried_from_its_checkpoint(hooks, local_records, tmp_path):
    (hooks / "armed").touch()
    _ray_sweep(Store(tmp_path))
    assert (hooks / "fired").exists(), "no worker was killed"
    resumed = (hooks / "resumed").read_text().split()
    assert len(resumed) == 1 and resumed[0].startswith(str(tmp_path / ".checkpoints"))
    _check_equal(Store(tmp_path), local_records, killed=1)


class Counting:
    """An executor that notes which specs it was given."""

    def __init__(self, inner):
        self.inner, self.ran = inner, []

    def run(self, specs, **kwargs):
        specs = list(specs)
        self.ran += [s.id for s in specs]
        yield from self.inner.run(specs, **kwargs)


def test_a_restarted_sweep_runs_only_what_is_missing(hooks, local_records, tmp_path):
    store = Store(tmp_path)
    for record in list(local_records.values())[:3]:
        store.put(record)
    before = {p: p.read_bytes() for p in store.root.rglob("*.json")}
    executor = Counting(executors.create("ray", threads=1))
    records = runner.run_paper("gdp", "smoke", only=ONLY, device="cpu", store=store, progress=False,
                               executor=executor)
    assert executor.ran == [list(local_records)[3]]
    assert len(records) == 4 and all(p.read_bytes() == data for p, data in before.items())
    _check_equal(store, local_records)


@pytest.mark.parametrize("options, device, message", [
    ({"gpus_per_run": 1.0}, "cpu", "--gpus-per-run 1: no node of the Ray cluster has 1 GPUs"),
    ({"cpus_per_run": 3}, "cpu", "--cpus-per-run 3: no node of the Ray cluster has 3 CPUs"),
    ({}, "cuda", "--device cuda on Ray needs --gpus-per-run > 0"),
])
def test_a_sweep_that_cannot_start_keeps_the_store(hooks, local_records, tmp_path, options, device, message):
    store = Store(tmp_path)
    store.put(next(iter(local_records.values())))
    before = {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()}
    with pytest.raises(executors.ExecutorError, match=message):
        runner.run_paper("gdp", "smoke", only=ONLY, device=device, store=store, progress=False,
                         executor=executors.create("ray", **options))
    assert {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()} == before
    assert ray.is_initialized()  # the module's instance is used, never shut down by the executor


@pytest.mark.parametrize("address, message", [
    ("ray://127.0.0.1:1", "--address 'ray://127.0.0.1:1': cannot reach 127.0.0.1:1"),
    ("127.0.0.1:1", "cannot reach 127.0.0.1:1 .*start the cluster there with `ray start --head`"),
    ("headnode", "--address must be 'auto', 'ray://HOST:PORT' or 'HOST:PORT'; got 'headnode'"),
])
def test_an_unreachable_address_is_refused_at_once(tmp_path, capsys, address, message):
    import re

    (tmp_path / "kept.json").write_text("{}")
    code = main(["run", "gdp", "--profile", "smoke", "--only", ONLY, "--results", str(tmp_path),
                 "--executor", "ray", "--address", address])
    assert code == 2 and re.search(message, capsys.readouterr().err)
    assert [p.name for p in tmp_path.iterdir()] == ["kept.json"]
