"""The scoreboard's output cache (dpnotes.scoreboard_cache): a hit gives the stored output, any
changed input computes afresh, a corrupt entry is never trusted, and a hit imports no torch."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dpnotes import scoreboard_cache as cache

REPO = Path(__file__).resolve().parents[1]
RECORD = sorted((REPO / "results" / "sadpsgd" / "paper").glob("*.json"))[0]


class Compute:
    """A stand-in for the scoreboard: counts its calls, returns a new text each time."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return f"output {self.calls}\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    """A store with one committed record and its seal, an empty cache, a data cache of its own."""
    store = tmp_path / "store"
    (store / "sadpsgd" / "paper").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(RECORD.with_suffix(suffix), store / "sadpsgd" / "paper")
    monkeypatch.setenv("DPNOTES_SCOREBOARD_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DPNOTES_CACHE", str(tmp_path / "data"))
    monkeypatch.delenv("DPNOTES_DATA_MIRROR", raising=False)
    (tmp_path / "data" / "mnist").mkdir(parents=True)
    return store


def _entry(store: Path, options: dict) -> Path:
    return cache.directory() / f"{cache.key(store, options)}.json"


def test_a_hit_gives_the_stored_output_without_computing(env):
    compute = Compute()
    first = cache.cached(env, {"paper": None}, compute)
    assert (first, compute.calls) == ("output 1\n", 1)
    assert cache.cached(env, {"paper": None}, compute) == first
    assert compute.calls == 1


def _edit_record(store: Path, tmp_path: Path, monkeypatch) -> None:
    path = next((store / "sadpsgd" / "paper").glob("*.json"))
    path.write_bytes(path.read_bytes().replace(b'"seed"', b'"seed" ', 1))


def _add_file(store: Path, tmp_path: Path, monkeypatch) -> None:
    (store / "sadpsgd" / "paper" / "extra.json").write_text("{}")


def _remove_seal(store: Path, tmp_path: Path, monkeypatch) -> None:
    next((store / "sadpsgd" / "paper").glob("*.sha256")).unlink()


