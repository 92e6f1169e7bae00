"""DP-SGD with exponentially decaying noise (Yu, Liu, Pu, Gursoy, Truex: "Differentially
Private Model Publishing for Deep Learning", IEEE S&P 2019, Sec. IV, exponential decay
sigma_t = sigma_0 exp(-k t)); the DP-SGD-Decay baseline of DPIS (Wei et al., CCS 2022,
Sec. 5.1: "we choose the decay rate in [0.001, 0.01] according to Yu et al.").

t is the epoch (0-based; ours: Yu et al. update the noise scale once per epoch) and sigma_0 is
``TrainConfig.noise_multiplier``. Every step is the engine's own release, a
``PoissonSampledDpEvent(q, GaussianDpEvent(sigma_t))``, so every accountant of the subsampled
Gaussian prices the run; :func:`initial_sigma` calibrates sigma_0 so that the whole schedule
meets a budget (both in :mod:`dpnotes.methods.decay_schedule`, which imports no torch). With
``decay_rate = 0`` the method is DP-SGD.
"""

from __future__ import annotations

import dataclasses
import math

from dpnotes.ledger import GaussianDpEvent, PoissonSampledDpEvent
from dpnotes.methods.decay_schedule import Config, initial_sigma, ledger, schedule
from dpnotes.train.plugins import Plugin

VERSION = 1
__all__ = ["VERSION", "Config", "NoiseDecay", "hooks", "initial_sigma", "ledger", "resolve", "schedule"]


def resolve(settings: dict) -> dict:
    return dataclasses.asdict(Config(**settings))


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
