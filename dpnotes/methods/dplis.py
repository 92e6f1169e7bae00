"""DPlis (Wang et al., PETS 2021): DP-SGD on a randomly smoothed loss, Algorithm 2 / Eq. 6.

Each step draws K perturbations of ALL trainable parameters,

    theta_j = theta + R * (eta/L) * nu_j,    nu_j ~ N(0, sigma^2 C^2 I),   j = 1..K   (Eq. 6)

so the smoothing std is R * (eta/L) * sigma * C, and takes each example's gradient at every
theta_j, combined over j BEFORE clipping (Alg. 2, "Compute gradient"):

* ``combine="mean"``: g_i = (1/K) sum_j grad L(theta_j, x_i), as in Alg. 2 and Eq. 6;
* ``combine="sum"``: g_i = sum_j grad L(theta_j, x_i), as in the authors' code
  (wangwenxiao/DPlis ``dp_train.py --mode smooth_loss``); with C = 1 the sum is clipped far
  more often than the mean.

Then the engine clips g_i to C, adds N(0, sigma^2 C^2) to the sum and steps: the sensitivity
is C as in DP-SGD, so the method writes no ledger event of its own (the engine's
Poisson-subsampled Gaussian per step prices it). eta/L is the step size of plain SGD on the
noisy SUM (the authors' code; Alg. 2's 1/L and eta folded into one lr), so the run's
TrainConfig must have ``optimizer="sgd"``, ``normalize="none"`` and ``lr_schedule="constant"``
(``lr`` = eta/L; Table 1: 6e-4); anything else is refused when training starts.

Draws are shared by the whole batch (one theta_j per draw and step, as in the authors' code;
Alg. 2 writes the draw inside "for each i", which is ambiguous). Per-example draws are not
offered: ``grad_fn`` evaluates one parameter set per call, so they would cost B*K calls.
The losses and outputs returned for the running train metrics are those of the last draw
(as the authors' code logs them). The draws come from the method's own generator
(:mod:`dpnotes.methods._rng`), so a smoothed run and its R = 0 baseline with the same seed see
the same batches and DP noise; with R = 0 the step is exactly the DP-SGD step.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from dpnotes import validate
from dpnotes.methods._rng import method_generator
from dpnotes.train import Plugin, TrainConfig
from dpnotes.train.grads import add_examples, scale_examples

VERSION = 1
COMBINES = ("mean", "sum")


@dataclass(frozen=True)
class Config:
    """DPlis settings (Sec. 3.2, Eq. 6; Sec. 5.1).

    K        number of smoothing samples per step (integer >= 1; the paper's images: 10).
    R        smoothing radius (>= 0): the perturbation std is R * lr * sigma * C (Eq. 6 with
             lr = eta/L); Table 2 reports R = 10 and R_best (Table 6). R = 0 is DP-SGD.
    combine  "mean" over the K gradients (Alg. 2, Eq. 6) or "sum" (the authors' code).
    """

    K: int = 10
    R: float = 10.0
    combine: str = "mean"

    def __post_init__(self):
        validate.integer("K", self.K, minimum=1)
        object.__setattr__(self, "R", validate.nonnegative("R", self.R))
        validate.choice("combine", self.combine, COMBINES)


def resolve(settings: dict) -> dict:
    return dataclasses.asdict(Config(**settings))


def hooks(config: Config) -> tuple:
    return (DPlis(config),)


def smoothing_std(config: TrainConfig, R: float) -> float:
    """R * (eta/L) * sigma * C (Eq. 6), eta/L = ``config.lr``; ``ValueError`` naming the
    TrainConfig parameter when the run's step is not plain SGD on the noisy sum."""
    for name, wanted in (("optimizer", "sgd"), ("normalize", "none"), ("lr_schedule", "constant")):
        if getattr(config, name) != wanted:
            raise ValueError(f"DPlis needs TrainConfig {name}={wanted!r} (lr = eta/L on the noisy "
                             f"sum, Alg. 2 / Eq. 6), got {name}={getattr(config, name)!r}")
    return R * config.lr * config.noise_multiplier * (config.clip or 0.0)


class DPlis(Plugin):
    """The ``per_example_gradients`` hook of DPlis (module docstring)."""

    name = "dplis"

    def __init__(self, config: Config):
        if not isinstance(config, Config):
            raise ValueError(f"config must be a dplis.Config, got {type(config).__name__}")
        self.config = config
        self.std = 0.0
        self.generator: torch.Generator | None = None
        self._restored: torch.Tensor | None = None
        self._buffers: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}

    def on_train_start(self, ctx) -> None:
        self.std = smoothing_std(ctx.config, self.config.R)
        # on the parameters' device: drawn on the CPU, the CIFAR-10 MLP's 4.9M parameters take about
        # 50 ms a draw, and its K = 10 step ran at 167x a non-private step on an H200 (README);
        # on the CPU the stream is the one it always was (stored records stay bit-identical)
        self.generator = method_generator(ctx.config.seed, self.name, ctx.device)
        if self._restored is not None:  # resuming: the checkpoint's stream, not a fresh one
            self.generator.set_state(self._restored)
            self._restored = None

    def per_example_gradients(self, ctx, grad_fn, params, inputs, targets):
        K = self.config.K
        if self.std == 0:  # R = 0 (or no noise): K equal gradients, the DP-SGD step exactly
            grads, losses, outputs = grad_fn(params, inputs, targets)
            return (scale_examples(grads, K) if self.config.combine == "sum" else grads, losses, outputs)
        total = None
        for _ in range(K):  # one draw of all parameters per j, shared by the batch
            grads, losses, outputs = grad_fn(self._draw(params), inputs, targets)
            total = grads if total is None else add_examples(total, grads)
        if self.config.combine == "mean":  # dense: divided, as before (bit-identical runs)
            total = {k: g / K for k, g in total.items()} if isinstance(total, dict) \
                else scale_examples(total, 1.0 / K)
        return total, losses, outputs

    def _draw(self, params: dict) -> dict:
        """theta + std * nu for one draw, in buffers kept across draws and steps. The values are
        today's ``v + std * torch.randn(v.shape, generator=...)`` exactly: the noise is drawn into
        a contiguous buffer (the same kernel and stream as a fresh ``randn``), scaled, then added
        in the parameter's own memory format (a conv weight's channels-last: a contiguous one
        sends the convolution and its pooling down torch's slow NCHW CPU path, 3.5x per pool)."""
        out = {}
        for k, v in params.items():
            noise, shifted = self._buffers.get(k, (None, None))
            if shifted is None or shifted.shape != v.shape or shifted.dtype != v.dtype \
                    or shifted.device != v.device or shifted.stride() != v.stride():
                noise = torch.empty(v.shape, dtype=v.dtype, device=v.device)
                shifted = torch.empty_like(v)
                self._buffers[k] = noise, shifted
            torch.randn(v.shape, generator=self.generator, dtype=v.dtype, device=v.device, out=noise)
            out[k] = torch.add(v, noise.mul_(self.std), out=shifted)
        return out

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self._restored = state["generator"].cpu()
