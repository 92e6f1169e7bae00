"""What dpnotes's on-disk caches key on and where they live: the package's source and the runtime
(:func:`code_version`), the folder of the scoreboard's caches (:func:`directory`). Used by
:mod:`dpnotes.scoreboard_cache` (the output) and :mod:`dpnotes.calc_cache` (pure values).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

FORMAT = 1
PACKAGE = Path(__file__).resolve().parent


def directory() -> Path:
    """The scoreboard's caches' folder: ``$DPNOTES_SCOREBOARD_CACHE``, else
    ``$XDG_CACHE_HOME/dpnotes/scoreboard``, else ``~/.cache/dpnotes/scoreboard``."""
    if os.environ.get("DPNOTES_SCOREBOARD_CACHE"):
        return Path(os.environ["DPNOTES_SCOREBOARD_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "dpnotes" / "scoreboard"


def files(root: Path, depth: int | None = None) -> list[Path]:
    """Regular files under ``root`` (all, or exactly ``depth`` levels down), sorted; no caches."""
    if depth is not None:
        return sorted(p for p in root.glob("/".join(["*"] * depth)) if p.is_file())
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        out += [Path(folder) / n for n in names if not n.endswith(".pyc")]
    return sorted(out)


def content(h, root: Path, paths: list[Path]) -> None:
    """Each of ``paths`` (under ``root``) into the hash ``h``: its relative name and its content's sha256."""
    for path in paths:
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())


def runtime(h) -> None:
    """The interpreter and every distribution's metadata folder on ``sys.path`` (its name carries
    the version: ``numpy-2.1.3.dist-info``); reading the folders' names is much faster than
    parsing each distribution's metadata."""
    h.update(f"{sys.version}\0{sys.implementation.name}\0".encode())
    for entry in sys.path:
        h.update(f"path {entry}\0".encode())
        if entry and os.path.isdir(entry):
            metadata = sorted(n for n in os.listdir(entry) if n.endswith((".dist-info", ".egg-info")))
            h.update("\0".join(metadata).encode())


def code_version() -> str:
    """The sha256 of the package's files, the interpreter and the installed distributions: what a
    pure computation's value can depend on besides its inputs (:mod:`dpnotes.calc_cache`)."""
    h = hashlib.sha256(f"dpnotes code version {FORMAT}\0".encode())
    content(h, PACKAGE, files(PACKAGE))
    runtime(h)
    return h.hexdigest()
