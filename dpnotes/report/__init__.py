"""Paper-vs-ours tables: the claims registry joined with our measurements, with computed verdicts.

:mod:`dpnotes.report.verdicts` decides every verdict; each paper's chapter has its own package
here (:mod:`dpnotes.report.gdp`, ...) of the same modules, :data:`CHAPTER_LAYOUT` (plus the paper's
own :data:`CHAPTER_EXTRAS`), each at most :data:`dpnotes.experiments.protocol.LINE_CAP` lines; its
``__init__`` re-exports the public names, so that a notebook cell is ``<paper>_report.name(...)``.
"""

from __future__ import annotations

import dataclasses

from dpnotes import call_memo, experiments
from dpnotes import claims as claims_registry
from dpnotes.claims import PAPERS
from dpnotes.experiments.differences import unmeasured as unmeasured_share
from dpnotes.experiments.measurement import missing
from dpnotes.record import Record
from dpnotes.report.verdicts import (
    CATEGORIES,
    FIDELITIES,
    VERDICTS,
    Evidence,
    convention_of,
    judge,
    plausible_sd,
)
from dpnotes.results import Store

__all__ = ["VERDICTS", "FIDELITIES", "CATEGORIES", "Evidence", "judge", "record_flags", "scoreboard",
           "scoreboard_frame", "paper_table", "summary"]

CHAPTER_LAYOUT = {
    "cells": "the cells and settings the tables, figures and findings read (where a chapter needs them)",
    "tables": "the paper's values next to ours, as tables",
    "figures": "the chapter's figures, drawn on matplotlib axes",
    "notes": "the chapter's findings: data and text (Finding or markdown)",
}
CHAPTER_REQUIRED = ("tables", "figures", "notes")  # every chapter has these; cells only where it needs them
CHAPTER_EXTRAS = {"dplis": ("checks",)}  # DPlis: the registry arithmetic behind its findings


def _planned(paper: str) -> dict[str, dict[int, str]]:
    """The plan: experiment -> {seed: run id} of ``paper``'s paper profile (its configs are the
    preregistered seeds of every experiment)."""
    from dpnotes import runner

    out: dict[str, dict[int, str]] = {}
    for spec in runner.specs(paper, "paper"):
        out.setdefault(spec.experiment, {})[spec.seed] = spec.id
    return out


def _own_seeds(paper: str) -> dict[str, set[int]]:
    """experiment -> the seeds ``paper``'s profile gives it without the seeds plan's additions."""
    from dpnotes import runner
    from dpnotes.experiments import plan

    plan._OVERRIDE.append(plan.Plan("", ()))
    try:
        specs = runner.specs(paper, "paper")
    finally:
        plan._OVERRIDE.pop()
    out: dict[str, set[int]] = {}
    for spec in specs:
        out.setdefault(spec.experiment, set()).add(spec.seed)
    return out


def _claim_seeds(claim_id: str, experiments, own: dict[str, set[int]]) -> dict[str, set[int]]:
    """The seeds a cell's or a gain's verdict rests on, per experiment: the profile's own, and 0 .. n-1 where
    the seeds plan gives a cell or gain on that experiment n (the rows planned for those very runs). Seeds
    the plan adds to an experiment only for a comparison across many cells are the comparison's, not each
    cell's: a cell already decided on its own seeds is not held back by them."""
    from dpnotes.experiments import plan

    rows = [r for r in plan.current().rows if r.where != "none" and "[" not in r.claim
            and r.claim.split(".", 1)[0] == claim_id.split(".", 1)[0]]
    out = {}
    for e in experiments:
        n = max((r.planned for r in rows if e in r.experiments), default=0)
        out[e] = own.get(e, set()) | set(range(n))
    return out


def _restrict(m, by_id: dict[str, Record], allowed: dict[str, set[int]]):
    """``m`` (a training or gain measurement) on the allowed seeds only: a verdict never uses more seeds
    than its plan, whatever else the store holds."""
    def ok(rid):
        r = by_id[rid]
        return r.seed in allowed.get(r.experiment, ())

    ids = list(m.record_ids)
    n = len(m.values)
    if m.kind == "gain" and len(ids) == 2 * n:
        keep = [i for i in range(n) if ok(ids[i]) and ok(ids[n + i])]
        new_ids = tuple(ids[i] for i in keep) + tuple(ids[n + i] for i in keep)
    elif len(ids) == n:
        keep = [i for i in range(n) if ok(ids[i])]
        new_ids = tuple(ids[i] for i in keep)
    else:
        return m
    if len(keep) == n:
        return m
    values = tuple(m.values[i] for i in keep)
    extra = {}
    if m.censored:
        extra["censored"] = tuple(m.censored[i] for i in keep)
    if m.explained:
        extra["explained"] = (m.explained[0], tuple(m.explained[1][i] for i in keep))
    return dataclasses.replace(m, values=values, record_ids=new_ids, **extra)


