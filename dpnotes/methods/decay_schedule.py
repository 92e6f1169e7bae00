"""DP-SGD-Decay's noise schedule and its calibration (:mod:`dpnotes.methods.dpsgd_decay`),
without the training plug-in: the experiments that only calibrate sigma_0 (DPIS's run configs)
import no torch. Yu, Liu, Pu, Gursoy, Truex, IEEE S&P 2019, Sec. IV: sigma_t = sigma_0 exp(-k t),
t the epoch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from dpnotes import validate
from dpnotes.accounting.registry import ACCOUNTANT_NAMES

if TYPE_CHECKING:
    from dpnotes.ledger import Ledger


@dataclass(frozen=True)
class Config:
    """``decay_rate``: k of sigma_t = sigma_0 exp(-k t), t the epoch, in [0, 1]."""

    decay_rate: float = 0.01

    def __post_init__(self):
        validate.probability("decay_rate", self.decay_rate, low_open=False)  # per epoch; DPIS: [0.001, 0.01]


def schedule(sigma0: float, decay_rate: float, epochs: int) -> list[float]:
    """sigma_t = sigma_0 exp(-k t) for t = 0 .. epochs - 1."""
    validate.positive("sigma0", sigma0)
    Config(decay_rate)
    return [sigma0 * math.exp(-decay_rate * t) for t in range(validate.integer("epochs", epochs, minimum=1))]


def ledger(sigma0: float, decay_rate: float, q: float, steps_per_epoch: int, epochs: int) -> Ledger:
    """The releases of a whole run: ``steps_per_epoch`` steps at each epoch's sigma_t."""
    from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

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
    from dpnotes.accounting.calibrate import ledger_scale

    inputs = (epsilon, decay_rate, q, steps_per_epoch, epochs, delta, accountant, digits)
    return calc_cache.cached("dpsgd_decay.initial_sigma", inputs, lambda: ledger_scale(
        lambda s: ledger(s, decay_rate, q, steps_per_epoch, epochs), epsilon, delta, accountant=accountant,
        digits=digits))
