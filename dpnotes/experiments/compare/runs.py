"""The comparison's run configs (``dpnotes run compare``), their cost and the CPU/GPU plan.

A config is one cell (data set, model, eps, method), one seed, one kind: ``tuned`` (the whole
tuning: K trials, K and the candidates drawn here from the seed, so they depend on no data and
the cost is known in advance; the record releases the best trial) or ``default`` (one run of the
paper's own setting at the target eps, no selection). Profiles: ``paper`` is the whole grid
(:mod:`settings`), ``quick`` MNIST at eps 4 on a 3,000-image subset, ``smoke`` a few steps.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dpnotes import validate
from dpnotes.experiments.compare import privacy as P
from dpnotes.experiments.compare import settings as S
from dpnotes.results import PROFILES

KINDS = ("tuned", "default")
TRIAL_SEED = 51  # the draws of K and of the candidates: numpy Generator([TRIAL_SEED, seed, ...])


def trials(seed: int) -> int:
    """K of a seed: the same for every method and cell (paired)."""
    from dpnotes.accounting.tuning import sample_trials

    return sample_trials(S.TUNING["mean"], S.TUNING["shape"], np.random.default_rng([TRIAL_SEED, seed]))


def candidates(method: str, dataset: str, seed: int) -> list[dict]:
    """The K candidates of a seed, each a uniform draw from the method's search space."""
    space = S.search_space(method, dataset)
    rng = np.random.default_rng([TRIAL_SEED, seed, S.METHODS.index(method)])
    return [{knob: values[int(rng.integers(len(values)))] for knob, values in space.items()}
            for _ in range(trials(seed))]


def _method_config(method: str, dataset: str, knobs: dict, sh: dict, trial_eps: float) -> dict:
    own = {k: v for k, v in knobs.items() if k not in ("lr", "clip")}
    if method == "dplis":
        return {"K": int(S._s("dplis.setup.k_image")), "combine": "mean", **own}
    if method == "dpis":
        from dpnotes.experiments.dpis import ON_CAPPED

        ds = {"mnist": "mnist", "fashion-mnist": "fmnist", "cifar-10": "cifar10"}[dataset]
        return {"epsilon": trial_eps, "sigma_n": S._s("dpis.setup.sigma_n_over_n") * sh["n"],
                "sigma_k": S._s(f"dpis.table2.{ds}.sigma_k_over_n") * sh["n"], "a_e": own["a_e"],
                "k": own["k"], "on_capped": ON_CAPPED}
    if method == "sadpsgd":
        return {"energy": "validation", **own}
    return own


def config(profile: str, dataset: str, model: str, epsilon: float, method: str, kind: str, seed: int) -> dict:
    """The run config of one cell, seed and kind (module docstring)."""
    validate.choice("profile", profile, PROFILES)
    validate.choice("method", method, S.METHODS)
    validate.choice("kind", kind, KINDS)
    sh = P.shape(profile, dataset)
    tuned = kind == "tuned"
    default = S.paper_defaults(method, dataset)
    scale = P.noise(method, epsilon, sh, tuned=tuned)
    trial_eps = P.dpis_trial_epsilon(epsilon, sh) if tuned else epsilon
    train = {"epochs": sh["epochs"], "batch_size": S.BATCH, "lr": default["lr"], "optimizer": "sgd",
             "clip": default["clip"], "noise_multiplier": 1.0 if method == "dpis" else scale,
             "sampling": "poisson", "steps_per_epoch": "floor", "grad_backend": "ghost", "delta": S.DELTA,
             "accountants": [S.ACCOUNTANT], "seed": seed}
    if method == "dplis":  # DPlis steps on the noisy sum (lr = eta/L): the same step as lr on the mean
        train.update(normalize="none", lr=default["lr"] / S.BATCH)
    analysis = {"validation": S.VALIDATION[profile], "target_epsilon": epsilon}
    if tuned:
        analysis["tuning"] = {**S.TUNING, "candidates": candidates(method, dataset, seed),
                              "planned_trial": {"scale": scale, "q": sh["q"], "steps_per_epoch": sh["steps_per_epoch"],
                                                "epochs": sh["epochs"]}}
    if method == "sadpsgd":
        analysis["energy_images"] = min(S.ENERGY_IMAGES, S.VALIDATION[profile])
    return {"paper": S.STUDY, "profile": profile, "experiment": f"{dataset}.{model}.eps{epsilon:g}.{method}.{kind}",
            "seed": seed, "model": model, "model_kwargs": {"activation": "tanh"} if method == "dpsgd_tanh" else {},
            "dataset": dataset, "subset": {"train": S.SUBSET[profile]} if S.SUBSET[profile] else {},
            "method": S.ENGINE_METHOD.get(method, method),
            "method_config": _method_config(method, dataset, default, sh, trial_eps), "train": train,
            "analysis": analysis}


