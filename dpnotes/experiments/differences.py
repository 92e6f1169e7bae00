"""Where our runs differ from a paper's: each paper's declared substitutes (``DIFFERENCES`` of its
experiments module, a tuple of :class:`Difference`), what each changes, the claims it touches, how the
share of a verdict's difference to the paper that it explains is measured (or why no record can), and
whether the paper's own setting was run or is queued.

A verdict on a substitute setting carries that share (:mod:`dpnotes.report.verdicts`): measured from
records on the same seeds where the experiments module can (``Measurement.explained``, e.g. our model's
non-private gap to the paper's), else the reason declared here (:func:`unmeasured`, filled in by the
scoreboard). The chapters show the declarations with the verdicts they touch in a table
(:func:`dpnotes.report.differences.frame`). No torch here: the scoreboard reads it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass


@dataclass(frozen=True)
class Difference:
    """One substitute of a paper's experiments.

    ``substitute``: what we use, in a few words; ``changes``: what that changes against the paper;
    ``claims``: the claim ids (fnmatch patterns) whose runs it touches; ``measured``: how the
    experiments module measures its share from records (then each touched training verdict carries
    ``Measurement.explained``), or ``unmeasured``: why no record measures it and what would (exactly
    one of the two); ``paper_setting``: whether the paper's setting was run, is queued (``queued``:
    the experiment globs of its runs among the paper's paper-profile configs, costed by the report),
    or why it cannot be; ``would_measure``: for an unmeasured share, the runs that would measure it
    (costed by the report as that many runs like the glob's)."""

    substitute: str
    changes: str
    claims: tuple[str, ...]
    paper_setting: str
    measured: str | None = None
    unmeasured: str | None = None
    queued: tuple[str, ...] = ()
    would_measure: tuple = ()  # unmeasured: (experiment glob of one run like those that would measure the
    #                            share, names of the paper module's tuples whose lengths multiply to their number)

    def __post_init__(self):
        if not self.claims or not all(isinstance(p, str) and p for p in self.claims):
            raise ValueError(f"{self.substitute!r}: claims must be a non-empty tuple of claim-id patterns")
        if (self.measured is None) == (self.unmeasured is None):
            raise ValueError(f"{self.substitute!r}: give exactly one of measured (how the share is measured) and "
                             "unmeasured (why no record measures it)")

    def touches(self, claim_id: str) -> bool:
        return any(fnmatch.fnmatchcase(claim_id, p) for p in self.claims)


def declared(paper: str) -> tuple[Difference, ...]:
    """The differences ``paper``'s experiments module declares (none: the paper's settings throughout)."""
    from dpnotes import experiments

    return tuple(getattr(experiments.module(paper), "DIFFERENCES", ()))


def touching(paper: str, claim_id: str) -> list[Difference]:
    """The declared differences whose runs ``claim_id``'s verdict rests on."""
    return [d for d in declared(paper) if d.touches(claim_id)]


def unmeasured(paper: str, claim_id: str, measured: bool = False) -> str | None:
    """The share of ``claim_id``'s difference to the paper that no record measures, in words: each
    touching difference declared unmeasured, with why; with ``measured`` False (the measurement holds
    no measured share), also each declared measured one, saying that its share is not measured on these
    seeds. None when nothing is left unmeasured."""
    parts = []
    for d in touching(paper, claim_id):
        if d.unmeasured is not None:
            parts.append(f"{d.substitute}: unmeasured, {d.unmeasured}")
        elif not measured:
            parts.append(f"{d.substitute}: not measured on these seeds (it takes {d.measured})")
    return "; ".join(parts) or None
