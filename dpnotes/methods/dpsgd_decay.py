"""DP-SGD with exponentially decaying noise (Yu, Liu, Pu, Gursoy, Truex: "Differentially
Private Model Publishing for Deep Learning", IEEE S&P 2019, Sec. IV, exponential decay
sigma_t = sigma_0 exp(-k t)); the DP-SGD-Decay baseline of DPIS (Wei et al., CCS 2022,
Sec. 5.1: "we choose the decay rate in [0.001, 0.01] according to Yu et al.").

t is the epoch (0-based; ours: Yu et al. update the noise scale once per epoch) and sigma_0 is
``TrainConfig.noise_multiplier``. Every step is the engine's own release, a
``PoissonSampledDpEvent(q, GaussianDpEvent(sigma_t))``, so every accountant of the subsampled
Gaussian prices the run; :func:`initial_sigma` calibrates sigma_0 so that the whole schedule
meets a budget. With ``decay_rate = 0`` the method is DP-SGD.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import lru_cache

from dpnotes import validate
from dpnotes.accounting.calibrate import ledger_scale
from dpnotes.accounting.registry import ACCOUNTANT_NAMES
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.train.plugins import Plugin

VERSION = 1


@dataclass(frozen=True)
class Config:
    """``decay_rate``: k of sigma_t = sigma_0 exp(-k t), t the epoch, in [0, 1]."""

    decay_rate: float = 0.01

    def __post_init__(self):
        validate.probability("decay_rate", self.decay_rate, low_open=False)  # per epoch; DPIS: [0.001, 0.01]


def resolve(settings: dict) -> dict:
    return dataclasses.asdict(Config(**settings))


def schedule(sigma0: float, decay_rate: float, epochs: int) -> list[float]:
    """sigma_t = sigma_0 exp(-k t) for t = 0 .. epochs - 1."""
    validate.positive("sigma0", sigma0)
    Config(decay_rate)
    return [sigma0 * math.exp(-decay_rate * t) for t in range(validate.integer("epochs", epochs, minimum=1))]


def ledger(sigma0: float, decay_rate: float, q: float, steps_per_epoch: int, epochs: int) -> Ledger:
    """The releases of a whole run: ``steps_per_epoch`` steps at each epoch's sigma_t."""
    q = validate.probability("q", q)
    steps_per_epoch = validate.integer("steps_per_epoch", steps_per_epoch, minimum=1)
    out = Ledger()
    for sigma in schedule(sigma0, decay_rate, epochs):
        out.append(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps_per_epoch)
    return out


def initial_sigma(epsilon: float, decay_rate: float, q: float, steps_per_epoch: int, epochs: int, delta: float, *,
                  accountant: str = "rdp", digits: int | None = None) -> float:
    """The smallest sigma_0 whose schedule meets (``epsilon``, ``delta``) under ``accountant``;
    cached by its checked inputs (run configs ask for the same calibration many times)."""
    Config(decay_rate)
    return _initial_sigma(
        validate.positive("epsilon", epsilon), float(decay_rate), validate.probability("q", q),
        validate.integer("steps_per_epoch", steps_per_epoch, minimum=1), validate.integer("epochs", epochs, minimum=1),
        validate.probability("delta", delta, high_open=True),
        validate.choice("accountant", accountant, ACCOUNTANT_NAMES),
        None if digits is None else validate.integer("digits", digits, minimum=1))


@lru_cache(maxsize=256)
def _initial_sigma(epsilon: float, decay_rate: float, q: float, steps_per_epoch: int, epochs: int, delta: float,
                   accountant: str, digits: int | None) -> float:
    from dpnotes import calc_cache

    inputs = (epsilon, decay_rate, q, steps_per_epoch, epochs, delta, accountant, digits)
    return calc_cache.cached("dpsgd_decay.initial_sigma", inputs, lambda: ledger_scale(
        lambda s: ledger(s, decay_rate, q, steps_per_epoch, epochs), epsilon, delta, accountant=accountant,
        digits=digits))


class NoiseDecay(Plugin):
    """The noise multiplier of epoch t is sigma_0 exp(-k t); stateless, so resume is exact."""

    name = "dpsgd-decay"

    def __init__(self, config: Config):
        self.config = config

    def noise_multiplier(self, ctx) -> float:
        return ctx.config.noise_multiplier * math.exp(-self.config.decay_rate * ctx.epoch)

    def step_event(self, ctx, noise_multiplier: float):
        return PoissonSampledDpEvent(ctx.q, GaussianDpEvent(noise_multiplier))

    def on_epoch_end(self, ctx, record: dict) -> dict:
        return {"noise_multiplier": self.noise_multiplier(ctx)}


def hooks(config: Config) -> tuple:
    return (NoiseDecay(config),)
