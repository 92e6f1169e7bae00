"""Carry a mirror's dataset files in pieces (``dpnotes data pack`` / ``dpnotes data unpack``).

A machine that can only receive a few tens of MiB at a time (a lent GPU takes a 64 MiB
working tree per call; CIFAR-10's archive is 133 MiB) gets a dataset in pieces: ``pack``
splits each mirror file of the dataset into pieces of at most ``piece_bytes`` beside a small
``<file>.pieces.json`` (size and SHA-256 of the whole file, the pieces' names), and ``unpack``,
called once per delivery, moves the pieces that arrived into ``<mirror>/.pieces`` and joins
every file whose pieces are all there into the mirror, after checking its size and SHA-256.
The joined mirror is then an ordinary one: the loaders check each file against the registry's
checksums as usual (``dpnotes data verify --mirror DIR``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from dpnotes.data.registry import datasets
from dpnotes.data.store import _candidates, mirror_roots

MIB = 2**20
PIECE_BYTES = 60 * MIB


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(MIB), b""):
            h.update(block)
    return h.hexdigest()


def mirror_files(dataset: str, mirror=None) -> list[tuple[Path, str]]:
    """``(root, relative path)`` of each file of ``dataset`` present in the mirror(s), first
    root first; ``ValueError`` naming the dataset if it is unknown or none of its files is there."""
    known = datasets()
    if dataset not in known:
        raise ValueError(f"dataset must be one of {', '.join(known)}; got {dataset!r}")
    found: dict[str, Path] = {}
    for root in mirror_roots(mirror):
        for spec in known[dataset].files.values():
            for source in spec.sources:
                for rel in _candidates(spec, source):
                    if rel not in found and (root / rel).is_file():
                        found[rel] = root
    if not found:
        raise ValueError(f"dataset {dataset!r}: none of its files is in the mirror(s) "
                         f"{os.pathsep.join(map(str, mirror_roots(mirror))) or '(none: set DPNOTES_DATA_MIRROR)'}")
    return [(root, rel) for rel, root in found.items()]


def pack(dataset: str, into: str | os.PathLike, *, mirror=None, piece_bytes: int = PIECE_BYTES) -> list[Path]:
    """Split every mirror file of ``dataset`` into pieces of at most ``piece_bytes`` under
    ``into`` (same relative paths, ``.partNNN`` appended) with its ``.pieces.json``; the paths written."""
    if piece_bytes < 1:
        raise ValueError(f"--piece-mib must be positive; got {piece_bytes / MIB:g}")
    into = Path(into)
    written = []
    for root, rel in mirror_files(dataset, mirror):
        source = root / rel
        size = source.stat().st_size
        count = max(1, -(-size // piece_bytes))
        names = [f"{Path(rel).name}.part{i:03d}" for i in range(count)]
        target = into / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(source, "rb") as f:
            for name in names:
                (target.parent / name).write_bytes(f.read(piece_bytes))
                written.append(target.parent / name)
        meta = target.parent / f"{Path(rel).name}.pieces.json"
        meta.write_text(json.dumps({"path": rel, "size": size, "sha256": _sha256(source), "pieces": names}, indent=1))
        written.append(meta)
    return written


def unpack(src: str | os.PathLike, into: str | os.PathLike) -> list[str]:
    """Move the pieces under ``src`` into ``<into>/.pieces`` and join each file whose pieces
    are all there into ``<into>/<path>`` (size and SHA-256 checked; a mismatch is a
    ``ValueError`` naming the file, and nothing is joined). One status line per file."""
    src, into = Path(src), Path(into)
    metas = sorted(src.rglob("*.pieces.json"))
    if not metas:
        raise ValueError(f"{src}: no *.pieces.json here (made by `dpnotes data pack`)")
    lines = []
    for meta_path in metas:
        try:
            meta = json.loads(meta_path.read_text())
            rel, size, digest, names = meta["path"], int(meta["size"]), meta["sha256"], list(meta["pieces"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{meta_path}: not a pieces file ({exc})") from None
        if Path(rel).is_absolute() or ".." in Path(rel).parts or any("/" in n or n.startswith(".") for n in names):
            raise ValueError(f"{meta_path}: path {rel!r} or a piece name leaves the mirror")
        store = into / ".pieces" / rel
        store.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(meta_path, store.parent / meta_path.name)
        for name in names:
            if (meta_path.parent / name).is_file():
                shutil.move(meta_path.parent / name, store.parent / name)
        target = into / rel
        if target.is_file() and target.stat().st_size == size:
            lines.append(f"{rel}: already joined")
            continue
        missing = [n for n in names if not (store.parent / n).is_file()]
        if missing:
            lines.append(f"{rel}: {len(names) - len(missing)} of {len(names)} pieces here; "
                         f"waiting for {', '.join(missing)}")
            continue
        partial = target.with_name(target.name + ".joining")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(partial, "wb") as out:
            for name in names:
                with open(store.parent / name, "rb") as f:
                    shutil.copyfileobj(f, out)
        if partial.stat().st_size != size or _sha256(partial) != digest:
            partial.unlink()
            raise ValueError(f"{rel}: the joined pieces do not match the size and SHA-256 in {meta_path.name}")
        partial.replace(target)
        for name in names:
            (store.parent / name).unlink()
        lines.append(f"{rel}: joined ({size} bytes, SHA-256 checked)")
    return lines
