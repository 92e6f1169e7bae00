"""Throughput and peak memory of one training step: our engine's backends vs a non-private
step vs opacus (hooks, and ghost clipping).

Each method trains the same freshly initialised model on the same fixed batch (the Poisson
draw is left out: it is the same for every method). Steps of the methods are interleaved,
so that a change in machine load hits all of them alike; the median step time is reported
as samples per second. Methods (:data:`METHODS`):

* ``ghost``, ``func``, ``opacus-grads``: :func:`dpnotes.train.private_step` with that
  ``grad_backend`` (clipping, noise on the sum, SGD);
* ``dplis-ghost``, ``dplis-func``: the same step with DPlis' K-draw smoothing
  (:mod:`dpnotes.methods.dplis`, ``K = dplis_k``, R = 10, the authors' sum), its draws the
  stored records' stream (``torch.randn``); ``dplis-ghost-implicit``: the same with
  ``draws="implicit-first-layer"``, as DPlis' new seeds draw (``DRAWS_FROM_SEED``);
* ``nonprivate``: :func:`dpnotes.train.nonprivate_step` (mean loss, autograd, SGD);
* ``opacus``: opacus ``GradSampleModule`` hooks + ``DPOptimizer`` (same clip, noise, lr);
* ``opacus-ghost``: opacus' ghost clipping (``GradSampleModuleFastGradientClipping``,
  ``DPOptimizerFastGradientClipping``, ``DPLossFastGradientClipping``: the two-pass scheme
  of ``grad_sample_mode="ghost"``).

Memory layout: the engine moves the weights of a model with a Conv2d layer to channels-last
(:func:`dpnotes.train.build_context`, as in training). Opacus gets the same chance: on such a
model each opacus method is timed both with channels-last weights and inputs and in the default
(contiguous) layout, interleaved, and the faster is reported with its ``layout``; a model
without Conv2d runs in the default layout everywhere.

Peak memory of a step (``peak_mb``): on a GPU, ``torch.cuda.max_memory_allocated`` over the
step minus the memory allocated before it (tensors only); on a Linux CPU with glibc, the
process's peak resident set (VmHWM, reset through ``/proc/self/clear_refs`` before the step)
minus its resident set before the step, with glibc told to map every block of 128 KiB or
more on its own and return it to the system when freed (``mallopt``), so that the peak is the
step's live memory and not blocks the allocator kept from earlier steps. None where neither
is available. Memory is measured first, on a fresh model per method (its second step); the
timings then run with glibc's thresholds at the 32 MiB cap its own adaptive rule reaches.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import time
from pathlib import Path
from typing import Callable

import torch
from torch import nn

from dpnotes import claims, models, validate
from dpnotes.experiments.dpis import TRAMER_BONEH
from dpnotes.methods import dplis
from dpnotes.train import TrainConfig, build_context, nonprivate_step, private_step

WARMUP = 2
METHODS = ("ghost", "func", "opacus-grads", "dplis-ghost", "dplis-ghost-implicit", "dplis-func", "nonprivate",
           "opacus", "opacus-ghost")
DEFAULT_METHODS = ("ghost", "func", "nonprivate", "opacus", "opacus-ghost")
# Methods that hold every example's full gradient at once (batch x parameters floats).
PER_EXAMPLE_GRADIENTS = ("func", "opacus-grads", "dplis-func", "opacus")
# The batch size each paper trains the model with: claim settings where the paper prints it.
PAPER_BATCH = {
    "tf-mnist-cnn": "gdp.mnist.batch_size", "dplis-mlp-mnist": "dplis.table1.mnist.batch_size",
    "dplis-cifar-cnn": "dplis.table1.cifar10.batch_size", "dplis-mlp-cifar": "dplis.table1.cifar10.batch_size",
    "gdp-adult": "gdp.table2.batch_size", "gdp-imdb": "gdp.table3.batch_size",
    "sadpsgd-cnn": "sadpsgd.table2.mnist.batch_size", "sadpsgd-cifar-cnn": "sadpsgd.table2.cifar10.batch_size",
}
# DPIS trains ScatterNet CNNs with Tramer & Boneh's batch sizes (dpnotes.experiments.dpis).
PAPER_BATCH_FIXED = {"scatternet-cnn": TRAMER_BONEH["mnist"]["batch_size"],
                     "scatternet-cifar-cnn": TRAMER_BONEH["cifar10"]["batch_size"]}


def paper_batch_size(name: str) -> int | None:
    """The batch size the papers train model ``name`` with, or None when none is printed."""
    if name in PAPER_BATCH:
        return int(claims.setting(PAPER_BATCH[name]))
    return PAPER_BATCH_FIXED.get(name)


def _config(batch_size: int, device: str, backend: str, smoothing: bool) -> TrainConfig:
    if smoothing:  # DPlis: plain SGD on the noisy sum (dpnotes.methods.dplis.smoothing_std)
        return TrainConfig(batch_size=batch_size, lr=6e-4, normalize="none", accountants=(),
                           device=device, grad_backend=backend)
    return TrainConfig(batch_size=batch_size, lr=0.05, accountants=(), device=device, grad_backend=backend)


def _engine_step(name: str, x, y, method: str, device: str, dplis_k: int) -> Callable[[], None]:
    torch.manual_seed(0)
    if method == "nonprivate":
        config, plugins = TrainConfig.non_private(batch_size=len(y), lr=0.05, device=device), ()
    else:
        smoothing = method.startswith("dplis-")
        backend = {"opacus-grads": "opacus"}.get(method, method.removeprefix("dplis-").removesuffix("-implicit"))
        config = _config(len(y), device, backend, smoothing)
        draws = "implicit-first-layer" if method.endswith("-implicit") else "torch"
        plugins = (dplis.DPlis(dplis.Config(K=dplis_k, R=10.0, combine="sum", draws=draws)),) if smoothing else ()
    ctx = build_context(models.create(name), (x, y), None, config, plugins=plugins)
    for p in plugins:
        p.on_train_start(ctx)
    idx = torch.arange(len(y))
    step = nonprivate_step if method == "nonprivate" else private_step
    return lambda: step(ctx, idx)


def _has_conv(name: str) -> bool:
    return any(isinstance(m, nn.Conv2d) for m in models.create(name).modules())


def _opacus_step(name: str, x, y, device: torch.device, ghost: bool, channels_last: bool) -> Callable[[], None]:
    from opacus import GradSampleModule
    from opacus.grad_sample import GradSampleModuleFastGradientClipping
    from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
    from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping

    torch.manual_seed(0)
    model = models.create(name).to(device)
    kw = dict(noise_multiplier=1.0, max_grad_norm=1.0, expected_batch_size=len(y))
    x, y = x.to(device), y.to(device)
    if channels_last:
        model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    if ghost:
        gsm = GradSampleModuleFastGradientClipping(model, batch_first=True, loss_reduction="mean",
                                                   max_grad_norm=1.0, use_ghost_clipping=True)
        optimizer = DPOptimizerFastGradientClipping(torch.optim.SGD(gsm.parameters(), lr=0.05), **kw)
        criterion = DPLossFastGradientClipping(gsm, optimizer, nn.CrossEntropyLoss(), "mean")
    else:
        gsm = GradSampleModule(model)
        optimizer = DPOptimizer(torch.optim.SGD(gsm.parameters(), lr=0.05), **kw)
        criterion = nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        criterion(gsm(x), y).backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)  # drops the per-example gradients held between steps

    return step


def _layouts(name: str, method: str) -> tuple[str, ...]:
    """The memory layouts a method is timed in on model ``name`` (module docstring)."""
    if not _has_conv(name):
        return ("default",)
    return ("channels-last", "default") if method in ("opacus", "opacus-ghost") else ("channels-last",)


def _make(name: str, x, y, method: str, device: torch.device, dplis_k: int,
          layout: str = "channels-last") -> Callable[[], None]:
    if method in ("opacus", "opacus-ghost"):
        return _opacus_step(name, x, y, device, method == "opacus-ghost", layout == "channels-last")
    return _engine_step(name, x, y, method, str(device), dplis_k)


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _rss_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def _malloc_thresholds(size: int) -> bool:
    """Have glibc map blocks of ``size`` bytes or more on their own and trim free memory above
    ``size`` (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD); False where there is no glibc."""
    try:
        libc = ctypes.CDLL("libc.so.6")
        return libc.mallopt(-3, size) == 1 and libc.mallopt(-1, size) == 1
    except (OSError, AttributeError):
        return False


def _peak_mb(step: Callable[[], None], device: torch.device, measurable: bool = True) -> float | None:
    """What one step adds to the peak memory (module docstring), in MiB; None when not
    ``measurable`` (the step still runs: a method that fails on the model fails here)."""
    step()  # first step: one-time allocations
    if not measurable:
        return None
    if device.type == "cuda":
        _sync(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        step()
        _sync(device)
        return (torch.cuda.max_memory_allocated(device) - before) / 2 ** 20
    try:
        Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    except OSError:
        return None
    before = _rss_kb("VmRSS")
    step()
    peak = _rss_kb("VmHWM")
    return None if before is None or peak is None else (peak - before) / 1024


def per_example_mb(name: str, batch_size: int) -> float:
    """MiB of one batch's per-example gradients of model ``name`` (batch x trainable parameters
    x 4 bytes): what :data:`PER_EXAMPLE_GRADIENTS` methods hold at once."""
    n = sum(p.numel() for p in models.create(name).parameters() if p.requires_grad)
    return batch_size * n * 4 / 2 ** 20


def bench(model_names, batch_size: int | str = 256, steps: int = 10, device: str = "cpu",
          methods=DEFAULT_METHODS, dplis_k: int = 10, max_memory_mb: float | None = None) -> list[dict]:
    """Samples per second (median over ``steps`` timed steps after 2 warm-up steps) and peak
    memory of a step, for each model and method.

    ``batch_size``: an int, or "paper" for the batch size the papers train each model with
    (:func:`paper_batch_size`; a model without one is skipped). Returns one dict per model:
    model, batch_size, device, threads, load_avg (1-minute load average before its steps) and
    ``methods``: {method: {"samples_per_s", "step_ms", "peak_mb", "layout"}} (the faster layout
    where two were timed), {method: {"error"}} for a method that refuses the model (e.g.
    opacus' ghost clipping and a recurrent layer), or {method: {"skipped"}} (the reason) for a
    method of :data:`PER_EXAMPLE_GRADIENTS` whose per-example gradients (:func:`per_example_mb`)
    would exceed ``max_memory_mb`` (None: no limit).
    """
    steps = validate.integer("steps", steps, minimum=1)
    dplis_k = validate.integer("dplis_k", dplis_k, minimum=1)
    if batch_size != "paper":
        batch_size = validate.integer("batch_size", batch_size, minimum=1)
    methods = list(methods)
    for m in methods:
        validate.choice("methods", m, METHODS)
    model_names = list(model_names)
    for name in model_names:
        validate.choice("model", name, models.names())
    if max_memory_mb is not None:
        max_memory_mb = validate.positive("max_memory_mb", max_memory_mb)
    dev = _config(1, device, "func", False).torch_device()
    sizes = {name: paper_batch_size(name) if batch_size == "paper" else batch_size for name in model_names}
    sizes = {name: b for name, b in sizes.items() if b is not None}
    measurable = dev.type == "cuda" or _malloc_thresholds(1 << 17)
    peaks, failed, skipped = {}, {}, {}
    for name, b in sizes.items():
        need = per_example_mb(name, b)
        if max_memory_mb is not None and need > max_memory_mb:
            skipped.update({(name, m): f"not run: its per-example gradients take {need:,.0f} MiB (batch {b}), over "
                            f"max_memory_mb {max_memory_mb:,.0f}" for m in methods if m in PER_EXAMPLE_GRADIENTS})
        x, y = models.example_batch(name, b, torch.Generator().manual_seed(0))
        for m in methods:
            for lay in _layouts(name, m) if (name, m) not in skipped else ():
                try:
                    peaks[name, m, lay] = _peak_mb(_make(name, x, y, m, dev, dplis_k, lay), dev, measurable)
                except (NotImplementedError, ValueError, RuntimeError) as exc:  # the method refuses the model
                    failed[name, m, lay] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    if dev.type != "cuda":
        _malloc_thresholds(32 << 20)
    results = []
    for name, b in sizes.items():
        x, y = models.example_batch(name, b, torch.Generator().manual_seed(0))
        row = {"model": name, "batch_size": b, "device": torch.cuda.get_device_name(dev) if dev.type == "cuda"
               else "cpu", "threads": torch.get_num_threads(), "load_avg": os.getloadavg()[0]}
        runs = {(m, lay): _make(name, x, y, m, dev, dplis_k, lay) for m in methods for lay in _layouts(name, m)
                if (name, m, lay) not in failed and (name, m) not in skipped}
        times = {k: [] for k in runs}
        for i in range(WARMUP + steps):
            for k, step in runs.items():
                _sync(dev)
                start = time.perf_counter()
                step()
                _sync(dev)
                if i >= WARMUP:
                    times[k].append(time.perf_counter() - start)
        row["methods"] = {}
        for m in methods:
            timed = [(statistics.median(t), lay) for (m2, lay), t in times.items() if m2 == m]
            if (name, m) in skipped:
                row["methods"][m] = {"skipped": skipped[name, m]}
            elif timed:
                t, lay = min(timed)
                row["methods"][m] = {"samples_per_s": b / t, "step_ms": 1e3 * t, "peak_mb": peaks[name, m, lay],
                                     "layout": lay}
            else:
                row["methods"][m] = {"error": next(e for (n, m2, _), e in failed.items() if (n, m2) == (name, m))}
        results.append(row)
    return results


def format_table(results: list[dict]) -> str:
    """A plain-text table: samples/s and peak MiB per method, the best DP method of ours
    (ghost or func) against the non-private step and the better opacus method."""
    lines = []
    for r in results:
        ms = {m: v for m, v in r["methods"].items() if "samples_per_s" in v}
        lines.append(f"{r['model']}  batch {r['batch_size']}  {r['device']}  {r['threads']} thread(s)  "
                     f"load {r['load_avg']:.2f}")
        for m, v in r["methods"].items():
            if "samples_per_s" not in v:
                lines.append(f"  {m:<17} fails: {v['error'][:90]}" if "error" in v else f"  {m:<17} {v['skipped']}")
                continue
            peak = "-" if v["peak_mb"] is None else f"{v['peak_mb']:.1f} MiB"
            lines.append(f"  {m:<17} {v['samples_per_s']:>10.0f} samples/s {v['step_ms']:>10.1f} ms/step  peak {peak}"
                         f"  {v['layout']}")
        for m in ("dplis-ghost", "dplis-ghost-implicit", "dplis-func"):
            if m in ms and "nonprivate" in ms:
                lines.append(f"  {m} step / non-private step: {ms[m]['step_ms'] / ms['nonprivate']['step_ms']:.2f}x")
        ours = [m for m in ("ghost", "func") if m in ms]
        theirs = [m for m in ("opacus", "opacus-ghost") if m in ms]
        if ours:
            best = max(ours, key=lambda m: ms[m]["samples_per_s"])
            if "nonprivate" in ms:
                lines.append(f"  {best} step / non-private step: "
                             f"{ms[best]['step_ms'] / ms['nonprivate']['step_ms']:.2f}x")
            if theirs:
                top = max(theirs, key=lambda m: ms[m]["samples_per_s"])
                lines.append(f"  {best} vs {top}: {ms[best]['samples_per_s'] / ms[top]['samples_per_s']:.2f}x "
                             "the throughput")
    return "\n".join(lines)


MARKDOWN_NAMES = {"opacus": "opacus hooks", "nonprivate": "non-private"}


def format_markdown(results: list[dict]) -> str:
    """A markdown table (the README's): samples/s per method, ghost's step against the
    non-private step and against the better opacus method, peak MiB per method, and the load."""
    methods = list(dict.fromkeys(m for r in results for m in r["methods"]))
    head = ["model", "batch", *(MARKDOWN_NAMES.get(m, m) for m in methods), "ghost step / non-private",
            "ghost / better opacus", f"peak MiB ({' / '.join(MARKDOWN_NAMES.get(m, m) for m in methods)})", "load"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        ms = r["methods"]
        speed = {m: v["samples_per_s"] for m, v in ms.items() if "samples_per_s" in v}
        cells = [f"`{r['model']}`", str(r["batch_size"])]
        cells += [f"{speed[m]:,.0f}" if m in speed else ("refuses" if "error" in ms.get(m, {}) else "not run")
                  for m in methods]
        ratio = f"{speed['nonprivate'] / speed['ghost']:.2f}x" if {"ghost", "nonprivate"} <= speed.keys() else "-"
        theirs = [speed[m] for m in ("opacus", "opacus-ghost") if m in speed]
        lead = f"{speed['ghost'] / max(theirs):.2f}x" if "ghost" in speed and theirs else "-"
        peaks = [ms[m].get("peak_mb") for m in methods if m in ms]
        cells += [ratio, lead, " / ".join("-" if p is None else f"{p:,.0f}" for p in peaks), f"{r['load_avg']:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
