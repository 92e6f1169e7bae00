"""JSON of run specs and records: infinite floats allowed, NaN refused.

eps = inf is a real value (a non-private column of a paper, a label release without
randomization), so specs and records may hold +-inf; they are written as the ``Infinity``
literal that Python's :mod:`json` reads back (an extension of strict JSON). NaN is never a
meaningful result here: :func:`dumps` refuses it, naming where it sits.
"""

from __future__ import annotations

import json
import math


def _refuse_nan(obj, where: str) -> None:
    if isinstance(obj, float) and math.isnan(obj):
        raise ValueError(f"{where} is NaN: run specs and records may hold +-inf but never NaN")
    if isinstance(obj, dict):
        for k, v in obj.items():
            _refuse_nan(v, f"{where}.{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            _refuse_nan(v, f"{where}[{i}]")


def dumps(obj, **kwargs) -> str:
    """``json.dumps(obj, **kwargs)`` with +-inf written as ``Infinity``; ValueError on NaN."""
    _refuse_nan(obj, "$")
    return json.dumps(obj, allow_nan=True, **kwargs)
