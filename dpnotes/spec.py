"""The fully resolved run spec: what a run record answers, and the id it is stored under.

An experiments module describes a run by a small config dict (``paper``, ``profile``,
``experiment``, ``seed``, ``model``, ``model_kwargs``, ``dataset``, ``subset``, ``method``,
``method_config``, ``train``, and optionally ``analysis``: what is measured on the trained model,
left out of the spec while empty). :func:`resolve` fills in every default (the model factory's
keyword defaults, the method config's, every :class:`~dpnotes.train.TrainConfig` field, where
``SPEC_DEFAULTS`` of :mod:`dpnotes.train.config` keep what stored specs had: ``grad_backend`` "func") and
adds the version of each component whose behaviour affects the numbers: the engine
(:data:`dpnotes.train.VERSION`), the method (``dpnotes.methods.<m>.VERSION``), the model
(registered with the model) and the experiment's data pipeline (``DATA_VERSION`` of the
experiments module). The run id hashes all of it, so changing a default, a model or a
component version gives a new id: a stored record can never silently answer a run that
would now compute something else. Bump a component's version whenever its behaviour changes.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import pickle
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from dpnotes import call_memo, jsonio

REQUIRED = ("paper", "profile", "experiment", "seed", "method")
OPTIONAL = ("analysis",)  # RunSpec fields left out of the spec (and its id) while empty
# TrainConfig fields that say where a run executes, not what it computes.
PLACEMENT = ("device",)


def _frozen(value):
    if isinstance(value, Mapping):
        return MappingProxyType({k: _frozen(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _plain(value):
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class RunSpec:
    """Everything that determines a run's numbers, every default filled in (immutable)."""

    paper: str
    profile: str
    experiment: str
    seed: int
    method: str
    method_config: Mapping
    model: str | None
    model_kwargs: Mapping
    dataset: str | None
    subset: Mapping
    train: Mapping
    components: Mapping
    analysis: Mapping = dataclasses.field(default_factory=dict)  # measured on the trained model (empty: nothing)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, _frozen(getattr(self, f.name)))

    def to_dict(self) -> dict:
        """Every field; ``analysis`` only when it asks for something (so specs without one keep
        the ids they had before the field existed)."""
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                if f.name not in OPTIONAL or getattr(self, f.name)}

    @classmethod
    def from_dict(cls, d: Mapping) -> "RunSpec":
        names = {f.name for f in dataclasses.fields(cls)}
        if not names - set(OPTIONAL) <= set(d) <= names:
            raise ValueError(f"a run spec has exactly the fields {sorted(names)}; "
                             f"missing {sorted(names - set(d))}, unknown {sorted(set(d) - names)}")
        return cls(**d)

    @functools.cached_property
    def id(self) -> str:
        """16 hex digits of the sha256 of the canonical JSON of the whole spec (computed once: a
        spec is immutable)."""
        canonical = jsonio.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _train(config: Mapping) -> dict:
    from dpnotes.train import TrainConfig
    from dpnotes.train.config import SPEC_DEFAULTS

    raw = dict(config.get("train") or {})
    for key in ("accountants", "betas"):
        if key in raw:
            raw[key] = tuple(raw[key])
    if "device" in raw:
        raise ValueError("train must not set 'device' (where a run executes is not part of its spec)")
    for key, value in SPEC_DEFAULTS.items():  # a spec keeps the default its stored records had
        raw.setdefault(key, value)
    resolved = TrainConfig(**raw).to_dict()
    for key in PLACEMENT:
        resolved.pop(key)
    return resolved


def resolve(config: Mapping, module) -> RunSpec:
    """The :class:`RunSpec` of ``config``, a config of the experiments module ``module`` (whose
    ``DATA_VERSION`` and optional ``METHOD_VERSIONS``, for non-DP baselines it computes
    itself, enter the components; see the module docstring). Within a
    :func:`dpnotes.call_memo.scope` each config is resolved once (a RunSpec is immutable)."""
    if not call_memo.active():
        return _resolve(config, module)
    try:  # pickle tells apart every value resolve could (1, 1.0 and True; a list and a tuple)
        key = (module.__name__, pickle.dumps(config, protocol=5))
    except (AttributeError, TypeError, pickle.PicklingError):  # resolved afresh (or refused) instead
        return _resolve(config, module)
    return call_memo.cached("spec.resolve", key, lambda: _stored(config, module))


def _stored(config: Mapping, module) -> RunSpec:
    """:func:`_resolve`, from :mod:`dpnotes.calc_cache` when ``module`` is a dpnotes module (the
    cache's code version covers it; the spec is a pure function of the config and the code)."""
    if not module.__name__.startswith("dpnotes.") or sys.modules.get(module.__name__) is not module:
        return _resolve(config, module)
    from dpnotes import calc_cache

    return calc_cache.cached("spec.resolve", (module.__name__, config), lambda: _resolve(config, module),
                             encode=_encode, decode=_decode)


def _encode(spec: RunSpec) -> tuple[dict, str]:
    return {f.name: _plain(getattr(spec, f.name)) for f in dataclasses.fields(spec)}, spec.id


def _decode(stored: tuple[dict, str]) -> RunSpec:
    """The spec and its id as computed when stored (the calc cache file is checksummed)."""
    fields, spec_id = stored
    spec = RunSpec.from_dict(fields)
    spec.__dict__["id"] = spec_id  # what functools.cached_property stores
    return spec


def _resolve(config: Mapping, module) -> RunSpec:
    from dpnotes import methods, models, train

    missing = [k for k in REQUIRED if k not in config]
    if missing:
        raise ValueError(f"run config is missing {missing}")
    known = set(REQUIRED) | {"method_config", "model", "model_kwargs", "dataset", "subset", "train", "analysis"}
    unknown = sorted(set(config) - known)
    if unknown:
        raise ValueError(f"run config has unknown keys {unknown}; allowed: {sorted(known)}")
    method, model = config["method"], config.get("model")
    components = {"engine": train.VERSION}
    extra_methods = getattr(module, "METHOD_VERSIONS", {})
    if method in extra_methods:  # non-DP baselines an experiment computes itself
        method_config = dict(config.get("method_config") or {})
        components[f"method:{method}"] = extra_methods[method]
        model_kwargs, trained = dict(config.get("model_kwargs") or {}), {}
    else:
        m = methods.module(method)
        method_config = m.resolve(config.get("method_config") or {})
        components[f"method:{method}"] = m.VERSION
        model_kwargs = models.resolved_kwargs(model, **(config.get("model_kwargs") or {}))
        components[f"model:{model}"] = models.version(model)
        trained = _train(config)
        if trained["private"] and model is not None and not models.per_example(model):
            raise ValueError(f"model {model!r} is a non-private baseline (no per-example gradients): "
                             "its train settings must be non-private")
    if config.get("dataset") is not None:
        components[f"data:{config['dataset']}"] = module.DATA_VERSION
    return RunSpec(paper=config["paper"], profile=config["profile"], experiment=config["experiment"],
                   seed=config["seed"], method=method, method_config=method_config, model=model,
                   model_kwargs=model_kwargs, dataset=config.get("dataset"),
                   subset=dict(config.get("subset") or {}), train=trained, components=components,
                   analysis=dict(config.get("analysis") or {}))
