"""The fields of a run record that readers use, checked for type, finiteness and range on read.

A record's seal proves its bytes were not changed after it was stored; it says nothing about a
record stored without a seal, or written by code with a bug. :func:`problem` checks what the
readers (:class:`dpnotes.record.Record`, the scoreboard, ``dpnotes cost``, ``run --dry-run``)
rely on, so that a bad value excludes the record by name instead of crashing a reader or
entering a table:

* the sections are of their types: ``id`` a string, ``spec``, ``final``, ``privacy`` and
  ``provenance`` objects, ``epochs`` a list of objects (empty for a run without epochs, e.g. a baseline), each
  with an integer ``epoch``;
* in ``final`` and every epoch, at any depth: no NaN; no infinity except under an eps key
  (``epsilon``, ``label_epsilon``, ``upper``: eps = inf is a valid answer); an accuracy (a key
  ending in ``acc``, or ``accuracy``) is ``None`` or a number in [0, 1]; a loss or RMSE is
  ``None`` or a number >= 0; ``steps``, ``accepted_steps`` and ``epoch`` are integers >= 0;
  ``wall_s`` a finite number >= 0; a key's lists hold what the key would;
* ``privacy``: ``delta`` ``None`` or in (0, 1), ``epsilon`` an object of objects each with an
  ``epsilon`` >= 0 (inf allowed), ``ledger`` a list;
* ``provenance``: ``wall_time_s`` a finite number >= 0, ``dirty`` a boolean, ``segments`` a
  non-empty list of objects, each with a string ``device`` and a finite ``wall_s`` >= 0.

Other keys are free (a method's own metrics), under the no-NaN rule. This module knows the
layout of a record only to validate it; readers read through :class:`dpnotes.record.Record`.
"""

from __future__ import annotations

import math

INFINITE_OK = ("epsilon", "label_epsilon", "upper", "lower")  # eps-valued keys: inf is a valid eps
INTEGER_KEYS = ("epoch", "steps", "accepted_steps")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(key: str) -> str | None:
    key = key.lower()
    if key.endswith("acc") or key == "accuracy":
        return "fraction"
    if "loss" in key or "rmse" in key:
        return "nonnegative"
    if key in INTEGER_KEYS:
        return "count"
    if key in ("wall_s", "wall_time_s"):
        return "seconds"
    return None


def _leaf(value, key: str, where: str, infinite_ok: bool) -> str | None:
    """Why the leaf ``value`` under ``key`` is not valid (None: it is)."""
    kind = _kind(key)
    if isinstance(value, float) and math.isnan(value):
        return f"{where} is NaN"
    if kind is None:
        if isinstance(value, float) and math.isinf(value) and not infinite_ok:
            return f"{where} is {value!r}, not a finite number"
        return None
    if value is None and kind in ("fraction", "nonnegative"):
        return None
    if kind == "count":
        ok = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if ok else f"{where} is {value!r}, not an integer >= 0"
    if not _number(value) or not math.isfinite(value):
        return f"{where} is {value!r}, not a finite number"
    if kind == "fraction" and not 0 <= value <= 1:
        return f"{where} is {value!r}, not a fraction in [0, 1]"
    if value < 0:
        return f"{where} is {value!r}, not >= 0"
    return None


def _walk(value, key: str, where: str, infinite_ok: bool = False) -> str | None:
    """The first invalid value under ``value`` (reached by ``key``, at ``where``), or None."""
    infinite_ok = infinite_ok or key in INFINITE_OK
    if isinstance(value, dict):
        for k, v in value.items():
            found = _walk(v, str(k), f"{where}.{k}", infinite_ok)
            if found:
                return found
        return None
    if isinstance(value, list):
        for i, v in enumerate(value):
            found = _walk(v, key, f"{where}[{i}]", infinite_ok)
            if found:
                return found
        return None
    return _leaf(value, key, where, infinite_ok)


def _eps_table(table, where: str) -> str | None:
    if not isinstance(table, dict):
        return f"{where} is {type(table).__name__}, not an object"
    for name, entry in table.items():
        eps = entry.get("epsilon") if isinstance(entry, dict) else None
        if not _number(eps) or math.isnan(eps) or eps < 0:
            return f"{where}.{name}.epsilon is {eps!r}, not an eps >= 0"
    return None


def problem(record: dict) -> str | None:
    """Why ``record`` (a parsed JSON object holding every section) must not be read, naming the
    field (e.g. ``final.test_acc is 'high', not a finite number``); None if it may."""
    types = {"id": (str, "a string"), "spec": (dict, "an object"), "epochs": (list, "a list"),
             "final": (dict, "an object"), "privacy": (dict, "an object"), "provenance": (dict, "an object")}
    for name, (kind, what) in types.items():
        if not isinstance(record.get(name), kind):
            return f"{name} is {record.get(name)!r:.60}, not {what}"
    for i, epoch in enumerate(record["epochs"]):
        if not isinstance(epoch, dict) or "epoch" not in epoch:
            return f"epochs[{i}] is not an object with an epoch number"
        found = _walk(epoch, "", f"epochs[{i}]") or (
            _eps_table(epoch["epsilon"], f"epochs[{i}].epsilon") if "epsilon" in epoch else None)
        if found:
            return found
    found = _walk(record.get("final"), "", "final")
    if found:
        return found
    privacy = record["privacy"]
    delta = privacy.get("delta")
    if delta is not None and not (_number(delta) and 0 < delta < 1):
        return f"privacy.delta is {delta!r}, not None or in (0, 1)"
    if not isinstance(privacy.get("ledger"), list):
        return "privacy.ledger is not a list"
    found = _eps_table(privacy.get("epsilon", {}), "privacy.epsilon")
    if found:
        return found
    prov = record["provenance"]
    wall = prov.get("wall_time_s")
    if wall is None or _leaf(wall, "wall_time_s", "provenance.wall_time_s", False):
        return f"provenance.wall_time_s is {prov.get('wall_time_s')!r}, not a finite number >= 0"
    if not isinstance(prov.get("dirty"), bool):
        return f"provenance.dirty is {prov.get('dirty')!r}, not a boolean"
    segments = prov.get("segments")
    if not isinstance(segments, list) or not segments:
        return "provenance.segments is not a non-empty list"
    for i, seg in enumerate(segments):
        if not isinstance(seg, dict) or not isinstance(seg.get("device"), str):
            return f"provenance.segments[{i}] has no device name"
        wall = seg.get("wall_s")
        if wall is None or _leaf(wall, "wall_s", "", False):
            return f"provenance.segments[{i}].wall_s is {wall!r}, not a finite number >= 0"
    return None
