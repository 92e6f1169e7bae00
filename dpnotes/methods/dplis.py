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

``draws`` (issue #36; not the paper's) picks how the perturbations are drawn. ``"torch"`` (the
default, left out of the resolved settings so that the stored runs keep their ids): each
parameter's nu_j by ``torch.randn`` on the method's generator, the stream of every stored
record. ``"implicit-first-layer"``, for new seeds only (``DRAWS_FROM_SEED`` in
:mod:`dpnotes.experiments.dplis.runs`): the first layer (a Linear reading the model's input x,
[B, p]) only ever sees its perturbed weight through x (W + s nu)^T = x W^T + s x nu^T, and for
nu [h, p] with iid N(0, 1) entries, x nu^T = R^T Z in distribution, where x^T = Q R is the
reduced QR decomposition (Q [p, k] orthonormal, R [k, B], k = min(B, p)) and Z = (nu Q)^T [k, h]
is iid N(0, 1) (an orthonormal projection of iid normals). So the step draws Z (k h numbers
instead of p h: 12x fewer for the CIFAR-10 MLP at B = 256) and adds s R^T Z to the layer's
output, R once per step (the same x for all K draws); every other parameter is drawn as with
"torch". The product x W^T is the same for the K draws: it is formed once per step, and each draw's
first-layer output is x W^T + s R^T Z + b_j (:class:`_FirstLayer`, whose backward is the Linear's).
The per-example gradients at the K draws then have exactly the distribution of Eq. 6's (the
sample differs: a different stream). It needs the ghost backend (whose forward sees the
whole batch) and refuses a model whose first trainable layer is not a Linear reading the input.
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass

import torch

from dpnotes import validate
from dpnotes.methods._rng import method_generator
from dpnotes.train import Plugin, TrainConfig
from dpnotes.train.grads import add_examples, scale_examples

VERSION = 1
COMBINES = ("mean", "sum")
DRAWS = ("torch", "implicit-first-layer")  # the first: the stored records' stream (module docstring)


@dataclass(frozen=True)
class Config:
    """DPlis settings (Sec. 3.2, Eq. 6; Sec. 5.1).

    K        number of smoothing samples per step (integer >= 1; the paper's images: 10).
    R        smoothing radius (>= 0): the perturbation std is R * lr * sigma * C (Eq. 6 with
             lr = eta/L); Table 2 reports R = 10 and R_best (Table 6). R = 0 is DP-SGD.
    combine  "mean" over the K gradients (Alg. 2, Eq. 6) or "sum" (the authors' code).
    draws    how the perturbations are drawn, one of DRAWS (module docstring; not the paper's).
    """

    K: int = 10
    R: float = 10.0
    combine: str = "mean"
    draws: str = DRAWS[0]

    def __post_init__(self):
        validate.integer("K", self.K, minimum=1)
        object.__setattr__(self, "R", validate.nonnegative("R", self.R))
        validate.choice("combine", self.combine, COMBINES)
        validate.choice("draws", self.draws, DRAWS)


