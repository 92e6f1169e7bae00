"""One SA-DPSGD run (:func:`execute`): the data sets (normalised images, fixed subsets), then the shared
training loop (:func:`dpnotes.experiments.train_spec`).
"""

from __future__ import annotations

from functools import lru_cache

from dpnotes import validate
from dpnotes.data import prepare

# CIFAR-10 normalisation: not stated in the paper; ImageNet mean/std as in the lineage's
# code (Tramer & Boneh; DPSUR), our documented choice. MNIST / Fashion-MNIST: pixels / 255.
CIFAR_MEAN, CIFAR_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)
SUBSET_SEED = 0


@lru_cache(maxsize=2)
def _images(dataset: str):
    def prep(split):
        x, y = prepare.images(dataset, split)
        return (prepare.standardize(x, CIFAR_MEAN, CIFAR_STD), y) if dataset == "cifar-10" else (x, y)

    return prep("train"), prep("test")


def load(dataset: str, subset: dict | None = None):
    """``(train, test, energy)`` of ``dataset`` (mnist, fashion-mnist, cifar-10). ``subset``
    sizes pick fixed random examples (the same for every seed): ``train``, ``test``, and
    ``energy``: that many test examples set apart as the energy set of an ``energy="validation"``
    run, ``test`` then holding the others; without it ``energy`` is None (the energy is the test set)."""
    train, test = _images(dataset)
    subset = subset or {}
    test = prepare.fixed_subset(test, subset.get("test"))
    energy = None
    if subset.get("energy") is not None:
        n, size = len(test[1]), validate.integer("subset['energy']", subset["energy"], minimum=1)
        if size >= n:
            raise ValueError(f"subset['energy'] must be below the {n} test examples, got {size}")
        import torch

        order = torch.randperm(n, generator=torch.Generator().manual_seed(SUBSET_SEED + 1))
        energy, test = tuple(t[order[:size]] for t in test), tuple(t[order[size:]] for t in test)
    return prepare.fixed_subset(train, subset.get("train")), test, energy


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec

    energy = spec.method_config.get("energy", "test") if spec.method == "sadpsgd" else "test"
    if (energy == "validation") != ("energy" in (spec.subset or {})):
        raise ValueError("energy='validation' and subset['energy'] (the size of the energy set) go together")
    train_data, test_data, energy_data = load(spec.dataset, spec.subset)
    return train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                      validation_data=energy_data)
