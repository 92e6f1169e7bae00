"""The white-box one-run audit campaign: each method's training step, at accountant eps 1, 2,
4 and 8, audited with Dirac gradient canaries (:mod:`dpnotes.audit.canaries`).

An experiments-style module (``TITLE``, ``DATA_VERSION``, ``configs(profile)``, ``execute``)
run by :mod:`dpnotes.runner` under the study name ``audit``: records go to
``results/audit/<profile>/`` through the normal store (clean tree for ``paper``, provenance,
ledger repriced on the way in). A spec is a normal training spec (method, model, data, train)
plus ``analysis``: the number of canaries m, their gradient norm (in units of C) and the target
eps. Every method sees the same mechanism shape, N = n + m rows (n real MNIST training images, a
fixed subset, and m canary slots), expected batch B = q N, ``EPOCHS`` epochs:

* ``dpsgd`` (Abadi et al. 2016) and ``dplis`` (Wang et al. 2021; K and R from the claims
  registry, the authors' ``sum`` of the K gradients, plain SGD on the noisy sum): sigma for the
  target eps under ``rdp``;
* ``dpsgd_decay`` (Yu et al. 2019, DPIS's decay rate): sigma_0 for the target under ``rdp``;
* ``dpis`` (Wei et al. 2022): its own schedule meets the target under its accountant (sigma_N,
  sigma_K, a_E, k of Table 2, MNIST; capped draws charged as DP-SGD steps, as the DPIS chapter);
* ``sadpsgd`` (Fu et al. 2022; Q0 and mu0 of Table 2, MNIST; the energy is the test loss): sigma
  for the target over ALL candidates (the sound count); the record also prices Theorem 1's
  accepted-only eps.

``final["audit"]`` holds the canary scores, which canaries were included, and the bounds
(:func:`audit_summary`). The ``smoke`` profile is a few steps on a few hundred images (CI).

An audit needs no test accuracy: only SA-DPSGD, whose accept rule reads the test loss (its
energy), gets test images; the other methods train without a test set (no evaluation pass).

Cost. :func:`estimate_seconds` (what ``dpnotes run audit --list`` shows for a run without a
record) multiplies the steps by each method's seconds per step, linear in the expected batch
through two points timed with :func:`time_slice` at the smoke and paper profiles
(:data:`STEP_SECONDS`);
:func:`worker_groups` splits a profile's runs into groups of similar estimated cost for
processes run side by side, and :func:`worker_commands` writes their command lines.
"""

from __future__ import annotations

import shlex
import time
from functools import lru_cache

from dpnotes import claims, validate
from dpnotes.record import add_final
from dpnotes.results import PROFILES

TITLE = ("Auditing the implementations: white-box one-run audits (Steinke, Nasr, Jagielski, NeurIPS 2023) "
         "with Dirac gradient canaries (Nasr et al., USENIX Security 2023)")
STUDY = "audit"
DATA_VERSION = 1  # MNIST / 255, fixed subsets, canary slots appended (dpnotes.audit.canaries)
METHODS = ("dpsgd", "dplis", "dpis", "sadpsgd", "dpsgd_decay")
EPSILONS = (1.0, 2.0, 4.0, 8.0)
DELTA = 1e-5
MODEL = "tf-mnist-cnn"
NUM_CLASSES = 10
MAGNITUDE = 2.0  # a canary's gradient norm in units of C: above C, so the clip must act
GUESSES = (100, 500, 1000, 5000)  # one-run guess counts (Bonferroni over them)
TARGET_ACCOUNTANT = "rdp"
SCALE = {  # real training images, canaries, expected batch, epochs, test images, seeds
    "paper": {"train": 15000, "canaries": 5000, "batch": 2000, "epochs": 10, "test": 1000, "seeds": (0, 1)},
    "quick": {"train": 3000, "canaries": 1000, "batch": 400, "epochs": 2, "test": 500, "seeds": (0,)},
    "smoke": {"train": 300, "canaries": 100, "batch": 80, "epochs": 1, "test": 100, "seeds": (0,)},
}
# Seconds per training step at the smoke and at the paper profile's expected batch (80, 2,000),
# one CPU thread, time_slice(profile, method, 8.0, steps=one epoch) (min of 3 at smoke, of 2 at
# paper) on the 2-core development CPU shared with two training processes (upper estimates).
# dplis: K = 10 gradient passes a step; dpis: its sampler's per-epoch norm pass included. A
# smoke time scaled linearly by the batch misses by a factor 0.8 to 4 (fixed per-step work),
# hence two points: seconds per step are linear in the batch through them (:func:`step_seconds`).
STEP_SECONDS = {"dpsgd": (0.095, 1.205), "dplis": (0.532, 17.20), "dpis": (0.428, 8.94),
                "sadpsgd": (0.154, 1.596), "dpsgd_decay": (0.206, 1.255)}
