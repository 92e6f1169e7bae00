"""Fault injection (issue 53): nothing unverified is read.

A record's every field a reader uses is validated on read (:mod:`dpnotes.record_fields`), and a
bad record is excluded by name, never a crash.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dpnotes.cli import main
from dpnotes.record_checks import seal_path

REPO = Path(__file__).resolve().parents[1]
CHEAP = "gdp/quick/10fe1cb5e1701218"  # a committed record priced by rdp, rdp-classic and clt only


def _store_with_cheap(tmp_path) -> tuple[Path, Path]:
    root = tmp_path / "store"
    (root / "gdp" / "quick").mkdir(parents=True)
    for suffix in (".json", ".sha256"):
        shutil.copy(REPO / "results" / f"{CHEAP}{suffix}", root / f"{CHEAP}{suffix}")
    return root, root / f"{CHEAP}.json"


def _set(record: dict, path: str, value) -> None:
    *parents, last = path.split(".")
    for key in parents:
        record = record[int(key)] if isinstance(record, list) else record[key]
    record[int(last) if isinstance(record, list) else last] = value


# ---------------------------------------------------------------- every field a reader uses, validated

BAD_FIELDS = [("final.test_acc", float("nan"), "final.test_acc is NaN"),
              ("final.test_acc", 1e308, "final.test_acc is 1e+308, not a fraction in [0, 1]"),
              ("final.test_acc", "high", "final.test_acc is 'high', not a finite number"),
              ("final.steps", -3, "final.steps is -3, not an integer >= 0"),
              ("final.train_loss", float("inf"), "final.train_loss is inf, not a finite number"),
              ("epochs.0.test_acc", float("nan"), "epochs[0].test_acc is NaN"),
              ("epochs.0.epsilon.rdp.epsilon", "x", "epochs[0].epsilon.rdp.epsilon is 'x'"),
              ("final", None, "final is None, not an object"),
              ("epochs", None, "epochs is None, not a list"),
              ("privacy.delta", 2.0, "privacy.delta is 2.0"),
              ("provenance", None, "provenance is None, not an object"),
              ("provenance.wall_time_s", "1h", "provenance.wall_time_s is '1h'"),
              ("provenance.segments", [], "provenance.segments is not a non-empty list")]


@pytest.mark.parametrize("field, value, reason", BAD_FIELDS, ids=[f"{f}={v!r}" for f, v, _ in BAD_FIELDS])
def test_unsealed_record_with_a_bad_field_is_excluded_by_name(tmp_path, capsys, field, value, reason):
    root, path = _store_with_cheap(tmp_path)
    record = json.loads(path.read_text())
    _set(record, field, value)
    path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")  # NaN and Infinity as Python writes them
    seal_path(path).unlink()  # unsealed: written before seals, or its seal deleted
    capsys.readouterr()
    assert main(["results", "verify", "--results", str(root)]) == 2
    out = capsys.readouterr().out
    assert f"EXCLUDED {CHEAP}.json: a field is not valid: {reason}" in out, out
    assert main(["scoreboard", "--paper", "gdp", "--results", str(root), "--json", "--no-cache"]) == 0
    excluded = json.loads(capsys.readouterr().out)["excluded_records"]
    assert [e["path"] for e in excluded] == [f"{CHEAP}.json"] and reason in excluded[0]["reason"]
    assert main(["cost", "--results", str(root), "--no-claims", "--json"]) == 0
    assert main(["run", "gdp", "--profile", "quick", "--dry-run", "--results", str(root)]) == 0
    assert f"{CHEAP.rsplit('/', 1)[1]}  BAD" in capsys.readouterr().out


def test_every_committed_record_has_valid_fields():
    from dpnotes.record_fields import problem

    bad = {p.relative_to(REPO).as_posix(): problem(json.loads(p.read_text()))
           for p in sorted((REPO / "results").glob("*/*/*.json"))}
    assert len(bad) > 100 and not {k: v for k, v in bad.items() if v}


def test_a_record_with_a_bad_field_is_not_stored(tmp_path):
    from dpnotes.results import Store

    record = json.loads((REPO / "results" / f"{CHEAP}.json").read_text())
    record["final"]["test_acc"] = 68.2  # a percentage where a fraction belongs
    with pytest.raises(ValueError, match="a field is not valid: final.test_acc is 68.2, not a fraction in"):
        Store(tmp_path).put(record)
    assert not any(tmp_path.iterdir())
