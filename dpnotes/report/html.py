"""The book's HTML for verdicts: a chapter's summary badges and its claims table.

Every count and every row comes from :func:`dpnotes.report.scoreboard`, the function behind
``dpnotes scoreboard``, so the book and the command line cannot disagree. The HTML carries its
own small stylesheet (``<style>``, classes prefixed ``dpn-``), so it reads the same in the built
book, in Jupyter and in a notebook viewer, and loads nothing. Claims tables have fixed column
widths and wrap or shorten their text so that they fit a laptop-width page; what is shortened
opens whole in place (a ``<details>`` a tap or a click opens), and each claim's description is
printed under its id: nothing is carried by a hover alone (a touch screen has none).
"""

from __future__ import annotations

import re
from html import escape

from dpnotes.claims import PAPERS
from dpnotes.report import VERDICTS, labels, scoreboard, summary
from dpnotes.report.verdicts import CHECK_VERDICTS
from dpnotes.results import Store

# verdict -> (label, mark, background colour); the mark keeps verdicts apart without colour.
BADGES = {
    "reproduced": ("reproduced", "✓", "#1a7f37"),
    "not_reproduced": ("not reproduced", "✗", "#cf222e"),
    "inconclusive": ("inconclusive", "?", "#9a6700"),
    "not_run": ("not run", "–", "#6e7781"),
    # checks (identities, definitions, the paper's arithmetic, bug-only properties, fitted values)
    "passes": ("check passes", "=", "#57606a"),
    "fails": ("check fails", "≠", "#953800"),
}
# A light background per verdict, for the cells of a paper's table (:mod:`dpnotes.report.layout`).
TINTS = {"reproduced": "#dafbe1", "inconclusive": "#fff8c5", "not_reproduced": "#ffebe9", "not_run": "#f6f8fa",
         "passes": "#f6f8fa", "fails": "#fff1e5"}
if set(BADGES) != set(VERDICTS + CHECK_VERDICTS) or set(TINTS) != set(BADGES):
    raise ImportError(f"badges and tints must cover exactly the verdicts {VERDICTS + CHECK_VERDICTS}")

STYLE = """<style>
.dpn-badges{display:flex;flex-wrap:wrap;gap:.4em;margin:.3em 0 .8em 0}
.dpn-badge{display:inline-block;padding:.15em .6em;border-radius:1em;color:#fff;font-size:.9em;
  font-weight:600;white-space:nowrap;line-height:1.5}
.dpn-badge.dpn-zero{opacity:.45}
div.dpn-claimswrap{overflow-x:auto;max-width:100%}
table.dpn-claims{table-layout:auto;width:100%;border-collapse:collapse;font-size:.85em}
table.dpn-claims th,table.dpn-claims td{padding:.25em .4em;border-bottom:1px solid #d0d7de;
  vertical-align:top;overflow-wrap:normal;word-break:normal;text-align:left}
details.dpn-group{margin:.2em 0 .6em 0}
details.dpn-all>summary{cursor:pointer;padding:.4em .5em;background:#eaeef2;border-radius:.3em;margin:.3em 0}
details.dpn-group>summary{cursor:pointer;padding:.3em .4em;background:#f6f8fa;border-radius:.3em}
details.dpn-group>summary .dpn-badge{font-size:.75em;margin-left:.3em}
table.dpn-claims td.dpn-num{font-variant-numeric:tabular-nums}
table.dpn-claims .dpn-badge{font-size:.85em}
details.dpn-ids{display:inline}details.dpn-ids>summary{cursor:pointer;display:inline;color:#0969da}
details.dpn-more>summary{cursor:pointer;list-style:none}details.dpn-more>summary::-webkit-details-marker{display:none}
details.dpn-more>summary::after{content:" (more)";color:#0969da;white-space:nowrap}
details.dpn-more[open]>summary{display:none}
.dpn-desc{display:block;font-size:.85em;color:#57606a;margin-top:.1em}
@media (max-width:640px){
  table.dpn-rows,table.dpn-rows tbody,table.dpn-rows tr,table.dpn-rows td{display:block;width:auto}
  table.dpn-rows colgroup,table.dpn-rows thead{display:none}
  table.dpn-rows tr{border-bottom:1px solid #d0d7de;padding:.35em 0}
  table.dpn-rows td{border:none;padding:.1em .3em}
  table.dpn-rows td:nth-child(2)::before{content:"paper: ";color:#57606a}
  table.dpn-rows td:nth-child(3)::before{content:"ours: ";color:#57606a}}
</style>"""