def cells(profile: str) -> list[tuple[str, str, float]]:
    """(data set, model, eps) of a profile's grid."""
    if profile == "paper":
        return [(d, m, e) for d in S.DATASETS for m in S.MODELS[d] for e in S.EPSILONS]
    return [("mnist", "tf-mnist-cnn", 4.0)]


def configs(profile: str) -> list[dict]:
    """Every cell x method x kind x seed of the profile (``smoke``: seed 0 only)."""
    validate.choice("profile", profile, PROFILES)
    seeds = S.SEEDS if profile == "paper" else (0,)
    return [config(profile, d, m, e, method, kind, seed) for seed in seeds for d, m, e in cells(profile)
            for method in S.methods(m) for kind in KINDS]


# Seconds per training step relative to DP-SGD's ghost step (the audit's timings, batch 2,000 on the
# same CPU: dpnotes.audit.campaign.STEP_SECONDS; DPIS's per-epoch norm pass included; DPlis from the
# bench's K = 10 figure through run_cost); SA-DPSGD adds its energy pass per step (below).
STEP_FACTOR = {"dpsgd": 1.0, "dpsgd_tanh": 1.0, "dpsgd_decay": 1.04, "dpis": 7.42, "sadpsgd": 1.0}


def estimate_seconds(spec, device: str = "cpu") -> float:
    """Estimated seconds of one run of ``spec`` (every trial of a tuned run) on ``device``, from
    the bench figures (:func:`dpnotes.experiments.run_cost.bench_seconds`, one CPU thread, or one
    GPU), scaled by the method's step cost (:data:`STEP_FACTOR`) and SA-DPSGD's energy pass."""
    import dataclasses

    from dpnotes.experiments.run_cost import BENCH, EVAL_SPEEDUP, bench_seconds

    method = spec.experiment.split(".")[-2]
    one = bench_seconds(spec, device)
    if one is None and method == "dplis":  # no smoothed-step figure for the model: K ghost steps
        one = bench_seconds(dataclasses.replace(spec, method="dpsgd"), device) * spec.method_config["K"]
    if one is None:
        return float("nan")
    if method != "dplis":
        one *= STEP_FACTOR[method]
    if method == "sadpsgd":
        rate = BENCH[device].get(spec.model, {}).get("nonprivate", 1.0) * EVAL_SPEEDUP
        steps = P.shape(spec.profile, spec.dataset)["steps_per_epoch"] * spec.train["epochs"]
        one += steps * spec.analysis.get("energy_images", 0) / rate
    n = len(spec.analysis["tuning"]["candidates"]) if "tuning" in spec.analysis else 1
    return one * n + 20.0  # data, selection, final evaluation


def plan(profile: str = "paper") -> list[dict]:
    """One row per (cell, method): runs, CPU-h, GPU-h, and where they run (``cpu``: the CPU part,
    :data:`settings.CPU_PART`; ``gpu``: the campaign queue). Computed once per process."""
    return [dict(row) for row in _plan(validate.choice("profile", profile, PROFILES))]


@lru_cache(maxsize=None)
def _plan(profile: str) -> tuple:
    import fnmatch

    from dpnotes.experiments import resolve

    rows: dict = {}
    for c in configs(profile):
        spec = resolve(c)
        cell = ".".join(spec.experiment.split(".")[:4])
        row = rows.setdefault(cell, {"cell": cell, "runs": 0, "trials": 0, "cpu_h": 0.0, "gpu_h": 0.0,
                                     "where": "cpu" if any(fnmatch.fnmatch(spec.experiment, g) for g in S.CPU_PART)
                                     else "gpu"})
        row["runs"] += 1
        row["trials"] += len(spec.analysis.get("tuning", {}).get("candidates", [None]))
        row["cpu_h"] += estimate_seconds(spec, "cpu") / 3600
        row["gpu_h"] += estimate_seconds(spec, "cuda") / 3600
    return tuple(rows.values())
