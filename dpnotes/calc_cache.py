"""An on-disk memo of the scoreboard's pure computations, keyed by their inputs and the code version.

A ``dpnotes scoreboard`` call that cannot use its output cache (:mod:`dpnotes.scoreboard_cache`:
a record landed, or ``--no-cache``) still asks for the same pure values as the last call: the
resolved run spec of every config (:func:`dpnotes.spec.resolve`, which imports the model
registry, hence torch), DP-SGD-Decay's sigma_0 calibrations, the papers' exact claims. Within
``with calc_cache.scope():`` (entered by the ``scoreboard`` command only) :func:`cached` looks
each value up by ``(kind, inputs)`` in one file per code version and computes only what is
missing; outside a scope it computes every time, so a test that monkeypatches a component
always sees its change.

* The code version is the sha256 of every file of the :mod:`dpnotes` package, the interpreter
  and the installed distributions (:func:`dpnotes.cache_keys.code_version`): any change
  of the code gives another file, so a stale value is never found. Values must be pure functions
  of their inputs and the code: nothing read from the results store or a data set.
* Inputs are keyed by a type-exact canonical form (1, 1.0 and True differ; a list and a tuple
  differ); an input that has none (an object) is computed, not stored.
* Each value is pickled on its own and unpickled afresh on every hit (no two callers share a
  mutable value); a value that does not pickle is computed every call.
* The file (``<dir>/<code version>.pickle``, ``<dir>`` the scoreboard cache's folder plus
  ``calc``) holds a header, the sha256 of its payload and the payload. A file whose header,
  checksum, code version or content does not check out is refused with one line on stderr
  naming it, recomputed and rewritten; the payload is unpickled with only numpy's, dpnotes's
  and plain builtin types allowed. At most :data:`KEEP` files are kept; an unwritable folder
  only costs time.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
FORMAT = 1
HEADER = f"dpnotes calc cache {FORMAT}\n".encode()
KEEP = 8
_ACTIVE: ContextVar[_Memo | None] = ContextVar("dpnotes_calc_cache", default=None)
_PLAIN = (type(None), bool, int, float, str)
_BUILTINS = {"set", "frozenset", "complex", "slice", "bytearray", "range"}


class _Memo:
    def __init__(self, path: Path, code: str):
        self.path, self.code, self.dirty = path, code, False
        self._entries: dict[str, bytes] | None = None

    @property
    def entries(self) -> dict[str, bytes]:
        """The file's entries, read on first use (a scoreboard output cache hit reads none)."""
        if self._entries is None:
            self._entries = _load(self.path, self.code)
        return self._entries


def directory() -> Path:
    """Where the files are kept: ``calc`` in the scoreboard cache's folder."""
    from dpnotes import cache_keys

    return cache_keys.directory() / "calc"


def _canonical(value) -> str:
    """A string that two inputs share only when they are equal and of the same types throughout."""
    kind = type(value)
    if kind in _PLAIN:
        return f"{kind.__name__}:{value!r}"
    if kind in (list, tuple):
        return f"{kind.__name__}[" + ",".join(_canonical(v) for v in value) + "]"
    if kind is dict:
        return "dict{" + ",".join(f"{_canonical(k)}={_canonical(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no canonical form for {kind.__name__}")


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        top = module.split(".")[0]
        if top in ("numpy", "dpnotes") or (module == "builtins" and name in _BUILTINS) or (
                module == "copyreg" and name == "_reconstructor"):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"{module}.{name} is not allowed")


def _load(path: Path, code: str) -> dict:
    """The entries of ``path``; {} when it is absent, or refused (one line on stderr) when it does not check out."""
    try:
        blob = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as e:
        return _refuse(path, f"unreadable ({e.strerror})")
    head, _, rest = blob.partition(b"\n")
    digest, _, payload = rest.partition(b"\n")
    if head + b"\n" != HEADER:
        return _refuse(path, "not a dpnotes calc cache file of this format")
    if digest.decode("ascii", "replace") != hashlib.sha256(payload).hexdigest():
        return _refuse(path, "checksum mismatch (corrupt or truncated)")
    try:
        data = _Unpickler(io.BytesIO(payload)).load()
    except Exception as e:  # noqa: BLE001 - whatever the payload raises, it is not trusted
        return _refuse(path, f"unreadable payload ({type(e).__name__})")
    if not (isinstance(data, dict) and data.get("code") == code and isinstance(data.get("entries"), dict)
            and all(isinstance(k, str) and isinstance(v, bytes) for k, v in data["entries"].items())):
        return _refuse(path, "made by another code version or malformed")
    return data["entries"]


def _refuse(path: Path, reason: str) -> dict:
    print(f"dpnotes: calc cache {path}: {reason}; recomputing", file=sys.stderr)
    return {}


def _save(memo: _Memo) -> None:
    from dpnotes.atomic import atomic_write

    payload = pickle.dumps({"code": memo.code, "entries": memo.entries}, protocol=5)
    try:
        memo.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_write(memo.path) as out:
            out.write(HEADER + hashlib.sha256(payload).hexdigest().encode() + b"\n" + payload)
        files = sorted(memo.path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in files[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass


@contextmanager
def scope() -> Iterator[None]:
    """Look values up in (and add them to) the current code version's file until the block ends."""
    from dpnotes import cache_keys

    if _ACTIVE.get() is not None:
        yield
        return
    code = cache_keys.code_version()
    memo = _Memo(directory() / f"{code}.pickle", code)
    token = _ACTIVE.set(memo)
    try:
        yield
    finally:
        _ACTIVE.reset(token)
    if memo.dirty and cache_keys.code_version() == code:  # the code did not change meanwhile
        _save(memo)


def cached(kind: str, inputs, compute: Callable[[], T], encode: Callable[[T], object] | None = None,
           decode: Callable[[object], T] | None = None) -> T:
    """``compute()``, looked up by ``(kind, inputs)`` within an active :func:`scope` (module
    docstring); ``encode``/``decode`` turn the value into what is stored and back."""
    memo = _ACTIVE.get()
    if memo is None:
        return compute()
    try:
        key = f"{kind}\0{_canonical(inputs)}"
    except TypeError:
        return compute()
    if key in memo.entries:  # each hit unpickles afresh: no two callers share a mutable value
        try:
            stored = _Unpickler(io.BytesIO(memo.entries[key])).load()
            return stored if decode is None else decode(stored)
        except Exception as e:  # noqa: BLE001 - an entry that does not load is recomputed
            _refuse(memo.path, f"entry {kind} unreadable ({type(e).__name__})")
    value = compute()
    try:
        memo.entries[key] = pickle.dumps(value if encode is None else encode(value), protocol=5)
        memo.dirty = True
    except (TypeError, AttributeError, pickle.PicklingError):  # computed every call instead
        pass
    return value
