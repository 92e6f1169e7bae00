"""Shared data preparation of the chapters' runs: images scaled to [0, 1] with a channel axis,
per-channel standardisation, fixed random subsets, and MovieLens-100k split into (user, item)
pairs and rating classes.

Every paper prepares its inputs with these (each states its choices, e.g. DPlis's and
SA-DPSGD's CIFAR-10 means and standard deviations, in its own module, and each has its own
``DATA_VERSION``); no paper's module imports another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from dpnotes import validate

if TYPE_CHECKING:  # imported where a function computes: run configs and the scoreboard import this module
    import torch

SUBSET_SEED = 0  # smoke/quick subsets: the same random examples for every run of every paper
IMAGE_LOADERS = ("mnist", "fashion-mnist", "cifar-10")
ML100K_RATINGS = 100_000


def unit_scale(x: torch.Tensor) -> torch.Tensor:
    """Pixels / 255 as float32; a grayscale batch ``(N, H, W)`` gets its channel axis ``(N, 1, H, W)``."""
    x = x.float().div(255)
    return x.unsqueeze(1) if x.dim() == 3 else x


def standardize(x: torch.Tensor, mean: Sequence[float], std: Sequence[float]) -> torch.Tensor:
    """``(x - mean) / std`` per channel of an ``(N, C, H, W)`` batch."""
    if len(mean) != x.shape[1] or len(std) != x.shape[1]:
        raise ValueError(f"mean and std need one value per channel ({x.shape[1]}), got {len(mean)} and {len(std)}")
    import torch

    return (x - torch.tensor(mean).view(1, -1, 1, 1)) / torch.tensor(std).view(1, -1, 1, 1)


def images(dataset: str, split: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` of an image data set's ``split`` with :func:`unit_scale` applied (not cached:
    callers cache what they keep)."""
    from dpnotes import data

    loaders = {"mnist": data.load_mnist, "fashion-mnist": data.load_fashion_mnist, "cifar-10": data.load_cifar10}
    x, y = loaders[validate.choice("dataset", dataset, IMAGE_LOADERS)](split)
    return unit_scale(x), y


def fixed_subset(data: tuple[torch.Tensor, ...], size: int | None, seed: int = SUBSET_SEED):
    """``size`` fixed random examples of ``data`` (tensors of equal length; all of them if
    ``size`` is None or not smaller): the same examples for every run."""
    if size is None or size >= len(data[-1]):
        return data
    import torch

    keep = torch.randperm(len(data[-1]), generator=torch.Generator().manual_seed(seed))[:size]
    return tuple(t[keep] for t in data)


def random_split(n: int, n_test: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(train indices, test indices) of a fixed random split of ``n`` examples."""
    import torch

    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return perm[n_test:], perm[:n_test]


def movielens_split_sizes(test_fraction: float) -> tuple[int, int]:
    """(train, test) sizes of a MovieLens-100k split (no data needed)."""
    n_test = round(ML100K_RATINGS * test_fraction)
    return ML100K_RATINGS - n_test, n_test


def movielens(test_fraction: float, seed: int):
    """MovieLens-100k as (user, item) pairs from 0 and labels rating - 1 (5 classes), split at
    random: ``((train pairs, labels), (test pairs, labels))``."""
    import torch

    from dpnotes import data

    r = data.load_movielens("100k")
    if len(r) != ML100K_RATINGS:
        raise ValueError(f"MovieLens-100k has {ML100K_RATINGS} ratings, the file gave {len(r)}")
    pairs = torch.stack([r[:, 0] - 1, r[:, 1] - 1], dim=1)
    labels = r[:, 2] - 1
    tr, te = random_split(len(labels), movielens_split_sizes(test_fraction)[1], seed)
    return (pairs[tr], labels[tr]), (pairs[te], labels[te])


def movielens_sizes() -> tuple[int, int]:
    """(number of users, number of items) of MovieLens-100k (ids from 0), from the dataset
    registry: listing runs and the scoreboard need no data (checked against the file by
    tests/test_data_mirror.py)."""
    from dpnotes.data.registry import size

    return size("movielens-100k", "users"), size("movielens-100k", "items")
