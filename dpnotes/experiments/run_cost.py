"""Estimated cost of one run, from stored records' wall times or, where no record goes by, from
the models' bench throughput (``dpnotes run --list``: :mod:`dpnotes.executors.cost`; the not-run
reasons' run counts and hours: :mod:`dpnotes.experiments.not_run`).

A run's estimate is, in order: the wall time of its own stored record; the median wall time
of stored records of the same paper, profile and experiment (other seeds, older specs); the
median of those of the same paper, profile, model and method (a record of another spec scaled by
the ratio of training epochs, and a CPU record of another gradient backend by the ratio of the
two backends' bench figures, e.g. a seed stored on ``func`` pricing a new seed on ``ghost``);
else a bench estimate (:func:`bench_seconds`); else unknown. The records come
from the sweep's store and from the
records committed with dpnotes (``<checkout>/results``), so a fresh store gets estimates too.
Record-based estimates are wall times of one run on the machine that made each record (its
provenance names the device; the basis says cpu or cuda), not a benchmark of this one.

Bench estimate: the training steps (epochs x steps per epoch, every stage of a multi-stage
LabelDP run on the whole training set: an upper bound) times the batch size, divided by the
model's samples per second in ``dpnotes bench`` for the run's step (:data:`BENCH`), plus one
pass over the test set per epoch at three times the non-private step's rate (a forward pass
is about a third of a training step; ours). Runs that stop at a target eps are priced at
their epoch cap. The figures are CPU seconds on one thread of the 2-core machine the README's
table was measured on (loaded), and GPU seconds on one H100 where the README has a CUDA row.
``--list`` shows both and marks a run whose CPU estimate exceeds :data:`GPU_SCALE_HOURS` as
GPU-scale (a mark, not a filter: a plain ``dpnotes run`` still runs it).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from pathlib import Path

from dpnotes.results import Store
from dpnotes.spec import RunSpec

COMMITTED = Path(__file__).resolve().parents[2] / "results"

# Samples per second of one training step (``dpnotes bench``), by model, device and step kind:
# "ghost" / "func" (a DP-SGD step with that grad_backend), "nonprivate", "dplis" (DPlis' smoothed
# step, K = 10 draws, ghost backend). CPU: the README's "Performance" tables, measured
# 2026-11-23 on the 2-core AMD EPYC at one thread, batch 256 (load 2.3-3.1); resnet18v2
# 2026-11-26 (batch 128, non-private only, load 4.0: `dpnotes bench --models resnet18v2
# --batch-size 128 --methods nonprivate --steps 5 --threads 1`). CUDA: the README's ghost table,
# 2026-11-25, one H100 at each model's paper batch (load about 90: conservative); no smoothed
# step was timed there, so a DPlis step is priced as K ghost steps. labeldp-inception (LabelDP
# App. B's simplified Inception, non-private only): CPU measured 2026-11-27 on the AMD EPYC (Zen 5),
# one thread, batch 256, load 4.8 (`dpnotes bench --models labeldp-inception --batch-size 256
# --methods nonprivate --steps 10 --threads 1`: 4.67 s a step, wall; about 2.0 s of it CPU time, the
# rest the other processes' share of the cores). CUDA not measured (no GPU was lent): derived from
# the FLOPs at the throughput the CUDA table's heaviest plain CNN reached (LABELDP_INCEPTION_CUDA_BASIS;
# tests check the figure).
LABELDP_INCEPTION_CUDA_BASIS = "sadpsgd-cifar-cnn"
BENCH = {
    "cpu": {
        "tf-mnist-cnn": {"ghost": 5394, "func": 3989, "nonprivate": 5953, "dplis": 459},
        "dplis-mlp-mnist": {"ghost": 19115, "func": 605, "nonprivate": 27316, "dplis": 2245},
        "dplis-cifar-cnn": {"ghost": 2973, "func": 2326, "nonprivate": 4161, "dplis": 281},
        "dplis-mlp-cifar": {"ghost": 2475, "nonprivate": 3517, "dplis": 182},
        "sadpsgd-cifar-cnn": {"ghost": 100, "func": 68, "nonprivate": 145},
        "gdp-adult": {"ghost": 182102, "func": 90407, "nonprivate": 381487},
        "neumf": {"ghost": 87348, "func": 2305, "nonprivate": 149803},
        "sadpsgd-cnn": {"ghost": 5159, "func": 4049, "nonprivate": 5450},
        "scatternet-cnn": {"ghost": 8174, "func": 4226, "nonprivate": 17124},
        "gdp-imdb": {"ghost": 19675, "func": 1647, "nonprivate": 31926},
        "scatternet-cifar-cnn": {"ghost": 523, "func": 360, "nonprivate": 1255},
        "dpis-imdb-bilstm": {"ghost": 631, "nonprivate": 646},
        "resnet18v2": {"nonprivate": 12.2},
        "labeldp-inception": {"nonprivate": 55},
    },
    "cuda": {
        "tf-mnist-cnn": {"ghost": 53331, "func": 49562, "nonprivate": 131609},
        "dplis-mlp-mnist": {"ghost": 96368, "func": 63833, "nonprivate": 179832},
        "dplis-cifar-cnn": {"ghost": 46119, "func": 42468, "nonprivate": 111026},
        "dplis-mlp-cifar": {"ghost": 64351, "func": 27336, "nonprivate": 123401},
        "gdp-adult": {"ghost": 80706, "func": 54152, "nonprivate": 156726},
        "gdp-imdb": {"ghost": 123702, "func": 90857, "nonprivate": 250375},
        "sadpsgd-cnn": {"ghost": 61323, "func": 74800, "nonprivate": 208125},
        "sadpsgd-cifar-cnn": {"ghost": 45145, "func": 46302, "nonprivate": 162759},
        "scatternet-cnn": {"ghost": 56112, "func": 133268, "nonprivate": 402601},
        "scatternet-cifar-cnn": {"ghost": 63070, "func": 101926, "nonprivate": 868574},
        # sadpsgd-cifar-cnn's non-private rate x its forward MACs / the Inception's (38.9 M / 223.3 M a
        # 28x28 image, dpnotes.models.inception.forward_macs): the 38 TFLOP/s (a training step taken as
        # 3 forward passes) that CNN reached on the H100; an H200 has the H100's compute
        "labeldp-inception": {"nonprivate": 28351},
    },
}
BENCH_K = 10  # the K of the CPU "dplis" figures
# Training and test examples of each data set the papers' configs name (a subset overrides).
SIZES = {"mnist": (60_000, 10_000), "fashion-mnist": (60_000, 10_000), "fashion_mnist": (60_000, 10_000),
         "cifar10": (50_000, 10_000), "cifar-10": (50_000, 10_000), "imdb": (25_000, 25_000),
         "movielens-100k": (80_000, 20_000)}
# A run whose CPU estimate exceeds this is marked GPU-scale in ``--list`` (ours: longer than a
# CPU campaign's background slot; such runs stay in the paper profile, for a GPU or a patient CPU).
GPU_SCALE_HOURS = 4.0
EVAL_SPEEDUP = 3.0  # a test pass's samples/s over the non-private training step's (ours)


def reference_records(paper: str, profile: str, store: Store) -> list[dict]:
    """Stored records of ``paper`` at ``profile`` in ``store`` and in the committed results."""
    out = {}
    for root in (store.root, COMMITTED):
        if root.is_dir():
            for record in Store(root).records(paper, profile):
                out.setdefault(record["id"], record)
    return list(out.values())


def _step_kind(spec: RunSpec) -> str:
    if not spec.train.get("private", True):
        return "nonprivate"
    return "dplis" if spec.method == "dplis" else spec.train.get("grad_backend", "func")


def _backend_rate(model: str | None, train: dict, method: str | None) -> float | None:
    """CPU bench samples/s of the step a spec's ``train`` and ``method`` take on ``model`` (DPlis:
    its K = 10 figure, ghost only), or None where the bench has none."""
    rates = BENCH["cpu"].get(model or "", {})
    if not train.get("private", True):
        return rates.get("nonprivate")
    backend = train.get("grad_backend", "func")
    if method == "dplis":
        return rates.get("dplis") if backend == "ghost" else None
    return rates.get(backend)


def _backend_ratio(spec: RunSpec, record: dict) -> float:
    """How much faster ``spec``'s step is than the one ``record`` ran (CPU records only; 1.0
    where the backends agree or a figure is missing)."""
    rs = record["spec"]
    segments = record["provenance"].get("segments", [])
    if rs.get("train", {}).get("grad_backend", "func") == spec.train.get("grad_backend", "func") or not segments \
            or any(not str(s.get("device", "")).startswith("cpu") for s in segments):
        return 1.0
    ours = _backend_rate(spec.model, spec.train, spec.method)
    theirs = _backend_rate(rs.get("model"), rs.get("train", {}), rs.get("method"))
    return 1.0 if ours is None or theirs is None else theirs / ours


def _epochs(train, method_config) -> int:
    """Training epochs of a spec's ``train`` (0 if it names none), every LabelDP stage counted."""
    return int((train or {}).get("epochs", 0)) * int((method_config or {}).get("stages", 1))


