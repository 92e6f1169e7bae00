"""Verify every dataset file present in the mirror(s) against the registry's checksums."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from dpnotes.data.registry import Dataset, datasets
from dpnotes.data.store import ChecksumError, _candidates, _same_container, _take, mirror_roots


@dataclass(frozen=True)
class VerifyResult:
    """One file found in a mirror: ``ok`` with a ``detail`` saying what was checked or what failed."""

    dataset: str
    files: tuple[str, ...]
    path: Path
    ok: bool
    detail: str


def verify(mirror=None, *, registry: Mapping[str, Dataset] | None = None) -> list[VerifyResult]:
    """Check the content checksum of every registered file found in the mirror(s).

    ``mirror`` as in :func:`dpnotes.data.store.mirror_roots` (default ``$DPNOTES_DATA_MIRROR``).
    Nothing is written.  An archive is read once for all its members.
    """
    roots = mirror_roots(mirror)
    if not roots:
        raise ValueError("no mirror: pass mirror=DIR or set DPNOTES_DATA_MIRROR")
    for root in roots:
        if not root.is_dir():
            raise FileNotFoundError(f"mirror directory {root} does not exist")
    results = []
    for root in roots:
        for ds in datasets(registry).values():
            seen: set[Path] = set()
            for spec in ds.files.values():
                for source in spec.sources:
                    for rel in _candidates(spec, source):
                        path = root / rel
                        if path in seen or not path.is_file():
                            continue
                        seen.add(path)
                        group = _same_container(ds.files.values(), source, set()) if source.member else [spec]
                        names = tuple(s.name for s in group)
                        try:
                            _take(path, source, group, None, str(path), "")
                        except (ChecksumError, OSError) as exc:
                            results.append(VerifyResult(ds.name, names, path, False, str(exc).strip()))
                        else:
                            what = ", ".join(sorted({a for s in group for a in ("sha256", "md5") if getattr(s, a)}))
                            detail = f"{len(names)} file(s), content {what} match"
                            results.append(VerifyResult(ds.name, names, path, True, detail))
    return results
