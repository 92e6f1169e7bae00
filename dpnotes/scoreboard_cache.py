"""An on-disk cache of ``dpnotes scoreboard``'s output, keyed by everything the output depends on.

Computing the scoreboard re-verifies every record, re-prices ledgers, calibrates noise for the
configs the experiments modules ask for and counts data set labels: seconds, every call. The
output is a pure function of

* the source of the :mod:`dpnotes` package: every file under it (``.py``, the claims ``.toml``,
  anything else), by content;
* the record stores read: the one given and the records committed with dpnotes
  (:data:`dpnotes.experiments.run_cost.COMMITTED`, read for the not-run cost estimates): every
  file at ``<paper>/<profile>/<file>`` (records and their seals) and the committed list of repriced
  records (:mod:`dpnotes.repriced`), by content, and where each is;
* the data sets the claims count on (DPlis's Table 4 counts the MNIST and CIFAR-10 labels): the
  ``$DPNOTES_CACHE`` and ``$DPNOTES_DATA_MIRROR`` settings and, for every registered data set, the
  name, size and modification time of each file in its folder of the data cache and of each
  mirror (the loaders verify the content against the registry's checksums on every load, so a
  file the key sees unchanged can only give the answer it gave);
* the interpreter, ``sys.path`` and the distributions installed there (name and version of each);
* the command's options (``--paper``, ``--json``).

The key is the sha256 of all of them (:func:`key`); an entry is ``<key>.json`` holding the key,
the output and the output's sha256, and is used only if all three agree (:func:`read`): a stale
entry is never found (another key), a corrupt or foreign one is recomputed and rewritten. The
cache lives outside the results store and the repository: ``$DPNOTES_SCOREBOARD_CACHE``, else
``$XDG_CACHE_HOME/dpnotes/scoreboard``, else ``~/.cache/dpnotes/scoreboard``, at most
:data:`KEEP` entries. An unwritable cache only costs time. ``dpnotes scoreboard --no-cache``
neither reads nor writes it.

What the key cannot see: the re-pricing cache that record verification trusts
(:mod:`dpnotes.reprice_cache`, itself keyed by the accounting source) and a data file edited in
place with its size and modification time kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from dpnotes.cache_keys import PACKAGE, directory
from dpnotes.cache_keys import content as _content
from dpnotes.cache_keys import files as _files
from dpnotes.cache_keys import runtime as _runtime

FORMAT = 1
KEEP = 64  # entries kept; writing one more removes the least recently written beyond these
_DATA_ENV = ("DPNOTES_CACHE", "DPNOTES_DATA_MIRROR")


def _data(h) -> None:
    from dpnotes.data.registry import REGISTRY
    from dpnotes.data.store import cache_root, mirror_roots

    for name in _DATA_ENV:
        h.update(f"{name}={os.environ.get(name)!r}\0".encode())
    for root in [cache_root(), *mirror_roots()]:
        h.update(f"root {root.resolve()}\0".encode())
        for dataset in sorted(REGISTRY):
            folder = root / dataset
            if folder.is_dir():
                for path in _files(folder):
                    st = path.stat()
                    h.update(f"{path.relative_to(root).as_posix()} {st.st_size} {st.st_mtime_ns}\0".encode())


def key(store_root: Path, options: dict) -> str:
    """The sha256 of everything the scoreboard's output for ``store_root`` and ``options``
    depends on (module docstring)."""
    from dpnotes import repriced
    from dpnotes.experiments.run_cost import COMMITTED

    h = hashlib.sha256(f"dpnotes scoreboard cache {FORMAT}\0".encode())
    h.update(json.dumps(options, sort_keys=True).encode() + b"\0")
    _content(h, PACKAGE, _files(PACKAGE))
    for root in dict.fromkeys(Path(r).resolve() for r in (store_root, COMMITTED)):
        h.update(f"\0store {root} {root.is_dir()}\0".encode())
        if root.is_dir():
            _content(h, root, _files(root, depth=3) + [f for f in [repriced.path(root)] if f.is_file()])
    _data(h)
    _runtime(h)
    return h.hexdigest()


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read(path: Path, want: str) -> str | None:
    """The output stored in the entry ``path`` if it is intact and made under key ``want``, else None."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # absent, unreadable, truncated
    if not (isinstance(entry, dict) and entry.get("format") == FORMAT and entry.get("key") == want
            and isinstance(entry.get("output"), str) and entry.get("sha256") == _sha(entry["output"])):
        return None
    return entry["output"]


def write(path: Path, want: str, output: str) -> None:
    """Store ``output`` under key ``want`` (atomically; an unwritable cache is ignored)."""
    from dpnotes.atomic import atomic_write

    entry = {"format": FORMAT, "key": want, "sha256": _sha(output), "output": output}
    try:
        with atomic_write(path) as out:
            out.write(json.dumps(entry).encode("utf-8"))
        _prune(path.parent)
    except OSError:
        pass


def _prune(folder: Path) -> None:
    """Remove the entries (``<64 hex digits>.json``, nothing else) beyond the :data:`KEEP` newest."""
    entries = [p for p in folder.glob("*.json") if len(p.stem) == 64 and all(c in "0123456789abcdef" for c in p.stem)]
    for old in sorted(entries, key=lambda p: p.stat().st_mtime_ns, reverse=True)[KEEP:]:
        old.unlink(missing_ok=True)


def cached(store_root: Path, options: dict, compute: Callable[[], str]) -> str:
    """``compute()``'s output, from the cache when an intact entry for the current key exists;
    else computed, and stored if the key is still the same afterwards (nothing it reads changed
    while it ran, e.g. a record written by a run finishing meanwhile)."""
    want = key(store_root, options)
    path = directory() / f"{want}.json"
    output = read(path, want)
    if output is None:
        output = compute()
        if key(store_root, options) == want:
            write(path, want, output)
    return output