def bench_seconds(spec: RunSpec, device: str = "cpu") -> float | None:
    """Bench estimate of one run of ``spec`` on ``device`` (``cpu`` or ``cuda``; module
    docstring), or None where the model, its step or the data set has no figure."""
    rates = BENCH[device].get(spec.model or "", {})
    kind = _step_kind(spec)
    if kind == "dplis":  # CPU: the K = 10 figure scaled to K; CUDA: K ghost steps (no timing of it)
        k = int(spec.method_config.get("K", BENCH_K))
        smoothed, ghost = rates.get("dplis"), rates.get("ghost")
        rate = (smoothed * BENCH_K / k if smoothed is not None else
                None if ghost is None or device == "cpu" else ghost / k)
    else:
        rate = rates.get(kind)
    if rate is None or "nonprivate" not in rates or spec.dataset not in SIZES:
        return None
    n_train, n_test = SIZES[spec.dataset]
    n_train = spec.subset.get("train") or n_train
    n_test = spec.subset.get("test") or n_test
    train = spec.train
    batch = int(train.get("batch_size", 256))
    per_epoch = train.get("steps_per_epoch", "floor")
    steps = per_epoch if isinstance(per_epoch, int) else max(1, n_train // batch if per_epoch == "floor"
                                                               else round(n_train / batch))
    epochs = _epochs(train, spec.method_config) or 1
    return epochs * (steps * batch / rate + n_test / (EVAL_SPEEDUP * rates["nonprivate"]))