# id part of a paper's claims -> heading of its group: table3 -> Table 3, sec5_3 -> Section 5.3
_GROUPS = (
    (r"table(\d+)", "Table {}"), (r"fig(?:ure)?(\d+)", "Figure {}"), (r"thm(\d+)", "Theorem {}"),
    (r"alg(\d+)", "Algorithm {}"), (r"eq(\d+)", "Equation {}"), (r"sec(\d+(?:_\d+)*)", "Section {}"),
    (r"app(?:endix)?([a-zA-Z]\d*)", "Appendix {}"), (r"lemma(\d+)", "Lemma {}"), (r"cor(\d+)", "Corollary {}"),
    (r"obs(\d+)", "Observation {}"), (r"section(\d+(?:_\d+)*)", "Section {}"), (r"intro", "Introduction"),
    (r"setup", "Setup"),
)
NOTE_CHARS = 110
OURS_CHARS = 40


def group_of(claim_id: str) -> str:
    """The table, figure or section of the paper a claim comes from, read off its id
    (``gdp.table1.row3.accuracy`` -> ``Table 1``)."""
    part = claim_id.split(".")[1]
    for pattern, label in _GROUPS:
        m = re.fullmatch(pattern, part)
        if m:
            if not m.groups():
                return label
            return label.format(m.group(1).replace("_", ".").upper() if label.startswith("Appendix")
                                else m.group(1).replace("_", "."))
    return part.replace("_", " ").capitalize()


def short_id(claim_id: str) -> str:
    """A claim's id without its paper and group: ``gdp.table1.row3.accuracy`` -> ``row3.accuracy``."""
    parts = claim_id.split(".")
    return ".".join(parts[2:]) or parts[-1]


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def inline_code(text: str) -> str:
    """``text`` as HTML with its Markdown code spans (`x`) rendered as code; a backtick left
    unpaired (by shortening) is dropped."""
    html = re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(text))
    return html.replace("`", "")


def more(text: str, limit: int) -> str:
    """``text`` as HTML, shortened to ``limit`` characters with the whole text a tap away (a
    ``<details>`` whose summary is the short text)."""
    shown = _shorten(text, limit)
    if shown == text:
        return inline_code(text)
    return f'<details class="dpn-more"><summary>{inline_code(shown)}</summary>{inline_code(text)}</details>'


def _cell(text: str, limit: int, *, cls: str = "") -> str:
    """A table cell showing ``text`` shortened to ``limit`` characters, whole when opened."""
    klass = f' class="{cls}"' if cls else ""
    return f"<td{klass}>{more(text, limit)}</td>"


def badge(verdict: str, count: int | None = None, *, title: str | None = None) -> str:
    """One verdict as a coloured badge, with a count in front if given."""
    label, mark, colour = BADGES[verdict]
    text = f"{mark} {label}" if count is None else f"{count} {label}"
    zero = " dpn-zero" if count == 0 else ""
    hover = f' title="{escape(title)}"' if title else ""
    return (f'<span class="dpn-badge dpn-{verdict}{zero}" style="background:{colour}"{hover}>'
            f"{escape(text)}</span>")


def summary_badges(counts: dict[str, int]) -> str:
    """The verdict counts of one paper (a value of :func:`dpnotes.report.summary`) as badges."""
    total = sum(counts.values())
    return (f'<div class="dpn-badges dpn-summary" data-claims="{total}">'
            + "".join(badge(v, counts[v]) for v in VERDICTS) + "</div>")


