"""One LabelDP run (:func:`execute`): MNIST, Fashion-MNIST, CIFAR-10 or MovieLens-100k, the held-out
validation split, then the shared training loop (:func:`dpnotes.experiments.train_spec`).
"""

from __future__ import annotations

from functools import lru_cache

import torch

from dpnotes import claims, validate
from dpnotes.data import prepare
from dpnotes.record import add_final

from .runs import CIFAR_MEAN, CIFAR_STD, DATASETS, MOVIELENS, VALIDATION_SEED

MOVIELENS_TEST_FRACTION = "gdp.table4.test_fraction"  # GDP's split of the same data (Bu et al., Sec. 4.1)
MOVIELENS_SPLIT_SEED = 0


@lru_cache(maxsize=4)
def _data(dataset: str):
    """(train, test) of ``dataset``: MNIST and Fashion-MNIST / 255 with a channel axis; CIFAR-10
    / 255 then per-channel standardised (CIFAR_MEAN, CIFAR_STD); or MovieLens-100k's pairs."""
    if dataset == MOVIELENS:
        return prepare.movielens(claims.setting(MOVIELENS_TEST_FRACTION), MOVIELENS_SPLIT_SEED)
    if dataset == "cifar10":
        return tuple((prepare.standardize(x, CIFAR_MEAN, CIFAR_STD), y)
                     for x, y in (prepare.images("cifar-10", split) for split in ("train", "test")))
    name = {"mnist": "mnist", "fashion_mnist": "fashion-mnist"}[validate.choice("dataset", dataset, DATASETS)]
    return prepare.images(name, "train"), prepare.images(name, "test")


def validation_split(data: tuple[torch.Tensor, torch.Tensor], size: int):
    """``(rest, held_out)``: ``size`` training examples held out by a fixed permutation
    (VALIDATION_SEED, the same for every run and seed) and the others."""
    size = validate.integer("validation", size, minimum=1)
    if size >= len(data[1]):
        raise ValueError(f"validation must be below the training set's size {len(data[1])}, got {size}")
    perm = torch.randperm(len(data[1]), generator=torch.Generator().manual_seed(VALIDATION_SEED))
    return tuple(t[perm[size:]] for t in data), tuple(t[perm[:size]] for t in data)


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``.
    With ``subset["validation"]`` the model is evaluated on held-out training images, never on
    the test set (:func:`validation_split`)."""
    from dpnotes.experiments import train_spec

    train_data, test_data = (prepare.fixed_subset(d, spec.subset.get(k))
                             for d, k in zip(_data(spec.dataset), ("train", "test")))
    if spec.subset.get("validation") is not None:
        train_data, test_data = validation_split(train_data, spec.subset["validation"])
    if spec.model != "neumf":
        return train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint)
    from dpnotes.train.rating_metrics import rmse_plugin

    out = train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                     extra_plugins=(rmse_plugin(*test_data),))
    return add_final(out, test_rmse=out["epochs"][-1]["test_rmse"])
