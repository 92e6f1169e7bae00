"""One run at a time per run id: an exclusive ``fcntl`` lock on ``<checkpoints>/<run_id>.lock``.

A run holds its lock from before it reads its checkpoint until its record is stored (local
executor) or returned (a Ray task), so a second process asked for the same run, in the same
store, stops at once with :class:`RunLocked` before it trains, writes or closes anything of
the first one's (its checkpoint, its live segment). The kernel drops the lock when its process
dies, so a killed run never leaves a stale lock; the lock file is removed when the run ends.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class RunLocked(RuntimeError):
    """Another process is running the same run into the same store."""


@contextmanager
def run_lock(checkpoints: Path, run_id: str, what: str = "") -> Iterator[Path]:
    """Hold the lock of ``run_id`` in the folder ``checkpoints`` (created if missing) for the
    ``with`` block; :class:`RunLocked` at once if another process holds it."""
    checkpoints = Path(checkpoints)
    try:
        checkpoints.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot create the checkpoint folder {checkpoints} ({exc.strerror})") from exc
    path = checkpoints / f"{run_id}.lock"
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunLocked(f"run {run_id}{f' ({what})' if what else ''} is already running in another "
                            f"process (it holds {path}); wait for it, or run other configs "
                            "(--only, --seeds)") from None
        except BaseException:
            os.close(fd)
            raise
        try:  # the file we locked must still be the one at `path` (its last holder unlinks it)
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who holds it, for a person looking
        yield path
    finally:
        path.unlink(missing_ok=True)
        os.close(fd)
