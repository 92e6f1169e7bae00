"""The per-step audit (study ``audit-step``): each method's real step, run by the one training loop
with its own hooks, observed at every step through Dirac canaries, and turned into a whole-run
lower bound by :mod:`dpnotes.audit.per_step`; the same audit of deliberately broken steps.

An experiments-style module (``TITLE``, ``STUDY``, ``DATA_VERSION``, ``configs``, ``execute``) run
by :mod:`dpnotes.runner`: records go to ``results/audit-step/<profile>/`` through the normal store.

The mechanism is the one-run campaign's (:mod:`dpnotes.audit.campaign`, profile ``paper``): N =
20,000 rows, expected batch 2,000 (q = 0.1), 10 epochs of 10 steps, each method's sigma (or DPIS's
schedule) for accountant eps 1, 2, 4, 8 at delta 1e-5. Only the model and its rows change, so that
a step costs milliseconds: 15,000 Adult rows (123 features, the GDP chapter's data) and the GDP
chapter's 2-layer network, plus m = 5,000 canary slots, every one of them a canary (white-box: no
blanks are needed, the harness reads which canaries a step's noise-free sum holds). Canary i's
gradient is 2 C e_i on its own coordinate (:mod:`dpnotes.audit.canaries`): the engine's sampler
draws it, its clip cuts it to C, its noise is added; the harness reads, at every step, the
noise-free sum (wrapping the loop's ``add_noise``, which still runs) and the released gradient the
optimizer received. 100 steps x 5,000 canaries = 500,000 observations per run.

Methods (settings of :func:`dpnotes.audit.campaign.config`): DP-SGD; DPIS (its sampler, k = 5,
the canary at the largest clipped norm: drawn with the largest probability b C / K~ and rescaled
to K~ / N~, exactly what Lemma 3.1 charges); SA-DPSGD, whose energy set is a public set chosen by
the auditor (the paper's threat model: the test set is public): one "twin" per canary whose loss
is ``-TWIN_WEIGHT x`` the canary's, so a candidate that carries canaries raises the energy and is
rejected more often (the acceptance rate is in the record); DP-SGD with decaying noise; DPlis at
one eps only: a Dirac canary's gradient is the same at every perturbed parameter set, so its K
draws sum to K times it and the clip leaves C: its release equals DP-SGD's by construction (the
record shows it), no copy at every eps is stored.

Broken variants (``analysis.variant``), each one function of the loop changed for the whole run,
the ledger left as it was: ``noise0.9`` / ``noise0.5`` (the noise std times 0.9 / 0.5),
``unclipped`` (no clip: the canary contributes 2 C), ``rate1.1`` (every row sampled at 1.1 times
the probability the ledger records), and for SA-DPSGD ``accepted-only`` (the claim is Theorem 1's
accepted-only eps; the audit reads every candidate, as the sound accountants charge). A variant
is caught when the lower bound exceeds the eps its ledger claims.
"""

from __future__ import annotations

import contextlib
import math

from dpnotes import validate
from dpnotes.record import add_final

TITLE = ("Per-step audits: each method's step observed through Dirac gradient canaries at every step "
         "(Nasr et al., USENIX Security 2023), composed into a whole-run lower bound")
STUDY = "audit-step"
DATA_VERSION = 1
MODEL = "gdp-adult"
NUM_CLASSES = 2
MAGNITUDE = 2.0
TWIN_WEIGHT = 100.0  # SA-DPSGD's energy twins: loss -TWIN_WEIGHT * (the canary's loss)
METHODS = ("dpsgd", "dpis", "sadpsgd", "dpsgd_decay")  # at every eps; dplis once (module docstring)
EPSILONS = (1.0, 2.0, 4.0, 8.0)
VARIANTS = ("correct", "noise0.9", "noise0.5", "unclipped", "rate1.1", "accepted-only")
BROKEN_ON = {"noise0.9": "dpsgd", "noise0.5": "dpsgd", "unclipped": "dpsgd", "rate1.1": "dpsgd",
             "accepted-only": "sadpsgd"}
