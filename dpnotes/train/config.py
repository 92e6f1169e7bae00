"""Settings of one training run (:class:`TrainConfig`), checked when it is built.

DP-SGD as in Abadi et al. (CCS 2016), Algorithm 1: Poisson-sampled lots of expected size
``batch_size`` (sampling rate q = batch_size / N), per-example gradients clipped to L2 norm
``clip``, Gaussian noise N(0, (noise_multiplier * clip)^2) added to their sum.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from dpnotes import validate
from dpnotes.accounting.registry import ACCOUNTANT_NAMES

OPTIMIZERS = ("sgd", "momentum", "adam")
LR_SCHEDULES = ("constant", "cosine", "step", "warmup_linear", "warmup_step")
CLIP_MODES = ("flat", "per_layer", "auto-s")
SAMPLINGS = ("poisson", "shuffle")
NORMALIZATIONS = ("expected", "none")
GRAD_BACKENDS = ("func", "opacus", "ghost")
STEPS_RULES = ("floor", "round")
DEFAULT_ACCOUNTANTS = ("rdp", "rdp-classic", "clt")
# field -> default (see TrainConfig.to_dict)
LATER_FIELDS = {"lr_warmup": 0.15, "eval_every": None, "stop_accuracy": None}
# field -> the default a run spec resolves to where the library's default changed after records
# were stored (dpnotes.spec: a config that does not name the field keeps the id it had).
# grad_backend: the library trains with "ghost" (the fastest backend, equal to "func" on every
# registered model: tests/test_train_ghost.py); a run config that names none still means "func".
SPEC_DEFAULTS = {"grad_backend": "func"}


@dataclass(frozen=True)
class TrainConfig:
    """One DP-SGD (or non-private) training run.

    epochs, batch_size     passes and expected lot size B; q = B / N is fixed by the data.
    lr, optimizer          "sgd" | "momentum" (heavy ball, ``momentum``) | "adam"
                           (``betas``, ``eps_adam``); each is applied to the privatized gradient
                           (NoisySGD / NoisyAdam).
    weight_decay           L2 penalty added by the optimizer (after privatization).
    lr_schedule            "constant" | "cosine" (to 0 over all steps) | "step" (multiply by
                           ``lr_gamma`` every ``lr_step_epochs`` epochs) | "warmup_linear"
                           (0 -> lr linearly over the first ``lr_warmup`` of the steps, then
                           linearly to 0; Ghazi et al. 2021, App. B) | "warmup_step" (the same
                           warm-up, then "step"; their CIFAR-10 schedule).
    clip                   C; None = no clipping (only with noise_multiplier 0).
    clip_mode              "flat": whole-gradient L2 norm <= C; "per_layer": each parameter
                           tensor's norm <= C / sqrt(L) (L tensors), so the total is still <= C;
                           "auto-s": AUTO-S, g_i C / (||g_i|| + 0.01) (Bu et al. 2022,
                           "Automatic clipping"; norm < C, the same sensitivity as flat).
    noise_multiplier       sigma; 0 = no noise (and no privacy: epsilon is infinite).
    sampling               "poisson": each example independently with probability q (what
                           the accountants assume); "shuffle": fixed-size batches of a random
                           permutation (warned: the Poisson epsilon does not describe it).
    normalize              "expected": gradient = noisy sum / (q N); "none": the noisy sum
                           itself (DPlis).
    grad_backend           "ghost" (default: norms and clipped sums from layer factors, no
                           per-example gradients: dpnotes.train.ghost; Linear, Conv, Embedding,
                           norm layers; other layers are refused by name) | "func" (torch.func
                           vmap; any layer) | "opacus" (GradSampleModule; cross-check). All
                           three give the same clipped sums (tests/test_train_ghost.py).
    steps_per_epoch        "floor": N // B (DPlis); "round": round(N / B) = round(1 / q); or an int.
    delta, accountants     the ledger priced each epoch by these accountants (the slow ones
                           at the end only; names of dpnotes.accounting.registry).
    target_epsilon         stop before the step that would take eps (``target_accountant``,
                           at ``delta``) above this value; None = no such stop. The run must
                           reach it within ``epochs`` (checked up front for plain DP-SGD).
    max_accepted_steps     stop once this many steps were accepted (SA-DPSGD); None = no stop.
    seed                   seeds the sampling, noise and plug-in generators. The sampling and
                           plug-in generators live on the CPU (same batches on every device);
                           the noise generator lives on ``device``, and a CPU and a CUDA
                           generator give different streams for one seed, so a CUDA run is not
                           bit-identical to the same run on the CPU (TF32 convolutions and other
                           kernels differ slightly even without noise).
    device                 "cpu" | "cuda" | "cuda:<i>" | "auto" (CUDA when present).
    eval_batch_size        batch size of the evaluation passes.
    eval_every             also evaluate on the test set every this many steps (the epoch's
                           ``curve``: step, accepted steps, test loss and accuracy); None = at
                           epoch ends only. An accept rule's own test evaluation is reused.
    stop_accuracy          stop once an ``eval_every`` point reaches this test accuracy (a
                           fraction in (0, 1]): nothing after it is measured (SA-DPSGD's
                           Table 3 asks only when a level is first reached); None = no stop.
    private                False: plain minibatch training (mean loss, no clip, no noise,
                           shuffled batches); build it with :meth:`non_private`.
    """

    epochs: int = 1
    batch_size: int = 256
    lr: float = 0.1
    optimizer: str = "sgd"
    momentum: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps_adam: float = 1e-8
    weight_decay: float = 0.0
    lr_schedule: str = "constant"
    lr_step_epochs: int = 1
    lr_gamma: float = 0.1
    lr_warmup: float = 0.15
    clip: float | None = 1.0
    clip_mode: str = "flat"
    noise_multiplier: float = 1.0
    sampling: str = "poisson"
    normalize: str = "expected"
    grad_backend: str = "ghost"
    steps_per_epoch: int | str = "floor"
    delta: float = 1e-5
    accountants: tuple[str, ...] = DEFAULT_ACCOUNTANTS
    target_epsilon: float | None = None
    target_accountant: str = "rdp"
    max_accepted_steps: int | None = None
    seed: int = 0
    device: str = "cpu"
    eval_batch_size: int = 1024
    private: bool = True
    eval_every: int | None = None
    stop_accuracy: float | None = None

    def __post_init__(self):
        validate.integer("epochs", self.epochs, minimum=1)
        validate.integer("batch_size", self.batch_size, minimum=1)
        validate.positive("lr", self.lr)
        validate.choice("optimizer", self.optimizer, OPTIMIZERS)
        if not 0 <= validate.nonnegative("momentum", self.momentum) < 1:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        if self.optimizer != "momentum" and self.momentum != 0:
            raise ValueError(f"momentum={self.momentum} is only used by optimizer='momentum', "
                             f"not {self.optimizer!r}")
        if self.optimizer == "momentum" and self.momentum == 0:
            raise ValueError("optimizer='momentum' needs momentum in (0, 1)")
        if len(self.betas) != 2:
            raise ValueError(f"betas must be a pair, got {self.betas!r}")
        for i, b in enumerate(self.betas):
            validate.probability(f"betas[{i}]", b, low_open=False, high_open=True)
        validate.positive("eps_adam", self.eps_adam)
        validate.nonnegative("weight_decay", self.weight_decay)
        validate.choice("lr_schedule", self.lr_schedule, LR_SCHEDULES)
        validate.integer("lr_step_epochs", self.lr_step_epochs, minimum=1)
        validate.probability("lr_gamma", self.lr_gamma)
        validate.probability("lr_warmup", self.lr_warmup, low_open=False, high_open=True)
        if self.clip is not None:
            validate.positive("clip", self.clip)
        validate.choice("clip_mode", self.clip_mode, CLIP_MODES)
        validate.nonnegative("noise_multiplier", self.noise_multiplier)
        validate.choice("sampling", self.sampling, SAMPLINGS)
        validate.choice("normalize", self.normalize, NORMALIZATIONS)
        validate.choice("grad_backend", self.grad_backend, GRAD_BACKENDS)
        if isinstance(self.steps_per_epoch, str):
            validate.choice("steps_per_epoch", self.steps_per_epoch, STEPS_RULES)
        else:
            validate.integer("steps_per_epoch", self.steps_per_epoch, minimum=1)
        validate.probability("delta", self.delta, high_open=True)
        object.__setattr__(self, "accountants", tuple(self.accountants))
        for name in self.accountants:
            validate.choice("accountants", name, ACCOUNTANT_NAMES)
        if self.target_epsilon is not None:
            validate.positive("target_epsilon", self.target_epsilon)
        validate.choice("target_accountant", self.target_accountant, ACCOUNTANT_NAMES)
        if self.max_accepted_steps is not None:
            validate.integer("max_accepted_steps", self.max_accepted_steps, minimum=1)
        validate.integer("seed", self.seed, minimum=0)
        if not (self.device in ("cpu", "cuda", "auto") or self.device.startswith("cuda:")):
            raise ValueError(f"device must be 'cpu', 'cuda', 'cuda:<i>' or 'auto', got {self.device!r}")
        validate.integer("eval_batch_size", self.eval_batch_size, minimum=1)
        if self.eval_every is not None:
            validate.integer("eval_every", self.eval_every, minimum=1)
        if self.stop_accuracy is not None:
            validate.probability("stop_accuracy", self.stop_accuracy, low_open=True)
            if self.eval_every is None:
                raise ValueError("stop_accuracy needs eval_every (the test points it is checked at)")
        if not isinstance(self.private, bool):
            raise ValueError(f"private must be True or False, got {self.private!r}")
        self._check_combinations()

    def _check_combinations(self):
        if self.private:
            if self.clip is None and self.noise_multiplier > 0:
                raise ValueError("noise_multiplier > 0 needs clip (the noise is scaled by C)")
            if self.clip is None and self.clip_mode != "flat":
                raise ValueError(f"clip_mode={self.clip_mode!r} needs clip")
            return
        bad = {"clip": (self.clip, None), "noise_multiplier": (self.noise_multiplier, 0.0),
               "sampling": (self.sampling, "shuffle"), "accountants": (self.accountants, ()),
               "target_epsilon": (self.target_epsilon, None)}
        for name, (value, wanted) in bad.items():
            if value != wanted:
                raise ValueError(f"private=False needs {name}={wanted!r} (got {value!r}); "
                                 "use TrainConfig.non_private(...)")

    @classmethod
    def non_private(cls, **kwargs) -> "TrainConfig":
        """A non-private config: no clipping, no noise, shuffled minibatches, no accountant."""
        return cls(private=False, clip=None, noise_multiplier=0.0, sampling="shuffle",
                   accountants=(), **kwargs)

    def replace(self, **changes) -> "TrainConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        """The settings as plain JSON values. Fields added after records were stored
        (:data:`LATER_FIELDS`) appear only when they differ from their default, so that every
        stored run spec, and hence its id, stays what it was."""
        d = dataclasses.asdict(self)
        d["betas"], d["accountants"] = list(self.betas), list(self.accountants)
        for name in LATER_FIELDS:
            if d[name] == LATER_FIELDS[name]:
                del d[name]
        return d

    def sample_rate(self, n: int) -> float:
        """q = batch_size / n for a training set of ``n`` examples."""
        n = validate.integer("n (training set size)", n, minimum=1)
        return validate.probability("sample rate q = batch_size / N", self.batch_size / n)

    def steps(self, n: int) -> int:
        """Steps per epoch for ``n`` training examples."""
        q = self.sample_rate(n)
        if self.steps_per_epoch == "floor":
            steps = n // self.batch_size
        elif self.steps_per_epoch == "round":
            steps = round(1 / q)
        else:
            steps = self.steps_per_epoch
        if self.sampling == "shuffle" and steps * self.batch_size > n:
            raise ValueError(f"steps_per_epoch={steps} fixed batches of {self.batch_size} need "
                             f"{steps * self.batch_size} examples, only {n} given")
        return max(steps, 1)

    def torch_device(self) -> torch.device:
        if self.device == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        dev = torch.device(self.device)
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device={self.device!r} asked for but CUDA is not available: use device='cpu', "
                             "or 'auto' (CUDA when present)")
        if dev.type == "cuda" and dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(f"device={self.device!r} asked for but this machine has {torch.cuda.device_count()} "
                             f"CUDA device(s): use 'cuda:0' to 'cuda:{torch.cuda.device_count() - 1}'")
        return dev
