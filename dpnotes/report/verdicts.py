"""Verdicts: how a claim of a paper is compared with our value, the only place where that happens.

Experiments modules report :class:`~dpnotes.experiments.measurement.Measurement` values;
:func:`judge` turns a (claim, measurement) pair into :class:`Evidence` with a verdict, by the
rule of the measurement's kind (one function per rule below). Verdicts are computed, never
written by hand. The vocabulary:

- ``reproduced``      the evidence decides for the claim: an exact value prints as the paper's;
                      a training value's 95 % t interval over our seeds lies inside the paper's
                      value +- the claim's margin (an equivalence test); a comparison's interval of
                      paired differences excludes zero on the paper's side.
- ``not_reproduced``  the evidence decides against it: the paper's value lies farther than the
                      margin from our whole interval, a comparison goes the other way, a computed
                      fact does not hold, or a run never produced the value.
- ``inconclusive``    the evidence cannot tell: too few seeds, or an interval wider than the
                      margin. One seed never reproduces a training claim; it decides against one
                      only when its gap exceeds the margin plus :data:`DECISIVE_SDS` seed SDs
                      measured on our own multi-seed cells of the same paper (:func:`plausible_sd`).
- ``not_run``         no value answers the claim; the evidence says why.

Every verdict carries its basis (``seeds``, ``paired``) and, when measured, its fidelity:
``paper`` (the paper's settings) or ``substitute`` (``substitute`` names what differs: model,
data, epochs, accountant, an inferred setting), and the measurement's caveat as ``note``.
Claims that are context, not claims of the paper (``category``: baselines quoted from other
papers, values lost from the text), are listed apart and left out of every total.
:func:`rules_markdown` states the rules for the book and README, from the same constants.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from functools import lru_cache

from dpnotes.claims import Claim
from dpnotes.experiments.measurement import Measurement

VERDICTS = ("reproduced", "not_reproduced", "inconclusive", "not_run")
CHECK_VERDICTS = ("passes", "fails")  # a check's result: never "reproduced"
FIDELITIES = ("paper", "substitute")
CATEGORIES = ("claim", "check", "quoted", "lost")  # only "claim" enters the totals
GAIN_MARGIN_FRACTION = 0.5  # a gain's default margin: half the printed gain (a reproduced gain is 0.5-1.5x it)
CONVENTIONS = ("round", "truncate")  # how a paper table prints its exact values
CONFIDENCE = 0.95  # two-sided t intervals of means and of paired differences over seeds
DECISIVE_SDS = 3.0  # one seed decides against a claim only beyond margin + DECISIVE_SDS * plausible SD
MIN_SD_DOF = 4  # a pooled seed SD counts only with this many degrees of freedom (else: no allowance)


@dataclass
class Evidence:
    """Our answer to one claim: value, verdict, what it rests on and how faithful it is."""

    claim_id: str
    verdict: str
    ours: float | str | None = None
    evidence: list[str] | str = field(default_factory=list)  # record ids, or the reason not run
    detail: str | None = None  # how the rule decided, with its numbers
    seeds: int | None = None  # seeds the verdict rests on (None: computed, or not run)
    paired: bool | None = None  # comparisons: arms paired by seed
    fidelity: str | None = None  # "paper" | "substitute" (None: not run)
    substitute: str | None = None  # what differs from the paper's experiment
    note: str | None = None  # the measurement's caveat, always shown
    category: str = "claim"
    interval: tuple[float, float] | None = None  # the t interval the verdict used
    margin: float | None = None  # the equivalence margin it used
    planned: int | None = None  # the seeds the plan (the paper profile) gives its runs
    check: str | None = None  # a check's kind (claims.CHECKS)
    same_as: str | None = None  # measured on the same runs as this claim (registry ``same_as``)
    share: str | None = None  # how much of the difference to the paper the substitute explains, or why unmeasured
    share_value: float | None = None  # that share, measured: the mean shift on the verdict's seeds (claim's unit)

    def __post_init__(self):
        allowed = VERDICTS + CHECK_VERDICTS if self.category == "check" else VERDICTS
        if self.verdict not in allowed or (self.category == "check" and self.verdict == "reproduced"):
            raise ValueError(f"verdict must be one of {allowed}, got {self.verdict!r}")
        if self.fidelity is not None and self.fidelity not in FIDELITIES:
            raise ValueError(f"fidelity must be one of {FIDELITIES}, got {self.fidelity!r}")
        if self.category not in CATEGORIES:
            raise ValueError(f"category must be one of {CATEGORIES}, got {self.category!r}")

    @property
    def basis(self) -> str:
        """What the verdict rests on, in words: "3 of 3 planned seeds, paired", "1 seed", "computed",
        "fitted: ...", "—" (not run)."""
        if self.check == "fitted":
            return "fitted: a setting we chose to match the paper's value, not evidence"
        if self.verdict == "not_run" and self.seeds is None:
            return "—"
        if self.seeds is None:
            return "computed"
        seeds = (f"{self.seeds} of {self.planned} planned seeds" if self.planned is not None
                 else f"{self.seeds} seed{'s' if self.seeds != 1 else ''}")
        return seeds + (", paired" if self.paired else "")


def printed(claim: Claim, ours: float) -> str:
    """``ours`` printed with as many decimals as the paper printed for ``claim``."""
    return f"{ours:.{claim.decimals}f}"


def truncated(claim: Claim, ours: float) -> str:
    """``ours`` cut (not rounded) to the paper's decimals, as some tables print."""
    scale = 10 ** claim.decimals
    return f"{math.trunc(ours * scale) / scale:.{claim.decimals}f}"


