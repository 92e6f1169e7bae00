"""Measurements: what an experiments module reports for a claim of its paper, a value, never a verdict.

An experiments module computes (accounting) or reads from run records (training) our
value for a claim and says how that value must be judged, by its ``kind``; the verdict
itself is decided by :mod:`dpnotes.report.verdicts` alone.

Why here, in the experiments layer: a measurement is the output of the experiments-module
contract (see :mod:`dpnotes.experiments`); the report layer above reads it, and nothing
below experiments (claims, accounting, train, results) produces or needs one. Keeping it
out of the report layer is what lets experiments modules stop importing ``dpnotes.report``.

Kinds:

``exact``       one computed value (``values == (value,)``), judged to the paper's
                printed digits; ``basis`` says how it was computed.
``training``    one value per run record (``values``, ``record_ids`` aligned), e.g. an
                accuracy per seed; or one statistic of several runs (:func:`statistic`: one
                value, ``seeds`` the number of ``record_ids``). ``None`` is a fact about a run: it never produced the
                value (never reached 97%, spent eps 4 within its first epoch); ``detail``
                then says so in words, and ``censored`` may give the bound it is known to
                exceed (a censored measurement: the run ended at that eps without reaching it).
``gain``        a claimed difference between two methods (a table's printed improvement over a
                baseline): one paired difference per seed (``values``, same seed in both
                arms; ``None`` as for training), judged for sign and size. Made by
                :func:`gain` from the two arms by seed, which refuses arms whose seeds differ.
``trend``       a paired comparison per seed (``values``: one number per seed, > 0 where
                the trend holds in that seed, e.g. MA minus CLT epochs to 97%); ``floor``
                the smallest mean that counts when not every seed shows it; ``detail``
                the numbers, ``rule`` the comparison; ``record_ids`` the runs compared.
``statement``   a computed fact about the paper's qualitative sentence:
                ``values == (holds,)``, ``detail`` the numbers it rests on and ``rule``
                the test it applies; ``record_ids`` the runs compared, if any, and
                ``seeds`` how many seeds they are (1: the verdict is inconclusive). A
                comparative sentence ("A beats B everywhere") carries ``comparisons``:
                ``(label, paired differences per seed)``, each > 0 where it holds (no
                value: no seed can say, the comparison is undecided); the verdict then comes
                from their intervals, not from ``holds``: every one must lie above zero, or,
                with ``quantifier="some"`` (an existential sentence: "does not ensure"), one.

Every kind may name a ``substitute``: what differs from the paper's experiment (a model,
data set, epochs, accountant or inferred setting), shown with the verdict and counted apart,
and the share of the difference to the paper that the substitute explains: measured on the same
seeds (``explained``, training values) or, where no record measures it, ``share`` says why
(filled from the paper's declared differences, :mod:`dpnotes.experiments.differences`).
``missing``     no value: ``basis`` says why (e.g. "paper-profile run missing") and
                ``detail`` may describe what exists instead (a scaled-down quick run,
                never compared with the paper).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

KINDS = ("exact", "training", "gain", "trend", "statement", "missing")


@dataclass(frozen=True)
class Measurement:
    """Our value for one claim and how it must be judged (see the module docstring)."""

    claim_id: str
    kind: str
    values: tuple = ()
    record_ids: tuple[str, ...] = ()
    detail: str | None = None
    rule: str | None = None
    basis: str = "computed"  # what the value rests on when no run record does; "missing": why none
    floor: float = 0.0  # trend: the least mean over seeds that counts (verdicts.trend)
    seeds: int | None = None  # statement resting on runs: the seeds behind it (the fewest per scheme)
    substitute: str | None = None  # what differs from the paper's experiment (None: the paper's settings)
    comparisons: tuple = ()  # statement: ((label, (paired difference per seed, ...)), ...)
    quantifier: str = "every"  # comparisons: "every" one must hold, or "some" one (see the docstring)
    censored: tuple = ()  # training: per value, the bound a None value is known to exceed (else None)
    explained: tuple = ()  # training: (what, per value the shift a named substitute alone explains) or ()
    share: str | None = None  # a substitute's share no record measures: why (dpnotes.experiments.differences)

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        if self.kind == "training" and len(self.values) != len(self.record_ids) and not (
                len(self.values) == 1 and self.seeds == len(self.record_ids)):
            raise ValueError(f"{self.claim_id}: training values and record_ids must align, got "
                             f"{len(self.values)} values and {len(self.record_ids)} record ids")
        if self.kind == "exact" and len(self.values) != 1:
            raise ValueError(f"{self.claim_id}: an exact measurement holds one value, got {self.values!r}")
        if self.kind == "statement" and (len(self.values) != 1 or not isinstance(self.values[0], bool)
                                         or not self.rule):
            raise ValueError(f"{self.claim_id}: a statement holds one bool and its rule")
        if self.kind == "trend" and (not self.rule or any(not isinstance(v, (int, float)) for v in self.values)
                                     or self.floor < 0):
            raise ValueError(f"{self.claim_id}: a trend holds numbers per seed, its rule and a floor >= 0")
        if self.comparisons and (self.kind != "statement" or any(
                any(not isinstance(v, (int, float)) for v in values) for _, values in self.comparisons)):
            raise ValueError(f"{self.claim_id}: comparisons are statements' (label, paired differences) pairs")
        if self.quantifier not in ("every", "some") or (self.quantifier == "some" and not self.comparisons):
            raise ValueError(f"{self.claim_id}: quantifier must be 'every' or 'some' (with comparisons), "
                             f"got {self.quantifier!r}")
        if self.censored and (self.kind != "training" or len(self.censored) != len(self.values) or any(
                (b is None) != (v is not None) or (b is not None and not math.isfinite(b))
                for v, b in zip(self.values, self.censored))):
            raise ValueError(f"{self.claim_id}: censored holds a finite bound exactly where a training value is None")
        if self.explained and (self.kind != "training" or len(self.explained) != 2
                               or len(self.explained[1]) != len(self.values)
                               or any(not isinstance(e, (int, float)) or not math.isfinite(e)
                                      for e in self.explained[1])):
            raise ValueError(f"{self.claim_id}: explained is (what, one finite shift per training value)")
        if self.kind == "missing" and self.values:
            raise ValueError(f"{self.claim_id}: a missing measurement holds no value")


def exact(claim_id: str, value: float, basis: str = "computed") -> Measurement:
    """One computed value, e.g. an epsilon from the paper's settings."""
    return Measurement(claim_id, "exact", (value,), basis=basis)