def resolve(settings: dict) -> dict:
    """The settings with defaults filled in, except ``draws`` when it is the stored stream's
    (the run specs made before ``draws`` existed, hence their ids, stay as they were)."""
    out = dataclasses.asdict(Config(**settings))
    if out["draws"] == DRAWS[0]:
        del out["draws"]
    return out


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
        self._first: str | None = None  # draws="implicit-first-layer": the first layer's weight name
        # (its input, x W^T + s R^T Z) for the first layer's next call, set by a draw
        self._pending: tuple[torch.Tensor, torch.Tensor] | None = None
        self._patched = False  # the first layer's forward, replaced for good (a plain Linear outside a draw)

    def on_train_start(self, ctx) -> None:
        self.std = smoothing_std(ctx.config, self.config.R)
        # on the parameters' device: drawn on the CPU, the CIFAR-10 MLP's 4.9M parameters take about
        # 50 ms a draw, and its K = 10 step ran at 167x a non-private step on an H200 (README);
        # on the CPU the stream is the one it always was (stored records stay bit-identical)
        self.generator = method_generator(ctx.config.seed, self.name, ctx.device)
        if self.config.draws == "implicit-first-layer" and not self._patched:
            self._first, module = first_linear(ctx.model)
            if ctx.config.grad_backend != "ghost":
                raise ValueError("DPlis draws='implicit-first-layer' needs grad_backend='ghost' (got "
                                 f"{ctx.config.grad_backend!r}): its forward pass must see the whole batch")
            module._dplis_draws = self  # read by _first_layer_forward; a deep copy of the model copies both
            module.forward = types.MethodType(_first_layer_forward, module)
            self._patched = True
        if self._restored is not None:  # resuming: the checkpoint's stream, not a fresh one
            self.generator.set_state(self._restored)
            self._restored = None

    def per_example_gradients(self, ctx, grad_fn, params, inputs, targets):
        K = self.config.K
        if self.std == 0:  # R = 0 (or no noise): K equal gradients, the DP-SGD step exactly
            grads, losses, outputs = grad_fn(params, inputs, targets)
            return (scale_examples(grads, K) if self.config.combine == "sum" else grads, losses, outputs)
        total = None
        x = inputs[0]
        if self._first is not None:  # per step: R [k, B] (x^T = QR) and x W^T, shared by the K draws
            flat = x.reshape(len(x), -1)
            r = torch.linalg.qr(flat.T, mode="r")[1]
            with torch.no_grad():
                base = flat @ params[self._first].T
        for _ in range(K):  # one draw of all parameters per j, shared by the batch
            drawn = self._draw(params) if self._first is None else self._draw_implicit(params, x, r, base)
            grads, losses, outputs = grad_fn(drawn, inputs, targets)
            if self._pending is not None:
                self._pending = None
                raise ValueError("DPlis draws='implicit-first-layer': the first layer was not called")
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

    def _draw_implicit(self, params: dict, x: torch.Tensor, r: torch.Tensor, base: torch.Tensor) -> dict:
        """One draw with the first layer's weight left as it is and ``x W^T + s R^T Z`` (``base`` = x W^T)
        set aside for its output (module docstring), Z drawn at the weight's place in the parameters' order."""
        out = {}
        for k, v in params.items():
            if k == self._first:
                z = torch.randn((r.shape[0], v.shape[0]), generator=self.generator, dtype=v.dtype, device=v.device)
                self._pending = x, torch.addmm(base, r.T, z, alpha=self.std)
                out[k] = v
            else:
                out.update(self._draw({k: v}))
        return out

    def state_dict(self) -> dict:
        return {"generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self._restored = state["generator"].cpu()


def _first_layer_forward(module: torch.nn.Linear, a: torch.Tensor) -> torch.Tensor:
    """The first layer's forward under draws="implicit-first-layer": a plain Linear outside a draw
    (e.g. evaluation); in a draw, the draw's ``x W^T + s R^T Z`` plus the bias (:class:`_FirstLayer`);
    ``ValueError`` when the layer does not read the batch's input."""
    plugin = module._dplis_draws
    if plugin._pending is None:
        return type(module).forward(module, a)
    x, pre = plugin._pending
    plugin._pending = None
    if not (a.dim() == 2 and len(a) == len(pre) and a.numel() == x.numel()
            and a.data_ptr() == x.data_ptr() and a.is_contiguous() and x.is_contiguous()):
        raise ValueError("DPlis draws='implicit-first-layer': the first Linear layer must read the "
                         "model's input (flattened, [B, p]); use draws='torch'")
    return _FirstLayer.apply(a, module.weight, module.bias, pre)


class _FirstLayer(torch.autograd.Function):
    """``pre + b``, a Linear layer's output at input ``a`` and weight ``w`` whose product (and draw
    noise) ``pre`` was formed once for the K draws; the backward is the Linear's."""

    @staticmethod
    def forward(ctx, a, w, b, pre):
        ctx.save_for_backward(a, w)
        ctx.has_bias = b is not None
        return pre + b if b is not None else pre.clone()

    @staticmethod
    def backward(ctx, g):
        a, w = ctx.saved_tensors
        ga = g @ w if ctx.needs_input_grad[0] else None
        gw = g.T @ a if ctx.needs_input_grad[1] else None
        gb = g.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return ga, gw, gb, None


def first_linear(model: torch.nn.Module) -> tuple[str, torch.nn.Module]:
    """(weight name, module) of ``model``'s first module with a trainable parameter, which must be
    an ``nn.Linear`` (draws="implicit-first-layer"); ``ValueError`` naming it otherwise."""
    for prefix, module in model.named_modules():
        if any(p.requires_grad for p in module.parameters(recurse=False)):
            if not isinstance(module, torch.nn.Linear) or not module.weight.requires_grad:
                raise ValueError(f"DPlis draws='implicit-first-layer' needs a model whose first trainable layer "
                                 f"is a Linear; module {prefix!r} is a {type(module).__name__}; use draws='torch'")
            return (f"{prefix}.weight" if prefix else "weight"), module
    raise ValueError("DPlis draws='implicit-first-layer': the model has no trainable layer")
