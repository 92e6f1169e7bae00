"""MovieLens ratings (Harper & Konstan 2015, GroupLens) as an int64 tensor.

Formats: 100k ``u.data`` is tab-separated ``user item rating timestamp``; 1M ``ratings.dat`` is
``UserID::MovieID::Rating::Timestamp``.  Ids are kept as published (1-based).
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import numpy as np

from dpnotes import validate
from dpnotes.data.store import fetch

if TYPE_CHECKING:  # torch is imported where a tensor is made (not by `import dpnotes.data`)
    import torch

_FILES = {"100k": ("movielens-100k", "u.data", b"\t"), "1m": ("movielens-1m", "ratings.dat", b"::")}


def load_movielens(variant: str = "100k", *, mirror=None, cache_dir=None, registry=None) -> torch.Tensor:
    """Ratings of MovieLens ``variant`` ("100k" or "1m") as int64 [N, 4]:
    (user id, item id, rating 1-5, unix timestamp), in file order."""
    import torch

    return torch.from_numpy(read_movielens(variant, mirror=mirror, cache_dir=cache_dir, registry=registry))


def read_movielens(variant: str = "100k", *, mirror=None, cache_dir=None, registry=None) -> np.ndarray:
    """:func:`load_movielens` as a numpy array (no torch: ids and counts need no tensor)."""
    import pandas as pd

    validate.choice("variant", variant, _FILES)
    dataset, name, sep = _FILES[variant]
    path = fetch(dataset, [name], mirror=mirror, cache_dir=cache_dir, registry=registry)[name]
    raw = path.read_bytes().replace(sep, b"\t")
    table = pd.read_csv(io.BytesIO(raw), sep="\t", header=None, dtype="int64")
    if table.shape[1] != 4:
        raise ValueError(f"{path}: expected 4 columns (user, item, rating, timestamp), found {table.shape[1]}")
    return table.to_numpy()
