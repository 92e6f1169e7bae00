"""Finding, verifying and caching dataset files: cache -> mirrors -> official URLs.

Every file is checked against the registry's checksums of its (decompressed) content before it
enters the cache.  Writes go to a temporary file in the cache directory, which is verified,
fsynced and then renamed over the final name (``os.replace``), so the cache never holds a
partial or unverified file.  Files already in the cache are re-verified on every load; a
corrupt one is an error (never silently replaced).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Mapping, Sequence

from dpnotes.atomic import atomic_write  # noqa: F401  (also imported from here by the loaders)
from dpnotes.data.registry import Dataset, FileSpec, Source, get_dataset

CACHE_ENV = "DPNOTES_CACHE"
MIRROR_ENV = "DPNOTES_DATA_MIRROR"
_CHUNK = 1 << 20
_HINT = (
    f"Set {MIRROR_ENV} to a directory laid out like the dataset mirror "
    "(one folder per dataset), pass mirror=..., or connect to the internet."
)


class ChecksumError(ValueError):
    """A file's content does not match the registry's checksum."""


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir``, else ``$DPNOTES_CACHE``, else ``~/.cache/dpnotes``."""
    if cache_dir is None:
        cache_dir = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "dpnotes"
    return Path(cache_dir).expanduser()


def mirror_roots(mirror: str | os.PathLike | Sequence[str | os.PathLike] | None = None) -> list[Path]:
    """Mirror directories: ``mirror`` (a path or a list of paths) when given, else the
    ``os.pathsep``-separated ``$DPNOTES_DATA_MIRROR``; empty entries are ignored."""
    if mirror is None:
        entries = os.environ.get(MIRROR_ENV, "").split(os.pathsep)
    elif isinstance(mirror, (str, os.PathLike)):
        entries = [mirror]
    else:
        entries = list(mirror)
    return [Path(e).expanduser() for e in entries if str(e)]


# ---- content checks ---------------------------------------------------------------------------

@dataclass
class Digest:
    """The checksums of one content; an algorithm that was not asked for is ``None``."""

    sha256: str | None
    md5: str | None
    size: int


def _algorithm(spec: FileSpec) -> str:
    """The checksum that verifies ``spec``: its sha256 where it has one, else its md5 (a sha256
    match leaves nothing for an md5 to add, and hashing once halves the cost of every load)."""
    return "sha256" if spec.sha256 is not None else "md5"


def _check(spec: FileSpec, digest: Digest, origin: str, advice: str) -> None:
    algo = _algorithm(spec)
    expected = getattr(spec, algo)
    if expected is not None and getattr(digest, algo) != expected:
        raise ChecksumError(
            f"{origin}: {algo} of its content is {getattr(digest, algo)}, expected {expected} "
            f"for {spec.name!r}; the file is corrupt or is not the expected file. {advice}"
        )


def _check_container(path: Path, source: Source, origin: str, advice: str) -> None:
    got = _hash_stream(path.open("rb"), None, ("md5",)).md5
    if got != source.md5:
        raise ChecksumError(
            f"{origin}: md5 is {got}, expected the published {source.md5}; "
            f"the file is corrupt or is not the official container. {advice}"
        )


def _hash_stream(stream: BinaryIO, out: BinaryIO | None, algorithms: Sequence[str]) -> Digest:
    """Hash ``stream`` to its end with each of ``algorithms`` ("sha256", "md5"), closing it,
    copying it to ``out`` if given."""
    hashes, size = {a: hashlib.new(a) for a in algorithms}, 0
    with stream:
        while chunk := stream.read(_CHUNK):
            for h in hashes.values():
                h.update(chunk)
            size += len(chunk)
            if out is not None:
                out.write(chunk)
    return Digest(*(hashes[a].hexdigest() if a in hashes else None for a in ("sha256", "md5")), size)


def open_content(path: Path) -> BinaryIO:
    """Open ``path`` for reading, transparently decompressing gzip, xz or bzip2 (by magic bytes)."""
    with path.open("rb") as f:
        magic = f.read(6)
    if magic[:2] == b"\x1f\x8b":
        return gzip.open(path, "rb")
    if magic == b"\xfd7zXZ\x00":
        return lzma.open(path, "rb")
    if magic[:3] == b"BZh":
        return bz2.open(path, "rb")
    return path.open("rb")


def _store(stream: BinaryIO, spec: FileSpec, dest: Path | None, origin: str, advice: str) -> None:
    """Verify ``stream`` against ``spec``; when ``dest`` is given, also cache it there atomically."""
    algorithms = (_algorithm(spec),)
    if dest is None:
        _check(spec, _hash_stream(stream, None, algorithms), origin, advice)
        return
    with atomic_write(dest) as out:
        _check(spec, _hash_stream(stream, out, algorithms), origin, advice)


