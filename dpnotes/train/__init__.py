"""The DP-SGD engine: one training loop, its settings, and its plug-in points.

``train(model, train_data, test_data, TrainConfig(...), plugins=...)`` runs DP-SGD
(Abadi et al. 2016) with exact Poisson sampling, per-example gradients (torch.func), clipping
and Gaussian noise, or the same loop without privacy (``TrainConfig.non_private``).
"""

from dpnotes.train.config import TrainConfig
from dpnotes.train.loop import TrainContext, build_context, nonprivate_step, private_step, train
from dpnotes.train.plugins import Plugin

# Behaviour version of the engine (loop, sampling, clipping, noise, optimizers, evaluation):
# part of every run spec (dpnotes.spec). Bump it whenever a change alters what a run computes.
VERSION = 1

__all__ = ["VERSION", "Plugin", "TrainConfig", "TrainContext", "build_context", "nonprivate_step",
           "private_step", "train"]