def training(claim_id: str, values, record_ids, detail: str | None = None, substitute: str | None = None,
             censored=(), explained=()) -> Measurement:
    """One value per run record (``None``: the run never produced it; ``detail`` says why;
    ``censored``: per value, the bound a None value is known to exceed, e.g. the eps a run ended at
    without reaching an accuracy level; ``explained``: ``(what, shifts)``, per value the part of its
    difference to the paper that a named substitute alone explains, measured on the same seed, e.g.
    our model's non-private gap to the paper's)."""
    explained = (explained[0], tuple(float(e) for e in explained[1])) if explained else ()
    return Measurement(claim_id, "training", tuple(values), tuple(record_ids), detail, substitute=substitute,
                       censored=tuple(censored), explained=explained)


def statistic(claim_id: str, value: float, record_ids, detail: str) -> Measurement:
    """One statistic of several runs' values (e.g. the standard deviation or range of their
    accuracies): a ``training`` measurement of one value whose ``seeds`` are the runs behind it
    (``record_ids``); judged as one value, never as a mean over seeds."""
    record_ids = tuple(record_ids)
    if len(record_ids) < 2:
        raise ValueError(f"{claim_id}: a statistic of runs needs at least 2 records, got {len(record_ids)}")
    return Measurement(claim_id, "training", (float(value),), record_ids, detail, seeds=len(record_ids))


