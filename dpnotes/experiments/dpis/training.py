"""One DPIS run (:func:`execute`): MNIST, Fashion-MNIST or CIFAR-10 scaled to [0, 1], fixed subsets,
ScatterNet features, then the shared training loop (:func:`dpnotes.experiments.train_spec`).
"""

from __future__ import annotations

from functools import lru_cache

from dpnotes import validate


@lru_cache(maxsize=4)
def _images(dataset: str, train_size, test_size, model: str):
    import torch

    from dpnotes import data, models
    from dpnotes.data.prepare import fixed_subset, unit_scale

    loaders = {"mnist": data.load_mnist, "fashion-mnist": data.load_fashion_mnist, "cifar10": data.load_cifar10}
    load = loaders[validate.choice("dataset", dataset, loaders)]

    def prep(split, size):
        x, y = load(split)
        x, y = fixed_subset((unit_scale(x), y.long()), size)  # CIFAR-10 keeps its 3 channels
        features = models.preprocessor(model)
        if features is not None:
            with torch.no_grad():
                x = torch.cat([features(x[i:i + 1024]) for i in range(0, len(x), 1024)])
        return x, y

    return prep("train", train_size), prep("test", test_size)


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec

    train_data, test_data = _images(spec.dataset, spec.subset.get("train"), spec.subset.get("test"), spec.model)
    return train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint)
