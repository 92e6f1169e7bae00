"""The comparison's privacy arithmetic, exact (no training): each method's trial releases, the
noise that makes the whole tuning meet the target eps, and the tuning event of its records.

A trial of DP-SGD, DP-SGD with tanh, DPlis and SA-DPSGD (every candidate step charged, the sound
count) releases ``steps`` Poisson-subsampled Gaussian gradients at rate ``q`` and noise
multiplier ``sigma``; DP-SGD-Decay the same with sigma_t = sigma_0 exp(-k t) per epoch. These
releases depend on no data, so the trial event planned here is the one every trial makes
(:func:`dpnotes.experiments.compare.training.execute` checks each trial's ledger against it).
DPIS's releases depend on noisy statistics of the data (its N~ and K~): a trial gets the eps the
planned DP-SGD trial has, and its record's tuning event holds the largest realised trial ledger
(``final["tuning"]["trial_bound"] = "realised"``), which bounds the trials run but is not a
worst-case bound over data sets: the chapter says so beside DPIS's row.
"""

from __future__ import annotations

from functools import lru_cache

from dpnotes.experiments.compare import settings as S


def shape(profile: str, dataset: str) -> dict:
    """Training images n, rate q, steps per epoch, epochs of a profile's runs on ``dataset``."""
    from dpnotes.experiments.run_cost import SIZES

    n = S.SUBSET[profile] or SIZES[dataset][0]
    per_epoch = n // S.BATCH
    return {"n": n, "q": S.BATCH / n, "steps_per_epoch": per_epoch, "epochs": S.EPOCHS[profile]}


def _key(sh: dict) -> tuple:
    return sh["q"], sh["steps_per_epoch"], sh["epochs"]


def trial_ledger(method: str, scale: float, q: float, steps_per_epoch: int, epochs: int):
    """The releases of one trial of ``method`` at noise ``scale`` (sigma, or sigma_0 for Decay)."""
    from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
    from dpnotes.methods.decay_schedule import ledger

    if method == "dpsgd_decay":
        return ledger(scale, S.paper_defaults("dpsgd_decay", "mnist")["decay_rate"], q, steps_per_epoch, epochs)
    return Ledger().append(PoissonSampledDpEvent(q, GaussianDpEvent(scale)), steps_per_epoch * epochs)


def tuning_event(trial):
    """``RepeatAndSelectDpEvent`` of a trial (a Ledger or an event) under :data:`settings.TUNING`."""
    from dpnotes.ledger import Ledger, RepeatAndSelectDpEvent

    event = trial.as_event() if isinstance(trial, Ledger) else trial
    return RepeatAndSelectDpEvent(event, S.TUNING["mean"], S.TUNING["shape"])


@lru_cache(maxsize=None)
def _noise(method: str, epsilon: float, q: float, steps_per_epoch: int, epochs: int, tuned: bool) -> float:
    from dpnotes.accounting.calibrate import ledger_scale
    from dpnotes.ledger import Ledger

    planned = "dpsgd" if method == "dpis" else method

    def ledger_of(s):
        trial = trial_ledger(planned, s, q, steps_per_epoch, epochs)
        return Ledger().append(tuning_event(trial)) if tuned else trial

    from dpnotes import calc_cache

    inputs = (method, epsilon, q, steps_per_epoch, epochs, tuned, S.TUNING["mean"], S.TUNING["shape"], S.DELTA)
    return calc_cache.cached("compare.noise", inputs, lambda: ledger_scale(
        ledger_of, epsilon, S.DELTA, accountant=S.ACCOUNTANT, digits=4))


def noise(method: str, epsilon: float, sh: dict, *, tuned: bool) -> float:
    """The noise scale at which one trial (``tuned``: the whole tuning) meets ``epsilon`` under ``rdp``."""
    return _noise(method, float(epsilon), *_key(sh), tuned)


def dpis_trial_epsilon(epsilon: float, sh: dict) -> float:
    """The eps DPIS's schedule is given for one trial: that of the planned DP-SGD trial whose
    tuning meets ``epsilon``."""
    from dpnotes.accounting.registry import price

    trial = trial_ledger("dpsgd", noise("dpis", epsilon, sh, tuned=True), *_key(sh))
    return round(price(trial, S.DELTA, S.ACCOUNTANT)[S.ACCOUNTANT]["epsilon"], 4)


def has_tuning_event(ledger_json: list) -> bool:
    """Whether a record's ledger (JSON) holds a tuning event (at any depth)."""
    def walk(node):
        if isinstance(node, dict):
            return node.get("type") == "RepeatAndSelectDpEvent" or any(walk(v) for v in node.values())
        if isinstance(node, list):
            return any(walk(v) for v in node)
        return False

    return walk(ledger_json)
