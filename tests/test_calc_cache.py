"""The scoreboard's memo of pure values (dpnotes.calc_cache): computed once per code version and
inputs, stale or corrupt files never trusted, and nothing outside a scope cached."""

import hashlib
import pickle

import pytest

from dpnotes import cache_keys, calc_cache


class Compute:
    """Counts its calls; returns a new mutable value each time."""

    def __init__(self):
        self.calls = 0

    def __call__(self):
        self.calls += 1
        return {"value": [self.calls, 0.5]}


@pytest.fixture
def files():
    return calc_cache.directory()


def _path(files):
    return files / f"{cache_keys.code_version()}.pickle"


def test_outside_a_scope_every_call_computes():
    compute = Compute()
    calc_cache.cached("k", (1,), compute)
    calc_cache.cached("k", (1,), compute)
    assert compute.calls == 2


def test_a_later_scope_reads_the_value_from_disk(files):
    compute = Compute()
    with calc_cache.scope():
        first = calc_cache.cached("k", (1, "a"), compute)
    assert _path(files).is_file()
    with calc_cache.scope():
        assert calc_cache.cached("k", (1, "a"), compute) == first
    assert compute.calls == 1


def test_inputs_are_keyed_by_type_and_a_hit_is_a_fresh_copy(files):
    compute = Compute()
    with calc_cache.scope():
        for inputs in ((1,), (1.0,), (True,), [1], {"a": 1}):
            calc_cache.cached("k", inputs, compute)
        assert compute.calls == 5
        hit = calc_cache.cached("k", (1,), compute)
        hit["value"].append("mutated")
        assert calc_cache.cached("k", (1,), compute) == {"value": [1, 0.5]}
        assert compute.calls == 5


def test_inputs_without_a_canonical_form_are_computed_every_call():
    compute = Compute()
    with calc_cache.scope():
        calc_cache.cached("k", (object(),), compute)
        calc_cache.cached("k", (object(),), compute)
    assert compute.calls == 2


def test_another_code_version_misses(files, monkeypatch):
    compute = Compute()
    with calc_cache.scope():
        calc_cache.cached("k", (1,), compute)
    monkeypatch.setattr(cache_keys, "code_version", lambda: "0" * 64)
    with calc_cache.scope():
        calc_cache.cached("k", (1,), compute)
    assert compute.calls == 2


def _rewrite(path, payload: bytes, digest: str | None = None):
    digest = digest or hashlib.sha256(payload).hexdigest()
    path.write_bytes(calc_cache.HEADER + digest.encode() + b"\n" + payload)


@pytest.mark.parametrize("damage", ["flip", "truncate", "header", "foreign code", "forbidden global", "not bytes"])
def test_a_corrupt_file_is_refused_with_one_line_and_recomputed(files, capsys, damage):
    compute = Compute()
    with calc_cache.scope():
        calc_cache.cached("k", (1,), compute)
    path = _path(files)
    blob = path.read_bytes()
    if damage == "flip":
        path.write_bytes(blob[:-5] + bytes([blob[-5] ^ 1]) + blob[-4:])
    elif damage == "truncate":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "header":
        path.write_bytes(b"something else\n" + blob.partition(b"\n")[2])
    elif damage == "foreign code":
        _rewrite(path, pickle.dumps({"code": "0" * 64, "entries": {}}))
    elif damage == "forbidden global":  # a payload that would call a function when unpickled
        _rewrite(path, b"cos\nsystem\n(S'echo unpickled'\ntR.")
    else:
        _rewrite(path, pickle.dumps({"code": cache_keys.code_version(), "entries": {"k": 1}}))
    capsys.readouterr()
    with calc_cache.scope():
        assert calc_cache.cached("k", (1,), compute) == {"value": [2, 0.5]}
    err = capsys.readouterr()
    assert compute.calls == 2 and "unpickled" not in err.out
    lines = err.err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "recomputing" in lines[0]
    with calc_cache.scope():  # rewritten: the next scope hits
        calc_cache.cached("k", (1,), compute)
    assert compute.calls == 2


def test_a_resolved_spec_from_disk_equals_the_computed_one(monkeypatch):
    from dpnotes import experiments

    module = experiments.module("sadpsgd")
    configs = module.configs("quick")[:3]
    with calc_cache.scope():
        computed = [experiments.spec._stored(c, module) for c in configs]
    monkeypatch.setattr(experiments.spec, "_resolve", lambda *a: pytest.fail("resolved again"))
    with calc_cache.scope():
        stored = [experiments.spec._stored(c, module) for c in configs]
    assert stored == computed and [s.id for s in stored] == [s.id for s in computed]
    assert [s.to_dict() for s in stored] == [s.to_dict() for s in computed]
    assert [experiments.spec.RunSpec.from_dict(s.to_dict()).id for s in stored] == [s.id for s in computed]