START_SECONDS = 20.0  # a run's fixed part: imports, data, the final pricing and the audit bounds


def _s(name: str) -> float:
    return claims.setting(name)


def accountants(method: str) -> tuple[str, ...]:
    """The accountants a run's ledger is priced by: RDP and the tight PLD, plus the method's own."""
    extra = {"dpis": ("dpis",), "sadpsgd": ("sadpsgd-accepted-only",)}.get(method, ())
    return ("rdp", "pld") + extra


def shape(profile: str) -> dict:
    """N, q, steps per epoch and steps of the profile's mechanism."""
    s = SCALE[validate.choice("profile", profile, PROFILES)]
    n = s["train"] + s["canaries"]
    per_epoch = n // s["batch"]
    return {"n": n, "q": s["batch"] / n, "steps_per_epoch": per_epoch, "steps": per_epoch * s["epochs"]}


@lru_cache(maxsize=None)
def _sigma(profile: str, method: str, epsilon: float) -> float:
    from dpnotes.accounting.calibrate import noise_multiplier
    from dpnotes.experiments.dpis import DECAY_RATE
    from dpnotes.methods import dpsgd_decay

    sh, s = shape(profile), SCALE[profile]
    if method == "dpsgd_decay":
        return dpsgd_decay.initial_sigma(epsilon, DECAY_RATE, sh["q"], sh["steps_per_epoch"], s["epochs"], DELTA,
                                         accountant=TARGET_ACCOUNTANT, digits=4)
    return noise_multiplier(epsilon, sh["q"], sh["steps"], DELTA, accountant=TARGET_ACCOUNTANT, digits=4)


def _method(profile: str, method: str, epsilon: float) -> tuple[dict, dict]:
    """(method_config, train overrides) of ``method`` at the target ``epsilon``."""
    if method == "dplis":
        return ({"K": int(_s("dplis.setup.k_image")), "R": _s("dplis.setup.r_default"), "combine": "sum"},
                {"lr": _s("dplis.table1.mnist.lr_over_batch"), "normalize": "none",
                 "noise_multiplier": _sigma(profile, method, epsilon)})
    if method == "dpis":
        from dpnotes.experiments.dpis import ON_CAPPED

        n = shape(profile)["n"]
        return ({"epsilon": epsilon, "sigma_n": _s("dpis.setup.sigma_n_over_n") * n,
                 "sigma_k": _s("dpis.table2.mnist.sigma_k_over_n") * n, "a_e": _s("dpis.table2.mnist.a_e"),
                 "k": _s("dpis.table2.mnist.k"), "on_capped": ON_CAPPED}, {"noise_multiplier": 1.0})
    if method == "sadpsgd":
        return ({"Q0": _s("sadpsgd.table2.mnist.q0"), "mu0": int(_s("sadpsgd.table2.mnist.mu0"))},
                {"noise_multiplier": _sigma(profile, method, epsilon)})
    if method == "dpsgd_decay":
        from dpnotes.experiments.dpis import DECAY_RATE

        return {"decay_rate": DECAY_RATE}, {"noise_multiplier": _sigma(profile, method, epsilon)}
    return {}, {"noise_multiplier": _sigma(profile, validate.choice("method", method, METHODS), epsilon)}


