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
   ``dpnotes results seal`` seals the ones that pass every other check; and its content matches
   the sha256 its folder's committed manifest lists (:mod:`dpnotes.record_manifest`): a record
   not listed there, or edited (even with its seal deleted or rewritten), is refused by name. A
   record of a folder without a manifest is used but flagged ``unlisted``;
5. its ledger reprices to every stored eps (:func:`check_epsilon`): an edited eps no longer
   matches. Repricing is cached by content (:mod:`dpnotes.reprice_cache`), and a record committed
   with dpnotes whose sha256 the committed list of repriced records names is not repriced
   (:mod:`dpnotes.repriced`: a fresh clone verifies by file digest).

Anything else is *excluded*, with the reason: the scoreboard, the book and ``--json`` name it.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from dpnotes import call_memo, record_fields, record_manifest, repriced
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


ABSENT = "absent"  # a folder's manifest does not list the file
_UNREAD = object()


def listing(folder: Path) -> dict[str, str] | None | ValueError:
    """The manifest of ``folder`` (None: it has none; the ``ValueError`` if it cannot be read)."""
    try:
        return record_manifest.read(folder)
    except ValueError as exc:
        return exc


def problem(path: Path, root: Path, *, cache: bool = True, manifest=_UNREAD,
            digests: bool = True, vouch: bool = True) -> tuple[dict | None, str | None, bool]:
    """``(record or None, reason it must be excluded or None, sealed)`` for one record file
    under ``root`` (see the module docstring for the checks, in their order). ``manifest``: the
    folder's :func:`listing` if already read; ``digests`` False skips the seal and manifest checks
    (what else is wrong with an edited record); ``vouch`` (with ``cache``) takes a committed record
    the committed list of repriced records names as repriced (:mod:`dpnotes.repriced`). Within a
    :func:`dpnotes.call_memo.scope` a file is verified once per content: the key is what the answer
    depends on (the bytes read, the seal read, the manifest's line, where the file lies, ``cache``,
    ``digests``, whether it is vouched for)."""
    path = Path(path)
    try:
        data = _read(path)
    except ValueError as exc:
        return None, str(exc).removeprefix(f"{path}: "), False
    if manifest is _UNREAD:
        manifest = listing(path.parent)
    if isinstance(manifest, ValueError):
        return None, f"its folder's manifest cannot be used ({manifest})", False
    listed = None if manifest is None else manifest.get(path.name, ABSENT)
    seal = seal_path(path)
    try:
        seal_read = seal.read_text(encoding="utf-8") if seal.is_file() else None
    except (OSError, UnicodeDecodeError) as exc:
        seal_read = exc
    where = path.relative_to(root).parts if path.is_relative_to(root) else path.parts[-3:]
    line = seal_text(path, data)  # the seal this content would have (its sha256)
    if not digests:
        seal_read, listed = None, None
    vouched = vouch and cache and repriced.vouches(root, "/".join(where[-3:]), line.split()[0])
    verify = lambda: _problem(path, data, line, seal_read, listed, tuple(where[-3:]), cache, vouched)  # noqa: E731
    if not call_memo.active() or isinstance(seal_read, Exception):
        return verify()
    return call_memo.cached("record_checks.problem", (line, seal_read, listed, tuple(where[-3:]), cache, vouched),
                            verify)


def _problem(path: Path, data: bytes, line: str, seal_read: str | Exception | None, listed: str | None,
             where: tuple[str, ...], cache: bool, vouched: bool = False) -> tuple[dict | None, str | None, bool]:
    """:func:`problem` of the bytes ``data`` read from ``path`` (``line``: their seal), its seal
    as read (None: no seal file), what its folder's manifest lists for it (None: no manifest)
    and the last three parts ``where`` of its path under the root; ``vouched``: its repricing is
    taken from the committed list (:mod:`dpnotes.repriced`)."""
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
    manifest = record_manifest.NAME
    if listed == ABSENT:
        return record, (f"it is not listed in its folder's {manifest} (not written by `dpnotes run` into this "
                        "store; `dpnotes results manifest` lists records that pass every other check)"), sealed
    if listed is not None and listed.startswith(record_manifest.CONFLICT):
        return record, f"{manifest} lists it twice with different sha256 (a merge of two edits?)", sealed
    if listed is not None and listed != line.split()[0]:
        return record, (f"its content differs from the sha256 its folder's {manifest} lists: edited after it "
                        "was stored"), sealed
    try:
        if not vouched:
            check_epsilon(record, cache=cache)
    except (ValueError, KeyError, TypeError) as exc:
        why = str(exc).removeprefix(f"record {record['id']}: ")
        return record, f"its eps does not reprice: {why}", sealed
    return record, None, sealed


@dataclass
class Scan:
    """The records under a root: ``records`` (verified, in file order), ``excluded`` (one dict
    per excluded file: path relative to the root, paper, profile, id or file stem, reason),
    ``unsealed`` (the verified records without a seal: path, paper, profile, id, experiment, seed),
    ``unlisted`` (the same, of folders without a manifest) and ``missing`` (files a manifest lists
    that are not there)."""

    records: list[dict] = field(default_factory=list)
    excluded: list[dict] = field(default_factory=list)
    unsealed: list[dict] = field(default_factory=list)
    unlisted: list[dict] = field(default_factory=list)  # verified, in a folder without a manifest
    missing: list[dict] = field(default_factory=list)  # listed in a manifest, no file: path, paper, profile, id


def scan(root: Path, paper: str | None = None, profile: str | None = None, *, cache: bool = True,
         vouch: bool = True) -> Scan:
    """Verify every record file under ``root`` (optionally of one paper and/or profile); ``vouch``:
    as in :func:`problem`."""
    root = Path(root)
    out = Scan()
    manifests: dict[Path, object] = {}
    for path in sorted(root.glob(f"{paper or '*'}/{profile or '*'}/*.json")):
        if path.parent not in manifests:
            manifests[path.parent] = listing(path.parent)
        record, reason, sealed = problem(path, root, cache=cache, manifest=manifests[path.parent], vouch=vouch)
        rel = path.relative_to(root).as_posix()
        if reason is None:
            out.records.append(record)
            r = Record.of(record)
            entry = {"path": rel, "paper": r.paper, "profile": r.profile, "id": r.id, "experiment": r.experiment,
                     "seed": r.seed}
            if not sealed:
                out.unsealed.append(entry)
            if manifests[path.parent] is None:
                out.unlisted.append(entry)
        else:
            out.excluded.append({"path": rel, "paper": path.parent.parent.name, "profile": path.parent.name,
                                 "id": path.stem, "reason": reason})
    for folder in sorted(f for f in root.glob(f"{paper or '*'}/{profile or '*'}") if f.is_dir()):
        listed = manifests[folder] if folder in manifests else listing(folder)
        for name in sorted(listed) if isinstance(listed, dict) else ():
            if not (folder / name).is_file():
                out.missing.append({"path": (folder / name).relative_to(root).as_posix(), "paper": folder.parent.name,
                                    "profile": folder.name, "id": name.removesuffix(".json")})
    return out
