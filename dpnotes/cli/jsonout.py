"""Strict JSON on the command line: what ``--json`` prints parses with any JSON parser.

eps = inf is a real answer (no finite bound; a non-private run), but ``Infinity`` and ``NaN``
are not JSON. :func:`dumps` writes such a value as ``null`` and adds to its object a key
``"non_finite"`` saying what it was: ``{"epsilon": null, "non_finite": {"epsilon": "inf"}}``.
"""

from __future__ import annotations

import json
import math


def strict(obj):
    """``obj`` with every non-finite float replaced as described in the module docstring."""
    if isinstance(obj, dict):
        out = {k: strict(v) for k, v in obj.items()}
        odd = {k: ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf")
               for k, v in obj.items() if isinstance(v, float) and not math.isfinite(v)}
        if odd:
            out["non_finite"] = odd
        return out
    if isinstance(obj, (list, tuple)):
        return [None if isinstance(v, float) and not math.isfinite(v) else strict(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def dumps(obj, **kwargs) -> str:
    """Strict JSON of ``obj`` (``allow_nan=False`` holds after :func:`strict`)."""
    return json.dumps(strict(obj), allow_nan=False, **kwargs)
