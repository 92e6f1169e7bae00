"""Input checks shared by every public function.

Each raises ``ValueError`` naming the parameter and the allowed range, so that a
bad call fails loudly before any computation starts.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def _number(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"{name} must not be NaN")
    return value


def positive(name: str, value, *, allow_inf: bool = False) -> float:
    """``value > 0`` (finite unless ``allow_inf``)."""
    v = _number(name, value)
    if not v > 0 or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name} must be > 0{'' if allow_inf else ' and finite'}, got {value!r}")
    return v


def nonnegative(name: str, value) -> float:
    """``0 <= value < inf``."""
    v = _number(name, value)
    if not 0 <= v < math.inf:
        raise ValueError(f"{name} must be >= 0 and finite, got {value!r}")
    return v


def probability(name: str, value, *, low_open: bool = True, high_open: bool = False) -> float:
    """``value`` in (0, 1] by default; the ends are chosen with ``low_open``/``high_open``."""
    v = _number(name, value)
    lo_ok = v > 0 if low_open else v >= 0
    hi_ok = v < 1 if high_open else v <= 1
    if not (lo_ok and hi_ok):
        lb, rb = ("(" if low_open else "["), (")" if high_open else "]")
        raise ValueError(f"{name} must be in {lb}0, 1{rb}, got {value!r}")
    return v


def integer(name: str, value, *, minimum: int | None = None) -> int:
    """An integer (not a float that happens to be whole), at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    v = int(value)
    if minimum is not None and v < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return v


def choice(name: str, value, allowed) -> str:
    """``value`` is one of ``allowed``."""
    allowed = list(allowed)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")
    return value
