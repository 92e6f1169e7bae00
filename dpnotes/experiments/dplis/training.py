"""One DPlis run (:func:`execute`): the data sets of Table 1 (normalised images, fixed subsets), the
shared training loop (:func:`dpnotes.experiments.train_spec`), and the loss landscape of a trained model.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dpnotes import validate

from .privacy import TABLE2_DATASETS

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)  # the authors' code (REFERENCE.md "DPlis")
CIFAR10_STD = (0.2023, 0.1994, 0.2010)


@lru_cache(maxsize=2)
def _images(dataset: str):
    """(train, test) of ``dataset`` as the authors' code prepares it: MNIST / 255; CIFAR-10
    / 255, then per-channel mean and std (REFERENCE.md "DPlis"); no augmentation."""
    from dpnotes.data import prepare

    if dataset == "mnist":
        return prepare.images("mnist", "train"), prepare.images("mnist", "test")

    def prep(split):
        x, y = prepare.images("cifar-10", split)
        return prepare.standardize(x, CIFAR10_MEAN, CIFAR10_STD), y
    return prep("train"), prep("test")


def load(dataset: str, subset: dict | None = None):
    """``(train, test)`` of ``dataset`` (``mnist`` or ``cifar10``); ``subset`` sizes pick fixed
    random examples (the same for every run)."""
    from dpnotes.data.prepare import fixed_subset

    train, test = _images(validate.choice("dataset", dataset, TABLE2_DATASETS))
    subset = subset or {}
    return fixed_subset(train, subset.get("train")), fixed_subset(test, subset.get("test"))


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec

    train_data, test_data = load(spec.dataset, spec.subset)
    analyse = None
    if spec.analysis:
        def analyse(model):
            return landscape_of(model, spec.analysis, train_data, test_data, device)
    return train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                      analyse=analyse)


def landscape_of(model, analysis, train_data, test_data, device: str = "cpu") -> dict:
    """Table 9's sharpness and Figure 6's slice of a trained ``model`` as ``analysis`` asks."""
    from dpnotes.data.prepare import fixed_subset
    from dpnotes.train import landscape

    data = {"train": train_data, "test": test_data}
    out = {}
    if "sharpness" in analysis:
        a = analysis["sharpness"]
        x, y = fixed_subset(data[a["split"]], a["examples"])
        out["sharpness"] = landscape.sharpness(model, (x.to(device), y.to(device)), a["box"], maxiter=a["maxiter"])
    if "slice" in analysis:
        a = analysis["slice"]
        x, y = data[a["split"]]
        alphas = np.linspace(-a["alpha_max"], a["alpha_max"], a["points"]).tolist()
        out["slice"] = landscape.loss_slice(model, (x.to(device), y.to(device)), alphas, seed=a["seed"])
    return out