def _edit_source(store: Path, tmp_path: Path, monkeypatch) -> None:
    # the key reads the package's files by content: one byte of a claims file is enough
    package = tmp_path / "package"
    shutil.copytree(cache.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE", package)
    toml = sorted((package / "claims").glob("*.toml"))[0]
    toml.write_text(toml.read_text() + "\n")


def _add_data(store: Path, tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "data" / "mnist" / "train-labels-idx1-ubyte").write_bytes(b"labels")


def _mirror(store: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("DPNOTES_DATA_MIRROR", str(tmp_path))


@pytest.mark.parametrize("change", [_edit_record, _add_file, _remove_seal, _edit_source, _add_data, _mirror],
                         ids=lambda f: f.__name__.strip("_"))
def test_a_changed_input_is_computed_afresh(env, tmp_path, monkeypatch, change):
    compute = Compute()
    assert cache.cached(env, {"paper": None}, compute) == "output 1\n"
    change(env, tmp_path, monkeypatch)
    assert cache.cached(env, {"paper": None}, compute) == "output 2\n"
    assert compute.calls == 2


def test_a_copy_of_the_package_keys_alike(env, tmp_path, monkeypatch):
    # so that the edited copy above is computed afresh for its edit, not for where it lies
    compute = Compute()
    cache.cached(env, {"paper": None}, compute)
    shutil.copytree(cache.PACKAGE, tmp_path / "package", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "PACKAGE", tmp_path / "package")
    assert cache.cached(env, {"paper": None}, compute) == "output 1\n"


def test_the_options_are_part_of_the_key(env):
    compute = Compute()
    cache.cached(env, {"paper": None, "json": False}, compute)
    assert cache.cached(env, {"paper": None, "json": True}, compute) == "output 2\n"
    assert cache.cached(env, {"paper": "gdp", "json": False}, compute) == "output 3\n"
    assert cache.cached(env, {"paper": None, "json": False}, compute) == "output 1\n"


def _garbage(entry: dict, path: Path) -> None:
    path.write_bytes(b"\x00\xff not json")


def _truncated(entry: dict, path: Path) -> None:
    path.write_text(json.dumps(entry)[:-20])


def _tampered(entry: dict, path: Path) -> None:
    path.write_text(json.dumps({**entry, "output": "forged\n"}))


def _resealed_other_key(entry: dict, path: Path) -> None:
    path.write_text(json.dumps({**entry, "key": "0" * 64}))


def _other_format(entry: dict, path: Path) -> None:
    path.write_text(json.dumps({**entry, "format": cache.FORMAT + 1}))


def _not_an_object(entry: dict, path: Path) -> None:
    path.write_text(json.dumps([entry]))


@pytest.mark.parametrize("corrupt", [_garbage, _truncated, _tampered, _resealed_other_key, _other_format,
                                     _not_an_object], ids=lambda f: f.__name__.strip("_"))
def test_a_corrupt_entry_is_computed_afresh_and_replaced(env, corrupt):
    compute = Compute()
    cache.cached(env, {"paper": None}, compute)
    path = _entry(env, {"paper": None})
    corrupt(json.loads(path.read_text()), path)
    assert cache.cached(env, {"paper": None}, compute) == "output 2\n"
    assert cache.read(path, cache.key(env, {"paper": None})) == "output 2\n"  # rewritten intact
    assert cache.cached(env, {"paper": None}, compute) == "output 2\n" and compute.calls == 2


def test_only_the_newest_entries_are_kept_and_nothing_else_is_removed(env, monkeypatch):
    monkeypatch.setattr(cache, "KEEP", 2)
    folder = cache.directory()
    folder.mkdir(parents=True)
    (folder / "notes.json").write_text("not an entry")
    compute = Compute()
    for age, paper in enumerate(("a", "b")):  # written a minute apart (a file system's clock may be coarse)
        cache.cached(env, {"paper": paper}, compute)
        os.utime(_entry(env, {"paper": paper}), (1e9 + 60 * age, 1e9 + 60 * age))
    cache.cached(env, {"paper": "c"}, compute)  # the third: "a", the oldest, goes
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        ["notes.json", _entry(env, {"paper": "b"}).name, _entry(env, {"paper": "c"}).name])


def test_an_unwritable_cache_only_costs_time(env, tmp_path, monkeypatch):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv("DPNOTES_SCOREBOARD_CACHE", str(blocker / "cache"))
    compute = Compute()
    assert cache.cached(env, {"paper": None}, compute) == "output 1\n"
    assert cache.cached(env, {"paper": None}, compute) == "output 2\n"


_HIT = """
import contextlib, io, sys
from pathlib import Path
from dpnotes import scoreboard_cache as c
from dpnotes.cli import main
args = {args!r}
store = Path(args[args.index('--results') + 1])
k = c.key(store, {{"paper": "sadpsgd", "json": "--json" in args}})
c.write(c.directory() / (k + ".json"), k, "the cached output\\n")
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(args) == 0
print(repr(out.getvalue()), sorted(m for m in ("torch", "scipy", "dp_accounting") if m in sys.modules))
"""


def _env(tmp_path: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "DPNOTES_SCOREBOARD_CACHE": str(tmp_path / "cache"),
            "OMP_NUM_THREADS": "1"}


def _run(body: str, tmp_path: Path) -> str:
    out = subprocess.run([sys.executable, "-c", body], capture_output=True, text=True, env=_env(tmp_path),
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_a_hit_prints_the_entry_and_imports_no_torch(env, tmp_path):
    args = ["scoreboard", "--json", "--paper", "sadpsgd", "--results", str(env)]
    assert _run(_HIT.format(args=args), tmp_path) == "'the cached output\\n' []"


def test_no_cache_neither_reads_nor_writes_and_output_is_byte_identical(env, tmp_path):
    # the CLI end to end on one paper: computed (cold), then from the cache, then --no-cache
    def scoreboard(*extra):
        out = subprocess.run([sys.executable, "-m", "dpnotes", "scoreboard", "--paper", "sadpsgd", "--results",
                              str(env), *extra], capture_output=True, env=_env(tmp_path))
        assert out.returncode == 0, out.stderr
        return out.stdout

    cold = scoreboard("--json")
    assert b'"sadpsgd"' in cold
    entries = sorted((tmp_path / "cache").glob("*.json"))
    assert len(entries) == 1
    assert scoreboard("--json") == cold  # the hit
    entry = json.loads(entries[0].read_text())
    entries[0].write_text(json.dumps({**entry, "output": "forged", "sha256": cache._sha("forged")}))
    assert scoreboard("--json", "--no-cache") == cold  # not read
    assert json.loads(entries[0].read_text())["output"] == "forged"  # nor written
    assert scoreboard("--json") == b"forged"  # (the entry was read when the cache was on)