SCALE = {"paper": {"train": 15000, "canaries": 5000, "repeats": 2},  # seeds 1-2 of each variant
         "quick": {"train": 15000, "canaries": 5000, "repeats": 1},
         "smoke": {"train": 1500, "canaries": 500, "repeats": 1}}


def config(profile: str, method: str, epsilon: float, seed: int, variant: str = "correct") -> dict:
    """One per-step audit run: the campaign's paper-profile mechanism (module docstring)."""
    from dpnotes.audit import campaign

    validate.choice("variant", variant, VARIANTS)
    s = SCALE[validate.choice("profile", profile, tuple(SCALE))]
    base = campaign.config("paper", method, epsilon, seed)
    base["train"]["batch_size"] = int(round(campaign.shape("paper")["q"] * (s["train"] + s["canaries"])))
    method_config = dict(base["method_config"])
    if method == "sadpsgd":
        method_config["energy"] = "validation"
    if method == "dpis":
        method_config["sigma_n"] *= (s["train"] + s["canaries"]) / campaign.shape("paper")["n"]
        method_config["sigma_k"] *= (s["train"] + s["canaries"]) / campaign.shape("paper")["n"]
    name = f"{method}.eps{epsilon:g}" + ("" if variant == "correct" else f".{variant}")
    return {"paper": STUDY, "profile": profile, "experiment": name, "seed": seed, "model": MODEL,
            "model_kwargs": {}, "dataset": "adult", "subset": {"train": s["train"]}, "method": method,
            "method_config": method_config, "train": base["train"],
            "analysis": {"canaries": s["canaries"], "magnitude": MAGNITUDE, "target_epsilon": epsilon,
                         "variant": variant, "twin_weight": TWIN_WEIGHT if method == "sadpsgd" else None}}


def configs(profile: str) -> list[dict]:
    """Every method at every eps (DPlis at eps 8 only), seed 0; each broken variant at every eps,
    ``repeats`` seeds (its detection rate); ``smoke``: DP-SGD and SA-DPSGD at eps 8."""
    s = SCALE[validate.choice("profile", profile, tuple(SCALE))]
    if profile == "smoke":
        return [config("smoke", m, 8.0, 0) for m in ("dpsgd", "sadpsgd")]
    out = [config(profile, m, e, 0) for m in METHODS for e in EPSILONS] + [config(profile, "dplis", 8.0, 0)]
    out += [config(profile, BROKEN_ON[v], e, seed, v) for v in VARIANTS[1:] for e in EPSILONS
            for seed in range(1, 1 + s["repeats"])]
    return out


@contextlib.contextmanager
def _instrumented(variant: str, sink: dict):
    """The loop's ``add_noise`` wrapped to keep the canary part of the noise-free sum (it still
    runs), and the variant's one change (module docstring); restored on exit."""
    from dpnotes.train import loop

    saved = {k: getattr(loop, k) for k in ("add_noise", "clip_factors", "poisson_batch")}
    factor = {"noise0.9": 0.9, "noise0.5": 0.5}.get(variant, 1.0)

    def add_noise(total, std, generator):
        sink["pre"] = total["canary"].detach().double().cpu().clone() if "canary" in total else None
        return saved["add_noise"](total, std * factor, generator)

    loop.add_noise = add_noise
    if variant == "unclipped":
        loop.clip_factors = lambda grads, clip, mode="flat", weights=None: saved["clip_factors"](
            grads, None, mode, weights)
    if variant == "rate1.1":
        loop.poisson_batch = lambda probs, n, generator: saved["poisson_batch"](
            (probs * 1.1).clamp(max=1.0) if hasattr(probs, "clamp") else min(probs * 1.1, 1.0), n, generator)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(loop, k, v)


