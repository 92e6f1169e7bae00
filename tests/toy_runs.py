"""Tiny synthetic classification runs shared by the method tests (seconds on one core)."""

import torch
from torch import nn

from dpnotes.train import train


def data(n=80, d=5, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    return x, (x[:, 0] + 0.5 * x[:, 1] > 0).long()


def model(seed=0, d=5):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(d, 6), nn.Tanh(), nn.Linear(6, 2))


def run(cfg, plugins=(), checkpoint=None, model_seed=0):
    """Train a fresh toy model on 80 examples (40 held out); returns (record, model)."""
    m = model(model_seed)
    out = train(m, data(), data(40, seed=1), cfg, plugins=plugins, progress=False, checkpoint=checkpoint)
    return out, m


def strip(record):
    """A record without wall times (the only field allowed to differ between equal runs)."""
    out = {k: v for k, v in record.items() if k != "epochs"}
    out["final"] = {k: v for k, v in record["final"].items() if k != "wall_s"}
    out["epochs"] = [{k: v for k, v in e.items() if k != "wall_s"} for e in record["epochs"]]
    return out
