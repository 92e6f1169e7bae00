"""The committed list of repriced records (dpnotes.repriced): a committed record it names with its
sha256, under the current accounting fingerprint, is verified by file digest instead of repriced;
anything else (another store, another fingerprint, other bytes, --no-cache, --vouch) is repriced.
And the list committed with the records is current: a fresh clone's scoreboard reprices nothing."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from dpnotes import record_checks, repriced, scoreboard_cache
from dpnotes.cli import main
from dpnotes.reprice_cache import accounting_fingerprint

REPO = Path(__file__).resolve().parents[1]
FOLDER = REPO / "results" / "gdp" / "quick"


@pytest.fixture
def committed(tmp_path, monkeypatch):
    """A copy of the committed GDP quick records (manifest and seals) standing for the committed store."""
    root = tmp_path / "results"
    shutil.copytree(FOLDER, root / "gdp" / "quick")
    monkeypatch.setattr(repriced, "COMMITTED", root)
    return root


@pytest.fixture
def repricings(monkeypatch):
    """The record ids whose ledgers are repriced."""
    seen = []
    check = record_checks.check_epsilon

    def counting(record, *, cache=False):
        seen.append(record["id"])
        return check(record, cache=cache)

    monkeypatch.setattr(record_checks, "check_epsilon", counting)
    return seen


def _entries(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.glob("*/*/*.json"))}


def test_a_listed_committed_record_is_not_repriced_and_anything_else_is(committed, repricings, tmp_path):
    entries = _entries(committed)
    assert len(entries) > 2
    assert len(record_checks.scan(committed).records) == len(entries) and len(repricings) == len(entries)
    repricings.clear()
    repriced.write(committed, entries)
    assert len(record_checks.scan(committed).records) == len(entries) and repricings == []
    assert len(record_checks.scan(committed, cache=False).records) == len(entries)  # --no-cache: all repriced
    assert len(repricings) == len(entries)
    repricings.clear()
    assert len(record_checks.scan(committed, vouch=False).records) == len(entries) and len(repricings) == len(entries)
    # another store holding the same files and list: the list is not read there
    other = tmp_path / "other"
    shutil.copytree(committed, other)
    repricings.clear()
    record_checks.scan(other)
    assert len(repricings) == len(entries)


def test_a_list_of_another_fingerprint_or_other_bytes_vouches_for_nothing(committed, repricings):
    entries = _entries(committed)
    first = next(iter(entries))
    repriced.write(committed, {**entries, first: "0" * 64})  # the first file's bytes are not the listed ones
    record_checks.scan(committed)
    assert repricings == [Path(first).stem]
    text = repriced.path(committed).read_text()
    repricings.clear()
    repriced.path(committed).write_text(text.replace(accounting_fingerprint(), "f" * 64))
    record_checks.scan(committed)
    assert len(repricings) == len(entries)
    for broken in (text + f"# accounting {'e' * 64}\n", text + "not a line\n"):  # a merge of two lists; a stray line
        assert repriced.parse(broken) == (None, {})


def test_results_verify_vouch_writes_the_list_and_only_for_the_committed_store(committed, tmp_path, capsys):
    assert main(["results", "verify", "--vouch", "--results", str(committed)]) == 0
    fingerprint, listed = repriced.parse(repriced.path(committed).read_text())
    assert fingerprint == accounting_fingerprint() and listed == _entries(committed)
    other = tmp_path / "other"
    shutil.copytree(committed, other)
    assert main(["results", "verify", "--vouch", "--results", str(other)]) == 2
    assert "--vouch writes the list only for the records committed with dpnotes" in capsys.readouterr().err


def test_results_manifest_keeps_the_committed_list_current(committed, capsys):
    repriced.write(committed, {})
    assert main(["results", "manifest", "--results", str(committed)]) == 0
    assert repriced.listed(committed) == _entries(committed)


def test_the_list_is_part_of_the_scoreboards_cache_key(committed):
    before = scoreboard_cache.key(committed, {"paper": None})
    repriced.write(committed, _entries(committed))
    assert scoreboard_cache.key(committed, {"paper": None}) != before


def test_the_committed_list_names_every_committed_record_under_the_current_fingerprint():
    """Else a fresh clone reprices the records left out (minutes for PRV-priced ones): run
    `dpnotes results manifest` (or `dpnotes results verify --vouch`) and commit results/REPRICED.txt."""
    root = REPO / "results"
    fingerprint, listed = repriced.parse(repriced.path(root).read_text(encoding="utf-8"))
    assert fingerprint == accounting_fingerprint(), "results/REPRICED.txt was made under other accounting code"
    assert listed == _entries(root), "results/REPRICED.txt does not list exactly the committed records"
