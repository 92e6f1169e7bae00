"""The committed records' repricing, done once and committed: a fresh clone verifies by file digest.

Verifying a record on read reprices its ledger (:func:`dpnotes.record_checks.check_epsilon`);
the committed store's PRV-priced GDP records alone take over a minute, so a fresh machine (an
empty :mod:`dpnotes.reprice_cache`) paid that before its first scoreboard. The file
``<checkout>/results/REPRICED.txt`` lists, under one accounting fingerprint
(:func:`dpnotes.reprice_cache.accounting_fingerprint`: the accounting and ledger source and the
versions of the libraries they call), the sha256 of each committed record file whose ledger
repriced to every stored eps::

    # dpnotes results verify --vouch: committed records whose ledgers reprice to their stored eps
    # accounting <fingerprint>
    <sha256>  <paper>/<profile>/<run_id>.json

A record is then taken as repriced, without repricing, only when all of these hold
(:func:`vouches`): it is read from the records committed with dpnotes (the store at
:data:`COMMITTED`: the list is committed with them, and a change to either shows in ``git
diff``, as the manifests do; no other store's list is read, so whoever writes a store still
cannot vouch for its eps), the fingerprint is the current one (any change to the accounting
code or its libraries reprices everything), and the file's bytes have the listed sha256 (the eps
are in those bytes). Everything else is repriced as before. ``dpnotes results verify --vouch``
writes the list from a full verification that ignores it; ``--no-cache`` and
``tests/test_records.py`` reprice every record regardless.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

NAME = "REPRICED.txt"
COMMITTED = Path(__file__).resolve().parents[1] / "results"
HEAD = "# dpnotes results verify --vouch: committed records whose ledgers reprice to their stored eps"
_LINE = re.compile(r"([0-9a-f]{64})  ([a-z0-9_-]+/[a-z0-9_-]+/[0-9a-f]{16}\.json)")
_FINGERPRINT = re.compile(r"# accounting ([0-9a-f]{64})")


def path(root: Path) -> Path:
    return Path(root) / NAME


def committed(root: Path) -> bool:
    """Whether ``root`` is the store of the records committed with dpnotes."""
    try:
        return Path(root).resolve() == COMMITTED.resolve()
    except OSError:
        return False


def parse(text: str) -> tuple[str | None, dict[str, str]]:
    """``(fingerprint, {relative path: sha256})`` of a list's text; ``(None, {})`` for a list that is
    not one (a stray line, no or two fingerprints, e.g. a merge of lists made under two)."""
    prints = [m.group(1) for m in map(_FINGERPRINT.fullmatch, text.splitlines()) if m]
    entries, bad = {}, False
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = _LINE.fullmatch(line)
        if match is None or entries.get(match.group(2), match.group(1)) != match.group(1):
            bad = True
            break
        entries[match.group(2)] = match.group(1)
    if bad or len(set(prints)) != 1:
        return None, {}
    return prints[0], entries


@lru_cache(maxsize=4)
def _listed(file: str, stamp: tuple[int, int]) -> tuple[str | None, dict[str, str]]:
    try:
        return parse(Path(file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None, {}


def listed(root: Path) -> dict[str, str]:
    """The vouched ``{relative path: sha256}`` of ``root``: empty unless ``root`` is the committed
    store and its list was made under the current accounting fingerprint."""
    from dpnotes.reprice_cache import accounting_fingerprint

    file = path(root)
    if not committed(root) or not file.is_file():
        return {}
    st = file.stat()
    fingerprint, entries = _listed(str(file), (st.st_mtime_ns, st.st_size))
    return entries if fingerprint == accounting_fingerprint() else {}


def vouches(root: Path, relative: str, digest: str) -> bool:
    """Whether the record file ``relative`` (``<paper>/<profile>/<id>.json``) under ``root`` with
    content sha256 ``digest`` is taken as repriced (module docstring)."""
    return listed(root).get(relative) == digest


def write(root: Path, entries: dict[str, str]) -> None:
    """The list of ``entries`` (``{relative path: sha256}``) under the current fingerprint."""
    from dpnotes.atomic import atomic_write
    from dpnotes.reprice_cache import accounting_fingerprint

    text = f"{HEAD}\n# accounting {accounting_fingerprint()}\n" + "".join(
        f"{digest}  {rel}\n" for rel, digest in sorted(entries.items()))
    with atomic_write(path(root)) as out:
        out.write(text.encode("utf-8"))
