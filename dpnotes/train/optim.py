"""The optimizer applied to the privatized gradient, and the learning-rate schedule.

NoisySGD / NoisyAdam (Abadi et al. 2016; Bu et al. 2020, Sec. 5) are plain SGD / Adam fed
with the noisy clipped gradient: privacy comes from the gradient, the update rule is
post-processing. So the engine writes that gradient into ``.grad`` and steps a stock
``torch.optim`` optimizer.
"""

from __future__ import annotations

import math

import torch

from dpnotes import validate
from dpnotes.train.config import TrainConfig


def make_optimizer(params, config: TrainConfig) -> torch.optim.Optimizer:
    """SGD, SGD with heavy-ball momentum, or Adam, as ``config.optimizer`` says."""
    if config.optimizer == "adam":
        return torch.optim.Adam(params, lr=config.lr, betas=config.betas, eps=config.eps_adam,
                                weight_decay=config.weight_decay)
    return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum,
                           weight_decay=config.weight_decay)


def learning_rate(config: TrainConfig, step: int, steps_per_epoch: int) -> float:
    """Learning rate of global step ``step`` (0-based).

    constant: lr. cosine: lr * (1 + cos(pi * step / T)) / 2 over T = epochs * steps_per_epoch.
    step: lr * lr_gamma ** (epoch // lr_step_epochs), epoch = step // steps_per_epoch.
    warmup_linear: lr * step / W for step < W = lr_warmup * T, then lr * (T - step) / (T - W)
    (Ghazi et al. 2021, App. B: linear warm-up over the first 15 %, then linear decay to 0).
    warmup_step: lr * step / W for step < W, then step's lr (Ghazi et al. 2021, App. B, CIFAR-10:
    warm-up over 15 %, then lr / 10 at 30, 60 and 90 % of 200 epochs: lr_step_epochs 60).
    """
    step = validate.integer("step", step, minimum=0)
    steps_per_epoch = validate.integer("steps_per_epoch", steps_per_epoch, minimum=1)
    if config.lr_schedule == "constant":
        return config.lr
    if config.lr_schedule == "cosine":
        total = config.epochs * steps_per_epoch
        return config.lr * (1 + math.cos(math.pi * min(step, total) / total)) / 2
    if config.lr_schedule == "warmup_linear":
        total = config.epochs * steps_per_epoch
        warm = config.lr_warmup * total
        if step < warm:
            return config.lr * step / warm
        return config.lr * max(total - step, 0) / (total - warm)
    if config.lr_schedule == "warmup_step":
        warm = config.lr_warmup * config.epochs * steps_per_epoch
        if step < warm:
            return config.lr * step / warm
    return config.lr * config.lr_gamma ** ((step // steps_per_epoch) // config.lr_step_epochs)


def set_learning_rate(optimizer: torch.optim.Optimizer, lr: float) -> None:
    for group in optimizer.param_groups:
        group["lr"] = lr