def config(profile: str, method: str, epsilon: float, seed: int) -> dict:
    """The run config of one audit (module docstring)."""
    s = SCALE[validate.choice("profile", profile, PROFILES)]
    method_config, overrides = _method(profile, method, epsilon)
    train = {"epochs": s["epochs"], "batch_size": s["batch"], "lr": 0.5, "optimizer": "sgd", "clip": 1.0,
             "sampling": "poisson", "steps_per_epoch": "floor", "delta": DELTA,
             "accountants": list(accountants(method)), "seed": seed, **overrides}
    subset = {"train": s["train"], "test": s["test"]} if method == "sadpsgd" else {"train": s["train"]}
    return {"paper": STUDY, "profile": profile, "experiment": f"{method}.eps{epsilon:g}", "seed": seed,
            "model": MODEL, "model_kwargs": {}, "dataset": "mnist", "subset": subset, "method": method,
            "method_config": method_config, "train": train,
            "analysis": {"canaries": s["canaries"], "magnitude": MAGNITUDE, "target_epsilon": epsilon,
                         "target_accountant": TARGET_ACCOUNTANT if method != "dpis" else "dpis"}}


def configs(profile: str) -> list[dict]:
    """Every method at every eps of :data:`EPSILONS`, for each seed of the profile (``smoke``:
    DP-SGD at eps 8 and SA-DPSGD at eps 8 only)."""
    s = SCALE[validate.choice("profile", profile, PROFILES)]
    if profile == "smoke":
        return [config("smoke", m, 8.0, 0) for m in ("dpsgd", "sadpsgd")]
    return [config(profile, m, e, seed) for seed in s["seeds"] for m in METHODS for e in EPSILONS]


