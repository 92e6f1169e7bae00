"""Privacy accounting of DPIS (Wei, Bao, Xiao, Yang, CCS 2022), Lemma 3.1 and Section 4.

No author code exists; this follows the paper's text. Notation: ``b`` expected batch
size, ``N~`` the noisy dataset size, ``C`` the clipping bound, ``K~`` the clamped noisy
sum of clipped gradient norms (Eq. 12, ``b C < K~ <= N~ C``), and
``ratio = K~ / (N~ C)`` in ``(b / N~, 1]``.

* One DPIS iteration (Lemma 3.1, Eq. 13) is a Poisson-subsampled Gaussian with sampling
  rate ``b C / K~ = (b / N~) / ratio`` and noise multiplier ``sigma_G / ratio``: record z
  is drawn with probability ``b ||g_z|| / K~ <= b C / K~`` and contributes
  ``g_z / (N~ p(z))`` of norm ``K~ / N~`` to a sum with noise std ``sigma_G C`` (Eq. 7).
  With ``ratio = 1`` it is the DP-SGD step (Eq. 6) with rate ``b / N~``.
* ``N~`` (Eq. 10, 18): Gaussian mechanism, sensitivity 1, noise std ``sigma_N``; once.
* ``K~_{e,1}`` (Eq. 11): a rate-``p_K = b / N~`` subsample's norm sum scaled by ``1/p_K``,
  plus noise ``N(0, sigma_K^2 C^2)``; once per epoch. CHOICE: the scaled sum has
  sensitivity ``C / p_K``, so we charge a subsampled Gaussian with noise multiplier
  ``sigma_K * p_K``. Eq. (19) charges multiplier ``sigma_K``, which holds only if the
  noise were added before the ``1/p_K`` scaling; ours is the bound for Eq. (11) as printed.
* ``K~*_e`` (adaptive clipping, Algorithm 1 line 35): a sum over ALL N records with noise
  ``N(0, sigma_K^2 C*^2)``; once per epoch when adaptive clipping is on. CHOICE: no
  subsampling amplification (line 35 reads every record), unlike Eq. (19).
* Everything composes additively in RDP (Section 4.1) and converts with Lemma 2.5
  (Canonne et al., the "improved" conversion) at integer orders ("given any integer
  alpha > 1").

Budget allocation (Section 4.2, divider ``a_E``): before epoch ``e`` (1-based), ``sigma_G``
is the smallest value whose projected total stays within the budget: what was spent,
plus this epoch at its actual ``K~``, plus every later epoch at the same ``sigma_G``
and a projected ratio -- the worst case 1 in the first ``a_E * E`` epochs (phase 1),
the current ratio afterwards (phase 2, "all K~ in future equals the current one").
Every choice keeps the realized total within budget whatever later ratios turn out to be.

Caveat (not modelled, checked by the engine): Lemma 3.1 needs the rejection-sampling
step probability ``q_t = b g^_t / K~`` below 1, i.e. ``K~ > k b C`` (Section 3.4); Eq. (12)
only enforces ``K~ > b C``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np

from dpnotes import validate
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp

CONVERSION = "improved"  # Lemma 2.5 (Canonne et al. 2020)


def clamp_norm_sum(k_noisy: float, n_tilde: float, batch_size: float, clip: float, xi: float) -> float:
    """Eq. (12): ``K~ = min(max(K', b C + xi), N~ C)``."""
    if isinstance(k_noisy, bool) or not isinstance(k_noisy, Real) or not math.isfinite(k_noisy):
        raise ValueError(f"k_noisy must be a finite real number, got {k_noisy!r}")
    n_tilde, batch_size = validate.positive("n_tilde", n_tilde), validate.positive("batch_size", batch_size)
    clip, xi = validate.positive("clip", clip), validate.positive("xi", xi)
    if batch_size * clip + xi >= n_tilde * clip:
        raise ValueError("batch_size * clip + xi must be < n_tilde * clip (the batch must be smaller than N~)")
    return min(max(k_noisy, batch_size * clip + xi), n_tilde * clip)


def _check_ratio(ratio, batch_size: float, n_tilde: float) -> float:
    ratio = validate.probability("ratio", ratio)
    if ratio <= batch_size / n_tilde:
        raise ValueError(f"ratio = K~/(N~ C) must be in (b/N~, 1] = ({batch_size / n_tilde}, 1], got {ratio}")
    return ratio


def iteration_rdp(ratio: float, sigma_g: float, batch_size: float, n_tilde: float, orders="integer") -> np.ndarray:
    """Lemma 3.1 (Eq. 13): RDP of one DPIS gradient release, ``ratio = K~ / (N~ C)``."""
    batch_size, n_tilde = validate.positive("batch_size", batch_size), validate.positive("n_tilde", n_tilde)
    ratio = _check_ratio(ratio, batch_size, n_tilde)
    sigma_g = validate.positive("sigma_g", sigma_g)
    return subsampled_gaussian_rdp(batch_size / (n_tilde * ratio), sigma_g / ratio, 1, orders)


@dataclass(frozen=True)
class DPISAccountant:
    """The fixed parameters of one DPIS run; methods give its RDP, eps and sigma_G schedule.

    ``steps_per_epoch`` is T (the paper fixes T = |D| / b), ``epochs`` is E, ``sigma_n``
    the noise std on N, ``sigma_k`` the noise multiplier of Eq. (11) / line 35.
    """

    batch_size: float
    n_tilde: float
    steps_per_epoch: int
    epochs: int
    sigma_n: float
    sigma_k: float
    adaptive_clipping: bool = False
    orders: str | Sequence[float] = "integer"

    def __post_init__(self):
        validate.positive("batch_size", self.batch_size)
        validate.positive("n_tilde", self.n_tilde)
        if self.batch_size >= self.n_tilde:
            raise ValueError(f"batch_size must be < n_tilde, got {self.batch_size} >= {self.n_tilde}")
        validate.integer("steps_per_epoch", self.steps_per_epoch, minimum=1)
        validate.integer("epochs", self.epochs, minimum=1)
        validate.positive("sigma_n", self.sigma_n)
        validate.positive("sigma_k", self.sigma_k)
        if not isinstance(self.adaptive_clipping, bool):
            raise ValueError(f"adaptive_clipping must be True or False, got {self.adaptive_clipping!r}")
        resolve_orders(self.orders)

    @property
    def _orders(self) -> np.ndarray:
        return resolve_orders(self.orders)

    def fixed_rdp(self) -> np.ndarray:
        """RDP of releasing N~ once, K~_{e,1} every epoch and, with adaptive clipping, K~*_e every epoch."""
        a, p_k = self._orders, self.batch_size / self.n_tilde
        total = subsampled_gaussian_rdp(1.0, self.sigma_n, 1, a)  # Eq. (18)
        total = total + subsampled_gaussian_rdp(p_k, self.sigma_k * p_k, self.epochs, a)  # Eq. (11)
        if self.adaptive_clipping:
            total = total + subsampled_gaussian_rdp(1.0, self.sigma_k, self.epochs, a)  # line 35
        return total

    def epoch_rdp(self, ratio: float, sigma_g: float) -> np.ndarray:
        """RDP of the T gradient releases of one epoch (one K~, one sigma_G per epoch)."""
        return self.steps_per_epoch * iteration_rdp(ratio, sigma_g, self.batch_size, self.n_tilde, self._orders)

    def rdp(self, ratios: Sequence[float], sigmas: Sequence[float]) -> np.ndarray:
        """Total RDP of a run with one ``(ratio, sigma_G)`` per epoch (Section 4.1)."""
        ratios, sigmas = list(ratios), list(sigmas)
        if len(ratios) != self.epochs or len(sigmas) != self.epochs:
            raise ValueError(f"ratios and sigmas need one value per epoch ({self.epochs}), "
                             f"got {len(ratios)} and {len(sigmas)}")
        return self.fixed_rdp() + sum(self.epoch_rdp(r, s) for r, s in zip(ratios, sigmas))

    def epsilon(self, ratios: Sequence[float], sigmas: Sequence[float], delta: float) -> tuple[float, float]:
        """``(eps, order)`` of a run (Lemma 2.5 conversion)."""
        return rdp_to_epsilon(self.rdp(ratios, sigmas), self._orders, delta, CONVERSION)

    def sigma_for_epoch(
        self, epoch: int, ratio: float, spent_rdp: np.ndarray, epsilon: float, delta: float, a_e: float
    ) -> float:
        """Section 4.2: the smallest sigma_G for 1-based ``epoch`` given the gradient RDP spent so far."""
        epoch = validate.integer("epoch", epoch, minimum=1)
        if epoch > self.epochs:
            raise ValueError(f"epoch must be in [1, {self.epochs}], got {epoch}")
        ratio = _check_ratio(ratio, self.batch_size, self.n_tilde)
        epsilon = validate.positive("epsilon", epsilon)
        a_e = validate.probability("a_e", a_e, low_open=False)
        a = self._orders
        base = self.fixed_rdp() + np.asarray(spent_rdp, dtype=float)
        if rdp_to_epsilon(base, a, delta, CONVERSION)[0] >= epsilon:
            raise ValueError(f"epsilon = {epsilon} is already spent by the N~/K~ releases and earlier epochs")
        future_ratio = 1.0 if epoch <= a_e * self.epochs else ratio
        later = self.epochs - epoch

        def excess(log_sigma: float) -> float:
            s = float(np.exp(log_sigma))
            rdp = base + self.epoch_rdp(ratio, s) + (later * self.epoch_rdp(future_ratio, s) if later else 0.0)
            return rdp_to_epsilon(rdp, a, delta, CONVERSION)[0] - epsilon

        lo, hi = np.log(0.05), np.log(2.0)
        while excess(hi) > 0:  # bracket: excess(lo) > 0 >= excess(hi)
            lo, hi = hi, hi + np.log(4.0)
        while excess(lo) <= 0:
            lo, hi = lo - np.log(4.0), lo
        while not np.isfinite(excess(lo)):  # brentq needs finite values
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if excess(mid) <= 0 else (mid, hi)
        from scipy.optimize import brentq  # about 0.4 s: only where sigma is calibrated

        root = brentq(excess, lo, hi, xtol=1e-10, rtol=1e-10)
        while excess(root) > 0:  # make sure we land on the feasible side
            root += 1e-9
        return float(np.exp(root))

    def noise_schedule(self, ratios: Sequence[float], epsilon: float, delta: float, a_e: float) -> np.ndarray:
        """sigma_G of every epoch when the epochs' ratios turn out to be ``ratios`` (Algorithm 1, line 15)."""
        ratios = list(ratios)
        if len(ratios) != self.epochs:
            raise ValueError(f"ratios need one value per epoch ({self.epochs}), got {len(ratios)}")
        spent = np.zeros_like(self._orders)
        sigmas = []
        for e, r in enumerate(ratios, start=1):
            sigmas.append(self.sigma_for_epoch(e, r, spent, epsilon, delta, a_e))
            spent = spent + self.epoch_rdp(r, sigmas[-1])
        return np.array(sigmas)
