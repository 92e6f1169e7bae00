"""The papers' architectures, by name.

    model = dpnotes.models.create("tf-mnist-cnn", activation="tanh")
    x, y = dpnotes.models.example_batch("tf-mnist-cnn", 8, torch.Generator().manual_seed(0))

Every registered model is pure torch (no torchvision) and works with per-sample gradients by
``torch.func`` (``vmap(grad(...))`` over ``functional_call(model, params, (x[None],))``) in
eval mode: no in-place ops, recurrent layers written from matmuls. Models that consume fixed
features (the ScatterNet CNNs) name their feature extractor: ``preprocessor(name)``.
"""

from dpnotes.models import cnn, inception, mlp, recsys, resnet, scatternet, text  # noqa: F401  (they register their models)
from dpnotes.models.registry import (
                                     ModelSpec,
                                     create,
                                     example_batch,
                                     names,
                                     per_example,
                                     preprocessor,
                                     resolved_kwargs,
                                     spec,
                                     version,
)

__all__ = ["ModelSpec", "create", "example_batch", "names", "per_example", "preprocessor", "resolved_kwargs",
           "spec", "version"]
