"""The results store: one JSON run record per run, stored under its run spec's id.

A record holds the fully resolved run spec (:mod:`dpnotes.spec`), the per-epoch metrics, the
final metrics, the privacy block (the ledger of every release and the eps each accountant
prices from it) and the provenance (one segment per resumed part of the run:
:mod:`dpnotes.provenance`). Records are written atomically (temporary file, fsync, rename),
never overwrite a stored one, and are checked on the way in: the id must be the spec's, and
the ledger must reprice to the stored eps. eps = inf is stored as ``Infinity`` and NaN is
refused (:mod:`dpnotes.jsonio`).

Layout: ``<root>/<paper>/<profile>/<run_id>.json``.  The root is, in order, the
``root`` argument, ``$DPNOTES_RESULTS``, or ``./results``.  Paper- and quick-profile
records are committed to the repository; smoke records are not.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Iterator

from dpnotes import jsonio, validate
from dpnotes.atomic import atomic_write
from dpnotes.spec import RunSpec

PROFILES = ("smoke", "quick", "paper")
RECORD_FIELDS = ("id", "spec", "epochs", "final", "privacy", "provenance")
REPRICE_RTOL = 1e-9


def default_root() -> Path:
    return Path(os.environ.get("DPNOTES_RESULTS", "results"))


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`dpnotes.atomic.atomic_write`)."""
    with atomic_write(Path(path)) as out:
        out.write(text.encode("utf-8"))


def reprice(record: dict) -> dict:
    """The record's ledger priced again by the accountants it reports, at its delta."""
    from dpnotes.accounting.registry import price
    from dpnotes.ledger import Ledger

    privacy = record["privacy"]
    names = list(privacy.get("epsilon", {}))
    if not names:
        return {}
    return price(Ledger.from_json(privacy["ledger"]), privacy["delta"], names)


def check_epsilon(record: dict) -> None:
    """``ValueError`` unless every stored eps equals the one its ledger prices to (1e-9 rel)."""
    if "ledger" not in record["privacy"]:
        raise ValueError(f"record {record['id']} has no privacy ledger")
    for name, fresh in reprice(record).items():
        stored = record["privacy"]["epsilon"][name]["epsilon"]
        same = stored == fresh["epsilon"] or (math.isfinite(stored) and math.isclose(
            stored, fresh["epsilon"], rel_tol=REPRICE_RTOL, abs_tol=0.0))
        if not same:
            raise ValueError(f"record {record['id']}: stored eps {stored!r} under {name!r} does not "
                             f"equal {fresh['epsilon']!r}, what its ledger prices to")


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
        path = self.path(spec)
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def put(self, record: dict) -> Path:
        """Store a new record; refuses an incomplete one, a wrong id, a ledger that does not
        reprice to the stored eps, and a record already stored under that id."""
        missing = [f for f in RECORD_FIELDS if f not in record]
        if missing:
            raise ValueError(f"run record is missing fields {missing}")
        spec = RunSpec.from_dict(record["spec"])
        if record["id"] != spec.id:
            raise ValueError(f"run record id {record['id']} does not match its spec ({spec.id})")
        check_epsilon(record)
        path = self.path(spec)
        if path.exists():
            raise FileExistsError(f"{path} is already stored; records are never overwritten")
        atomic_write_text(path, jsonio.dumps(record, indent=1, sort_keys=True) + "\n")
        return path

    def records(self, paper: str | None = None, profile: str | None = None) -> Iterator[dict]:
        """Every record under the root, optionally of one paper and/or profile."""
        pattern = f"{paper or '*'}/{profile or '*'}/*.json"
        for path in sorted(self.root.glob(pattern)):
            yield json.loads(path.read_text(encoding="utf-8"))
