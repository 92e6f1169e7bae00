"""The privacy ledger of a run: every private release, in order, run-length compressed.

A :class:`Ledger` holds ``(event, count)`` entries: ``count`` consecutive releases of the
same :class:`~dp_accounting.dp_event.DpEvent`. Appending an event equal to the last
entry's adds to its count, so 10^5 identical DP-SGD steps are one entry. The ledger
only records; :func:`dpnotes.accounting.registry.price` turns it into eps.

Counts are whole numbers of releases, except on the paper-accounting path: the GDP
paper (Bu et al. 2020, Section 5 and its code) composes ``epochs * n / B`` steps, a
fractional number, which RDP and the CLT compose additively. A float count > 0 is
therefore accepted; the PLD and PRV accountants round each event's total count up
(:func:`dpnotes.accounting.rdp.integer_steps`), which can only increase eps.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

from dpnotes.ledger.events import (
    ComposedDpEvent,
    DpEvent,
    NoOpDpEvent,
    SelfComposedDpEvent,
    event_from_json,
    event_to_json,
)


def check_count(count, name: str = "count") -> float:
    """A release count: an integer >= 1, or (paper accounting only) a finite float > 0."""
    if isinstance(count, bool) or not isinstance(count, Real):
        raise ValueError(f"{name} must be a number of releases, got {count!r}")
    if isinstance(count, Integral) and count < 1:
        raise ValueError(f"{name} must be >= 1, got {count!r}")
    if not (math.isfinite(count) and count > 0):
        raise ValueError(f"{name} must be finite and > 0, got {count!r}")
    return count


def _key(event: DpEvent):
    """A dict key for ``event``: itself, or its repr (attrs reprs show every field) when it
    holds a list (``ComposedDpEvent``) and is therefore unhashable."""
    try:
        hash(event)
    except TypeError:
        return repr(event)
    return event


class Ledger:
    """Append-only list of ``(event, count)`` entries, run-length compressed."""

    def __init__(self, entries=()):
        self._entries: list[tuple[DpEvent, float]] = []
        self._totals: dict = {}  # _key(event) -> (event, count) per distinct event, kept as entries grow
        for event, count in entries:
            self.append(event, count)

    def append(self, event: DpEvent, count: float = 1) -> Ledger:
        """Record ``count`` releases of ``event``; returns the ledger."""
        if not isinstance(event, DpEvent):
            raise ValueError(f"a ledger records DpEvent instances, got {type(event).__name__}: {event!r}")
        count = check_count(count)
        key = _key(event)
        self._totals[key] = (event, self._totals.get(key, (event, 0))[1] + count)
        if self._entries and self._entries[-1][0] == event:
            self._entries[-1] = (event, self._entries[-1][1] + count)
        else:
            self._entries.append((event, count))
        return self

    @property
    def entries(self) -> tuple[tuple[DpEvent, float], ...]:
        return tuple(self._entries)

    @property
    def total_count(self) -> float:
        """The number of releases recorded (the sum of the counts)."""
        return sum(count for _, count in self._entries)

    def totals(self) -> Ledger:
        """The same releases with one entry per distinct event (in order of first release).
        Composition is commutative, so every accountant prices it as the ledger itself; it is
        what the loop prices before each step when a run stops at a target eps (its size is
        the number of distinct events, however the releases interleave)."""
        return Ledger(self._totals.values())

    def __len__(self) -> int:
        """The number of entries (runs of equal events), not of releases."""
        return len(self._entries)

    def as_event(self) -> DpEvent:
        """The whole ledger as one event: ``NoOpDpEvent()`` if empty, else each entry as
        ``SelfComposedDpEvent(event, count)`` (or the event itself when count is 1), and
        several entries in a ``ComposedDpEvent``."""
        parts = [event if count == 1 else SelfComposedDpEvent(event, count) for event, count in self._entries]
        if not parts:
            return NoOpDpEvent()
        return parts[0] if len(parts) == 1 else ComposedDpEvent(parts)

    def to_json(self) -> list[dict]:
        """``[{"count": n, "event": {...}}, ...]`` (see :func:`dpnotes.ledger.event_to_json`)."""
        return [{"count": count, "event": event_to_json(event)} for event, count in self._entries]

    @classmethod
    def from_json(cls, data: list[dict]) -> Ledger:
        if not isinstance(data, list):
            raise ValueError(f"a ledger is a JSON list of entries, got {type(data).__name__}")
        ledger = cls()
        for entry in data:
            if not isinstance(entry, dict) or set(entry) != {"count", "event"}:
                raise ValueError(f"a ledger entry is {{'count': n, 'event': {{...}}}}, got {entry!r}")
            ledger.append(event_from_json(entry["event"]), entry["count"])
        return ledger

    def copy(self) -> Ledger:
        return Ledger(self._entries)

    def __eq__(self, other) -> bool:
        if not isinstance(other, Ledger):
            return NotImplemented
        return self._entries == other._entries

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Ledger({self._entries!r})"
