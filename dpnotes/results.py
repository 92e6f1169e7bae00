"""The results store: one JSON run record per training run.

A record is content-addressed: its id is a hash of its config, so the same config
always maps to the same file and a run that already has a record is skipped.
Records are written atomically (temporary file, fsync, rename), so a run killed
midway leaves no record at all, and running it again completes it.

Layout: ``<root>/<paper>/<profile>/<run_id>.json``.  The root is, in order, the
``root`` argument, ``$DPNOTES_RESULTS``, or ``./results``.  Paper- and quick-profile
records are committed to the repository; smoke records are not.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import subprocess
from pathlib import Path
from typing import Iterator

from dpnotes import validate
from dpnotes.atomic import atomic_write

PROFILES = ("smoke", "quick", "paper")
RECORD_FIELDS = (
    "id", "config", "seed", "epochs", "final", "privacy",
    "wall_time_s", "device", "versions", "git_commit", "created",
)


def run_id(config: dict) -> str:
    """Content address of a config: 16 hex digits of the sha256 of its canonical JSON."""
    canonical = json.dumps(config, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def default_root() -> Path:
    return Path(os.environ.get("DPNOTES_RESULTS", "results"))


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`dpnotes.atomic.atomic_write`)."""
    with atomic_write(Path(path)) as out:
        out.write(text.encode("utf-8"))


def library_versions() -> dict[str, str]:
    """Versions of the libraries a record's numbers depend on."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("dpnotes", "torch", "numpy", "scipy", "opacus", "dp-accounting"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def git_commit(path: Path | None = None) -> str | None:
    """The commit of the checkout holding ``path`` (``None`` outside git), ``+dirty`` if modified."""
    cwd = Path(path or Path(__file__).parent)
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return commit + ("+dirty" if dirty else "")


class Store:
    """Run records under one root directory."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()

    def path(self, config: dict) -> Path:
        paper, profile = config["paper"], config["profile"]
        validate.choice("profile", profile, PROFILES)
        return self.root / paper / profile / f"{run_id(config)}.json"

    def has(self, config: dict) -> bool:
        return self.path(config).is_file()

    def get(self, config: dict) -> dict | None:
        path = self.path(config)
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    def put(self, record: dict) -> Path:
        missing = [f for f in RECORD_FIELDS if f not in record]
        if missing:
            raise ValueError(f"run record is missing fields {missing}")
        if record["id"] != run_id(record["config"]):
            raise ValueError("run record id does not match its config")
        path = self.path(record["config"])
        atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True, allow_nan=False) + "\n")
        return path

    def records(self, paper: str | None = None, profile: str | None = None) -> Iterator[dict]:
        """Every record under the root, optionally of one paper and/or profile."""
        pattern = f"{paper or '*'}/{profile or '*'}/*.json"
        for path in sorted(self.root.glob(pattern)):
            yield json.loads(path.read_text(encoding="utf-8"))
