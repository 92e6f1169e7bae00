"""A memo for one command's call: pure results computed once within a :func:`scope`.

``dpnotes scoreboard`` asks for the same things many times in one call: every paper's measure,
the stale-record check and the not-run cost estimates each scan the record stores and resolve
the experiments' configs. Within ``with call_memo.scope():`` :func:`cached` computes each value
once per key; outside a scope it computes every time (tests that change a component version or
an accountant between two calls see the change). The scope ends with the ``with`` block, so the
next call verifies every record again (trust on read: :mod:`dpnotes.record_checks`), and keys
carry everything a value depends on that can change within a call (a record file's content).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

T = TypeVar("T")
_ACTIVE: ContextVar[dict | None] = ContextVar("dpnotes_call_memo", default=None)


@contextmanager
def scope() -> Iterator[None]:
    """Memoise :func:`cached` values until the block ends (a nested scope shares the outer one's)."""
    if _ACTIVE.get() is not None:
        yield
        return
    token = _ACTIVE.set({})
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def cached(kind: str, key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``, once per ``(kind, key)`` within the active :func:`scope` (every call outside one)."""
    memo = _ACTIVE.get()
    if memo is None:
        return compute()
    if (kind, key) not in memo:
        memo[(kind, key)] = compute()
    return memo[(kind, key)]


def active() -> bool:
    """Whether a :func:`scope` is active."""
    return _ACTIVE.get() is not None