def _plan_of(m, by_id: dict[str, Record], plan: dict[str, dict[int, str]], refused: dict[str, str],
             allowed: dict[str, set[int]] | None = None) -> tuple[int | None, tuple[str, ...]]:
    """(planned seeds, missing runs) of a measurement resting on paper-profile records: the fewest
    seeds the plan gives any of its experiments (``allowed``: the claim's own seeds per experiment,
    else the profile's), and each planned (experiment, seed) of them that has no record among the
    measurement's, named with why (no record, or refused on read)."""
    used: dict[str, set[int]] = {}
    for rid in m.record_ids:
        r = by_id.get(rid)
        if r is None or r.profile != "paper" or r.experiment not in plan:
            return None, ()
        used.setdefault(r.experiment, set()).add(r.seed)
    if not used:
        return None, ()
    seeds = {e: (allowed[e] if allowed and e in allowed else set(plan[e])) for e in used}
    planned = min(len(seeds[e]) for e in used)
    gone = []
    for e in sorted(used):
        for seed in sorted(seeds[e]):
            if seed not in used[e]:
                run_id = plan[e].get(seed)
                why = refused.get(run_id) if run_id else None
                gone.append(f"{e} seed {seed}: " + (f"record {run_id} refused ({why})" if why else "no record"))
    return planned, tuple(gone)


def _conventions(paper: str, measured: dict) -> dict[str, tuple[str, str]]:
    """How each table of ``paper`` prints its exact values (:func:`verdicts.convention_of`), keyed
    by the table's id prefix (``gdp.table1``), from every exact claim of it that we compute."""
    groups: dict[str, list] = {}
    for claim in claims_registry.load(paper):
        m = measured.get(claim.id)
        if m is not None and m.kind == "exact" and claim.number is not None and claim.check != "fitted" \
                and isinstance(m.values[0], (int, float)):
            groups.setdefault(table_of(claim.id), []).append((claim, m.values[0]))
    return {table: convention_of(values) for table, values in groups.items()}


def table_of(claim_id: str) -> str:
    """The table, figure or section a claim belongs to: its id's first two parts (``gdp.table1``)."""
    return ".".join(claim_id.split(".")[:2])


def _rows(paper: str, store: Store) -> list[dict]:
    module = experiments.module(paper)
    scan = store.scan(paper)
    records = list(scan.records)
    measurements = module.measure(records)
    measured = {m.claim_id: m for m in measurements}
    registry = claims_registry.load(paper)
    unknown = set(measured) - {c.id for c in registry}
    if unknown:
        raise ValueError(f"experiments.{paper} answers unregistered claims: {sorted(unknown)}")
    reasons = getattr(module, "NOT_RUN", {})
    default = getattr(module, "NOT_RUN_DEFAULT", "no reproduction yet")
    # How far one seed may plausibly fall: the seed SD pooled over this paper's multi-seed cells of the
    # same kind and unit (an SD of accuracies says nothing of one of epochs).
    units = {c.id: c.unit for c in registry}
    sds: dict = {}

    def sd_for(kind: str, unit):
        if (kind, unit) not in sds:
            sd = plausible_sd(measurements, kind, units, unit)
            if sd is None and kind == "gain":
                # No multi-seed gain yet: a difference of two seeds spreads at most sqrt(2) x one seed's SD
                # (pairing only shrinks it), a conservative allowance, in the unit of the accuracies.
                one = plausible_sd(measurements, "training", units, "%")
                sd = None if one is None else (one[0] * 2 ** 0.5, one[1])
            sds[kind, unit] = sd
        return sds[kind, unit]

    by_id = {r.id: r for r in map(Record.of, records)}
    plan, own = _planned(paper), _own_seeds(paper)
    refused = {e["id"]: e["reason"] for e in scan.excluded if e.get("id")}
    conventions = _conventions(paper, measured)
    rows = []
    for claim in registry:
        m = measured.get(claim.id) or missing(claim.id, reasons.get(claim.id, default))
        if m.kind != "missing" and m.substitute is None:
            m = dataclasses.replace(m, substitute=experiments.substitute(paper, claim.id))
        if m.kind != "missing" and m.substitute is not None and m.share is None:
            # what of the substitute's share no record of this measurement measures, and why (declared)
            m = dataclasses.replace(m, share=unmeasured_share(paper, claim.id, measured=bool(m.explained)))
        # statements' comparisons are paired differences in the units of the paper's training claims
        sd = (sd_for("gain", "percentage points") if m.kind == "statement" else
              sd_for(m.kind, claim.unit) if m.kind in ("training", "gain") else None)
        allowed = None
        if m.kind in ("training", "gain") and m.record_ids and all(i in by_id for i in m.record_ids):
            allowed = _claim_seeds(claim.id, {by_id[i].experiment for i in m.record_ids}, own)
            m = _restrict(m, by_id, allowed)
        planned, gone = _plan_of(m, by_id, plan, refused, allowed) if m.record_ids else (None, ())
        convention, why = conventions.get(table_of(claim.id), ("round", ""))
        ev = judge(claim, m, sd, convention=convention, convention_why=why, planned=planned, missing_runs=gone)
        rows.append({
            "id": claim.id, "paper": paper, "kind": claim.kind, "source": claim.source,
            "paper_value": claim.value, "unit": claim.unit, "ours": ev.ours,
            "verdict": ev.verdict, "category": ev.category, "check": ev.check, "seeds": ev.seeds,
            "planned": ev.planned, "paired": ev.paired, "basis": ev.basis,
            "fidelity": ev.fidelity, "substitute": ev.substitute, "note": ev.note,
            "margin": ev.margin, "interval": list(ev.interval) if ev.interval else None,
            "evidence": ev.evidence, "detail": ev.detail, "same_as": ev.same_as,
            "share": ev.share, "share_value": ev.share_value,
        })
    return rows


