"""Where we differ from the paper: one table per chapter (:func:`table`), generated from the paper's
declared substitutes (:mod:`dpnotes.experiments.differences`) and the scoreboard's verdicts.

One row per substitute: what it changes, the verdicts it touches (by verdict), how much of each
affected verdict it explains (the measured share on the verdict's seeds, from the records; or why no
record measures it, with what would measure it and its cost), and whether the paper's setting was run
or is queued (with the cost of its runs not yet stored, estimated as ``dpnotes campaign`` does:
:func:`dpnotes.campaign.candidates`, on a CPU core and on a GPU). A substitute verdict that no
declaration covers gets a row of its own, "undeclared", so that none is hidden.
"""

from __future__ import annotations

import fnmatch
import math

from dpnotes.experiments import differences

COLUMNS = ("substitute", "what it changes", "verdicts it touches", "share it explains", "the paper's setting")


def _count(rows: list[dict]) -> str:
    if not rows:
        return "none judged yet"
    by: dict[str, int] = {}
    for r in rows:
        by[r["verdict"]] = by.get(r["verdict"], 0) + 1
    return ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in sorted(by.items()))


def _share(d, rows: list[dict]) -> str:
    """The measured shares of the verdicts ``d`` touches (range over them, the ones still not reproduced
    beyond it, the ones it explains), or why unmeasured."""
    if d.unmeasured is not None:
        return f"unmeasured: {d.unmeasured}"
    measured = [r for r in rows if r.get("share_value") is not None]
    if not measured:
        return f"measured where records allow ({d.measured}); no verdict measured yet"
    values = [r["share_value"] for r in measured]
    beyond = [r["id"] for r in measured if r["verdict"] == "not_reproduced"]
    explained = [r["id"] for r in measured if "explained by the substitute" in (r.get("detail") or "")]
    span = f"{min(values):+.2f}" if len(values) == 1 else f"{min(values):+.2f} to {max(values):+.2f}"
    unit = "points" if measured[0].get("unit") == "%" else measured[0].get("unit") or ""
    return (f"{len(measured)} verdict(s) measured ({d.measured}): {span} {unit}".rstrip()
            + f"; it explains the difference of {len(explained)}"
            + (f"; not reproduced beyond it: {', '.join(beyond)}" if beyond else ""))


_CANDIDATES: dict = {}  # (paper, device) -> the campaign's candidates, once per process


def _candidates(paper: str, device: str) -> list:
    from dpnotes import campaign
    from dpnotes.results import Store

    if (paper, device) not in _CANDIDATES:
        _CANDIDATES[paper, device] = campaign.candidates([paper], device, Store())
    return _CANDIDATES[paper, device]


def _size(hours: float) -> str:
    return f"{hours:,.0f}" if hours >= 100 else f"{hours:.2g}"


def cost_of(paper: str, globs, count: int | None = None) -> str:
    """The estimated cost of the paper-profile runs of ``paper`` matching ``globs`` that are not stored,
    on one CPU core and on a GPU (or of ``count`` runs like them: their median estimate times ``count``)."""
    parts, n = [], 0
    for device, name in (("cpu", "CPU-hours"), ("cuda", "GPU-hours")):
        picks = [p for p in _candidates(paper, device) if any(fnmatch.fnmatchcase(p.experiment, g) for g in globs)]
        n = len(picks) if count is None else count
        known = sorted(p.seconds for p in picks if p.seconds is not None)
        if not picks or not known:
            parts.append(f"no {name[:3]} estimate" if picks else "")
            continue
        total = sum(known) if count is None else known[len(known) // 2] * count
        parts.append(f"about {_size(total / 3600)} {name}" + ("" if len(known) == len(picks) or count is not None
                                                          else f" ({len(picks) - len(known)} without an estimate)"))
    if count is None and n == 0:
        return "every run stored"
    return f"{n} run(s): " + ", ".join(p for p in parts if p)


def _setting(paper: str, d, costs: bool) -> str:
    text = d.paper_setting
    if costs and d.queued:
        text += f" ({cost_of(paper, d.queued)})"
    return text


def _would(paper: str, d, costs: bool) -> str:
    if not (costs and d.would_measure):
        return ""
    from dpnotes import experiments

    glob, sizes = d.would_measure
    module = experiments.module(paper)
    count = math.prod(len(getattr(module, name)) for name in sizes)
    return f"; what would measure it: {cost_of(paper, (glob,), count)}"


def rows(paper: str, scoreboard_rows: list[dict] | None = None, *, costs: bool = True) -> list[dict]:
    """The table's rows for ``paper`` (:data:`COLUMNS`), from its declared differences and
    ``scoreboard_rows`` (default: the scoreboard of the default store)."""
    if scoreboard_rows is None:
        from dpnotes.report import scoreboard

        scoreboard_rows = scoreboard(paper=paper)
    judged = [r for r in scoreboard_rows if r["paper"] == paper and r["category"] == "claim"
              and r["verdict"] != "not_run"]
    out, covered = [], set()
    for d in differences.declared(paper):
        touched = [r for r in judged if d.touches(r["id"]) and r["fidelity"] == "substitute"]
        covered |= {r["id"] for r in touched}
        out.append({"substitute": d.substitute, "what it changes": d.changes, "verdicts it touches": _count(touched),
                    "share it explains": _share(d, touched) + _would(paper, d, costs),
                    "the paper's setting": _setting(paper, d, costs)})
    for r in judged:
        if r["fidelity"] == "substitute" and r["id"] not in covered:
            out.append({"substitute": "undeclared", "what it changes": r["substitute"], "verdicts it touches":
                        f"{r['id']}: {r['verdict'].replace('_', ' ')}", "share it explains": r.get("share") or "—",
                        "the paper's setting": "—"})
    return out


def table(paper: str, scoreboard_rows: list[dict] | None = None, *, costs: bool = True):
    """The chapter's "Where we differ from the paper" table (:func:`rows`), or a line saying there is
    no substitute."""
    from dpnotes.report import tables
    from dpnotes.report.html import Html

    found = rows(paper, scoreboard_rows, costs=costs)
    if not found:
        return Html("<p>None: every judged claim of this paper uses its own settings.</p>",
                    "None: every judged claim of this paper uses its own settings.")
    return tables.table(found, columns=list(COLUMNS), title="Where we differ from the paper",
                        note="Shares in the claims' units (points of accuracy, ...), on each verdict's own seeds; "
                             "costs as the campaign (dpnotes campaign) estimates them from the stored records.")
