"""DPIS (Wei, Bao, Xiao, Yang, CCS 2022): DP-SGD with importance sampling, Algorithm 1.

Notation as in :mod:`dpnotes.accounting.dpis`: ``b`` = TrainConfig.batch_size, ``C`` =
TrainConfig.clip, ``N~`` the noisy dataset size, ``K~`` the noisy, clamped sum of clipped
gradient norms, ``r = K~ / (N~ C)`` in ``(b/N~, 1]``.

* Train start (Alg. 1 line 3, Eq. 10): ``N~ = N + N(0, sigma_N^2)``, released through
  ``ctx.release`` with sensitivity 1 (one ``GaussianDpEvent(sigma_N)``, Eq. 18).
* Each epoch (lines 8-15): the clipped norm ``||g_i||`` (<= C) of every record at the current
  parameters; ``K' = (1/p_K) sum_{i in B_K} ||g_i|| + N(0, sigma_K^2 C^2)`` over a Poisson
  subsample ``B_K`` of rate ``p_K = b/N~`` (Eq. 11), released through
  ``ctx.release_subsampled_sum`` as the sum with sensitivity C and noise multiplier
  ``sigma_K p_K`` then scaled by ``1/p_K`` -- exactly the accountant's CHOICE in
  :mod:`dpnotes.accounting.dpis` (``PoissonSampledDpEvent(p_K, GaussianDpEvent(sigma_K p_K))``);
  ``K~ = min(max(K', b C + xi), N~ C)`` (Eq. 12); ``sigma_G`` of the epoch from
  :meth:`DPISAccountant.sigma_for_epoch` under the ``a_E`` split (Section 4.2), given the RDP
  the ledger's gradient steps have spent so far.
* Each step: record i is drawn with probability ``p_i = b ||g_i|| / K~`` (Section 3.2,
  capped at 1) and its CURRENT gradient enters the sum as ``g_i / (N~ p(x_i))`` with
  ``p(x) = ||g|| / K~`` (Eq. 7), i.e. rescaled to norm exactly ``K~/N~ = r C``; the noise is
  ``N(0, sigma_G^2 C^2)``, the sum is divided by b (the engine's ``normalize="expected"``:
  ``1/(q N) = 1/b``). The rescaling is done in the ``per_example_gradients`` hook; since
  ``r C <= C`` the engine's clip at C leaves every term as it is (up to its 1e-6 guard), and
  the engine's noise ``sigma C`` with ``sigma = sigma_G`` is Eq. 7's. Each step is one
  ``DpisIterationDpEvent(b, N~, r, sigma_G)`` (Lemma 3.1, Eq. 13).
  We implement Eq. (7), NOT Algorithm 1 line 32, whose weight ``1/(N~ q_t p_t)`` carries an
  extra factor 1/b (terms of norm ``K~/(b N~)``): Lemma 3.1's proof needs norm ``K~/N~``.

Sampling. With ``k`` (Section 3.4, Alg. 1 lines 17-29; Table 2: k = 5 on images), the paper's
two-stage rejection sampler: each record keeps a bound ``g^_i``, set at the epoch start to
``k max(||g_i||, g_L)`` from the full pass; a step first draws X_q with
``q_i = min(b g^_i / K~, 1)``, computes the CURRENT gradients of X_q clipped at
``min(g^_i, C)``, keeps each with probability ``||g_i|| / g^_i`` (its own generator), and sets
``g^_i = k max(||g_i||, g_L)`` for every record of X_q. Net inclusion probability (Eq. 15):
``b ||g_i|| / K~`` with the current clipped norm, as long as no ``q_i`` is capped, i.e.
``K~ > b max_i g^_i`` (``K~ > k b C`` guarantees it). g_L is not printed: ours is ``g_l C``.
Without ``k`` (None): one stage, records drawn with ``b ||g_i|| / K~`` from the norms of the
epoch start while Eq. 7 rescales the current gradient (each term still has norm ``K~/N~`` and
probability at most ``b C / K~``, so Lemma 3.1 holds; the estimator is unbiased only at the
epoch's first step).

Adaptive clipping (Section 3.5, Alg. 1 lines 12, 29, 35, Eq. 17; ``adaptive_clipping``): every
record keeps its latest unclipped gradient norm (the epoch's full pass, then each gradient of
it a step computes); before epoch e+1 (e >= 1) the sum over ALL N records of those norms clipped
at ``C* = c_star C_1`` is released with sensitivity C* and noise multiplier sigma_K (one
``GaussianDpEvent(sigma_K)``, no amplification: line 35 sums every record), and
``C_{e+1} = lambda K~*_e / N~`` (Eq. 17), clamped into ``[MIN_CLIP_FRACTION C_1, C_max]``
(post-processing). The release is made at the next epoch's start, so each epoch record's eps
includes it; the last epoch's sum would serve no epoch and is not released (the sigma_G
schedule still charges E of them, as Eq. 19 does: slightly conservative). The engine clips at
``TrainConfig.clip`` and adds noise ``sigma TrainConfig.clip``: with adaptive clipping that clip
is ``C_max``, the largest any epoch may use, the first epoch's is ``initial_clip``, and the
plug-in returns ``sigma = sigma_G C_e / C_max`` so the noise std is ``sigma_G C_e``; every term
has norm ``K~/N~ <= C_e <= C_max``, so the engine's clip never binds.

Even when a ``q_i`` is capped at 1, record i's net probability stays at most ``b C / K~``
(capped means ``g^_i >= K~/b``, so ``||g_i|| / g^_i <= b ||g_i|| / K~``) and our terms keep norm
``K~/N~`` (Eq. 7's weight uses the intended ``p = ||g|| / K~``, not the realised q p of line
32): the step stays within Eq. 13's bound; what fails is the sampling law, i.e. unbiasedness.

Lemma 3.1's precondition (no record's probability capped at 1, i.e. ``K~ > b max_i ||g_i||``;
``K~ > k b C`` with the rejection sampler) is checked every step: the number of capped
records and the margin ``K~ - b max_i ||g_i||`` (``g^_i`` with the sampler) go into each epoch
record. Without the sampler, norms clipped at C and Eq. 12's floor ``K~ >= b C + xi`` make it
hold; with it, it fails whenever ``K~ <= b max_i g^_i`` (e.g. k b > N~). If it fails,
``on_capped="refuse"`` raises; ``"dpsgd"`` charges the step as
``PoissonSampledDpEvent(min(1, b C / K~), GaussianDpEvent(sigma_G / r))``. Sound because:
the added/removed record z is drawn with probability ``min(1, b ||g_z|| / K~) <= min(1, b C/K~)``
whatever its gradient (the records' maximum over the dataset would NOT bound it), each drawn
term has norm at most ``K~/N~ = r C`` (the rescaling does not depend on the probability), and
the noise std ``sigma_G C`` is ``sigma_G / r`` times that sensitivity. The schedule's RDP then
counts what the ledger holds, so later epochs' sigma_G pay for it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import torch

from dpnotes import validate
from dpnotes.accounting.dpis import DPISAccountant, clamp_norm_sum
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.ledger import DpisIterationDpEvent, GaussianDpEvent, PoissonSampledDpEvent
from dpnotes.methods._rng import method_generator
from dpnotes.train import Plugin
from dpnotes.train.grads import grad_norms, scale_examples

VERSION = 1
ON_CAPPED = ("refuse", "dpsgd")
ORDERS = "integer"  # the DPIS accountant's orders (Section 4.1)


@dataclass(frozen=True)
class Config:
    """DPIS settings; b, C, E, delta come from the TrainConfig.

    epsilon    total budget eps_0 at TrainConfig.delta that the sigma_G schedule meets (Sec. 4.2).
    sigma_n    std of the noise on N (Eq. 10, 18; the paper: 0.02 N).
    sigma_k    noise multiplier of the norm-sum estimate, noise std sigma_K C (Eq. 11; paper 0.02 N).
    a_e        epoch divider a_E in [0, 1]: phase 1 (epochs <= a_E E) projects ratio 1 for later
               epochs, phase 2 the current ratio (Sec. 4.2; Table 2: 0.8 or 1).
    xi         Eq. 12's margin in K~ >= b C + xi (> 0; its value is not printed in the paper).
    on_capped  what to do if a draw probability is capped at 1 (Lemma 3.1 fails): "refuse"
               (raise) or "dpsgd" (charge the step as a plain subsampled Gaussian; module docstring).
    k          the rejection sampler's factor (>= 1; Table 2: 5 on images, 3 on IMDb); None = the
               one-stage draw from the epoch-start norms (module docstring).
    g_l        the sampler's norm floor g_L as a fraction of C (in (0, 1]; the paper: "g_L << C",
               value not printed); only with ``k``.
    adaptive_clipping  Section 3.5's AC (module docstring); then ``initial_clip`` is C_1 and
               TrainConfig.clip the largest clip any epoch may use (>= initial_clip).
    initial_clip  AC only: the first epoch's clip C_1 (> 0).
    c_star     AC only: C* as a multiple of C_1 (> 0; Table 2: 4).
    lam        AC only: lambda of Eq. 17 (> 0; Table 2: 1).
    """

    epsilon: float
    sigma_n: float
    sigma_k: float
    a_e: float = 0.8
    xi: float = 1e-6
    on_capped: str = "refuse"
    k: float | None = None
    g_l: float = 0.01
    adaptive_clipping: bool = False
    initial_clip: float | None = None
    c_star: float = 4.0
    lam: float = 1.0

    def __post_init__(self):
        validate.positive("epsilon", self.epsilon)
        validate.positive("sigma_n", self.sigma_n)
        validate.positive("sigma_k", self.sigma_k)
        validate.probability("a_e", self.a_e, low_open=False)
        validate.positive("xi", self.xi)
        validate.choice("on_capped", self.on_capped, ON_CAPPED)
        if self.k is not None and validate.positive("k", self.k) < 1:
            raise ValueError(f"k must be >= 1 (the rejection sampler's factor), got {self.k!r}")
        validate.probability("g_l", self.g_l)
        if not isinstance(self.adaptive_clipping, bool):
            raise ValueError(f"adaptive_clipping must be True or False, got {self.adaptive_clipping!r}")
        validate.positive("c_star", self.c_star)
        validate.positive("lam", self.lam)
        if self.adaptive_clipping:
            if self.initial_clip is None:
                raise ValueError("adaptive_clipping needs initial_clip (C_1, the first epoch's clip)")
            validate.positive("initial_clip", self.initial_clip)
        elif (self.initial_clip, self.c_star, self.lam) != (None, 4.0, 1.0):
            raise ValueError("initial_clip, c_star and lam are adaptive clipping's: set adaptive_clipping=True")


AC_DEFAULTS = {"adaptive_clipping": False, "initial_clip": None, "c_star": 4.0, "lam": 1.0}
MIN_CLIP_FRACTION = 1e-3  # AC: C_{e+1} >= this times C_1 (a noisy K~* may be tiny or negative)


def resolve(settings: dict) -> dict:
    resolved = dataclasses.asdict(Config(**settings))
    if not resolved["adaptive_clipping"]:  # left out: runs made before AC keep their ids
        for key in AC_DEFAULTS:
            del resolved[key]
    return resolved


def hooks(config: Config) -> tuple:
    return (DPIS(config),)


@dataclass(frozen=True)
class EpochState:
    """What one epoch's steps use: N~, K~, C, sigma_G and the clipped norms (shape [N])."""

    n_tilde: float
    k_tilde: float
    clip: float
    sigma_g: float
    norms: torch.Tensor

    @property
    def ratio(self) -> float:
        return self.k_tilde / (self.n_tilde * self.clip)