def scoreboard(*, store: Store | None = None, paper: str | None = None) -> list[dict]:
    """One row per claim (of all papers, or one): paper value, ours, verdict, evidence."""
    store = store or Store()
    papers = PAPERS if paper is None else (paper,)
    with call_memo.scope():  # each record file verified and each config resolved once in this call
        return [row for p in papers for row in _rows(p, store)]


def record_flags(*, store: Store | None = None, paper: str | None = None) -> list[dict]:
    """Stored records a reader should know about: ``stale`` (the experiment now asks for a
    different spec, so the record answers no claim) and ``dirty tree`` (written from
    uncommitted code; only quick-profile records may be)."""
    from dpnotes.runner import stale

    store = store or Store()
    out = []
    for p in (PAPERS if paper is None else (paper,)):
        stale_ids = {Record.of(r).id for r in stale(p, store)}
        for record in store.records(p):
            r = Record.of(record)
            flags = (["stale"] if r.id in stale_ids else []) + (["dirty tree"] if r.dirty else [])
            if flags:
                out.append({"paper": p, "profile": r.profile, "experiment": r.experiment,
                            "seed": r.seed, "id": r.id, "flags": ", ".join(flags)})
    return out


def summary(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Counts of verdicts per paper, claims only (context rows are left out: :func:`context_counts`)."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = out.setdefault(row["paper"], dict.fromkeys(VERDICTS, 0))
        if row["category"] == "claim":
            counts[row["verdict"]] += 1
    return out


def fidelity_summary(rows: list[dict]) -> dict[str, dict[str, dict[str, int]]]:
    """Counts of measured verdicts per paper and fidelity: ``{paper: {"paper": {verdict: n},
    "substitute": {...}}}`` (claims only; not-run claims have no fidelity)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in rows:
        per = out.setdefault(row["paper"], {f: dict.fromkeys(VERDICTS[:3], 0) for f in FIDELITIES})
        if row["category"] == "claim" and row["fidelity"] is not None:
            per[row["fidelity"]][row["verdict"]] += 1
    return out


def context_counts(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Rows counted apart, per paper and category: checks, quoted baselines, values lost from the text."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = out.setdefault(row["paper"], dict.fromkeys(CATEGORIES[1:], 0))
        if row["category"] != "claim":
            counts[row["category"]] += 1
    return out


def _fmt(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def scoreboard_frame(*, store: Store | None = None):
    """Verdict counts per paper as a pandas DataFrame (the book's scoreboard page)."""
    import pandas as pd

    counts = summary(scoreboard(store=store))
    frame = pd.DataFrame.from_dict(counts, orient="index", columns=list(VERDICTS)).fillna(0).astype(int)
    frame.index.name = "paper"
    frame["claims"] = frame.sum(axis=1)
    return frame


def paper_table(paper: str, *, store: Store | None = None):
    """A paper's claims next to ours, as a pandas DataFrame for the chapter."""
    import pandas as pd

    rows = scoreboard(store=store, paper=paper)
    return pd.DataFrame(
        [{
            "claim": r["id"], "source": r["source"], "kind": r["kind"],
            "paper": r["paper_value"] if r["paper_value"] is not None else "—",
            "ours": _fmt(r["ours"]), "verdict": r["verdict"] if r["category"] == "claim" else r["category"],
            "basis": basis(r), "fidelity": r["substitute"] and f"substitute: {r['substitute']}" or r["fidelity"] or "—",
            "evidence": r["evidence"] if isinstance(r["evidence"], str) else ", ".join(r["evidence"]),
        } for r in rows],
        columns=["claim", "source", "kind", "paper", "ours", "verdict", "basis", "fidelity", "evidence"],
    )


def basis(row: dict) -> str:
    """What a verdict rests on, in words: "3 of 3 planned seeds, paired", "1 seed", "computed", "—"
    (the row's ``basis``, made by :attr:`verdicts.Evidence.basis`; rows made elsewhere: from their seeds)."""
    if "basis" in row:
        return row["basis"]
    if row["seeds"] is None:
        return "computed" if row["fidelity"] is not None else "—"
    return f"{row['seeds']} seed{'s' if row['seeds'] != 1 else ''}" + (", paired" if row["paired"] else "")
