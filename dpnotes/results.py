"""The results store: one JSON run record per run, stored under its run spec's id.

A record holds the fully resolved run spec (:mod:`dpnotes.spec`), the per-epoch metrics, the
final metrics, the privacy block (the ledger of every release and the eps each accountant
prices from it) and the provenance (one segment per resumed part of the run:
:mod:`dpnotes.provenance`). Records are written atomically (temporary file, fsync, rename),
never overwrite a stored one, and are checked on the way in: the id must be the spec's, and
the ledger must reprice to the stored eps. Each is sealed by a ``<run_id>.sha256`` beside it
(``sha256sum -c`` reads it) and listed in its folder's committed manifest
(:mod:`dpnotes.record_manifest`). eps = inf is stored as ``Infinity`` and NaN is refused
(:mod:`dpnotes.jsonio`).

Records are verified on the way out too (:mod:`dpnotes.record_checks`): :meth:`Store.records`
yields only those that pass, :meth:`Store.scan` also names the excluded ones and why, and
:meth:`Store.get` refuses a bad one with a one-line error naming its file.

Layout: ``<root>/<paper>/<profile>/<run_id>.json``.  The root is, in order, the
``root`` argument, ``$DPNOTES_RESULTS``, or ``./results``.  Paper- and quick-profile
records are committed to the repository; smoke records are not.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Iterator

from dpnotes import jsonio, record_fields, record_manifest, validate
from dpnotes.atomic import atomic_write
from dpnotes.record_checks import (  # noqa: F401  (API)
    RECORD_FIELDS,
    REPRICE_RTOL,
    Scan,
    check_epsilon,
    problem,
    reprice,
    scan,
    seal_path,
    seal_text,
)
from dpnotes.spec import RunSpec

PROFILES = ("smoke", "quick", "paper")


def default_root() -> Path:
    """``$DPNOTES_RESULTS``, else ``./results``; ``ValueError`` if the variable is set but empty
    (``Path("")`` would make the current directory the store, silently)."""
    value = os.environ.get("DPNOTES_RESULTS")
    if value is not None and not value.strip():
        raise ValueError("DPNOTES_RESULTS is set but empty: unset it (the store is then ./results) or name a folder")
    return Path(value or "results")


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`dpnotes.atomic.atomic_write`)."""
    with atomic_write(Path(path)) as out:
        out.write(text.encode("utf-8"))


class Store:
    """Run records under one root directory."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()

    def path(self, spec: RunSpec) -> Path:
        validate.choice("profile", spec.profile, PROFILES)
        return self.root / spec.paper / spec.profile / f"{spec.id}.json"

    def has(self, spec: RunSpec) -> bool:
        return self.path(spec).is_file()

    def get(self, spec: RunSpec) -> dict | None:
        """The stored record of ``spec`` (None if there is none); ``ValueError`` naming the file
        and the reason if the file there fails verification (:mod:`dpnotes.record_checks`)."""
        path = self.path(spec)
        if not path.is_file():
            return None
        record, reason, _ = problem(path, self.root)
        if reason is not None:
            raise ValueError(f"{path}: {reason}; move it away (and its .sha256) to run {spec.id} again")
        return record

    def put(self, record: dict) -> Path:
        """Store a new record and its seal; refuses an incomplete one, a wrong id, a ledger that
        does not reprice to the stored eps, and a record already stored under that id."""
        missing = [f for f in RECORD_FIELDS if f not in record]
        if missing:
            raise ValueError(f"run record is missing fields {missing}")
        invalid = record_fields.problem(record)
        if invalid is not None:
            raise ValueError(f"run record {record.get('id')}: a field is not valid: {invalid}")
        spec = RunSpec.from_dict(record["spec"])
        if record["id"] != spec.id:
            raise ValueError(f"run record id {record['id']} does not match its spec ({spec.id})")
        check_epsilon(record, cache=True)
        path = self.path(spec)
        data = (jsonio.dumps(record, indent=1, sort_keys=True) + "\n").encode("utf-8")
        path.parent.mkdir(parents=True, exist_ok=True)
        with record_manifest.locked(path.parent):  # the record, its seal and its manifest line at once
            if path.exists():
                raise FileExistsError(f"{path} is already stored; records are never overwritten")
            had_records = any(path.parent.glob("*.json"))
            with atomic_write(path) as out:
                out.write(data)
            atomic_write_text(seal_path(path), seal_text(path, data))
            record_manifest.add(path.parent, path.name, hashlib.sha256(data).hexdigest(), had_records=had_records)
        return path

    def scan(self, paper: str | None = None, profile: str | None = None) -> Scan:
        """Every record file under the root (optionally of one paper and/or profile), verified:
        the records that pass, the files excluded and why, the records without a seal."""
        return scan(self.root, paper, profile)

    def records(self, paper: str | None = None, profile: str | None = None) -> Iterator[dict]:
        """Every verified record under the root, optionally of one paper and/or profile (the
        others are left out: :meth:`scan` names them)."""
        yield from self.scan(paper, profile).records

    def excluded(self, paper: str | None = None, profile: str | None = None) -> list[dict]:
        """The record files that fail verification, each ``{"path", "paper", "profile", "id",
        "reason"}`` (for the scoreboard and the book)."""
        return self.scan(paper, profile).excluded