def paired_differences(arm: dict, base: dict, claim_id: str) -> list[int]:
    """The seeds of a paired comparison: ``arm`` and ``base`` map seed -> value and must hold the
    same seeds (a comparison of unpaired arms is refused, naming the seeds that differ)."""
    if set(arm) != set(base):
        raise ValueError(f"{claim_id}: unpaired arms: seeds {sorted(arm)} against {sorted(base)}; pass the seeds "
                         "both arms have")
    if not arm:
        raise ValueError(f"{claim_id}: a paired comparison needs at least one seed")
    return sorted(arm)


def gain(claim_id: str, arm: dict, base: dict, record_ids: dict, detail: str | None = None,
         substitute: str | None = None, base_ids: dict | None = None) -> Measurement:
    """A claimed gain on paired seeds: ``arm`` and ``base`` map seed -> value (``None``: a run
    never produced it) and must hold the same seeds; ``record_ids`` maps seed -> the arm's record
    id, ``base_ids`` seed -> the baseline's (the gain rests on both: they follow the arm's ids).
    The values are arm - base per seed (see verdicts.gain)."""
    seeds = paired_differences(arm, base, claim_id)
    values = [None if arm[s] is None or base[s] is None else arm[s] - base[s] for s in seeds]
    ids = tuple(record_ids[s] for s in seeds) + (tuple(base_ids[s] for s in seeds) if base_ids else ())
    return Measurement(claim_id, "gain", tuple(values), ids, detail, substitute=substitute)


def trend(claim_id: str, per_seed, floor: float, detail: str, rule: str, record_ids=()) -> Measurement:
    """A paired comparison: one number per seed, > 0 where the trend holds (see verdicts.trend)."""
    return Measurement(claim_id, "trend", tuple(float(v) for v in per_seed), tuple(record_ids), detail, rule,
                       floor=floor)


def statement(claim_id: str, holds: bool, detail: str, rule: str, record_ids=(), seeds: int | None = None,
              comparisons=(), substitute: str | None = None, quantifier: str = "every") -> Measurement:
    """Whether a computed fact holds, the numbers behind it and the rule it tests (``seeds``:
    how many seeds of runs it rests on, if any; ``comparisons``: labelled paired differences per
    seed that decide a comparative sentence, every one or, ``quantifier="some"``, one of them;
    see the module docstring)."""
    comparisons = tuple((label, tuple(float(v) for v in values)) for label, values in comparisons)
    return Measurement(claim_id, "statement", (bool(holds),), tuple(record_ids), detail, rule, seeds=seeds,
                       comparisons=comparisons, substitute=substitute, quantifier=quantifier)


def per_seed(seeds_and_notes) -> str:
    """``(seed, note)`` pairs as one detail, seeds with the same note joined and in order:
    ``"seeds 0-2: 14 epochs"``, ``"seeds 0, 2: ...; seed 1: ..."`` (a reader sees at once
    whether the seeds differ)."""
    groups: dict[str, list[int]] = {}
    for seed, note in sorted(seeds_and_notes):
        groups.setdefault(note, []).append(seed)

    def seeds(s: list[int]) -> str:
        if len(s) == 1:
            return f"seed {s[0]}"
        run = s == list(range(s[0], s[-1] + 1))
        return f"seeds {s[0]}-{s[-1]}" if run and len(s) > 2 else "seeds " + ", ".join(map(str, s))

    return "; ".join(f"{seeds(s)}: {note}" for note, s in groups.items())


def missing(claim_id: str, why: str, detail: str | None = None) -> Measurement:
    """No value for the claim, and why (``detail``: what exists instead, not comparable)."""
    return Measurement(claim_id, "missing", detail=detail, basis=why)
