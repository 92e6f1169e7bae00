"""Verdicts: how a claim of a paper is compared with our value, the only place where that happens.

Experiments modules report :class:`~dpnotes.experiments.measurement.Measurement` values;
:func:`judge` turns a (claim, measurement) pair into :class:`Evidence` with a verdict, by
the rule of the measurement's kind (one function per rule below). Verdicts are computed,
never written by hand:

- ``reproduced``      exact claims: our value printed with the paper's digits equals the
                      paper's; training claims: our mean over seeds is within the claim's
                      tolerance of the paper's value; statements: the computed fact holds.
- ``trend``           the paper's qualitative finding holds (e.g. the ordering of methods)
                      but the numbers are outside tolerance (no rule gives it yet).
- ``not_reproduced``  our value differs, the fact does not hold, or a run never produced
                      the value.
- ``not_run``         no value answers the claim (or the paper's value is missing); the
                      evidence says why.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from dpnotes.claims import Claim
from dpnotes.experiments.measurement import Measurement

VERDICTS = ("reproduced", "trend", "not_reproduced", "not_run")


@dataclass
class Evidence:
    """Our answer to one claim: value, verdict and what it rests on."""

    claim_id: str
    verdict: str
    ours: float | str | None = None
    evidence: list[str] | str = field(default_factory=list)  # record ids, or the reason not run
    detail: str | None = None  # e.g. "mean of 3 seeds, sd 0.21"

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


def training(claim: Claim, m: Measurement) -> Evidence:
    """A training claim is reproduced when the mean over seeds is within the claim's tolerance.

    It is not run without records, and not reproduced when a run never produced the value
    (a value of ``None``: e.g. it never reached the accuracy the claim counts epochs to).
    """
    values, record_ids = list(m.values), list(m.record_ids)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    if None in values:
        return Evidence(claim.id, "not_reproduced", None, record_ids, m.detail)
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else math.nan
    detail = f"mean of {len(values)} seed(s)" + ("" if math.isnan(sd) else f", sd {sd:.2f}")
    if claim.number is None:
        return Evidence(claim.id, "not_run", mean, record_ids, detail + "; paper value missing")
    ok = abs(mean - claim.number) <= claim.tolerance
    return Evidence(claim.id, "reproduced" if ok else "not_reproduced", mean, record_ids, detail)


def statement(claim: Claim, m: Measurement) -> Evidence:
    """A statement is reproduced iff the computed fact holds; ours is the numbers behind it
    and the detail the rule it tests."""
    (holds,) = m.values
    return Evidence(claim.id, "reproduced" if holds else "not_reproduced", m.detail, _basis(m), m.rule)


def missing(claim: Claim, m: Measurement) -> Evidence:
    """A claim without a value is not run; the evidence says why, the detail what exists
    instead (never compared with the paper)."""
    return Evidence(claim.id, "not_run", None, m.basis, m.detail)


RULES = {"exact": exact, "training": training, "statement": statement, "missing": missing}


def judge(claim: Claim, m: Measurement) -> Evidence:
    """The verdict on ``claim`` given our measurement of it, by the rule of its kind."""
    if m.claim_id != claim.id:
        raise ValueError(f"measurement of {m.claim_id!r} cannot answer claim {claim.id!r}")
    return RULES[m.kind](claim, m)
