"""Paper-vs-ours tables: the claims registry joined with our measurements, with computed verdicts.

:mod:`dpnotes.report.verdicts` decides every verdict; a paper's chapter may have its own
tables and figures here too (:mod:`dpnotes.report.gdp`).
"""

from __future__ import annotations

from dpnotes import claims as claims_registry
from dpnotes import experiments
from dpnotes.claims import PAPERS
from dpnotes.experiments.measurement import missing
from dpnotes.report.verdicts import VERDICTS, Evidence, judge
from dpnotes.results import Store

__all__ = ["VERDICTS", "Evidence", "judge", "record_flags", "scoreboard", "scoreboard_frame",
           "paper_table", "summary"]


def _rows(paper: str, store: Store) -> list[dict]:
    module = experiments.module(paper)
    records = list(store.records(paper))
    measured = {m.claim_id: m for m in module.measure(records)}
    unknown = set(measured) - {c.id for c in claims_registry.load(paper)}
    if unknown:
        raise ValueError(f"experiments.{paper} answers unregistered claims: {sorted(unknown)}")
    reasons = getattr(module, "NOT_RUN", {})
    default = getattr(module, "NOT_RUN_DEFAULT", "no reproduction yet")
    rows = []
    for claim in claims_registry.load(paper):
        ev = judge(claim, measured.get(claim.id) or missing(claim.id, reasons.get(claim.id, default)))
        rows.append({
            "id": claim.id, "paper": paper, "kind": claim.kind, "source": claim.source,
            "paper_value": claim.value, "unit": claim.unit, "ours": ev.ours,
            "verdict": ev.verdict, "evidence": ev.evidence, "detail": ev.detail,
            "flags": ", ".join(ev.flags),
        })
    return rows


def scoreboard(*, store: Store | None = None, paper: str | None = None) -> list[dict]:
    """One row per claim (of all papers, or one): paper value, ours, verdict, evidence."""
    store = store or Store()
    papers = PAPERS if paper is None else (paper,)
    return [row for p in papers for row in _rows(p, store)]


def record_flags(*, store: Store | None = None, paper: str | None = None) -> list[dict]:
    """Stored records a reader should know about: ``stale`` (the experiment now asks for a
    different spec, so the record answers no claim) and ``dirty tree`` (written from
    uncommitted code; only quick-profile records may be)."""
    from dpnotes.runner import stale

    store = store or Store()
    out = []
    for p in (PAPERS if paper is None else (paper,)):
        stale_ids = {r["id"] for r in stale(p, store)}
        for record in store.records(p):
            flags = (["stale"] if record["id"] in stale_ids else []) + (
                ["dirty tree"] if record["provenance"]["dirty"] else [])
            if flags:
                s = record["spec"]
                out.append({"paper": p, "profile": s["profile"], "experiment": s["experiment"],
                            "seed": s["seed"], "id": record["id"], "flags": ", ".join(flags)})
    return out


def summary(rows: list[dict]) -> dict[str, dict[str, int]]:
    """Counts of verdicts per paper."""
    out: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = out.setdefault(row["paper"], dict.fromkeys(VERDICTS, 0))
        counts[row["verdict"]] += 1
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
            "ours": _fmt(r["ours"]), "verdict": r["verdict"], "flags": r["flags"],
            "evidence": r["evidence"] if isinstance(r["evidence"], str) else ", ".join(r["evidence"]),
        } for r in rows],
        columns=["claim", "source", "kind", "paper", "ours", "verdict", "flags", "evidence"],
    )

