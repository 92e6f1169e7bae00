"""Verdicts: how a claim of a paper is compared with our value, the only place where that happens.

Experiments modules report :class:`~dpnotes.experiments.measurement.Measurement` values;
:func:`judge` turns a (claim, measurement) pair into :class:`Evidence` with a verdict, by
the rule of the measurement's kind (one function per rule below). Verdicts are computed,
never written by hand:

- ``reproduced``      exact claims: our value printed with the paper's digits equals the
                      paper's; training claims: the paper's value lies within our seeds'
                      spread (:func:`training`); gains: ours also has the paper's sign
                      (:func:`gain`); trends: the trend holds in every seed or in
                      the mean by a margin (:func:`trend`); statements: the computed fact holds.
- ``trend``           the paper's qualitative finding holds (e.g. the ordering of methods)
                      but the numbers are outside tolerance (no rule gives it yet).
- ``not_reproduced``  our value differs, the fact does not hold, or a run never produced
                      the value.
- ``not_run``         no value answers the claim (or the paper's value is missing); the
                      evidence says why.

A verdict that rests on a single seed carries the flag ``single-seed`` (:data:`SINGLE_SEED`).
:func:`rules_markdown` states the rules for the chapters, from the same constants.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from dpnotes.claims import Claim
from dpnotes.experiments.measurement import Measurement

VERDICTS = ("reproduced", "trend", "not_reproduced", "not_run")
SPREAD_SDS = 2.0  # a training claim's band: mean +- max(SPREAD_SDS * SD over seeds, the claim's floor)
TREND_SES = 2.0  # a trend not in every seed needs its mean above max(TREND_SES * SE, the stated floor)
SINGLE_SEED = "single-seed"  # the flag of a verdict that rests on one seed


@dataclass
class Evidence:
    """Our answer to one claim: value, verdict and what it rests on."""

    claim_id: str
    verdict: str
    ours: float | str | None = None
    evidence: list[str] | str = field(default_factory=list)  # record ids, or the reason not run
    detail: str | None = None  # e.g. "mean of 3 seeds, sd 0.21"
    flags: tuple[str, ...] = ()  # e.g. (SINGLE_SEED,): what a reader must know about the verdict

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def printed(claim: Claim, ours: float) -> str:
    """``ours`` printed with as many decimals as the paper printed for ``claim``."""
    return f"{ours:.{claim.decimals}f}"


def _basis(m: Measurement) -> list[str] | str:
    """What a measurement rests on: its run records, else its stated basis."""
    return list(m.record_ids) if m.record_ids else m.basis


def exact(claim: Claim, m: Measurement) -> Evidence:
    """An exact claim is reproduced when our value, printed like the paper's, is the same text."""
    (ours,) = m.values
    if claim.number is None:
        return Evidence(claim.id, "not_run", ours, "the paper's value is missing from the text")
    text = printed(claim, ours)
    same = float(text) == claim.number
    return Evidence(claim.id, "reproduced" if same else "not_reproduced", ours, _basis(m),
                    detail=None if same else f"ours prints as {text}")


def band(values: list[float], floor: float) -> float:
    """Half-width of our seeds' spread: max(SPREAD_SDS * SD, ``floor``); ``floor`` alone for
    one seed (no SD)."""
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return max(SPREAD_SDS * sd, floor)


def _seeds(n: int) -> tuple[str, ...]:
    return (SINGLE_SEED,) if n == 1 else ()


def training(claim: Claim, m: Measurement) -> Evidence:
    """A training claim is reproduced when the paper's value lies within our seeds' spread:
    |mean - paper| <= max(2 SD over seeds, the claim's ``tolerance``), the tolerance being a
    floor stated in the registry (e.g. 1 point of accuracy, 1 epoch). One seed has no SD: the
    floor alone decides and the verdict is flagged ``single-seed``.

    It is not run without records, and not reproduced when a run never produced the value
    (a value of ``None``: e.g. it never reached the accuracy the claim counts epochs to).
    """
    values, record_ids = list(m.values), list(m.record_ids)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    flags = _seeds(len(values))
    if None in values:
        return Evidence(claim.id, "not_reproduced", None, record_ids, m.detail, flags)
    mean = statistics.fmean(values)
    detail = f"mean of {len(values)} seed(s)" + (
        f", sd {statistics.stdev(values):.2f}" if len(values) > 1 else " (single-seed evidence)")
    if claim.number is None:
        return Evidence(claim.id, "not_run", mean, record_ids, detail + "; paper value missing", flags)
    half = band(values, claim.tolerance)
    ok = abs(mean - claim.number) <= half
    return Evidence(claim.id, "reproduced" if ok else "not_reproduced", mean, record_ids,
                    f"{detail}; band +-{half:.3g} (floor {claim.tolerance:g})", flags)