def _ours(row: dict) -> str:
    """Our value at the paper's precision, signed where the paper's is (a difference)."""
    value = row["ours"]
    if value is None:
        return "—"
    if isinstance(value, float):
        digits = labels.decimals(row["paper_value"])
        if digits is None:
            return f"{value:.4g}".replace("-", "−")
        return labels.number(value, digits, signed=str(row["paper_value"]).startswith("+"))
    return labels.words(str(value))


def _note(row: dict) -> str:
    """Why the verdict: the reason not run, or what our value rests on (records or computation)."""
    evidence = row["evidence"]
    if isinstance(evidence, list):
        based = f"{len(evidence)} record{'s' if len(evidence) != 1 else ''}"
        return labels.words(f"{row['detail']}; {based}" if row["detail"] else based)
    return labels.words(f"{evidence}; {row['detail']}" if row["detail"] else evidence)


def claims_table(rows: list[dict], *, store: Store | None = None) -> str:
    """Claims (rows of :func:`dpnotes.report.scoreboard`) as HTML: one table per table, figure
    or section of the paper, headed by its verdict counts, folded when none of its claims has
    been run. A row's note gives the reason it is not run, or what our value rests on: the
    computation, or the run records, each named by its id with its file in the store on hover
    (``results/<paper>/<profile>/<id>.json``)."""
    store = store or Store()
    groups: dict[str, list[dict]] = {}
    several = len({r["paper"] for r in rows}) > 1
    for row in rows:
        name = group_of(row["id"])
        groups.setdefault(f"{row['paper']}: {name}" if several else name, []).append(row)
    out = [STYLE]
    for name, members in groups.items():
        counts = summary(members)
        counts = {v: sum(c[v] for c in counts.values()) for v in VERDICTS}
        opened = " open" if counts["not_run"] < len(members) else ""
        badges = "".join(badge(v, counts[v]) for v in VERDICTS if counts[v])
        out.append(f'<details class="dpn-group"{opened}><summary><strong>{escape(name)}</strong> '
                   f"{badges}</summary>" + _table(members, store) + "</details>")
    return "".join(out)


def _table(rows: list[dict], store: Store) -> str:
    head = ("<colgroup><col style='width:24%'><col style='width:10%'><col style='width:14%'>"
            "<col style='width:16%'><col style='width:36%'></colgroup>"
            "<thead><tr><th>claim</th><th>paper</th><th>ours</th><th>verdict</th><th>note</th></tr></thead>")
    body = []
    for row in rows:
        paper_value = row["paper_value"] if row["paper_value"] is not None else "—"
        if row["unit"] == "%" and row["paper_value"] is not None:
            paper_value += " %"
        claim = (f"<td>{escape(labels.name(short_id(row['id'])))}"
                 f'<span class="dpn-desc">{escape(_description(row["source"]))}</span></td>')
        body.append(
            f'<tr class="dpn-row" data-claim="{escape(row["id"])}" data-verdict="{row["verdict"]}">'
            + claim + _cell(paper_value, 20, cls="dpn-num") + _cell(_ours(row), OURS_CHARS, cls="dpn-num")
            + f"<td>{badge(row['verdict'])}</td>"
            + _note_cell(row, store) + "</tr>")
    return (f'<div class="dpn-claimswrap"><table class="dpn-claims dpn-rows">{head}<tbody>{"".join(body)}</tbody>'
            "</table></div>")  # rows stack on a phone


def _description(source: str) -> str:
    """A claim's source as a reader reads it: ids named (:func:`labels.words`), a citation mark kept
    off its word (``AUTO-S)[15]`` would break between ``)`` and ``[`` in a narrow cell)."""
    return re.sub(r"\)\[(\d+)\]", r") [\1]", labels.words(source))


def _record_file(store: Store, paper: str, record_id: str) -> str:
    """Where a record lies, relative to the store's parent (``results/gdp/paper/<id>.json``)."""
    found = sorted(store.root.glob(f"{paper}/*/{record_id}.json"))
    if len(found) != 1:
        raise ValueError(f"record {record_id} of {paper}: {len(found)} files in {store.root}, expected 1")
    return found[0].relative_to(store.root.parent).as_posix()