def _members(container: Path) -> Iterator[tuple[str, Callable[[], BinaryIO]]]:
    """(name, opener) for each regular file of a tar (any compression) or zip archive, in order."""
    if zipfile.is_zipfile(container):
        with zipfile.ZipFile(container) as zf:
            for info in zf.infolist():
                if not info.is_dir():
                    yield info.filename, lambda info=info: zf.open(info)
        return
    with tarfile.open(container, "r:*") as tf:
        for info in tf:
            if info.isfile():
                yield info.name.removeprefix("./"), lambda info=info: tf.extractfile(info)


def _take(container: Path, source: Source, specs: Sequence[FileSpec], dest_dir: Path | None,
          origin: str, advice: str) -> set[str]:
    """Verify (and cache, if ``dest_dir``) ``specs`` from one container; names of those done.

    Files without a content checksum are accepted only from a container whose published md5
    matches.  Archive members are read in one pass over the archive.  A container that cannot
    be decompressed or unpacked is reported as a :class:`ChecksumError` naming it.
    """
    try:
        return _unpack(container, source, specs, dest_dir, origin, advice)
    except (EOFError, zlib.error, lzma.LZMAError, gzip.BadGzipFile, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise ChecksumError(f"{origin}: cannot be read ({exc}); it is truncated or corrupt. {advice}") from exc


def _unpack(container: Path, source: Source, specs: Sequence[FileSpec], dest_dir: Path | None,
            origin: str, advice: str) -> set[str]:
    if any(s.sha256 is None and s.md5 is None for s in specs):
        _check_container(container, source, origin, advice)
    dest = (lambda s: dest_dir / s.name) if dest_dir is not None else (lambda s: None)
    if source.member is None:
        (spec,) = specs
        stream = container.open("rb") if spec.keep_compressed else open_content(container)
        _store(stream, spec, dest(spec), origin, advice)
        return {spec.name}
    wanted = {_member_of(s, source): s for s in specs}
    done = set()
    for name, opener in _members(container):
        if name in wanted:
            spec = wanted[name]
            _store(opener(), spec, dest(spec), f"{origin} (member {name})", advice)
            done.add(spec.name)
    missing = [m for m, s in wanted.items() if s.name not in done]
    if missing:
        raise ChecksumError(f"{origin}: archive has no member {', '.join(missing)}. {advice}")
    return done


def _member_of(spec: FileSpec, source: Source) -> str:
    return next(s.member for s in spec.sources if s.path == source.path)


def _candidates(spec: FileSpec, source: Source) -> tuple[str, ...]:
    """Mirror paths for ``source``; a file kept compressed must be the official container itself."""
    return (source.path,) if spec.keep_compressed else source.mirror_candidates()


def _same_container(specs: Sequence[FileSpec], source: Source, done: set[str]) -> list[FileSpec]:
    """The specs still to do that are members of the container ``source.path``."""
    return [s for s in specs if s.name not in done
            and any(o.path == source.path and o.member for o in s.sources)]


def _uncached(ds: Dataset, dest: Path) -> list[FileSpec]:
    """Files of ``ds`` not yet in its cache directory: an archive opened for one member gives
    all the dataset's members it holds, so that it is read only once."""
    return [s for s in ds.files.values() if not (dest / s.name).is_file()]


# ---- fetching ---------------------------------------------------------------------------------

def _in_cache(ds: Dataset, specs: Sequence[FileSpec], root: Path) -> dict[str, Path]:
    found = {}
    for spec in specs:
        path = root / ds.name / spec.name
        if path.is_file():
            _store(path.open("rb"), spec, None, str(path),
                   "Delete the cached file and load again to re-fetch it.")
            found[spec.name] = path
    return found


def _from_mirrors(ds: Dataset, specs: Sequence[FileSpec], roots: Sequence[Path], dest: Path) -> set[str]:
    done: set[str] = set()
    for root in roots:
        for spec in specs:
            if spec.name in done:
                continue
            for source in spec.sources:
                path = next((root / c for c in _candidates(spec, source) if (root / c).is_file()), None)
                if path is None:
                    continue
                group = _same_container(_uncached(ds, dest), source, done) if source.member else [spec]
                advice = f"Replace or remove it in the mirror {root}."
                done |= _take(path, source, group, dest, str(path), advice)
                break
    return done


def _download(url: str, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".download.", suffix=".part", dir=dest_dir)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as resp:
            shutil.copyfileobj(resp, out, _CHUNK)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Path(tmp)


def _from_urls(ds: Dataset, specs: Sequence[FileSpec], dest: Path, errors: list[str]) -> set[str]:
    done: set[str] = set()
    for spec in specs:
        if spec.name in done:
            continue
        for source in spec.sources:
            for url in source.urls:
                try:
                    tmp = _download(url, dest)
                except (urllib.error.URLError, OSError) as exc:
                    errors.append(f"{url}: {getattr(exc, 'reason', exc)}")
                    continue
                try:
                    advice = "The download is corrupt; try again, or use a mirror."
                    if source.md5:
                        _check_container(tmp, source, url, advice)
                    group = _same_container(_uncached(ds, dest), source, done) if source.member else [spec]
                    done |= _take(tmp, source, group, dest, url, advice)
                finally:
                    tmp.unlink(missing_ok=True)
                break
            if spec.name in done:
                break
    return done


def fetch_any(
    dataset: str,
    alternatives: Sequence[Sequence[str]],
    *,
    mirror=None,
    cache_dir=None,
    registry: Mapping[str, Dataset] | None = None,
) -> tuple[int, dict[str, Path]]:
    """Verified cached paths of the first complete alternative set of files of ``dataset``.

    Sources are tried stage by stage, each stage over all alternatives in order: the cache, then
    every mirror (:func:`mirror_roots`), then the official URLs.  Returns the index of the
    alternative found and ``{file name: cached path}``.  Raises :class:`FileNotFoundError` when
    no stage has a complete alternative, :class:`ChecksumError` when a file found is corrupt.
    """
    ds = get_dataset(dataset, registry)
    alts = [[ds.file(n) for n in names] for names in alternatives]
    if not alts or not all(alts):
        raise ValueError("alternatives must be a non-empty list of non-empty lists of file names")
    root, roots, errors = cache_root(cache_dir), mirror_roots(mirror), []
    dest = root / ds.name

    def complete(found) -> int | None:
        return next((i for i, a in enumerate(alts) if all(s.name in found for s in a)), None)

    found = {}
    for a in alts:
        found.update(_in_cache(ds, a, root))
    for stage in ("mirror", "url"):
        i = complete(found)
        if i is not None:
            return i, {s.name: dest / s.name for s in alts[i]}
        for a in alts:
            todo = [s for s in a if s.name not in found]
            got = (_from_mirrors(ds, todo, roots, dest) if stage == "mirror"
                   else _from_urls(ds, todo, dest, errors))
            found.update({n: dest / n for n in got})
            if complete(found) is not None:
                break
    i = complete(found)
    if i is not None:
        return i, {s.name: dest / s.name for s in alts[i]}
    wanted = " or ".join("+".join(s.name for s in a if s.name not in found) for a in alts)
    where = ", ".join(map(str, roots)) or f"none set (${MIRROR_ENV} is empty)"
    net = "; ".join(errors) or "no official URL"
    raise FileNotFoundError(
        f"dataset {ds.name!r}: {wanted} not found in the cache ({dest}), in the mirrors ({where}), "
        f"nor downloaded ({net}). {_HINT}"
    )


def fetch(dataset: str, files: Sequence[str] | None = None, *, mirror=None, cache_dir=None,
          registry: Mapping[str, Dataset] | None = None) -> dict[str, Path]:
    """Verified cached paths of ``files`` (default: all files) of ``dataset``; see :func:`fetch_any`."""
    ds = get_dataset(dataset, registry)
    names = list(ds.files) if files is None else list(files)
    return fetch_any(dataset, [names], mirror=mirror, cache_dir=cache_dir, registry=registry)[1]


def locate(dataset: str, files: Sequence[str], *, mirror=None, cache_dir=None,
           registry: Mapping[str, Dataset] | None = None) -> dict[str, Path]:
    """Cached paths of ``files`` of ``dataset`` WITHOUT verifying those already in the cache: for a
    reader that verifies what it reads itself (:func:`dpnotes.data.images.read_labels` checks the
    label bytes against each spec's ``label_sha256``). Files not yet cached are fetched, and so
    verified, as by :func:`fetch`."""
    ds = get_dataset(dataset, registry)
    dest = cache_root(cache_dir) / ds.name
    paths = {n: dest / ds.file(n).name for n in files}
    missing = [n for n, p in paths.items() if not p.is_file()]
    if missing:
        paths.update(fetch(dataset, missing, mirror=mirror, cache_dir=cache_dir, registry=registry))
    return paths


def derived_path(dataset: str, kind: str, key: str, cache_dir=None) -> Path:
    """Cache path for a file derived from verified data (e.g. a tokenization), named by a key
    that must change whenever the inputs or the derivation change."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_root(cache_dir) / dataset / "derived" / f"{kind}-{digest}"
