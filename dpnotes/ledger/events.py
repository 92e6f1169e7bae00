"""Privacy events: dp_accounting's vocabulary, three paper-specific events, and JSON.

The standard events (Gaussian, Poisson-sampled, composed, ...) are dp_accounting's own
classes, re-exported. The three events below are ``attrs`` subclasses of its ``DpEvent``
for releases that its vocabulary does not name; :mod:`dpnotes.accounting.registry`
prices them.

JSON: :func:`event_to_json` writes ``{"type": class name, field: value, ...}`` with
nested events as nested objects; :func:`event_from_json` reads it back exactly (Python's
json writes floats with ``repr``, which round-trips).
"""

from __future__ import annotations

import importlib.util
import os
import sys
from numbers import Real

import attr

from dpnotes import validate


def _dp_event_module():
    """``dp_accounting.dp_event``, loaded without running ``dp_accounting/__init__``.

    That ``__init__`` imports the PLD accountant and the mechanism calibration, and with
    them ``scipy.signal``, ``scipy.stats`` and ``scipy.optimize`` (about 1 s on our CPU),
    though the event classes need only ``attrs``. Commands that read ledgers but price
    nothing new (``dpnotes scoreboard``, ``dpnotes results verify``) would pay it on every
    call. The module is registered under its own name, so a later ``import dp_accounting``
    finds it in ``sys.modules`` and every class is the same object either way
    (``tests/test_ledger.py`` checks it).
    """
    name = "dp_accounting.dp_event"
    if name not in sys.modules:
        package = importlib.util.find_spec("dp_accounting")
        spec = importlib.util.spec_from_file_location(
            name, os.path.join(os.path.dirname(package.origin), "dp_event.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return sys.modules[name]


_dp_event = _dp_event_module()
ComposedDpEvent = _dp_event.ComposedDpEvent
DiscreteLaplaceDpEvent = _dp_event.DiscreteLaplaceDpEvent
DpEvent = _dp_event.DpEvent
GaussianDpEvent = _dp_event.GaussianDpEvent
LaplaceDpEvent = _dp_event.LaplaceDpEvent
NonPrivateDpEvent = _dp_event.NonPrivateDpEvent
NoOpDpEvent = _dp_event.NoOpDpEvent
PoissonSampledDpEvent = _dp_event.PoissonSampledDpEvent
RandomizedResponseDpEvent = _dp_event.RandomizedResponseDpEvent
RepeatAndSelectDpEvent = _dp_event.RepeatAndSelectDpEvent  # hyperparameter tuning (dpnotes.accounting.tuning)
SelfComposedDpEvent = _dp_event.SelfComposedDpEvent
UnsupportedDpEvent = _dp_event.UnsupportedDpEvent

LABEL_MECHANISMS = ("rr", "rr-with-prior", "lp-mst")  # Ghazi et al. Algorithms 1, 2 and 3


def _positive(name):
    return lambda _self, _attr, value: validate.positive(name, value)


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DpisIterationDpEvent(DpEvent):
    """One DPIS gradient release (Wei, Bao, Xiao, Yang, CCS 2022, Lemma 3.1, Eq. 13).

    ``batch_size`` is the expected batch size b, ``n_tilde`` the noisy dataset size N~,
    ``ratio = K~ / (N~ C)`` in ``(b / N~, 1]`` and ``sigma_g`` the noise multiplier
    sigma_G. The release is a Poisson-subsampled Gaussian with sampling rate
    ``b / (N~ ratio)`` and noise multiplier ``sigma_G / ratio`` (as
    :func:`dpnotes.accounting.dpis.iteration_rdp`); with ``ratio = 1`` it is the
    DP-SGD step at rate ``b / N~``.
    """

    batch_size: float = attr.ib(validator=_positive("batch_size"))
    n_tilde: float = attr.ib(validator=_positive("n_tilde"))
    ratio: float = attr.ib()
    sigma_g: float = attr.ib(validator=_positive("sigma_g"))

    @ratio.validator
    def _check_ratio(self, _attr, value):
        low = self.batch_size / self.n_tilde
        if isinstance(value, bool) or not isinstance(value, Real) or not low < value <= 1:
            raise ValueError(f"ratio = K~/(N~ C) must be in (b/N~, 1] = ({low}, 1], got {value!r}")

    @property
    def sampling_probability(self) -> float:
        """``b / (N~ ratio)``: the largest per-record draw probability ``b C / K~``."""
        return self.batch_size / (self.n_tilde * self.ratio)

    @property
    def noise_multiplier(self) -> float:
        """``sigma_G / ratio``: noise std ``sigma_G C`` over the sensitivity ``K~ / N~``."""
        return self.sigma_g / self.ratio

    def as_subsampled_gaussian(self) -> PoissonSampledDpEvent:
        """The equivalent ``PoissonSampledDpEvent(q, GaussianDpEvent(sigma))`` of Lemma 3.1."""
        return PoissonSampledDpEvent(self.sampling_probability, GaussianDpEvent(self.noise_multiplier))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class CandidateStepDpEvent(DpEvent):
    """One SA-DPSGD candidate step (Fu, Chen, Ling 2022, Algorithm 2).

    ``event`` is the step's release (a noisy gradient of a fresh batch), ``accepted``
    whether the simulated-annealing test kept the update. The release happens either
    way, so every sound accountant prices ``event`` whatever ``accepted`` is; only the
    paper's own accounting (its Theorem 1, the ``sadpsgd-accepted-only`` accountant)
    skips rejected steps.
    """

    event: DpEvent = attr.ib(validator=attr.validators.instance_of(DpEvent))
    accepted: bool = attr.ib(validator=attr.validators.instance_of(bool))


@attr.s(frozen=True, slots=True, auto_attribs=True)
class LabelRandomizedResponseDpEvent(DpEvent):
    """A one-time release of the training labels through randomized response
    (Ghazi, Golowich, Kumar, Manurangsi, Zhang, NeurIPS 2021, Algorithm 1: ``rr``;
    Algorithm 2: ``rr-with-prior``).

    Pure ``epsilon``-label-DP under the substitution of one label (Definition 1), a
    different neighbouring notion from the add/remove-one-record DP of the other
    events. ``epsilon`` may be ``inf`` (labels released as they are). ``lp-mst``
    (Algorithm 3) is the whole staged release of LP-MST: each example's label randomized
    exactly once, in the stage of its part of a label-independent partition, by an
    eps-label-DP RRWithPrior whose prior depends only on earlier releases; by parallel and
    adaptive composition (Observation 4) the whole release is eps-label-DP.
    """

    epsilon: float = attr.ib()
    num_classes: int = attr.ib()
    mechanism: str = attr.ib()

    @epsilon.validator
    def _check_epsilon(self, _attr, value):
        validate.positive("epsilon", value, allow_inf=True)

    @num_classes.validator
    def _check_classes(self, _attr, value):
        validate.integer("num_classes", value, minimum=2)

    @mechanism.validator
    def _check_mechanism(self, _attr, value):
        validate.choice("mechanism", value, LABEL_MECHANISMS)


EVENT_TYPES: dict[str, type[DpEvent]] = {
    cls.__name__: cls
    for cls in (
        GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent, ComposedDpEvent,
        NonPrivateDpEvent, NoOpDpEvent, RandomizedResponseDpEvent, LaplaceDpEvent,
        DiscreteLaplaceDpEvent, UnsupportedDpEvent, RepeatAndSelectDpEvent,
        DpisIterationDpEvent, CandidateStepDpEvent, LabelRandomizedResponseDpEvent,
    )
}


def _to_json(value):
    if isinstance(value, DpEvent):
        return event_to_json(value)
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def event_to_json(event: DpEvent) -> dict:
    """``{"type": class name, **fields}``; nested events become nested objects."""
    name = type(event).__name__
    if EVENT_TYPES.get(name) is not type(event):
        raise ValueError(f"cannot write {name} as JSON: not one of {sorted(EVENT_TYPES)}")
    return {"type": name, **{f.name: _to_json(getattr(event, f.name)) for f in attr.fields(type(event))}}


def _from_json(value):
    if isinstance(value, dict):
        return event_from_json(value)
    if isinstance(value, list):
        return [_from_json(v) for v in value]
    return value


def event_from_json(data: dict) -> DpEvent:
    """The event written by :func:`event_to_json`; ValueError names an unknown type or field."""
    if not isinstance(data, dict) or "type" not in data:
        raise ValueError(f"an event must be a JSON object with a 'type', got {data!r}")
    fields = dict(data)
    name = fields.pop("type")
    cls = EVENT_TYPES.get(name)
    if cls is None:
        raise ValueError(f"unknown event type {name!r}; known: {sorted(EVENT_TYPES)}")
    expected = {f.name for f in attr.fields(cls)}
    if set(fields) != expected:
        raise ValueError(f"{name} needs the fields {sorted(expected)}, got {sorted(fields)}")
    return cls(**{k: _from_json(v) for k, v in fields.items()})