def _note_cell(row: dict, store: Store) -> str:
    note = _note(row)
    if not isinstance(row["evidence"], list):
        return _cell(note, NOTE_CHARS)
    links = "; ".join(f"<code>{rid}</code> ({escape(_record_file(store, row['paper'], rid))})"
                      for rid in row["evidence"])
    detail = f"{inline_code(labels.words(row['detail']))}; " if row["detail"] else ""
    caveat = f"{inline_code(labels.words(row['note']))}; " if row.get("note") else ""
    fidelity = (f"<strong>substitute</strong>: {inline_code(labels.words(row['substitute']))}; "
                if row.get("substitute") else "")
    n = len(row["evidence"])  # the record ids are provenance: folded, so that the row stays as tall as its text
    return (f"<td>{detail}{caveat}{fidelity}<details class=\"dpn-ids dpn-prov\"><summary>{n} record"
            f"{'s' if n != 1 else ''}</summary>{links}</details></td>")


class Html:
    """HTML that Jupyter displays as HTML, with a plain-text account for other front ends."""

    def __init__(self, html: str, plain: str):
        self.html, self.plain = html, plain

    def _repr_html_(self) -> str:
        return self.html

    def __repr__(self) -> str:
        return self.plain


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[v]} {BADGES[v][0]}" for v in VERDICTS)


def paper_summary(paper: str, *, store: Store | None = None) -> Html:
    """The verdict badges that open a paper's chapter."""
    counts = summary(scoreboard(store=store, paper=paper))[paper]
    return Html(STYLE + summary_badges(counts), f"{paper}: {_counts_text(counts)}")


def paper_claims(paper: str, *, store: Store | None = None) -> Html:
    """A paper's claims table for its chapter."""
    rows = scoreboard(store=store, paper=paper)
    return Html(folded(f"Every claim of the paper ({len(rows)}), with its verdict and evidence",
                       claims_table(rows, store=store)),
                "\n".join(f"{r['id']}: {r['verdict']}" for r in rows))


def folded(title: str, html: str) -> str:
    """``html`` folded under a one-line summary that opens it (the full claim lists)."""
    return (f'{STYLE}<details class="dpn-all"><summary><strong>{escape(title)}</strong> (open)</summary>'
            f"{html}</details>")


def answered_claims(*, store: Store | None = None) -> Html:
    """Every claim of every paper whose verdict is not ``not_run`` (the scoreboard page)."""
    rows = [r for r in scoreboard(store=store) if r["verdict"] != "not_run"]
    return Html(folded(f"Every claim with an answer ({len(rows)}), paper by paper, with its evidence",
                       claims_table(rows, store=store)), "\n".join(f"{r['id']}: {r['verdict']}" for r in rows))


def all_summary(*, store: Store | None = None) -> Html:
    """The verdict counts over every paper as badges (the scoreboard page's summary)."""
    per_paper = summary(scoreboard(store=store))
    counts = {v: sum(c[v] for c in per_paper.values()) for v in VERDICTS}
    return Html(STYLE + summary_badges(counts), f"all papers: {_counts_text(counts)}")


def scoreboard_table(*, store: Store | None = None) -> Html:
    """Every paper's verdict counts as rows of badges (the scoreboard page)."""
    counts = summary(scoreboard(store=store))
    rows = "".join(
        f'<tr class="dpn-row" data-paper="{p}"><th>{p}</th><td>{sum(counts[p].values())}</td>'
        f"<td>{summary_badges(counts[p])}</td></tr>" for p in PAPERS)
    return Html(f'{STYLE}<table class="dpn-claims dpn-scoreboard"><colgroup><col style="width:15%">'
                f'<col style="width:10%"><col style="width:75%"></colgroup><thead><tr><th>paper</th>'
                f"<th>claims</th><th>verdicts</th></tr></thead><tbody>{rows}</tbody></table>",
                "\n".join(f"{p}: {_counts_text(counts[p])}" for p in PAPERS))
