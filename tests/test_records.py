"""Every committed run record: a resolved spec under its id, sealed (its .sha256 beside it
matches: `dpnotes results seal` seals a record that passes every other check), a ledger that
reprices to the stored eps (afresh, not from the reprice cache), and provenance per segment; no
paper-profile record comes from a dirty tree."""

import json
from pathlib import Path

import pytest

from dpnotes.results import RECORD_FIELDS, check_epsilon, seal_path, seal_text
from dpnotes.spec import RunSpec

RESULTS = Path(__file__).resolve().parents[1] / "results"
RECORDS = sorted(p for p in RESULTS.glob("*/*/*.json"))


def test_there_are_committed_records():
    assert len(RECORDS) >= 40


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_committed_record(path):
    record = json.loads(path.read_text())
    assert set(RECORD_FIELDS) <= set(record)
    spec = RunSpec.from_dict(record["spec"])
    assert record["id"] == spec.id == path.stem
    assert (path.parent.parent.name, path.parent.name) == (spec.paper, spec.profile)
    assert seal_path(path).is_file(), f"{path.name} is not sealed: run `dpnotes results seal`"
    assert seal_path(path).read_text() == seal_text(path, path.read_bytes()), f"{path.name} differs from its seal"
    check_epsilon(record)  # the ledger reprices to every stored eps (1e-9 relative), uncached
    segments = record["provenance"]["segments"]
    assert segments and all(s["commit"] for s in segments)
    assert record["provenance"]["dirty"] == any(s["dirty"] for s in segments)
    if spec.profile == "paper":
        assert not record["provenance"]["dirty"], "paper-profile records come from clean trees only"
