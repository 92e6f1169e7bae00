"""The per-call memo of ``dpnotes scoreboard`` (:mod:`dpnotes.call_memo`): each record file is
verified once per content and each config resolved once within one call, and trust on read still
holds (fault injection: a record edited between two scans, or between two scoreboard calls of
one process, is excluded on the next one)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dpnotes import call_memo, record_checks, spec
from dpnotes.cli.scoreboard import render
from dpnotes.experiments import gdp
from dpnotes.results import Store

REPO = Path(__file__).resolve().parents[1]
CHEAP = "gdp/quick/10fe1cb5e1701218"  # a committed record priced by rdp, rdp-classic and clt only


@pytest.fixture
def store(tmp_path) -> Store:
    root = tmp_path / "store"
    (root / "gdp" / "quick").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(REPO / "results" / f"{CHEAP}{suffix}", root / f"{CHEAP}{suffix}")
    return Store(root)


def _edit_metric(path: Path) -> None:
    record = json.loads(path.read_text())
    record["final"]["test_acc"] = 0.10
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")


def _counting(monkeypatch, module, name) -> list:
    calls, original = [], getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_file_is_verified_once_per_content_within_a_scope(store, monkeypatch):
    calls = _counting(monkeypatch, record_checks, "_problem")
    with call_memo.scope():
        assert len(store.scan().records) == 1
        assert len(store.scan("gdp").records) == 1  # the same file: not verified again
        assert len(calls) == 1
        _edit_metric(store.root / f"{CHEAP}.json")  # edited between two scans of one call
        found = store.scan()
        assert found.records == [] and "does not match its seal" in found.excluded[0]["reason"]
        assert len(calls) == 2
    store.scan()
    store.scan()
    assert len(calls) == 4  # outside a scope: every scan verifies


def test_an_edited_seal_is_seen_within_a_scope(store):
    seal = record_checks.seal_path(store.root / f"{CHEAP}.json")
    with call_memo.scope():
        assert len(store.scan().records) == 1
        seal.write_text("0" * 64 + f"  {seal.with_suffix('.json').name}\n")
        assert "does not match its seal" in store.scan().excluded[0]["reason"]
        seal.unlink()  # no seal: used, but flagged unsealed
        found = store.scan()
        assert len(found.records) == 1 and found.unsealed[0]["id"] == CHEAP.rsplit("/", 1)[1]


def test_a_record_edited_after_a_scoreboard_call_is_excluded_by_the_next(store):
    first = json.loads(render(store, "gdp", True))
    assert first["excluded_records"] == []
    _edit_metric(store.root / f"{CHEAP}.json")
    second = json.loads(render(store, "gdp", True))  # the same process: the memo did not outlive the call
    assert [(e["path"], e["reason"].split(":")[0]) for e in second["excluded_records"]] == [
        (f"{CHEAP}.json", "its content does not match its seal 10fe1cb5e1701218.sha256")]


def test_a_config_is_resolved_once_within_a_scope_and_afresh_outside(monkeypatch):
    config = gdp.configs("smoke")[0]
    calls = _counting(monkeypatch, spec, "_resolve")
    outside = spec.resolve(config, gdp)
    with call_memo.scope():
        assert spec.resolve(config, gdp) is spec.resolve(dict(config), gdp)
        assert spec.resolve(config, gdp).id == outside.id
    assert len(calls) == 2
    monkeypatch.setattr(gdp, "DATA_VERSION", gdp.DATA_VERSION + 1)  # a changed component, outside a scope
    assert spec.resolve(config, gdp).id != outside.id


def test_the_resolve_memo_tells_apart_values_that_compare_equal():
    config = gdp.configs("smoke")[0]
    as_float = {**config, "seed": float(config["seed"])}  # == the int seed, but another spec (and id)
    with call_memo.scope():
        ids = (spec.resolve(config, gdp).id, spec.resolve(as_float, gdp).id)
    assert ids == (spec.resolve(config, gdp).id, spec.resolve(as_float, gdp).id)
    assert ids[0] != ids[1]


def test_nested_scopes_share_the_outer_memo_and_end_with_it():
    with call_memo.scope():
        assert call_memo.cached("k", 1, lambda: "a") == "a"
        with call_memo.scope():
            assert call_memo.cached("k", 1, lambda: "b") == "a"
        assert call_memo.active()
    assert not call_memo.active()
    assert call_memo.cached("k", 1, lambda: "c") == "c"
