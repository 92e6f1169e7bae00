"""The manifest of a results folder: the sha256 of every record in it, committed with them.

A seal beside a record (``<run_id>.sha256``) can be deleted or rewritten along with the record.
The manifest ``<root>/<paper>/<profile>/MANIFEST.sha256sum`` lists every record of the folder,
``<sha256>  <run_id>.json`` per line (``sha256sum`` format, sorted by name: ``sha256sum -c
MANIFEST.sha256sum`` in the folder checks it), and is committed with the records, so a change
to a committed record's bytes needs a change to the manifest, which ``git diff`` shows. On read
(:mod:`dpnotes.record_checks`) a record of a folder that has a manifest is refused by name if it
is not listed, listed twice with different digests, or differs from its listed digest.

:meth:`dpnotes.results.Store.put` (every record ``dpnotes run`` writes) writes the record and
adds its line under one lock on the folder (several processes may write one folder); it creates
the manifest only in a folder without records. ``dpnotes results manifest`` writes a folder's
manifest from the records there that pass every other check (for a store without one, or the
records a merge brought in) and never changes a listed digest unless told why
(``--accept-changed REASON``): such changes, and re-runs that replace a listed record, are
appended to ``MANIFEST.log`` beside it (time, file, old and new sha256, reason).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import re
from pathlib import Path

from dpnotes.atomic import atomic_write

NAME = "MANIFEST.sha256sum"
LOG = "MANIFEST.log"
_LINE = re.compile(r"([0-9a-f]{64})  ([0-9a-f]{16}\.json)")
CONFLICT = "conflicting:"  # + the digests, comma-separated: a name listed twice with different digests


def path(folder: Path) -> Path:
    return Path(folder) / NAME


def parse(text: str, where: str = NAME) -> dict[str, str]:
    """``{file name: sha256}`` of a manifest's text; a name listed twice with different digests
    (a union merge of two edits) maps to :data:`CONFLICT` and its digests; ``ValueError`` on a
    malformed line."""
    found: dict[str, set[str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = _LINE.fullmatch(line)
        if match is None:
            raise ValueError(f"{where} line {number} is not '<sha256>  <run_id>.json': {line[:80]!r}")
        digest, name = match.groups()
        found.setdefault(name, set()).add(digest)
    return {name: d.pop() if len(d) == 1 else CONFLICT + ",".join(sorted(d)) for name, d in found.items()}


def read(folder: Path) -> dict[str, str] | None:
    """The manifest of ``folder`` (None if it has none); ``ValueError`` naming it if unreadable."""
    file = path(folder)
    if not file.is_file():
        return None
    try:
        return parse(file.read_text(encoding="utf-8"), str(file))
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{file} cannot be read ({exc})") from None


def text(entries: dict[str, str]) -> str:
    """The manifest listing ``entries`` (a conflicting one keeps each of its lines)."""
    return "".join(f"{digest}  {name}\n" for name, listed in sorted(entries.items())
                   for digest in listed.removeprefix(CONFLICT).split(","))


@contextlib.contextmanager
def locked(folder: Path):
    """Hold an exclusive lock on ``folder`` (``flock`` on the directory: no lock file is left)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def write(folder: Path, entries: dict[str, str]) -> None:
    with atomic_write(path(folder)) as out:
        out.write(text(entries).encode("utf-8"))


def log(folder: Path, name: str, old: str | None, new: str, reason: str) -> None:
    """Append one line to the folder's :data:`LOG` (a digest replaced, and why)."""
    when = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    line = "\t".join([when, name, old or "-", new, " ".join(reason.split())]) + "\n"
    with open(Path(folder) / LOG, "a", encoding="utf-8") as out:
        out.write(line)


def add(folder: Path, name: str, digest: str, *, had_records: bool) -> None:
    """List ``name`` with ``digest`` in ``folder``'s manifest, the caller holding :func:`locked`
    over the record's write too (a re-run that replaces a listed digest is logged). A folder
    without a manifest gets one only if it held no record before (``had_records`` False):
    listing one record would refuse every other."""
    entries = read(folder)
    if entries is None and had_records:
        return
    entries = entries or {}
    old = entries.get(name)
    if old not in (None, digest):
        log(folder, name, old, digest, "re-run by dpnotes run: the listed record had been moved away")
    entries[name] = digest
    write(folder, entries)
