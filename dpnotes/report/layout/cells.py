"""One cell of a paper table in the paper's own layout: the paper's value and ours, coloured by the verdict,
with the seeds, the difference, the basis and any caveat on the page (never only in a hover); the table's shape
(:class:`Grid`) and the book's table style.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html import escape
from typing import Callable

from dpnotes import claims as registry
from dpnotes.report import labels
from dpnotes.report.html import BADGES, TINTS

STYLE = """<style>
.dpn-gridwrap{overflow-x:auto;max-width:100%;margin:.3em 0 .4em 0}
table.dpn-grid{border-collapse:separate;border-spacing:2px;font-size:.8em;width:auto}
table.dpn-grid th{font-weight:600;text-align:left;padding:.2em .4em;white-space:nowrap;vertical-align:middle}
table.dpn-grid th.dpn-group{background:#eaeef2;text-align:left;padding:.25em .4em}
table.dpn-grid td.dpn-cell{padding:.2em .45em;border-radius:.25em;white-space:nowrap;vertical-align:top;
  font-variant-numeric:tabular-nums;line-height:1.3}
table.dpn-grid td.dpn-blank{background:transparent}
.dpn-cell .dpn-basis{display:block;font-size:.85em;color:#24292f;white-space:normal;max-width:12em}
.dpn-cell .dpn-paper{color:#57606a}
.dpn-gridkey{font-size:.8em;color:#24292f;margin:.2em 0 1.2em 0;padding-left:.4em;list-style:none}
.dpn-gridkey li{margin:.1em 0}
p.dpn-gridtitle{font-weight:600;margin:1em 0 .2em 0}
p.dpn-gridlegend{font-size:.8em;color:#57606a;margin:0 0 .2em 0}
div.what-held{border:1px solid #d0d7de;border-left:.35em solid #0969da;border-radius:.4em;padding:.55em .8em;
  margin:.4em 0 1em 0;background:#f6f8fa;font-size:.9em}
div.what-held p{margin:.15em 0 .35em 0}
div.what-held ul{list-style:none;padding-left:0;margin:.2em 0}
div.what-held li{margin:.2em 0;padding-left:1.5em;text-indent:-1.5em}
div.what-held .dpn-mark{display:inline-block;width:1.3em;text-align:center;font-weight:700;color:#fff;
  border-radius:.25em;text-indent:0;margin-right:.2em}
div.what-held .dpn-nums{white-space:nowrap;font-variant-numeric:tabular-nums}
div.what-held .dpn-rule{font-size:.85em;color:#57606a}
main code.literal,main code.literal span.pre{white-space:normal;overflow-wrap:break-word}
</style>"""


@dataclass(frozen=True)
class Grid:
    """A paper's table as it prints it: groups of rows (a group's label may be empty), each
    row a label and one claim id (or None, an empty cell) per column."""

    title: str
    columns: tuple[str, ...]
    groups: tuple[tuple[str, tuple[tuple[str, tuple[str | None, ...]], ...]], ...]
    legend: str = ""

    def __post_init__(self):
        for group, rows in self.groups:
            for label, ids in rows:
                if len(ids) != len(self.columns):
                    raise ValueError(f"grid {self.title!r}, row {group} {label}: {len(ids)} cells for "
                                     f"{len(self.columns)} columns")
                if all(i is None for i in ids):
                    raise ValueError(f"grid {self.title!r}, row {group} {label}: no claim in any cell")

    def ids(self) -> list[str]:
        return [i for _, rows in self.groups for _, ids in rows for i in ids if i is not None]


def cross(title: str, pattern: str | Callable[[str, str, str], str | None], *, columns, rows,
          groups=(("", ""),), legend: str = "") -> Grid:
    """A :class:`Grid` whose cell (group, row, column) is the claim ``pattern`` names:
    ``pattern.format(g=group key, r=row key, c=column key)``, or ``pattern(g, r, c)``; ``columns``,
    ``rows`` and ``groups`` are ``(label, key)`` pairs. A cell whose id the registry lacks is
    empty; a row with no cell at all is left out."""
    known = {c.id for c in registry.load()}
    name = pattern if callable(pattern) else (lambda g, r, c: pattern.format(g=g, r=r, c=c))
    built = []
    for glabel, g in groups:
        out = []
        for rlabel, r in rows:
            ids = tuple(cid if (cid := name(g, r, c)) in known else None for _, c in columns)
            if any(ids):
                out.append((rlabel, ids))
        if out:
            built.append((glabel, tuple(out)))
    return Grid(title, tuple(label for label, _ in columns), tuple(built), legend)


def seeds(row: dict) -> int | None:
    """How many seeds a verdict rests on: the row's ``seeds``, else read off its detail."""
    if row.get("seeds") is not None:
        return int(row["seeds"])
    m = re.search(r"mean of (\d+) seed", row.get("detail") or "")
    if m:
        return int(m.group(1))
    return 1 if "single-seed" in (row.get("flags") or "") else None


def ours_text(row: dict) -> str:
    """Our value printed with the paper's decimals, signed where the paper's is (a difference); a statement's
    value in words (:func:`dpnotes.report.labels.words`)."""
    ours = row["ours"]
    if ours is None:
        return "–"
    if isinstance(ours, (int, float)) and not isinstance(ours, bool):
        digits = labels.decimals(row["paper_value"])
        return labels.number(ours, 2 if digits is None else digits,
                             signed=(row["paper_value"] or "").startswith("+"))
    return labels.words(str(ours))


def paper_text(row: dict) -> str:
    value = row["paper_value"]
    return "–" if value is None else value.replace("-", "−") if re.fullmatch(r"[+-]?[\d.]+", value) else value


def _delta(row: dict) -> str | None:
    """ours − paper, for a numeric claim with both values."""
    try:
        paper = float(row["paper_value"])
    except (TypeError, ValueError):
        return None
    if not isinstance(row["ours"], (int, float)) or isinstance(row["ours"], bool):
        return None
    return f"Δ {labels.difference(row['ours'] - paper, labels.decimals(row['paper_value']) or 0)}"


def basis(row: dict, *, substitute: bool = True) -> str:
    """What a verdict rests on, in words: seeds, paired, fidelity (the substitute named, unless
    ``substitute`` is False: a grid names it once, in a footnote)."""
    parts = []
    n = seeds(row)
    if row.get("basis") and row["basis"] not in ("—", "computed"):  # the verdict's own: "3 of 18 planned seeds"
        parts.append(labels.words(row["basis"]))
    elif n is not None:
        parts.append(f"{n} seed{'s' if n != 1 else ''}" + (", paired" if row.get("paired") else ""))
    elif row["kind"] == "exact" or (isinstance(row.get("evidence"), str) and row["evidence"].startswith("computed")):
        parts.append("computed")
    if row.get("fidelity") == "substitute":
        parts.append("substitute: " + labels.words(row.get("substitute") or "see note") if substitute else "substitute")
    elif row.get("fidelity") == "paper":
        parts.append("paper's settings")
    return ", ".join(parts)


def _mark(verdict: str) -> str:
    label, mark, colour = BADGES[verdict]
    return f'<span class="dpn-mark" style="background:{colour}" title="{escape(label)}">{mark}</span>'


class _Notes:
    """Footnotes under a table, numbered 1, 2, 3 in order of first use: each distinct text once, and cells
    not run grouped by the kind of their reason (one note per kind, its cells counted, each reason listed)."""

    def __init__(self):
        self.texts: list[str] = []
        self.not_run: dict[str, list[str]] = {}  # kind of reason -> the reason of each cell

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"<sup>{self.texts.index(text) + 1}</sup>"

    def not_run_ref(self, reason: str) -> str:
        kind = reason_kind(reason)
        self.not_run.setdefault(kind, []).append(reason)
        return self.ref(f"not run: {kind}")


def reason_kind(reason: str) -> str:
    """The kind of a reason not run, without its particulars (``needs the paper profile: 1 run (...)`` ->
    ``needs the paper profile``), so that cells not run group by it."""
    head = reason.split(":")[0].strip()
    return labels.words(head if ":" in reason and len(head) <= 40 and "(" not in head else reason)


def _cell(row: dict | None, notes: _Notes) -> str:
    if row is None:
        return '<td class="dpn-cell dpn-blank"></td>'
    verdict = row["verdict"]
    tint = TINTS[verdict]
    if verdict == "not_run":
        return (f'<td class="dpn-cell dpn-not_run" style="background:{tint}" data-claim="{escape(row["id"])}">'
                f'<span class="dpn-paper">{escape(paper_text(row))}</span> | –'
                f'<span class="dpn-basis">not run{notes.not_run_ref(_reason(row))}</span></td>')
    label, mark, _ = BADGES[verdict]
    extra = [p for p in (_delta(row), basis(row, substitute=False)) if p]
    sub = row.get("substitute") if row.get("fidelity") == "substitute" else None
    marks = [notes.ref(labels.words(t))[5:-6] for t in (sub and f"Substitute: {sub}", row.get("note")) if t]
    caveats = f"<sup>{','.join(marks)}</sup>" if marks else ""  # 2,3: never read as 23
    return (f'<td class="dpn-cell dpn-{verdict}" style="background:{tint}" data-claim="{escape(row["id"])}">'
            f'<span class="dpn-paper">{escape(paper_text(row))}</span> | <strong>{escape(ours_text(row))}</strong>'
            f'<span class="dpn-basis">{mark}' + (f" {escape(' · '.join(extra))}" if extra else f" {escape(label)}")
            + f"{caveats}</span></td>")


def _reason(row: dict) -> str:
    evidence = row["evidence"]
    return evidence if isinstance(evidence, str) else (row.get("detail") or "no value")
