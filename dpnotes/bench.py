"""Throughput of one DP-SGD step: our engine vs a non-private step vs opacus.

Each method trains the same freshly initialised model on the same fixed batch (the Poisson
draw is left out: it is the same for every method). Steps of the three methods are
interleaved, so that a change in machine load hits all of them alike, and the median step
time is reported as samples per second.

* ``dp``: :func:`dpnotes.train.private_step` (torch.func per-example gradients, fused
  clipping, noise on the sum, SGD);
* ``nonprivate``: :func:`dpnotes.train.nonprivate_step` (mean loss, autograd, SGD);
* ``opacus``: opacus ``GradSampleModule`` + ``DPOptimizer`` (same clip, noise and lr).
"""

from __future__ import annotations

import statistics
import time
from typing import Callable

import torch

from dpnotes import models, validate
from dpnotes.train import TrainConfig, build_context, nonprivate_step, private_step

WARMUP = 2


def _engine_step(name: str, x, y, config: TrainConfig, private: bool) -> Callable[[], None]:
    torch.manual_seed(0)
    ctx = build_context(models.create(name), (x, y), None, config)
    idx = torch.arange(len(y))
    step = private_step if private else nonprivate_step
    return lambda: step(ctx, idx)


def _opacus_step(name: str, x, y, config: TrainConfig) -> Callable[[], None]:
    from opacus import GradSampleModule
    from opacus.optimizers import DPOptimizer

    torch.manual_seed(0)
    device = config.torch_device()
    model = GradSampleModule(models.create(name).to(device))
    optimizer = DPOptimizer(torch.optim.SGD(model.parameters(), lr=config.lr),
                            noise_multiplier=config.noise_multiplier, max_grad_norm=config.clip,
                            expected_batch_size=len(y))
    x, y = x.to(device), y.to(device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench(model_names, batch_size: int = 256, steps: int = 10,
          device: str = "cpu") -> list[dict]:
    """Samples per second of a DP step, a non-private step and an opacus step, per model.

    Returns one dict per model: model, batch_size, device, dp_samples_per_s,
    nonprivate_samples_per_s, opacus_samples_per_s (medians over ``steps`` timed steps
    after 2 warm-up steps).
    """
    batch_size = validate.integer("batch_size", batch_size, minimum=1)
    steps = validate.integer("steps", steps, minimum=1)
    model_names = list(model_names)
    for name in model_names:
        validate.choice("model", name, models.names())
    config = TrainConfig(batch_size=batch_size, lr=0.05, clip=1.0, noise_multiplier=1.0,
                         accountants=(), device=device)
    dev = config.torch_device()
    results = []
    for name in model_names:
        x, y = models.example_batch(name, batch_size, torch.Generator().manual_seed(0))
        methods = {
            "dp": _engine_step(name, x, y, config, private=True),
            "nonprivate": _engine_step(name, x, y, TrainConfig.non_private(
                batch_size=batch_size, lr=0.05, device=device), private=False),
            "opacus": _opacus_step(name, x, y, config),
        }
        times = {k: [] for k in methods}
        for i in range(WARMUP + steps):
            for k, step in methods.items():
                _sync(dev)
                start = time.perf_counter()
                step()
                _sync(dev)
                if i >= WARMUP:
                    times[k].append(time.perf_counter() - start)
        row = {"model": name, "batch_size": batch_size, "device": str(dev)}
        for k, t in times.items():
            row[f"{k}_samples_per_s"] = batch_size / statistics.median(t)
        results.append(row)
    return results


def format_table(results: list[dict]) -> str:
    """A plain-text table, with the DP/non-private step-time ratio and DP/opacus speed-up."""
    head = (f"{'model':<20} {'batch':>5} {'device':<6} {'dp/s':>9} {'nonpriv/s':>10} "
            f"{'opacus/s':>9} {'dp time / nonpriv':>18} {'dp vs opacus':>13}")
    lines = [head, "-" * len(head)]
    for r in results:
        dp, npv, op = r["dp_samples_per_s"], r["nonprivate_samples_per_s"], r["opacus_samples_per_s"]
        lines.append(f"{r['model']:<20} {r['batch_size']:>5} {r['device']:<6} {dp:>9.0f} {npv:>10.0f} "
                     f"{op:>9.0f} {npv / dp:>17.2f}x {dp / op:>12.2f}x")
    return "\n".join(lines)