def inclusion_probabilities(norms: torch.Tensor, k_tilde: float, batch_size: int):
    """``(min(b ||g_i|| / K~, 1), number capped, K~ - b max_i ||g_i||)`` (Section 3.2)."""
    raw = batch_size * norms.double() / k_tilde
    return raw.clamp(max=1.0), int((raw > 1).sum()), k_tilde - batch_size * float(norms.max())


def accept_draws(raw_norms: torch.Tensor, bounds: torch.Tensor, clip: float, generator: torch.Generator):
    """Second stage of the rejection sampler (Alg. 1 lines 21-26): each drawn record's norm
    clipped at ``min(g^_i, C)`` and kept with probability ``||g_i|| / g^_i``. Returns
    ``(kept, clipped norms)``; draws on the CPU from ``generator``."""
    raw, bounds = raw_norms.double().cpu(), bounds.double().cpu()
    clipped = torch.minimum(raw, bounds.clamp(max=clip))
    u = torch.rand(len(raw), generator=generator, dtype=torch.float64)
    return u < clipped / bounds, clipped


def event_rdp(event, orders: np.ndarray) -> np.ndarray:
    """RDP curve of one gradient-step event (DPIS iteration or its DP-SGD fallback)."""
    if isinstance(event, DpisIterationDpEvent):
        event = event.as_subsampled_gaussian()
    return subsampled_gaussian_rdp(event.sampling_probability, event.event.noise_multiplier, 1, orders)


