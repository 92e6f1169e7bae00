"""Verdicts: how a claim of a paper is compared with our value.

Verdicts are computed, never written by hand:

- ``reproduced``      exact claims: our value printed with the paper's digits equals the
                      paper's; training claims: our mean over seeds is within the claim's
                      tolerance of the paper's value.
- ``trend``           the paper's qualitative finding holds (e.g. the ordering of methods)
                      but the numbers are outside tolerance; decided by the experiments
                      module with an explicit, stated rule.
- ``not_reproduced``  our value differs.
- ``not_run``         no record answers the claim; the evidence says why.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

from dpnotes.claims import Claim

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


def exact(claim: Claim, ours: float, evidence: list[str] | str = "computed") -> Evidence:
    """An exact claim is reproduced when our value, printed like the paper's, is the same text."""
    if claim.number is None:
        return Evidence(claim.id, "not_run", ours, "the paper's value is missing from the text")
    text = printed(claim, ours)
    same = float(text) == claim.number
    return Evidence(claim.id, "reproduced" if same else "not_reproduced", ours, evidence,
                    detail=None if same else f"ours prints as {text}")


def training(claim: Claim, values: list[float], record_ids: list[str]) -> Evidence:
    """A training claim is reproduced when the mean over seeds is within the claim's tolerance."""
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else math.nan
    detail = f"mean of {len(values)} seed(s)" + ("" if math.isnan(sd) else f", sd {sd:.2f}")
    if claim.number is None:
        return Evidence(claim.id, "not_run", mean, record_ids, detail + "; paper value missing")
    ok = abs(mean - claim.number) <= claim.tolerance
    return Evidence(claim.id, "reproduced" if ok else "not_reproduced", mean, record_ids, detail)