@lru_cache(maxsize=64)
def t_quantile(n: int) -> float:
    """The two-sided :data:`CONFIDENCE` quantile of Student's t with ``n - 1`` degrees of freedom.

    ``scipy.special.stdtrit`` is what ``scipy.stats.t.ppf`` evaluates, without importing
    ``scipy.stats`` (about 1 s); a test checks the two agree exactly. The scoreboard takes
    it from :mod:`dpnotes.calc_cache` and imports no scipy at all."""
    from dpnotes import calc_cache

    def compute() -> float:
        from scipy.special import stdtrit

        return float(stdtrit(n - 1, 0.5 + CONFIDENCE / 2))

    return calc_cache.cached("verdicts.t_quantile", (n, CONFIDENCE), compute)


def interval(values: list[float]) -> tuple[float, float, float]:
    """(mean, low, high): the :data:`CONFIDENCE` t interval of the mean of ``values`` (n >= 2)."""
    if len(values) < 2:
        raise ValueError(f"an interval needs at least 2 values, got {len(values)}")
    mean = statistics.fmean(values)
    half = t_quantile(len(values)) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, mean - half, mean + half


def plausible_sd(measurements, kind: str, units: dict[str, str | None] | None = None,
                 unit: str | None = None) -> tuple[float, int] | None:
    """The pooled seed SD of ``kind`` measurements with >= 2 numeric values, and how many cells
    it pools: the spread one seed is allowed before it decides. With ``units`` (claim id -> unit),
    only measurements of claims in ``unit`` are pooled: an SD of accuracies says nothing of one of
    epochs or of sharpness. None while the pool has fewer than :data:`MIN_SD_DOF` degrees of freedom
    (two seeds of one cell say little about a spread)."""
    ss, dof, cells = 0.0, 0, 0
    for m in measurements:
        if units is not None and units.get(m.claim_id) != unit:
            continue
        values = [v for v in m.values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if m.kind == kind and len(values) >= 2 and len(values) == len(m.values):
            mean = statistics.fmean(values)
            ss += sum((v - mean) ** 2 for v in values)
            dof += len(values) - 1
            cells += 1
    return (math.sqrt(ss / dof), cells) if dof >= MIN_SD_DOF else None


def _base(claim: Claim, m: Measurement, verdict: str, ours, detail: str | None, **kw) -> Evidence:
    """Evidence with the measurement's basis, fidelity and caveat filled in."""
    basis = list(m.record_ids) if m.record_ids else m.basis
    shown = isinstance(ours, str) and m.detail is not None and m.detail in ours  # statements show it as ours
    share, value = _share(m)
    return Evidence(claim.id, verdict, ours, basis, detail, fidelity="substitute" if m.substitute else "paper",
                    substitute=m.substitute, note=None if shown else m.detail, share=share, share_value=value, **kw)


def _share(m: Measurement) -> tuple[str | None, float | None]:
    """(words, mean shift) of the share of the difference to the paper that the substitute explains:
    measured on the same seeds where ``m.explained`` holds it, with ``m.share`` (what no record
    measures, and why) after it."""
    if not m.explained:
        return m.share, None
    what, shifts = m.explained
    value = statistics.fmean(shifts)
    measured = f"measured: {what}: {value:+.2f} on these seeds"
    return (measured if not m.share else f"{measured}; {m.share}"), value


def lacking_share(rows) -> list[str]:
    """The ids of judged claims (:class:`Evidence`, or scoreboard rows) that read not reproduced on a
    substitute setting without saying how much of the difference the substitute explains: none may
    (a reader could not tell the paper's failure from our substitute's)."""
    def get(row, name):
        return row.get(name) if isinstance(row, dict) else getattr(row, name)

    return [get(r, "id") if isinstance(r, dict) else r.claim_id for r in rows
            if get(r, "verdict") == "not_reproduced" and get(r, "fidelity") == "substitute"
            and get(r, "category") == "claim" and not get(r, "share")]


def convention_of(claims_and_values) -> tuple[str, str]:
    """How a paper's table prints its exact values, inferred from all of them: ``(convention, why)``.
    Each ``(claim, our value)`` votes for rounding when only rounding gives the paper's text, for
    truncation when only cutting does; the convention is truncation only when it has more such
    votes than rounding (values that print the same either way, or neither way, do not vote)."""
    rounds = cuts = 0
    for claim, ours in claims_and_values:
        r, t = float(printed(claim, ours)) == claim.number, float(truncated(claim, ours)) == claim.number
        rounds += r and not t
        cuts += t and not r
    convention = "truncate" if cuts > rounds else "round"
    return convention, f"{rounds} value(s) of this table match only when rounded, {cuts} only when cut"


def exact(claim: Claim, m: Measurement, sd=None, convention: str = "round", why: str = "") -> Evidence:
    """An exact claim is reproduced when our value, printed by its table's convention (rounded, or
    cut to the paper's digits where the table truncates: :func:`convention_of`), is the paper's
    text. A value that matches only under the other convention is not reproduced (the detail says
    so); any other difference is not reproduced too: a real difference."""
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    (ours,) = m.values
    text, cut = printed(claim, ours), truncated(claim, ours)
    mine, other = (text, cut) if convention == "round" else (cut, text)
    if float(mine) == claim.number:
        return _base(claim, m, "reproduced", ours, None if convention == "round" else
                     f"this table truncates ({why}): ours cuts to {cut}")
    if float(other) == claim.number:
        return _base(claim, m, "not_reproduced", ours, f"ours {'rounds' if convention == 'round' else 'cuts'} to "
                     f"{mine}; only {'cutting' if convention == 'round' else 'rounding'} gives the paper's "
                     f"{claim.value}, but this table {'rounds' if convention == 'round' else 'truncates'} ({why})")
    return _base(claim, m, "not_reproduced", ours, f"ours prints as {text}")


def _single(claim: Claim, m: Measurement, value: float, target: float, margin: float, sd, what: str,
            **kw) -> Evidence:
    """One seed (or one statistic of ``m.seeds`` runs): not reproduced only when its gap to the
    paper's value exceeds the margin plus :data:`DECISIVE_SDS` plausible seed SDs; otherwise
    inconclusive (never reproduced)."""
    gap = abs(value - target)
    one, seeds = ("one seed", 1) if m.seeds is None else (f"one statistic of {m.seeds} runs", m.seeds)
    if sd is None:
        return _base(claim, m, "inconclusive", value, f"{what}; {one} and no multi-seed cell of this paper to "
                     "say how far one seed may fall: cannot decide", seeds=seeds, margin=margin, **kw)
    s, cells = sd
    limit = margin + DECISIVE_SDS * s
    decided = gap > limit
    return _base(claim, m, "not_reproduced" if decided else "inconclusive", value,
                 f"{what}; {one}: gap {gap:.3g} {'>' if decided else '<='} margin {margin:g} + {DECISIVE_SDS:g} x "
                 f"seed SD {s:.3g} (pooled over {cells} multi-seed cell(s) of this paper) = {limit:.3g}",
                 seeds=seeds, margin=margin, **kw)


def training(claim: Claim, m: Measurement, sd=None) -> Evidence:
    """A training claim (an outcome of training), by an equivalence test on our seeds: with the
    95 % t interval [lo, hi] of the mean and the claim's margin M (the registry's ``tolerance``),
    reproduced when [lo, hi] lies inside paper +- M; not reproduced when the paper's value lies
    outside [lo - M, hi + M]; otherwise inconclusive. One seed: :func:`_single`. A censored seed (a
    level never reached: known only to exceed a bound, ``m.censored``) never supports a match: not
    reproduced only when even the interval with each censored seed at its bound lies above paper + M,
    otherwise inconclusive. A run that never produced the value, without a bound, is not
    reproduced; no record is not run."""
    values = list(m.values)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    n, margin, p = len(values), claim.tolerance, claim.number
    if None in values:
        bounds = list(m.censored) if m.censored else [None] * n
        if any(v is None and b is None for v, b in zip(values, bounds)):
            return _base(claim, m, "not_reproduced", None, "a run never produced the value", seeds=n)
        return _censored(claim, m, [b if v is None else v for v, b in zip(values, bounds)],
                         sum(v is None for v in values), margin, p)
    if n == 1:
        return _single(claim, m, values[0], p, margin, sd, f"ours {values[0]:.4g} vs paper {p:g}")
    mean, lo, hi = interval(values)
    where = f"mean {mean:.4g} of {n} seeds, {CONFIDENCE:.0%} interval [{lo:.4g}, {hi:.4g}], paper {p:g} +- {margin:g}"
    if p - margin <= lo and hi <= p + margin:
        verdict, why = "reproduced", "the interval lies within the margin"
    elif p < lo - margin or p > hi + margin:
        verdict, why = "not_reproduced", "the paper's value lies farther than the margin from the whole interval"
    else:
        verdict, why = "inconclusive", "the interval is too wide, or too near the margin's edge, to decide"
    if verdict == "not_reproduced" and m.explained:
        verdict, why = _net_of_substitute(m, values, p, margin, why)
    return _base(claim, m, verdict, mean, f"{where}: {why}", seeds=n, interval=(lo, hi), margin=margin)


def _net_of_substitute(m: Measurement, values: list[float], p: float, margin: float, why: str) -> tuple[str, str]:
    """A difference our substitute may explain (``m.explained``: per seed, the shift the substitute
    alone causes, e.g. our model's non-private gap to the paper's): still not reproduced only when the
    interval of the values net of that shift lies wholly outside p +- M; otherwise inconclusive, the
    difference explained by the substitute (never reproduced: the paper's setting was not run)."""
    what, shifts = m.explained
    net = [v - s for v, s in zip(values, shifts)]
    share = statistics.fmean(shifts)
    _, lo, hi = interval(net)
    if hi < p - margin or lo > p + margin:
        return "not_reproduced", (f"{why}, beyond what the substitute explains: net of {what} ({share:+.2f} on "
                                  f"these seeds), {CONFIDENCE:.0%} interval [{lo:.4g}, {hi:.4g}]")
    return "inconclusive", (f"explained by the substitute ({what}: {share:+.2f}); net of it, {CONFIDENCE:.0%} "
                            f"interval [{lo:.4g}, {hi:.4g}] against paper {p:g} +- {margin:g}")


def _censored(claim: Claim, m: Measurement, floors: list[float], k: int, margin: float, p: float) -> Evidence:
    """Training values of which ``k`` are censored (each known only to exceed its floor)."""
    n = len(floors)
    head = f"{k} of {n} seed(s) never reached the level (each known only to exceed its bound)"
    if n >= 2:
        mean, lo, hi = interval(floors)
        where = f"{head}; with each at its bound: mean {mean:.4g}, {CONFIDENCE:.0%} interval [{lo:.4g}, {hi:.4g}]"
        if lo > p + margin:
            return _base(claim, m, "not_reproduced", None, f"{where}, above paper {p:g} + {margin:g} even so",
                         seeds=n, interval=(lo, hi), margin=margin)
        return _base(claim, m, "inconclusive", None, f"{where}, paper {p:g} +- {margin:g}: a censored seed cannot "
                     "show a match, and its bound does not rule one out", seeds=n, margin=margin)
    decided = floors[0] > p + margin
    return _base(claim, m, "not_reproduced" if decided else "inconclusive", None,
                 f"{head}: bound {floors[0]:.4g} {'>' if decided else '<='} paper {p:g} + {margin:g}",
                 seeds=1, margin=margin)


def gain_margin(claim: Claim) -> float:
    """A gain's equivalence margin: the registry's ``margin`` where given, else
    :data:`GAIN_MARGIN_FRACTION` of the printed gain, so that a reproduced gain is a real gain of
    about the paper's size; a printed gain of 0 takes the claim's tolerance."""
    if claim.margin is not None:
        return claim.margin
    return claim.tolerance if claim.number == 0 else GAIN_MARGIN_FRACTION * abs(claim.number)


def gain(claim: Claim, m: Measurement, sd=None) -> Evidence:
    """A printed gain g (a difference to a baseline), judged on its size on paired seeds d_1..d_n
    (same seed, data order and initialisation in both arms), with margin M (:func:`gain_margin`:
    half of g unless the registry says otherwise). Reproduced when the 95 % t interval of the d's
    lies inside g +- M (a gain of about the paper's size); not reproduced when it lies wholly outside
    g +- M, or excludes zero on the side opposite to g; otherwise inconclusive. A printed gain of 0
    is judged the same way around 0 with the claim's tolerance. One seed: :func:`_single` on d.
    Unpaired arms are refused when the measurement is made
    (:func:`dpnotes.experiments.measurement.gain`)."""
    values = list(m.values)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    n, margin, g = len(values), gain_margin(claim), claim.number
    if None in values:
        return _base(claim, m, "not_reproduced", None, "a run never produced the value", seeds=n, paired=True)
    if n == 1:
        return _single(claim, m, values[0], g, margin, sd, f"paired difference {values[0]:+.3g} vs paper {g:+g}",
                       paired=True)
    mean, lo, hi = interval(values)
    where = (f"mean paired difference {mean:+.3g} over {n} seeds, {CONFIDENCE:.0%} interval [{lo:+.3g}, {hi:+.3g}], "
             f"paper {g:+g} +- {margin:.3g}")
    wrong_side = g != 0 and (hi < 0 if g > 0 else lo > 0)
    if g - margin <= lo and hi <= g + margin:
        verdict, why = "reproduced", ("no difference, within the margin" if g == 0 else
                                      "a gain of the paper's size: the interval lies within its margin")
    elif hi < g - margin or lo > g + margin or wrong_side:
        verdict = "not_reproduced"
        why = ("the interval excludes zero on the other side: the opposite direction" if wrong_side else
               "a difference the paper does not print" if g == 0 else
               "the interval lies wholly " + ("below" if hi < g - margin else "above") + " the paper's gain +- margin")
    else:
        verdict, why = "inconclusive", "the interval overlaps the margin's edge: too wide to decide the size"
    return _base(claim, m, verdict, mean, f"{where}: {why}", seeds=n, paired=True, interval=(lo, hi), margin=margin)


def trend(claim: Claim, m: Measurement, sd=None) -> Evidence:
    """A paired trend (one number per seed, > 0 where the trend holds, e.g. MA minus CLT
    epochs): reproduced when the 95 % t interval of the per-seed values lies above zero and the
    mean reaches the measurement's ``floor``; not reproduced when it lies at or below zero;
    otherwise (and always with one seed) inconclusive."""
    values = list(m.values)
    if not values:
        return Evidence(claim.id, "not_run", None, "no run record")
    n = len(values)
    shows = f"{sum(v > 0 for v in values)} of {n} seed(s) show it"
    if n == 1:
        return _base(claim, m, "inconclusive", f"{m.detail}; {shows}", f"{m.rule}; one seed cannot decide a trend",
                     seeds=1, paired=True)
    mean, lo, hi = interval(values)
    verdict = ("reproduced" if lo > 0 and mean >= m.floor else "not_reproduced" if hi <= 0 else "inconclusive")
    return _base(claim, m, verdict, f"{m.detail}; {shows}, mean {mean:.3g}, {CONFIDENCE:.0%} interval "
                 f"[{lo:.3g}, {hi:.3g}], floor {m.floor:g}", m.rule, seeds=n, paired=True, interval=(lo, hi))


def statement(claim: Claim, m: Measurement, sd=None) -> Evidence:
    """A qualitative sentence. With ``comparisons`` (labelled paired differences per seed, each
    > 0 where the sentence holds): reproduced when every comparison's 95 % t interval lies above
    zero, not reproduced when one lies below zero, else inconclusive; for an existential sentence
    (``quantifier="some"``), reproduced when one lies above zero, not reproduced when all lie below.
    Otherwise the computed fact decides; but a fact that rests on one seed of runs is inconclusive
    whichever way it came out."""
    (holds,) = m.values
    if m.comparisons:
        return _compared(claim, m, sd)
    if m.seeds == 1:
        return _base(claim, m, "inconclusive", m.detail, f"{m.rule}; the computed fact "
                     f"{'holds' if holds else 'does not hold'} on one seed, which cannot decide it", seeds=1)
    return _base(claim, m, "reproduced" if holds else "not_reproduced", m.detail, m.rule, seeds=m.seeds)


def _compared(claim: Claim, m: Measurement, sd) -> Evidence:
    """Comparisons in the units of the paper's training claims; a one-seed comparison is decided
    only beyond :data:`DECISIVE_SDS` plausible SDs of a paired difference (``sd``)."""
    n = min((len(v) for _, v in m.comparisons if v), default=0)
    parts, states = [], []
    for label, values in m.comparisons:
        if not values:
            states.append("undecided")
            parts.append(f"{label}: no seed can say")
            continue
        if len(values) < 2:
            limit = None if sd is None else DECISIVE_SDS * sd[0]
            d = values[0]
            states.append("undecided" if limit is None or abs(d) <= limit else "above" if d > 0 else "below")
            parts.append(f"{label}: {d:+.3g} (one seed" + ("" if limit is None else
                                                           f"; decided beyond +-{limit:.2g}") + ")")
            continue
        mean, lo, hi = interval(list(values))
        states.append("above" if lo > 0 else "below" if hi < 0 else "undecided")
        parts.append(f"{label}: {mean:+.3g} [{lo:+.3g}, {hi:+.3g}]")
    if m.quantifier == "some":  # an existential sentence: one comparison above zero proves it
        verdict = ("reproduced" if "above" in states else "not_reproduced" if set(states) == {"below"}
                   else "inconclusive")
    else:
        verdict = ("not_reproduced" if "below" in states else "reproduced" if set(states) == {"above"}
                   else "inconclusive")
    decided = sum(s != "undecided" for s in states)
    allowance = "" if sd is None else (f"; one seed decides beyond {DECISIVE_SDS:g} x the paired-difference SD "
                                       f"{sd[0]:.3g} pooled over {sd[1]} multi-seed cell(s)")
    return _base(claim, m, verdict, m.detail, f"{m.rule}; paired differences, mean [{CONFIDENCE:.0%} interval]: "
                 + "; ".join(parts) + f" ({decided} of {len(states)} decided{allowance})", seeds=n, paired=True)


def missing(claim: Claim, m: Measurement, sd=None) -> Evidence:
    """A claim without a value is not run; the evidence says why, the note what exists instead
    (never compared with the paper)."""
    return Evidence(claim.id, "not_run", None, m.basis, None, note=m.detail)


RULES = {"exact": exact, "training": training, "gain": gain, "trend": trend, "statement": statement,
         "missing": missing}


def rules_markdown() -> str:
    """The verdict rules in words, for the book and the README (from the constants the rules use)."""
    c = f"{CONFIDENCE:.0%}"
    return "\n".join([
        "**How a verdict is decided** (`dpnotes.report.verdicts`; every verdict shows its basis, e.g. "
        "\"3 of 3 planned seeds, paired\", its fidelity and the measurement's caveat):",
        "",
        f"- *training* (an outcome of training): our seeds' mean and its {c} t interval [lo, hi] against the "
        "paper's value p and the claim's margin M (1 point of accuracy, 0.02 RMSE, 1 epoch, ...): reproduced when "
        "[lo, hi] lies inside p ± M, not reproduced when it lies wholly outside, otherwise inconclusive. A seed "
        "that never reached a level is known only to exceed its bound: it never supports a match.",
        f"- *gain* (a printed difference to a baseline), judged on its size on paired seeds (same seed, data "
        f"order and initialisation in both arms): the {c} t interval of the paired differences against the "
        f"paper's gain g ± M, where M is {GAIN_MARGIN_FRACTION:g} × |g| unless the registry states one. "
        "Reproduced when the interval lies inside g ± M (a real gain of about the paper's size); not reproduced "
        "when it lies wholly outside, or excludes zero on the other side; otherwise inconclusive.",
        "- *comparisons* (A beats B, orderings): every paired interval must lie above zero (one, for a sentence "
        "that says \"some\"); one below zero decides against.",
        "- *exact* (a computation, e.g. an epsilon): reproduced when ours, printed by its table's convention, is "
        "the paper's number. The convention (rounding or truncation) is inferred from all the table's values; "
        "a value that matches only under the other convention is not reproduced.",
        f"- *one seed* never reproduces; it decides against a claim only when its gap exceeds "
        f"M + {DECISIVE_SDS:g} × the seed SD pooled over the paper's multi-seed cells of the same kind and unit "
        f"(at least {MIN_SD_DOF} degrees of freedom).",
        "- *planned seeds*: each run's seeds are fixed by the plan (its paper profile) before the runs; a claim "
        "with fewer usable seeds than planned is inconclusive and names each missing or refused record.",
        "- *statement* (a qualitative sentence): the computed fact decides when it rests on two or more seeds "
        "(or on no runs); one seed makes it inconclusive.",
        "- *checks* (identities, definitions, the paper's arithmetic on its own numbers, properties only a bug "
        "could break, values we fitted to the paper's) are shown as passes / fails and counted apart, never as "
        "reproduced; *context* (baselines quoted from other papers, values lost from the text) is listed, not "
        "judged.",
        "- *fidelity*: `paper` when the run used the paper's settings, `substitute` when something differs "
        "(named). Totals count the two apart. *not run*: no record answers the claim; the reason is given.",
        "- *a substitute's share*: a verdict on a substitute setting says how much of the difference to the paper "
        "the substitute alone explains, measured on the same seeds where records can (e.g. our model's non-private "
        "gap to the paper's); a training value is then not reproduced only when its interval net of that share "
        "still lies wholly outside p ± M, otherwise inconclusive, \"explained by the substitute\". Where no record "
        "can measure the share, the verdict says so and why, and a not reproduced becomes inconclusive: nothing "
        "shows that the difference exceeds what the substitute explains.",
    ])


def judge(claim: Claim, m: Measurement, sd: tuple[float, int] | None = None, *, convention: str = "round",
          convention_why: str = "", planned: int | None = None, missing_runs: tuple[str, ...] = ()) -> Evidence:
    """The verdict on ``claim`` given our measurement of it, by the rule of its kind; ``sd`` is
    the plausible seed SD (and the cells behind it) for single-seed decisions (:func:`plausible_sd`);
    ``convention`` how the claim's table prints exact values (:func:`convention_of`).

    ``planned`` is the number of seeds the plan gives the claim's runs (its paper profile): a claim
    measured on fewer reads inconclusive, naming each ``missing_runs`` entry (a run without a record,
    or a record refused on read), whatever its rule said. Checks (the registry's ``check``: identities,
    definitions, the paper's own arithmetic, bug-only properties, fitted values) are judged by their
    rule and reported as passes / fails, never as reproduced. Context claims (quoted baselines, values
    lost from the text) are not judged."""
    if m.claim_id != claim.id:
        raise ValueError(f"measurement of {m.claim_id!r} cannot answer claim {claim.id!r}")
    if claim.context is not None or (claim.value is None and claim.kind != "statement"):
        category = claim.context or "lost"
        why = ("a baseline quoted from another paper: context, not a claim of this paper" if category == "quoted"
               else "the paper's value is missing from the text")
        numbers = [v for v in m.values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        ours = statistics.fmean(numbers) if numbers and len(numbers) == len(m.values) else None
        return Evidence(claim.id, "not_run", ours, why, None, seeds=len(numbers) if m.record_ids else None,
                        note=m.detail if m.kind != "missing" else None, category=category)
    if m.kind == "exact":
        ev = exact(claim, m, sd, convention, convention_why)
    else:
        ev = RULES[m.kind](claim, m, sd)
    ev.same_as = claim.same_as
    if ev.seeds is not None and planned is not None and ev.verdict != "not_run":
        ev.planned = planned
        if ev.seeds < planned:
            gone = "; ".join(missing_runs) if missing_runs else "not yet run"
            ev.detail = (f"{ev.seeds} of {planned} planned seeds ({gone}): inconclusive until every planned seed "
                         f"has a record; on the seeds we have the rule reads {ev.verdict.replace('_', ' ')}"
                         + (f" ({ev.detail})" if ev.detail else ""))
            ev.verdict = "inconclusive"
    if (ev.verdict == "not_reproduced" and ev.fidelity == "substitute" and ev.share_value is None and ev.share
            and claim.check is None):
        # not reproduced only when the difference exceeds what the substitute explains (issue #47): with that
        # share unmeasured, nothing shows it does, so the paper's failure cannot be told from our substitute's
        ev.detail = (f"on our substitute the rule reads not reproduced ({ev.detail or 'see basis'}), but the "
                     f"substitute's share of the difference is {ev.share}: inconclusive")
        ev.verdict = "inconclusive"
    if claim.check is not None:
        ev.category, ev.check = "check", claim.check
        ev.verdict = {"reproduced": "passes", "not_reproduced": "fails"}.get(ev.verdict, ev.verdict)
        ev.__post_init__()
    return ev
