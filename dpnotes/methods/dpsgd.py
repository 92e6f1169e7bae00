"""DP-SGD (Abadi et al., CCS 2016, Algorithm 1), the loop's own step: nothing to plug in.

Poisson-sampled lots (rate q = B/N), per-example clipping to C, Gaussian noise
N(0, sigma^2 C^2) on the sum; every step is one ``PoissonSampledDpEvent(q,
GaussianDpEvent(sigma))`` in the ledger. All settings are those of
:class:`dpnotes.train.TrainConfig`; the same method with ``private=False`` is the
non-private baseline (its ledger holds ``NonPrivateDpEvent``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

VERSION = 1


@dataclass(frozen=True)
class Config:
    """DP-SGD has no settings beyond the engine's TrainConfig."""


def resolve(settings: dict) -> dict:
    return dataclasses.asdict(Config(**settings))


def hooks(config: Config) -> tuple:
    return ()
