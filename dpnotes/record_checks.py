"""Verify run records on read: a record is used only if nothing about it was changed after it
was stored.

A record file ``<root>/<paper>/<profile>/<name>.json`` is *verified* when

1. it is a complete JSON record (a truncated or unreadable file is named, never a traceback)
   whose fields are of the types and ranges its readers need (:mod:`dpnotes.record_fields`: a
   NaN, a string or 1e308 as an accuracy, ``final: null``, ``provenance: null`` are named);
2. its ``id`` is the hash of its spec (:attr:`dpnotes.spec.RunSpec.id`): an edited spec no
   longer matches;
3. its file name is its id and its folders are its spec's paper and profile: a record copied
   over another seed's file (or into another profile) no longer matches, and no two files
   claim the same run (the id hashes the whole config, seed included);
4. its content matches its seal, ``<name>.sha256`` beside it (``sha256sum`` format, written by
   :meth:`dpnotes.results.Store.put`): an edited metric no longer matches. A record without a
   seal (written before seals existed) is used but flagged ``unsealed``;
   ``dpnotes results seal`` seals the ones that pass every other check;
5. its ledger reprices to every stored eps (:func:`check_epsilon`): an edited eps no longer
   matches. Repricing is cached by content (:mod:`dpnotes.reprice_cache`).

Anything else is *excluded*, with the reason: the scoreboard, the book and ``--json`` name it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from dpnotes import call_memo, record_fields
from dpnotes.record import Record
from dpnotes.spec import RunSpec

RECORD_FIELDS = ("id", "spec", "epochs", "final", "privacy", "provenance")
REPRICE_RTOL = 1e-9
SEAL_SUFFIX = ".sha256"


def seal_path(path: Path) -> Path:
    """The seal beside the record file ``path``: ``<name>.sha256``."""
    return Path(path).with_suffix(SEAL_SUFFIX)


def seal_text(path: Path, data: bytes) -> str:
    """The seal of a record file holding ``data``: one ``sha256sum`` line."""
    return f"{hashlib.sha256(data).hexdigest()}  {Path(path).name}\n"


def reprice(record: dict, *, cache: bool = True) -> dict:
    """The record's ledger priced again by the accountants it reports, at its delta
    (``{name: {"epsilon": ..., ...}}``), through the content cache unless ``cache`` is False."""
    from dpnotes import reprice_cache

    privacy = record["privacy"]
    names = list(privacy.get("epsilon", {}))
    if not names:
        return {}
    return reprice_cache.price(privacy["ledger"], privacy["delta"], names, cache=cache)


def check_epsilon(record: dict, *, cache: bool = False) -> None:
    """``ValueError`` unless every stored eps equals the one its ledger prices to (1e-9 rel)."""
    privacy = record.get("privacy")
    if not isinstance(privacy, dict) or "ledger" not in privacy:
        raise ValueError(f"record {record.get('id')} has no privacy ledger")
    for name, fresh in reprice(record, cache=cache).items():
        stored = privacy["epsilon"][name]["epsilon"]
        same = stored == fresh["epsilon"] or (isinstance(stored, float) and math.isfinite(stored) and math.isclose(
            stored, fresh["epsilon"], rel_tol=REPRICE_RTOL, abs_tol=0.0))
        if not same:
            raise ValueError(f"record {record.get('id')}: stored eps {stored!r} under {name!r} does not "
                             f"equal {fresh['epsilon']!r}, what its ledger prices to")


def load(path: Path) -> tuple[dict, bytes]:
    """``(record, raw bytes)`` of a record file; ``ValueError`` naming the file if it is not a
    complete JSON record (truncated, empty, not an object, fields missing)."""
    data = _read(Path(path))
    return _parse(Path(path), data), data


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ValueError(f"{path}: cannot be read ({exc.strerror or exc})") from exc


def _parse(path: Path, data: bytes) -> dict:
    try:
        record = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a complete JSON record (truncated or corrupted? {exc})") from exc
    if not isinstance(record, dict):
        raise ValueError(f"{path}: not a run record (a JSON {type(record).__name__}, not an object)")
    missing = [f for f in RECORD_FIELDS if f not in record]
    if missing:
        raise ValueError(f"{path}: not a complete run record (missing {', '.join(missing)})")
    return record


def problem(path: Path, root: Path, *, cache: bool = True) -> tuple[dict | None, str | None, bool]:
    """``(record or None, reason it must be excluded or None, sealed)`` for one record file
    under ``root`` (see the module docstring for the checks, in their order). Within a
    :func:`dpnotes.call_memo.scope` a file is verified once per content: the key is what the
    answer depends on (the bytes read, the seal read, where the file lies, ``cache``)."""
    path = Path(path)
    try:
        data = _read(path)
    except ValueError as exc:
        return None, str(exc).removeprefix(f"{path}: "), False
    seal = seal_path(path)
    try:
        seal_read = seal.read_text(encoding="utf-8") if seal.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        seal_read = exc
    where = path.relative_to(root).parts if path.is_relative_to(root) else path.parts[-3:]
    line = seal_text(path, data)  # the seal this content would have (its sha256)
    verify = lambda: _problem(path, data, line, seal_read, tuple(where[-3:]), cache)  # noqa: E731
    if not call_memo.active() or isinstance(seal_read, Exception):
        return verify()
    return call_memo.cached("record_checks.problem", (line, seal_read, tuple(where[-3:]), cache), verify)


def _problem(path: Path, data: bytes, line: str, seal_read: str | Exception | None, where: tuple[str, ...],
             cache: bool) -> tuple[dict | None, str | None, bool]:
    """:func:`problem` of the bytes ``data`` read from ``path`` (``line``: their seal), its seal
    as read (None: no seal file) and the last three parts ``where`` of its path under the root."""
    try:
        record = _parse(path, data)
    except ValueError as exc:
        return None, str(exc).removeprefix(f"{path}: "), False
    invalid = record_fields.problem(record)
    if invalid is not None:
        return None, f"a field is not valid: {invalid}", seal_read is not None
    try:
        spec = RunSpec.from_dict(record["spec"])
        spec_id = spec.id
    except (ValueError, TypeError, AttributeError) as exc:
        return record, f"its spec is not a run spec ({exc})", False
    if record["id"] != spec_id:
        return record, f"its id {record['id']} is not the hash of its spec ({spec_id}): the spec was edited", False
    expected = (spec.paper, spec.profile, f"{spec_id}.json")
    if where != expected:
        return record, (f"stored as {'/'.join(where)}, but its spec makes it {'/'.join(expected)} "
                        "(a copy or a renamed file)"), False
    seal = seal_path(path)
    sealed = seal_read is not None
    if isinstance(seal_read, Exception):
        return record, f"its seal {seal.name} cannot be read ({seal_read})", True
    if sealed and seal_read != line:
        return record, f"its content does not match its seal {seal.name}: edited after it was stored", True
    try:
        check_epsilon(record, cache=cache)
    except (ValueError, KeyError, TypeError) as exc:
        why = str(exc).removeprefix(f"record {record['id']}: ")
        return record, f"its eps does not reprice: {why}", sealed
    return record, None, sealed


@dataclass
class Scan:
    """The records under a root: ``records`` (verified, in file order), ``excluded`` (one dict
    per excluded file: path relative to the root, paper, profile, id or file stem, reason) and
    ``unsealed`` (the verified records without a seal: path, paper, profile, id, experiment, seed)."""

    records: list[dict] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)
    unsealed: list[str] = field(default_factory=list)


def scan(root: Path, paper: str | None = None, profile: str | None = None, *, cache: bool = True) -> Scan:
    """Verify every record file under ``root`` (optionally of one paper and/or profile)."""
    root = Path(root)
    out = Scan()
    pattern = f"{paper or '*'}/{profile or '*'}/*.json"
    for path in sorted(root.glob(pattern)):
        record, reason, sealed = problem(path, root, cache=cache)
        rel = path.relative_to(root).as_posix()
        if reason is None:
            out.records.append(record)
            if not sealed:
                r = Record.of(record)
                out.unsealed.append({"path": rel, "paper": r.paper, "profile": r.profile, "id": r.id,
                                     "experiment": r.experiment, "seed": r.seed})
        else:
            out.excluded.append({"path": rel, "paper": path.parent.parent.name, "profile": path.parent.name,
                                 "id": path.stem, "reason": reason})
    return out