def estimate(spec: RunSpec, records: Iterable[dict]) -> tuple[float | None, str]:
    """``(seconds or None, basis)`` for one run of ``spec`` (see the module docstring); a
    bench estimate is in CPU seconds, its basis adds the GPU seconds where a CUDA figure exists."""
    records, spec_id = list(records), spec.id
    for basis, same in (("its record", lambda r: r["id"] == spec_id),
                        ("same experiment", lambda r: r["spec"]["experiment"] == spec.experiment),
                        ("same model and method",
                         lambda r: (r["spec"]["model"], r["spec"]["method"]) == (spec.model, spec.method))):
        found = [r for r in records if same(r)]
        if found:
            kinds = sorted({s["device"].split(":")[0] for r in found for s in r["provenance"].get("segments", [])})
            ratios = [_epochs(spec.train, spec.method_config) / _epochs(r["spec"].get("train"), r["spec"].get(
                "method_config")) if basis != "its record" and _epochs(r["spec"].get("train"), {}) else 1.0
                for r in found]
            backends = [1.0 if basis == "its record" else _backend_ratio(spec, r) for r in found]
            scaled = [what for what, xs in (("its epochs", ratios), (f"its backend ({spec.train.get('grad_backend')}, "
                                                                     "bench)", backends)) if any(x != 1.0 for x in xs)]
            return (statistics.median(r["provenance"]["wall_time_s"] * x * y
                                      for r, x, y in zip(found, ratios, backends)),
                    f"{basis}, {len(found)} record(s)" + (f" on {'/'.join(kinds)}" if kinds else "")
                    + (f" scaled to {' and '.join(scaled)}" if scaled else ""))
    from dpnotes import experiments

    model = getattr(experiments.module(spec.paper), "estimate_seconds", None)
    if model is not None:  # a study's own cost model (the audits: timed steps, one CPU thread)
        return float(model(spec)), "cost model of the experiments (no record yet), one CPU thread"
    cpu = bench_seconds(spec, "cpu")
    if cpu is not None:
        gpu = bench_seconds(spec, "cuda")
        return cpu, "bench estimate, cpu 1 thread" + (f"; cuda {gpu:.0f} s" if gpu is not None else "; no cuda figure")
    return None, "no stored record to go by"


def hours(specs: Iterable[RunSpec], records: Iterable[dict]) -> tuple[int, float | None, float | None]:
    """(runs, GPU-hours, CPU-hours) of ``specs``: CPU from :func:`estimate`, GPU from the CUDA
    bench figures (None where a run has no estimate of that kind)."""
    records, specs = list(records), list(specs)
    cpu = [estimate(s, records)[0] for s in specs]
    gpu = [bench_seconds(s, "cuda") for s in specs]
    total = (lambda xs: None if any(x is None for x in xs) else sum(xs) / 3600)
    return len(specs), total(gpu), total(cpu)


def gpu_scale(seconds: float | None) -> bool:
    """Whether a run of ``seconds`` (CPU estimate) is GPU-scale: longer than :data:`GPU_SCALE_HOURS`."""
    return seconds is not None and seconds > GPU_SCALE_HOURS * 3600