def gain(claim: Claim, m: Measurement) -> Evidence:
    """A claimed gain (a difference to a baseline, paired by seed) is reproduced when ours has
    the paper's sign and a comparable size: the mean has the paper's sign (a printed 0 asks for
    none) and the paper's value lies within our seeds' spread, as for :func:`training`. One seed:
    its sign and the floor decide, flagged ``single-seed``."""
    ev = training(claim, m)
    if ev.verdict != "reproduced":
        return ev
    mean = statistics.fmean(m.values)
    if claim.number != 0 and (mean > 0) != (claim.number > 0):
        return Evidence(claim.id, "not_reproduced", mean, ev.evidence, f"{ev.detail}; the sign differs from the paper's",
                        ev.flags)
    return Evidence(claim.id, "reproduced", mean, ev.evidence, f"{ev.detail}; the paper's sign", ev.flags)


def trend(claim: Claim, m: Measurement) -> Evidence:
    """A trend claim ("the CLT run needs fewer epochs") is reproduced when the trend holds
    (a per-seed value > 0) in every seed, or when the mean over seeds exceeds
    max(2 SE, the measurement's stated ``floor``) with SE = SD / sqrt(n). A zero value is
    no trend. One seed: that seed decides, flagged ``single-seed``."""
    values = list(m.values)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    n, mean = len(values), statistics.fmean(values)
    every = all(v > 0 for v in values)
    margin = max(TREND_SES * statistics.stdev(values) / math.sqrt(n), m.floor) if n > 1 else math.inf
    holds = every or mean > margin
    why = (f"{sum(v > 0 for v in values)} of {n} seed(s) show it, mean {mean:.3g}"
           + ("" if n == 1 else f" vs margin {margin:.3g}"))
    return Evidence(claim.id, "reproduced" if holds else "not_reproduced", f"{m.detail}; {why}",
                    list(m.record_ids), m.rule, _seeds(n))


def statement(claim: Claim, m: Measurement) -> Evidence:
    """A statement is reproduced iff the computed fact holds; ours is the numbers behind it
    and the detail the rule it tests; one that rests on one seed of runs is flagged so."""
    (holds,) = m.values
    return Evidence(claim.id, "reproduced" if holds else "not_reproduced", m.detail, _basis(m), m.rule,
                    _seeds(m.seeds) if m.seeds else ())


def missing(claim: Claim, m: Measurement) -> Evidence:
    """A claim without a value is not run; the evidence says why, the detail what exists
    instead (never compared with the paper)."""
    return Evidence(claim.id, "not_run", None, m.basis, m.detail)


RULES = {"exact": exact, "training": training, "gain": gain, "trend": trend, "statement": statement,
         "missing": missing}


def rules_markdown() -> str:
    """The verdict rules in words, for the chapters (from the constants the rules use)."""
    return "\n".join([
        "**How verdicts are decided** (one rule per kind of claim, in `dpnotes.report.verdicts`):",
        "",
        "- *exact* (a computation, e.g. an epsilon): reproduced when our value printed with the "
        "paper's digits is the paper's number.",
        f"- *training* (an outcome of training): reproduced when the paper's value lies within our "
        f"seeds' spread, mean +- max({SPREAD_SDS:g} SD over seeds, a floor stated with the claim in the "
        "registry: e.g. 1 point of accuracy, 0.02 RMSE, 1 epoch for epochs-to-accuracy, the resolution "
        "of per-epoch evaluation). A run that never produced the value (never reached the accuracy) "
        "is not reproduced.",
        "- *gain* (a printed difference to a baseline, paired by seed): reproduced when "
        "our mean difference has the paper's sign and the paper's value lies within our seeds' spread, "
        "as for training.",
        f"- *trend* (e.g. \"the CLT run needs fewer epochs\"): reproduced when the trend holds in every "
        f"seed, or when its mean over seeds exceeds max({TREND_SES:g} SE, a stated floor); a zero "
        "difference is no trend. With three seeds, a mean above 2 SE implies the trend in every seed, "
        "so three seeds need it in all three.",
        "- *statement* (a qualitative sentence): reproduced when the computed fact holds.",
        f"- A verdict resting on one seed is flagged `{SINGLE_SEED}`: the floor alone (training) or that "
        "seed alone (trend) decides it.",
        "- *not run*: no record answers the claim (or the paper's value is lost); the reason is given.",
    ])


def judge(claim: Claim, m: Measurement) -> Evidence:
    """The verdict on ``claim`` given our measurement of it, by the rule of its kind."""
    if m.claim_id != claim.id:
        raise ValueError(f"measurement of {m.claim_id!r} cannot answer claim {claim.id!r}")
    return RULES[m.kind](claim, m)