class DPIS(Plugin):
    """The DPIS plug-in (module docstring)."""

    name = "dpis"

    def __init__(self, config: Config):
        if not isinstance(config, Config):
            raise ValueError(f"config must be a dpis.Config, got {type(config).__name__}")
        self.config = config
        self.n_tilde: float | None = None
        self.spent_rdp = np.zeros(len(resolve_orders(ORDERS)))
        self.epoch_state: EpochState | None = None
        self._probs: torch.Tensor | None = None
        self._capped_now = 0
        self._capped, self._min_margin = 0, math.inf
        self._rdp_cache: dict = {}
        self.bounds: torch.Tensor | None = None  # g^_i of the rejection sampler (with k)
        self.generator: torch.Generator | None = None
        self._generator_state: torch.Tensor | None = None
        self._indices: torch.Tensor | None = None
        self._drawn = self._kept = 0
        self.clip: float | None = None  # C_e: TrainConfig.clip, or with adaptive clipping Eq. 17's
        self.latest: torch.Tensor | None = None  # AC: each record's latest unclipped norm
        self._k_star: float | None = None

    # -- set-up ---------------------------------------------------------------------------
    def _accountant(self, ctx) -> DPISAccountant:
        cfg = self.config
        return DPISAccountant(ctx.config.batch_size, self.n_tilde, ctx.steps_per_epoch, ctx.config.epochs,
                              cfg.sigma_n, cfg.sigma_k, adaptive_clipping=cfg.adaptive_clipping, orders=ORDERS)

    def on_train_start(self, ctx) -> None:
        tc = ctx.config
        if not tc.private or tc.clip is None:
            raise ValueError("DPIS needs a private TrainConfig with clip set")
        if tc.clip_mode != "flat" or tc.normalize != "expected":
            raise ValueError("DPIS (Eq. 7) needs clip_mode='flat' and normalize='expected' (the 1/b of Eq. 7)")
        if self.config.adaptive_clipping and self.config.initial_clip > tc.clip:
            raise ValueError(f"with adaptive clipping TrainConfig.clip ({tc.clip}) is the largest clip an epoch may "
                             f"use and must be >= initial_clip ({self.config.initial_clip})")
        self.generator = method_generator(tc.seed, self.name)
        if self._generator_state is not None:
            self.generator.set_state(self._generator_state)
        if self.clip is None:
            self.clip = self.config.initial_clip if self.config.adaptive_clipping else tc.clip
        if self.n_tilde is not None:  # resumed: N~ was released before
            return
        n_tilde = float(ctx.release(torch.tensor(float(ctx.n), dtype=torch.float64), 1.0, self.config.sigma_n))
        if not n_tilde * tc.clip > tc.batch_size * tc.clip + self.config.xi:
            raise ValueError(f"the released N~ = {n_tilde:.4g} is too small for batch_size={tc.batch_size} "
                             "(need N~ C > b C + xi): sigma_n is too large")
        self.n_tilde = n_tilde
        acct = self._accountant(ctx)
        fixed = rdp_to_epsilon(acct.fixed_rdp(), resolve_orders(ORDERS), tc.delta, "improved")[0]
        if fixed >= self.config.epsilon:
            raise ValueError(f"epsilon = {self.config.epsilon} cannot be met: the N~ and per-epoch K~ releases "
                             f"alone cost {fixed:.4g} (raise epsilon, sigma_n or sigma_k, or lower epochs)")

    def _adapt_clip(self, ctx) -> None:
        """AC (Alg. 1 line 35, Eq. 17): release ``sum_i min(latest_i, C*)`` over all N records
        with sensitivity C* and noise multiplier sigma_K, and set ``C = lambda K~* / N~``."""
        cfg = self.config
        c_star = cfg.c_star * cfg.initial_clip
        total = self.latest.clamp(max=c_star).sum().reshape(1)
        self._k_star = float(ctx.release(total, c_star, cfg.sigma_k)[0])
        self.clip = min(max(cfg.lam * self._k_star / self.n_tilde, MIN_CLIP_FRACTION * cfg.initial_clip),
                        ctx.config.clip)

    def on_epoch_start(self, ctx, epoch: int) -> None:
        tc, cfg = ctx.config, self.config
        if cfg.adaptive_clipping and epoch > 0:
            self._adapt_clip(ctx)
        raw = ctx.per_example_norms().to(torch.float64)
        if cfg.adaptive_clipping:
            self.latest = raw.cpu()
        clip = self.clip
        norms = raw.clamp(max=clip)
        p_k = tc.batch_size / self.n_tilde
        noisy_sum = ctx.release_subsampled_sum(norms.cpu(), p_k, clip, cfg.sigma_k * p_k)
        k_tilde = clamp_norm_sum(float(noisy_sum) / p_k, self.n_tilde, tc.batch_size, clip, cfg.xi)
        ratio = k_tilde / (self.n_tilde * clip)
        sigma_g = self._accountant(ctx).sigma_for_epoch(epoch + 1, ratio, self.spent_rdp, cfg.epsilon,
                                                        tc.delta, cfg.a_e)
        self.epoch_state = EpochState(self.n_tilde, k_tilde, clip, sigma_g, norms.cpu())
        self._capped, self._min_margin = 0, math.inf
        self._drawn = self._kept = 0
        if cfg.k is not None:
            self.bounds = cfg.k * norms.cpu().clamp(min=cfg.g_l * clip)

    # -- per step ---------------------------------------------------------------------------
    def sampling_probabilities(self, ctx):
        s = self.epoch_state
        base = s.norms if self.config.k is None else self.bounds
        probs, capped, margin = inclusion_probabilities(base, s.k_tilde, ctx.config.batch_size)
        self._probs, self._capped_now = probs, capped
        self._capped += capped
        self._min_margin = min(self._min_margin, margin)
        if capped and self.config.on_capped == "refuse":
            raise RuntimeError(f"DPIS: {capped} draw probabilities capped at 1 (K~ = {s.k_tilde:.4g} <= "
                               f"b max||g|| = {s.k_tilde - margin:.4g}): Lemma 3.1 does not cover this step")
        return probs, None

    def noise_multiplier(self, ctx) -> float:
        """sigma_G; with adaptive clipping relative to the engine's clip C_max: std sigma_G C_e."""
        s = self.epoch_state
        return s.sigma_g if s.clip == ctx.config.clip else s.sigma_g * s.clip / ctx.config.clip

    def transform_batch(self, ctx, inputs, targets, indices):
        if self.config.k is not None or self.config.adaptive_clipping:
            self._indices = indices.cpu()  # the sampler's bounds and AC's latest norms are per record
        return inputs, targets

    def per_example_gradients(self, ctx, grad_fn, params, inputs, targets):
        """Eq. 7: each kept gradient rescaled to norm ``K~/N~`` (a zero gradient stays 0); with
        ``k``, the second stage of the sampler decides which are kept (the others count 0)."""
        grads, losses, outputs = grad_fn(params, inputs, targets)
        s = self.epoch_state
        norms = grad_norms(grads)
        if self.config.adaptive_clipping:  # line 29: the latest gradient of every record computed
            self.latest[self._indices] = norms.detach().double().cpu()
        keep = norms > 0
        if self.config.k is not None:
            idx = self._indices
            kept, clipped = accept_draws(norms, self.bounds[idx], s.clip, self.generator)
            self.bounds[idx] = self.config.k * clipped.clamp(min=self.config.g_l * s.clip)
            self._drawn += len(idx)
            self._kept += int(kept.sum())
            keep = keep & kept.to(norms.device)
        scale = torch.where(keep, (s.k_tilde / s.n_tilde) / norms.clamp(min=torch.finfo(norms.dtype).tiny),
                            torch.zeros_like(norms))
        return scale_examples(grads, scale), losses, outputs

    def step_event(self, ctx, noise_multiplier: float):
        s = self.epoch_state
        if self._capped_now:  # on_capped == "dpsgd" (sampling_probabilities raised otherwise)
            rate = min(1.0, ctx.config.batch_size * s.clip / s.k_tilde)
            return PoissonSampledDpEvent(rate, GaussianDpEvent(s.sigma_g / s.ratio))
        return DpisIterationDpEvent(batch_size=ctx.config.batch_size, n_tilde=s.n_tilde, ratio=s.ratio,
                                    sigma_g=s.sigma_g)

    def on_step_end(self, ctx, info: dict) -> None:
        event = ctx.ledger.entries[-1][0]  # what this step was charged
        if event not in self._rdp_cache:
            self._rdp_cache[event] = event_rdp(event, resolve_orders(ORDERS))
        self.spent_rdp = self.spent_rdp + self._rdp_cache[event]

    def on_epoch_end(self, ctx, record: dict) -> dict:
        s = self.epoch_state
        out = {"dpis_n_tilde": s.n_tilde, "dpis_k_tilde": s.k_tilde, "dpis_ratio": s.ratio,
               "dpis_sigma_g": s.sigma_g, "dpis_capped_draws": self._capped,
               "dpis_min_margin": self._min_margin}
        if self.config.k is not None:  # first-stage draws (k b expected per step) and those kept (b)
            out.update(dpis_drawn=self._drawn, dpis_kept=self._kept)
        if self.config.adaptive_clipping:  # this epoch's C_e, and the K~* that set it (None: epoch 1)
            out.update(dpis_clip=s.clip, dpis_k_star=self._k_star)
        return out

    # -- checkpoints (taken at epoch ends; the next epoch recomputes its state) ------------------
    def state_dict(self) -> dict:
        state = {"n_tilde": self.n_tilde, "spent_rdp": self.spent_rdp.tolist(),
                 "generator": self.generator.get_state()}
        if self.config.adaptive_clipping:  # the next epoch's K~* reads these
            state.update(clip=self.clip, latest=self.latest, k_star=self._k_star)
        return state

    def load_state_dict(self, state: dict) -> None:
        self.n_tilde = state["n_tilde"]
        self.spent_rdp = np.asarray(state["spent_rdp"], dtype=float)
        generator = state.get("generator")  # absent from checkpoints written before the sampler
        self._generator_state = None if generator is None else generator.cpu()
        if self.config.adaptive_clipping:
            self.clip, self.latest, self._k_star = state["clip"], state["latest"].cpu(), state["k_star"]
