"""A content-addressed cache of re-priced ledgers, so that verifying records on read is fast
(:mod:`dpnotes.record_checks`).

Repricing a record's ledger under PRV takes seconds to a minute; the whole committed store
takes minutes. The cache maps the sha256 of (the accounting source, the ledger's canonical
JSON, delta, the accountant names) to the eps each accountant gave, one small JSON file per
entry. The accounting source is the content of every file of :mod:`dpnotes.accounting` and
:mod:`dpnotes.ledger` plus the versions of the libraries they call, so a change to any of
them re-prices everything once (a stale entry can never vouch for an eps the current code
would not give).

The cache lives outside the results store (whoever can write a store must not be able to
vouch for its eps): ``$DPNOTES_REPRICE_CACHE``, else ``$XDG_CACHE_HOME/dpnotes/reprice``,
else ``~/.cache/dpnotes/reprice``. An unwritable cache directory only costs time (the
process keeps its entries in memory).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

from dpnotes import jsonio

_MEMORY: dict[str, dict] = {}


def directory() -> Path:
    """Where the cache's entries are kept (see the module docstring)."""
    if os.environ.get("DPNOTES_REPRICE_CACHE"):
        return Path(os.environ["DPNOTES_REPRICE_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpnotes" / "reprice"


@lru_cache(maxsize=1)
def accounting_fingerprint() -> str:
    """sha256 of the accounting and ledger sources and the versions of the libraries they use."""
    from importlib.metadata import PackageNotFoundError, version

    package = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for folder in ("accounting", "ledger"):
        for path in sorted((package / folder).glob("*.py")):
            h.update(f"{folder}/{path.name}\0".encode() + path.read_bytes() + b"\0")
    for name in ("numpy", "scipy", "dp-accounting", "prv-accountant"):
        try:
            h.update(f"{name}=={version(name)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{name} absent\0".encode())
    return h.hexdigest()


def key(ledger_json, delta: float, names: list[str]) -> str:
    """The cache key of pricing ``ledger_json`` at ``delta`` under ``names``."""
    canonical = json.dumps([accounting_fingerprint(), ledger_json, delta, sorted(names)],
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _read(path: Path) -> dict | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent or half-written by a killed process: price again
    return entry if isinstance(entry, dict) else None


def _write(path: Path, entry: dict) -> None:
    from dpnotes.atomic import atomic_write

    try:
        with atomic_write(path) as out:
            out.write(jsonio.dumps(entry, sort_keys=True).encode())
    except (OSError, ValueError):
        pass  # a read-only cache only costs time (ValueError: an eps jsonio will not write)


def price(ledger_json, delta: float, names: list[str], *, cache: bool = True) -> dict[str, dict]:
    """``{name: {"epsilon": eps}}`` of the ledger (its JSON form) at ``delta`` under each
    accountant in ``names``; from the cache when ``cache`` and an entry exists, else priced
    now (and stored in the cache)."""
    k = key(ledger_json, delta, names) if cache else None
    if k is not None:
        entry = _MEMORY.get(k) or _read(directory() / k[:2] / f"{k}.json")
        if entry is not None and set(entry) == set(names):
            _MEMORY[k] = entry
            return entry
    from dpnotes.accounting.registry import price as price_now  # numpy, scipy: only on a miss
    from dpnotes.ledger import Ledger

    priced = price_now(Ledger.from_json(ledger_json), delta, names)
    entry = {name: {"epsilon": values["epsilon"]} for name, values in priced.items()}
    if k is not None:
        _MEMORY[k] = entry
        _write(directory() / k[:2] / f"{k}.json", entry)
    return entry
