"""The name -> model table behind :mod:`dpnotes.models`.

Each model module registers its factories with :func:`register`; a registration pairs a
factory ``(**kwargs) -> nn.Module`` with a describer ``(**kwargs) -> ModelSpec`` that takes
the same keyword arguments, so that the spec (input shape, index ranges) follows the variant.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable

import torch
from torch import nn

from dpnotes import validate

INPUT_KINDS = ("image", "tokens", "tabular", "pairs")


@dataclass(frozen=True)
class ModelSpec:
    """What a model consumes and produces.

    ``input_shape`` is one example (no batch dimension). ``index_bounds`` gives, for integer
    inputs, the exclusive upper bound of the last axis' entries: one bound for tokens
    (vocabulary size), one per column for pairs (num_users, num_items); empty otherwise.
    Every registered model is a classifier: it returns ``num_outputs`` logits per example.
    """

    name: str
    source: str
    input_kind: str
    input_shape: tuple[int, ...]
    input_dtype: torch.dtype
    num_outputs: int
    index_bounds: tuple[int, ...] = ()

    def __post_init__(self):
        validate.choice("input_kind", self.input_kind, INPUT_KINDS)


@dataclass(frozen=True)
class _Entry:
    factory: Callable[..., nn.Module]
    describe: Callable[..., ModelSpec]
    preprocess: Callable[..., nn.Module] | None
    version: int
    per_example: bool


_REGISTRY: dict[str, _Entry] = {}


def image_spec(name: str, source: str, channels: int, size: int, num_classes: int) -> ModelSpec:
    """Spec of a classifier of ``channels x size x size`` float32 images."""
    return ModelSpec(name=name, source=source, input_kind="image",
                     input_shape=(channels, size, size), input_dtype=torch.float32,
                     num_outputs=num_classes)


def register(name: str, describe: Callable[..., ModelSpec],
             preprocess: Callable[..., nn.Module] | None = None, version: int = 1, per_example: bool = True):
    """Decorator: register ``factory`` under ``name`` with its spec ``describe`` and, for models
    that consume fixed features of the raw data, the feature extractor's factory. ``version``
    enters every run spec using the model (:mod:`dpnotes.spec`): bump it whenever the
    architecture or its initialisation changes. ``per_example=False``: a non-private baseline
    whose layers give no per-example gradients (DP-SGD cannot train it)."""

    def decorator(factory: Callable[..., nn.Module]) -> Callable[..., nn.Module]:
        if name in _REGISTRY:
            raise ValueError(f"model name {name!r} registered twice")
        _REGISTRY[name] = _Entry(factory, describe, preprocess, version, per_example)
        return factory

    return decorator


def names(*, per_example: bool | None = None) -> list[str]:
    """The registered model names, sorted; ``per_example=True``: only those DP-SGD can train
    (per-example gradients), False: only the non-private baselines."""
    return sorted(n for n, e in _REGISTRY.items() if per_example is None or e.per_example == per_example)


def per_example(name: str) -> bool:
    """Whether DP-SGD can train model ``name`` (see :func:`register`)."""
    return _entry(name).per_example


def _entry(name: str) -> _Entry:
    validate.choice("name", name, names())
    return _REGISTRY[name]


def create(name: str, **kwargs) -> nn.Module:
    """A freshly initialised model ``name`` (variant chosen by ``kwargs``).

    Unknown names raise ``ValueError`` listing the registered names.
    """
    return _entry(name).factory(**kwargs)


def version(name: str) -> int:
    """The behaviour version of model ``name`` (see :func:`register`)."""
    return _entry(name).version


def resolved_kwargs(name: str, **kwargs) -> dict:
    """``kwargs`` with every keyword default of model ``name``'s factory filled in; unknown
    keywords raise ``ValueError``."""
    params = inspect.signature(_entry(name).factory).parameters
    unknown = sorted(set(kwargs) - set(params))
    if unknown:
        raise ValueError(f"model {name!r} has no parameter(s) {unknown}; it takes {sorted(params)}")
    return {k: kwargs.get(k, p.default) for k, p in params.items()
            if k in kwargs or p.default is not inspect.Parameter.empty}


def spec(name: str, **kwargs) -> ModelSpec:
    """The :class:`ModelSpec` of model ``name`` for the variant chosen by ``kwargs``."""
    return _entry(name).describe(**kwargs)


def preprocessor(name: str, **kwargs) -> nn.Module | None:
    """The fixed, parameter-free feature extractor that maps raw data to model ``name``'s inputs
    (apply it once to the dataset, outside the DP loop), or ``None`` if the model takes raw data.
    """
    entry = _entry(name)
    return None if entry.preprocess is None else entry.preprocess(**kwargs)


def example_batch(
    name: str, batch_size: int, generator: torch.Generator | None = None, **kwargs
) -> tuple[torch.Tensor, torch.Tensor]:
    """A synthetic ``(inputs, targets)`` batch of the right kind for model ``name``.

    Inputs have the model's input shape (features, for models with a :func:`preprocessor`).
    Images are standard normal; tabular inputs (one-hot features, as in Adult) are
    Bernoulli(1/2) in {0, 1}; tokens and pairs are uniform indices below ``spec.index_bounds``;
    targets are uniform class labels. For smoke runs only: it carries no signal.
    """
    batch_size = validate.integer("batch_size", batch_size, minimum=1)
    s = spec(name, **kwargs)
    shape = (batch_size, *s.input_shape)
    if s.index_bounds:
        bounds = torch.tensor(s.index_bounds, dtype=torch.float64)
        u = torch.rand(shape, generator=generator, dtype=torch.float64)
        x = (u * bounds).floor().to(s.input_dtype)
    elif s.input_kind == "tabular":
        x = torch.randint(0, 2, shape, generator=generator).to(s.input_dtype)
    else:
        x = torch.randn(shape, generator=generator, dtype=s.input_dtype)
    y = torch.randint(0, s.num_outputs, (batch_size,), generator=generator)
    return x, y