def load(subset: dict):
    """(train, test) MNIST / 255, fixed subsets (as every chapter's); test is None when
    ``subset`` has no ``"test"`` (the audit then runs no evaluation pass)."""
    from dpnotes.data.prepare import fixed_subset, images

    train = fixed_subset(images("mnist", "train"), subset.get("train"))
    return train, (fixed_subset(images("mnist", "test"), subset["test"]) if "test" in subset else None)


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Train one audit spec with its canaries; ``final["audit"]`` holds scores and bounds."""
    from dpnotes.audit.training import audited_train

    train_data, test_data = load(spec.subset)
    out, observer, included = audited_train(spec, train_data, test_data, device=device, progress=progress,
                                            checkpoint=checkpoint)
    return add_final(out, audit=audit_summary(observer.scores(), included, out["privacy"]["delta"]))


def audit_summary(scores: dict, included, delta: float) -> dict:
    """Scores (LLR, 6 significant digits), inclusion bits and the bounds: the one-run test on
    the LLR and on the linear score (guess counts :data:`GUESSES`, Bonferroni), its f-DP version
    on the LLR (a bound for Gaussian-shaped claims only) and the GDP estimate."""
    import numpy as np

    from dpnotes.audit.one_run import gdp_epsilon, one_run_audit, one_run_fdp_audit

    inc = np.asarray(included, dtype=bool)
    llr = np.asarray([float(f"{v:.6g}") for v in scores["llr"]])
    out = {"m": len(inc), "included": "".join("1" if b else "0" for b in inc), "llr": llr.tolist(),
           "steps_observed": scores["steps"]}
    for name, values in (("llr", llr), ("linear", np.asarray(scores["linear"]))):
        r = one_run_audit(values, inc, delta, GUESSES)
        out[f"one_run_{name}"] = {"epsilon": r.epsilon, "guesses": r.guesses, "correct": r.correct,
                                  "significance": r.significance}
    r = one_run_fdp_audit(llr, inc, delta, GUESSES)
    out["one_run_fdp_llr"] = {"epsilon": r.epsilon, "guesses": r.guesses, "correct": r.correct,
                              "significance": r.significance}
    out["gdp_estimate"] = gdp_epsilon(llr, inc, delta)
    return out


def time_slice(profile: str = "paper", method: str = "dpsgd", epsilon: float = 8.0, steps: int = 5) -> dict:
    """Seconds per step of one audit run of ``profile`` (``steps`` steps, one epoch, on this
    machine's CPU, torch's thread setting as it is), and that times the run's steps. An epoch's
    fixed work (DPIS's norm pass, the test pass of SA-DPSGD) is spread over the ``steps``: time
    ``steps = shape(profile)["steps_per_epoch"]`` for a whole epoch."""
    from dpnotes import experiments
    from dpnotes.audit.training import audited_train

    validate.integer("steps", steps, minimum=1)
    spec = experiments.resolve(config(profile, method, epsilon, 0))
    train = dict(spec.train, epochs=1, steps_per_epoch=steps)
    sliced = type(spec)(**{**spec.to_dict(), "train": train, "analysis": dict(spec.analysis)})
    train_data, test_data = load(spec.subset)
    start = time.perf_counter()
    audited_train(sliced, train_data, test_data, device="cpu", progress=False, checkpoint=None)
    per_step = (time.perf_counter() - start) / steps
    sh = shape(profile)
    return {"method": method, "seconds_per_step": per_step, "steps": sh["steps"],
            "run_seconds": per_step * sh["steps"]}


def step_seconds(method: str, batch: int) -> float:
    """Seconds per step of ``method`` at expected batch ``batch`` (one CPU thread): the line
    through :data:`STEP_SECONDS`' smoke and paper points, never below the smoke time."""
    small, large = STEP_SECONDS[validate.choice("method", method, METHODS)]
    b0, b1 = SCALE["smoke"]["batch"], SCALE["paper"]["batch"]
    return max(small, small + (large - small) * (batch - b0) / (b1 - b0))


def estimate_seconds(spec) -> float:
    """Estimated wall seconds of one audit run of ``spec`` on one CPU thread: its steps times
    :func:`step_seconds`, plus :data:`START_SECONDS` (module docstring)."""
    if spec.paper != STUDY or spec.method not in STEP_SECONDS:
        raise ValueError(f"estimate_seconds takes an audit spec (methods {', '.join(METHODS)}), got "
                         f"{spec.paper} / {spec.method}")
    n = spec.subset["train"] + spec.analysis["canaries"]
    batch, per_epoch = spec.train["batch_size"], spec.train["steps_per_epoch"]
    steps = (n // batch if per_epoch == "floor" else int(per_epoch)) * spec.train["epochs"]
    return START_SECONDS + step_seconds(spec.method, batch) * steps


def worker_groups(profile: str, workers: int) -> list[list]:
    """The profile's runs (resolved specs) in ``workers`` groups of similar estimated cost:
    longest first, each to the group with the least so far (LPT); groups sorted by cost."""
    from dpnotes import experiments

    workers = validate.integer("workers", workers, minimum=1)
    specs = sorted((experiments.resolve(c) for c in configs(profile)), key=estimate_seconds, reverse=True)
    groups = [[] for _ in range(min(workers, len(specs)))]
    for spec in specs:
        min(groups, key=lambda g: sum(map(estimate_seconds, g))).append(spec)
    return sorted(groups, key=lambda g: -sum(map(estimate_seconds, g)))


def worker_commands(profile: str = "paper", workers: int = 14, device: str = "cuda") -> list[str]:
    """One shell line per group of :func:`worker_groups`: ``dpnotes run audit`` once per run of
    the group (``--only`` its experiment, ``--seeds`` its seed, one thread), one after another.
    Each run stores its record as it finishes; a line run again skips what is stored and resumes
    a run from its checkpoint."""
    validate.choice("device", device, ("cpu", "cuda", "auto"))
    return ["; ".join(f"dpnotes run audit --profile {profile} --device {device} --threads 1 --no-progress --yes "
                        f"--only {shlex.quote(s.experiment)} --seeds {s.seed}" for s in group)
            for group in worker_groups(profile, workers)]