def _observer(model, sink: dict):
    """A plug-in that turns every step into a :class:`~dpnotes.audit.per_step.StepSummary`."""
    import numpy as np

    from dpnotes.audit.canaries import released_step
    from dpnotes.audit.per_step import StepSummary
    from dpnotes.ledger import CandidateStepDpEvent, DpisIterationDpEvent
    from dpnotes.train import Plugin

    class StepObserver(Plugin):
        name = "step-observer"

        def __init__(self):
            self.steps: list[StepSummary] = []

        def on_step_end(self, ctx, info):
            event = ctx.ledger.entries[-1][0]
            accepted = event.accepted if isinstance(event, CandidateStepDpEvent) else True
            inner = event.event if isinstance(event, CandidateStepDpEvent) else event
            q, sigma = released_step(event)
            # the claimed noise std in gradient units: sigma' times the claimed sensitivity
            std = (inner.sigma_g if isinstance(inner, DpisIterationDpEvent) else sigma) * ctx.config.clip
            scale = 1.0 / (ctx.q * ctx.n) if ctx.config.normalize == "expected" else 1.0
            x = model.canary.grad.detach().double().cpu().numpy() / scale / std
            pre = sink.pop("pre", None)
            contributed = np.zeros(len(x), bool) if pre is None else pre.numpy() != 0
            self.steps.append(StepSummary.of(x, contributed, q, sigma, accepted))
            if len(self.steps) == 1:
                sink["x0"], sink["c0"] = x, contributed

    return StepObserver()


def normality_p(x, contributed) -> float:
    """Shapiro-Wilk p-value of the first step's non-contributing observations (at most 5,000)."""
    import numpy as np
    from scipy import stats

    out = np.asarray(x)[~np.asarray(contributed)][:5000]
    return float(stats.shapiro(out).pvalue) if len(out) >= 3 else math.nan


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Train one per-step audit spec; ``final["audit"]`` holds the estimate and the bounds."""
    import numpy as np
    import torch

    from dpnotes import methods, models
    from dpnotes.audit.canaries import CanaryModel, canary_loss, with_canaries
    from dpnotes.experiments.gdp.data import load
    from dpnotes.train import TrainConfig, train

    a = spec.analysis
    m, variant = int(a["canaries"]), a["variant"]
    (x, y), _ = load("adult", {"train": spec.subset["train"], "test": 1})
    torch.manual_seed(spec.seed)
    cfg = TrainConfig(**spec.train, device=device)
    base = models.create(spec.model, **spec.model_kwargs)
    model = CanaryModel(base, m, NUM_CLASSES, float(a["magnitude"]) * cfg.clip)
    method = methods.module(spec.method)
    sink: dict = {}
    observer = _observer(model, sink)
    validation = None
    if a.get("twin_weight"):  # SA-DPSGD's energy set: one twin per canary (module docstring)
        validation = (torch.zeros((m, x.shape[1])), torch.arange(m), torch.full((m,), NUM_CLASSES + 2))
    loss = canary_loss(NUM_CLASSES, twin_weight=float(a.get("twin_weight") or 0.0))
    with _instrumented(variant, sink):
        out = train(model, with_canaries((x, y), np.ones(m, bool), NUM_CLASSES), None, cfg,
                    plugins=method.hooks(method.Config(**spec.method_config)) + (observer,),
                    progress=progress, checkpoint=None, loss=loss, validation_data=validation)
    return add_final(out, audit=summary(observer.steps, out["privacy"], variant, normality_p(sink["x0"], sink["c0"])))


def summary(steps, privacy: dict, variant: str, normality: float) -> dict:
    """The record's ``final["audit"]``: the lower bound (all observed steps; for SA-DPSGD also the
    accepted ones only), the claimed eps it is compared with, the acceptance rate and whether the
    audit caught the run (lower bound above the claim)."""
    from dpnotes.audit import per_step

    delta = privacy["delta"]
    eps = {k: v["epsilon"] for k, v in privacy["epsilon"].items()}
    bound = per_step.lower_bound(steps, delta)
    accepted = [s.accepted for s in steps]
    claim_name = "sadpsgd-accepted-only" if variant == "accepted-only" else ("dpis" if "dpis" in eps else "pld")
    out = {"variant": variant, "lower_bound": bound["epsilon"], "estimate": bound["estimate"],
           "factors": bound["factors"], "steps": len(steps), "acceptance": sum(accepted) / len(steps),
           "claimed_by": claim_name, "claimed": eps[claim_name], "normality_p": normality,
           "caught": bool(bound["epsilon"] > eps[claim_name])}
    if not all(accepted):
        out["lower_bound_accepted"] = per_step.lower_bound(steps, delta, observed=accepted)["epsilon"]
    return out
