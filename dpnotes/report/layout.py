"""The papers' tables in the papers' own layout, and the "What held" box that opens a chapter.

Both read rows of :func:`dpnotes.report.scoreboard` (the claims registry joined with our
measurements and verdicts) and add nothing to them: a cell shows the paper's value and ours,
coloured by the verdict, with the seeds, the difference and any caveat on the page (never only
in a hover). Rows are read with ``row.get`` for the keys of the verdict rules' second version
(``seeds``, ``paired``, ``fidelity``, ``substitute``, ``note``, ``category``), shown when present.

- :func:`grid`: one paper table (a :class:`Grid`) as HTML. Cells not run are not spread over
  the page: rows, columns and groups with nothing run are dropped, and every cell not run is
  counted in one line per reason under the table.
- :func:`what_held`: a paper's headline claims (:mod:`dpnotes.report.headlines`), paper against
  ours with seeds, fidelity and verdict, and one sentence from :func:`answer`.
- :func:`answers`: the five answers, linked, for the index page.
"""

from __future__ import annotations

import math
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from html import escape
from typing import Callable

from dpnotes import claims as registry
from dpnotes.report.headlines import HEADLINES, TITLES
from dpnotes.report.html import BADGES, TINTS, Html, inline_code

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
.dpn-gridkey{font-size:.8em;color:#24292f;margin:.2em 0 1.2em 0;padding-left:1.2em}
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
main code.literal,main code.literal span.pre{white-space:normal;overflow-wrap:anywhere}
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


# ---------------------------------------------------------------- cells


def seeds(row: dict) -> int | None:
    """How many seeds a verdict rests on: the row's ``seeds``, else read off its detail."""
    if row.get("seeds") is not None:
        return int(row["seeds"])
    m = re.search(r"mean of (\d+) seed", row.get("detail") or "")
    if m:
        return int(m.group(1))
    return 1 if "single-seed" in (row.get("flags") or "") else None


def _decimals(paper_value: str | None) -> int | None:
    if paper_value is None:
        return None
    m = re.fullmatch(r"[+-]?\d+(?:\.(\d+))?", paper_value.strip())
    return len(m.group(1) or "") if m else None


def ours_text(row: dict) -> str:
    """Our value printed with the paper's decimals (a statement's value as it is)."""
    ours = row["ours"]
    if ours is None:
        return "–"
    if isinstance(ours, (int, float)) and not isinstance(ours, bool):
        digits = _decimals(row["paper_value"])
        text = f"{ours:.{digits if digits is not None else 2}f}"
        return ("+" + text if (row["paper_value"] or "").startswith("+") and ours >= 0 else text).replace("-", "−")
    return str(ours)


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
    digits = _decimals(row["paper_value"]) or 0
    return f"Δ {row['ours'] - paper:+.{digits}f}".replace("-", "−")


def basis(row: dict) -> str:
    """What a verdict rests on, in words: seeds, paired, fidelity (the substitute named)."""
    parts = []
    n = seeds(row)
    if n is not None:
        parts.append(f"{n} seed{'s' if n != 1 else ''}" + (", paired" if row.get("paired") else ""))
    elif row["kind"] == "exact" or (isinstance(row.get("evidence"), str) and row["evidence"].startswith("computed")):
        parts.append("computed")
    if row.get("fidelity") == "substitute":
        parts.append("substitute: " + (row.get("substitute") or "see note"))
    elif row.get("fidelity") == "paper":
        parts.append("paper's settings")
    return ", ".join(parts)


def _mark(verdict: str) -> str:
    label, mark, colour = BADGES[verdict]
    return f'<span class="dpn-mark" style="background:{colour}" title="{escape(label)}">{mark}</span>'


# ---------------------------------------------------------------- the paper's tables


class _Notes:
    """Footnotes under a table: each distinct text once, numbered in order of first use."""

    def __init__(self):
        self.texts: list[str] = []

    def ref(self, text: str) -> str:
        if text not in self.texts:
            self.texts.append(text)
        return f"<sup>{self.texts.index(text) + 1}</sup>"


def _cell(row: dict | None, notes: _Notes, reasons: dict[str, str]) -> str:
    if row is None:
        return '<td class="dpn-cell dpn-blank"></td>'
    verdict = row["verdict"]
    tint = TINTS[verdict]
    if verdict == "not_run":
        key = reasons[_reason(row)]
        return (f'<td class="dpn-cell dpn-not_run" style="background:{tint}" data-claim="{escape(row["id"])}">'
                f'<span class="dpn-paper">{escape(paper_text(row))}</span> | –'
                f'<span class="dpn-basis">not run ({key})</span></td>')
    label, mark, _ = BADGES[verdict]
    extra = [p for p in (_delta(row), basis(row)) if p]
    caveats = "".join(notes.ref(t) for t in (row.get("note"),) if t)
    return (f'<td class="dpn-cell dpn-{verdict}" style="background:{tint}" data-claim="{escape(row["id"])}">'
            f'<span class="dpn-paper">{escape(paper_text(row))}</span> | <strong>{escape(ours_text(row))}</strong>'
            f'<span class="dpn-basis">{mark}' + (f" {escape(' · '.join(extra))}" if extra else f" {escape(label)}")
            + f"{caveats}</span></td>")


def _reason(row: dict) -> str:
    evidence = row["evidence"]
    return evidence if isinstance(evidence, str) else (row.get("detail") or "no value")


def grid(rows: list[dict], spec: Grid) -> Html:
    """``spec`` filled from scoreboard ``rows``: each cell "paper | ours" coloured by verdict, with
    the verdict, ours − paper and the seeds under it; groups, rows and columns with nothing run
    dropped; every cell not run counted under the table, one line per reason."""
    by_id = {r["id"]: r for r in rows}
    missing = [i for i in spec.ids() if i not in by_id]
    if missing:
        raise ValueError(f"grid {spec.title!r}: no scoreboard row for {missing[:3]}")
    ran = lambda cid: cid is not None and by_id[cid]["verdict"] != "not_run"  # noqa: E731
    keep_cols = [j for j in range(len(spec.columns))
                 if any(ran(ids[j]) for _, rs in spec.groups for _, ids in rs)]
    shown_groups = []
    for glabel, grows in spec.groups:
        kept = [(label, ids) for label, ids in grows if any(ran(ids[j]) for j in keep_cols)]
        if kept:
            shown_groups.append((glabel, kept))
    not_run = [by_id[i] for i in spec.ids() if by_id[i]["verdict"] == "not_run"]
    counts = Counter(_reason(r) for r in not_run)
    reasons = {reason: chr(ord("a") + k) for k, reason in enumerate(counts)}
    notes = _Notes()
    head = "<tr><th></th>" + "".join(f"<th>{escape(spec.columns[j])}</th>" for j in keep_cols) + "</tr>"
    body = []
    for glabel, grows in shown_groups:
        if glabel:
            body.append(f'<tr><th class="dpn-group" colspan="{len(keep_cols) + 1}">{escape(glabel)}</th></tr>')
        for label, ids in grows:
            body.append(f"<tr><th>{escape(label)}</th>"
                        + "".join(_cell(by_id[ids[j]] if ids[j] else None, notes, reasons) for j in keep_cols)
                        + "</tr>")
    verdicts = Counter(by_id[i]["verdict"] for i in spec.ids())
    tally = ", ".join(f"{verdicts[v]} {BADGES[v][0]}" for v in BADGES if verdicts[v])
    key = [f"<li>({reasons[reason]}) {n} cell{'s' if n != 1 else ''} not run: {inline_code(reason)}</li>"
           for reason, n in counts.items()]
    key += [f"<li><sup>{k + 1}</sup> {escape(t)}</li>" for k, t in enumerate(notes.texts)]
    table = (f'<div class="dpn-gridwrap"><table class="dpn-grid"><thead>{head}</thead>'
             f"<tbody>{''.join(body)}</tbody></table></div>") if shown_groups else ""
    html = (f'{STYLE}<div class="dpn-papertable"><p class="dpn-gridtitle">{escape(spec.title)}</p>'
            f'<p class="dpn-gridlegend">Each cell: paper | ours, coloured by the verdict (✓ reproduced, ✗ not '
            f"reproduced, ? inconclusive, – not run); under it ours − paper and what ours rests on. "
            f"{len(spec.ids())} cells: {escape(tally)}."
            + (f" {escape(spec.legend)}" if spec.legend else "") + "</p>"
            + table + (f'<ul class="dpn-gridkey">{"".join(key)}</ul>' if key else "") + "</div>")
    plain = "\n".join([spec.title, tally] + [f"{by_id[i]['id']}: {by_id[i]['paper_value']} | {ours_text(by_id[i])} "
                                             f"{by_id[i]['verdict']}" for i in spec.ids()])
    return Html(html, plain)


# ---------------------------------------------------------------- What held


def answer(rows: list[dict], paper: str) -> tuple[str, str]:
    """Does the paper's main claim hold here? ``(answer, sentence)`` from the verdicts of its
    headline claims, by a stated rule: *holds* only if every headline claim is reproduced;
    *does not hold* if more central claims are not reproduced than reproduced; *not tested* if
    no headline claim has an answer; else *undecided*."""
    spec = HEADLINES[paper]
    by_id = {r["id"]: r for r in rows}
    verdicts = [by_id[cid]["verdict"] for cid, _ in spec.claims]
    central = verdicts[:spec.central]
    if all(v == "reproduced" for v in verdicts):
        word = "holds"
    elif central.count("not_reproduced") > central.count("reproduced"):
        word = "does not hold"
    elif all(v == "not_run" for v in verdicts):
        word = "not tested"
    else:
        word = "undecided"
    counts = Counter(verdicts)
    told = ", ".join(f"{counts[v]} {BADGES[v][0]}" for v in BADGES if counts[v])
    c = Counter(central)
    central_told = ", ".join(f"{c[v]} {BADGES[v][0]}" for v in BADGES if c[v])
    sentence = (f"{spec.question} Here: **{word}**. Of its {len(verdicts)} headline claims {told}; "
                f"of the {spec.central} central one{'s' if spec.central != 1 else ''} {central_told}.")
    return word, sentence


RULE = ("Answer rule: holds only if every headline claim is reproduced; does not hold if more central claims "
        "are not reproduced than reproduced; not tested if none has an answer; otherwise undecided.")


def _md_bold(text: str) -> str:
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", escape(text))


def what_held(rows: list[dict], paper: str) -> Html:
    """The box that opens a chapter: the answer, then each headline claim's paper value, ours,
    seeds, fidelity and verdict (one line each), then the rule."""
    spec = HEADLINES[paper]
    by_id = {r["id"]: r for r in rows}
    word, sentence = answer(rows, paper)
    lines, plain = [], [f"What held ({paper}): {sentence}"]
    for k, (cid, label) in enumerate(spec.claims):
        row = by_id[cid]
        verdict = row["verdict"]
        central = " (central)" if k < spec.central else ""
        if verdict == "not_run":
            nums = f"paper {paper_text(row)} · not run: {_reason(row)}"
        elif row["kind"] == "statement":
            nums = _short(ours_text(row), 150)
        else:
            unit = " %" if row["unit"] == "%" else (" points" if row["unit"] == "percentage points" else "")
            nums = f"paper {paper_text(row)}{unit} · ours {ours_text(row)}{unit}"
        extra = basis(row) if verdict != "not_run" else ""
        note = f" Note: {row['note']}" if row.get("note") else ""
        lines.append(f'<li data-claim="{escape(cid)}" data-verdict="{verdict}">{_mark(verdict)}'
                     f"<strong>{escape(label)}</strong>{escape(central)}: "
                     + (f'<span class="dpn-nums">{escape(nums)}</span>' if row["kind"] != "statement" and
                        verdict != "not_run" else inline_code(nums))
                     + (f" ({escape(extra)})" if extra else "") + f" — {escape(BADGES[verdict][0])}."
                     + escape(note) + "</li>")
        plain.append(f"- {label}{central}: {nums} ({extra}) {verdict}{note}")
    spread = seed_spread(rows)
    if spread:
        plain.append(spread)
    html = (f'{STYLE}<div class="what-held dpn-held" data-paper="{paper}" data-answer="{word}">'
            f"<p><strong>What held.</strong> {_md_bold(sentence)}</p><ul>{''.join(lines)}</ul>"
            + (f'<p class="dpn-spread">{escape(spread)}</p>' if spread else "")
            + f'<p class="dpn-rule">{escape(RULE)} Values: the paper\'s from the claims registry, ours from '
            "the run records; the full claim list is at the end of the chapter.</p></div>")
    return Html(html, "\n".join(plain))


def seed_spread(rows: list[dict]) -> str | None:
    """One sentence on how far our seeds spread: over the training claims in percent judged on
    at least 3 seeds, the range and median of the standard deviation across seeds, recovered
    from each row's t interval (half-width = t(n-1) x SD / sqrt(n), :mod:`dpnotes.report.verdicts`);
    ``None`` when no claim has 3 seeds."""
    from dpnotes.report.verdicts import t_quantile

    sds = sorted((r["interval"][1] - r["interval"][0]) / 2 * math.sqrt(r["seeds"]) / t_quantile(r["seeds"])
                 for r in rows if r.get("kind") == "training" and r.get("unit") == "%" and r.get("category") == "claim"
                 and (r.get("seeds") or 0) >= 3 and r.get("interval") and not r.get("paired"))
    if not sds:
        return None
    return (f"Seed spread: over the {len(sds)} accuracy claims judged on 3 or more seeds, our standard deviation "
            f"across seeds is {sds[0]:.2f}-{sds[-1]:.2f} points (median {statistics.median(sds):.2f}), "
            "computed from the run records.")


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def answers(rows: list[dict], *, link: Callable[[str], str] | None = None) -> Html:
    """The five answers (the index page and the scoreboard): one line per paper, linked by
    ``link(paper) -> href`` when given."""
    items, plain = [], []
    for paper in HEADLINES:
        word, sentence = answer(rows, paper)
        title = escape(TITLES[paper])
        name = f'<a href="{escape(link(paper))}">{title}</a>' if link else title
        colour = {"holds": "#1a7f37", "does not hold": "#cf222e", "undecided": "#9a6700"}.get(word, "#6e7781")
        items.append(f'<li data-paper="{paper}" data-answer="{word}"><strong>{name}</strong>: '
                     f'<span class="dpn-mark" style="background:{colour};width:auto;padding:0 .35em">'
                     f"{escape(word)}</span> {_md_bold(sentence)}</li>")
        plain.append(f"{TITLES[paper]}: {word}. {sentence}")
    html = (f'{STYLE}<div class="what-held dpn-answers"><p><strong>What held, paper by paper.</strong></p>'
            f'<ul>{"".join(items)}</ul><p class="dpn-rule">{escape(RULE)}</p></div>')
    return Html(html, "\n".join(plain))


def answers_markdown(rows: list[dict]) -> str:
    """The five answers as a MyST page fragment for the index page (``book/intro.md`` includes
    it): raw HTML linking each chapter, relative to ``book/``."""
    return answers(rows, link=lambda p: f"executed/{p}.html").html + "\n"


# ---------------------------------------------------------------- the papers' tables, laid out


def _eps_columns(prefix: str, n: int) -> list[tuple[str, str]]:
    """Columns labelled by the printed eps headers ``<prefix>.col<i>.epsilon``, keyed eps1_99."""
    values = [registry.get(f"{prefix}.col{i}.epsilon").value for i in range(1, n + 1)]
    return [(f"ε = {v}", "eps" + v.replace(".", "_")) for v in values]


def _dplis_table2() -> Grid:
    models = [("MNIST, MLP", "mnist_mlp"), ("MNIST, CNN", "mnist_cnn"), ("CIFAR-10, MLP", "cifar10_mlp"),
              ("CIFAR-10, CNN", "cifar10_cnn")]
    arms = [("No (DP-SGD), %", "acc_no"), ("R = 10, %", "acc_r10"), ("gain R = 10, points", "gain_r10"),
            ("R_best, %", "acc_rbest"), ("gain R_best, points", "gain_rbest")]
    return cross("Table 2 (paper) / ours: test accuracy of DP-SGD (No) and DPlis (R = 10, R_best), K = 10",
                 "dplis.table2.{g}.{c}.{r}", columns=_eps_columns("dplis.table2", 4), rows=arms, groups=models,
                 legend="ε: RDP at integer orders, classic conversion, δ = 1e-5 (the paper's accountant).")


def _dpis_table3() -> Grid:
    datasets = [("MNIST", "mnist"), ("Fashion-MNIST", "fmnist"), ("CIFAR-10", "cifar10"), ("IMDb", "imdb")]
    methods = [("DPIS", "dpis"), ("DP-SGD-HF", "dpsgd_hf"), ("DP-SGD-TS", "dpsgd_ts"),
               ("DP-SGD-Decay", "dpsgd_decay"), ("DP-SGD", "dpsgd"), ("non-private", "non_dp")]
    columns = [(f"ε = {e.replace('_', '.')}", e) for e in ("eps0_5", "eps1", "eps2", "eps3", "eps4")]

    def cell(g, r, c):
        if r == "non_dp":  # one value per data set, under the first column
            return f"dpis.table3.{g}.non_dp" if c == "eps0_5" else None
        return f"dpis.table3.{g}.{c}.{r}"

    return cross("Table 3 (paper) / ours: test accuracy (%) at equal (ε, δ)", cell, columns=columns,
                 rows=methods, groups=datasets,
                 legend="ε: the DPIS accountant (RDP at integer orders, Lemma 2.5's conversion), δ = 1e-5; "
                        "the non-private value sits in the first column.")


def _gdp_table1() -> Grid:
    def setting(row, name):
        return registry.setting(f"gdp.table1.{row}.{name}")

    rows = [(f"{i}: σ {setting(f'row{i}', 'sigma'):g}, {setting(f'row{i}', 'epochs'):g} epochs", f"row{i}")
            for i in range(1, 7)]
    columns = [("test accuracy, %", "accuracy"), ("μ (CLT)", "mu"), ("ε, CLT", "eps_clt"),
               ("ε, moments accountant", "eps_ma")]
    return cross("Table 1 (paper) / ours: MNIST, NoisySGD", "gdp.table1.{r}.{c}", columns=columns, rows=rows,
                 legend="δ = 1e-5; ε, CLT: Eqs. 5-6 (μ-GDP converted); moments accountant: RDP at TF Privacy's "
                        "tutorial orders, classic conversion.")


def _labeldp_table4() -> Grid:
    from dpnotes.experiments import labeldp

    columns = [(f"ε = {'∞' if e == float('inf') else f'{e:g}'}", str(i + 1))
               for i, e in enumerate(labeldp.TABLE4_EPSILONS)]
    return cross("Table 4 (paper) / ours: test accuracy (%) of LP-1ST and LP-2ST", "labeldp.table4.{g}.{r}.value{c}",
                 columns=columns, rows=[("LP-1ST", "lp_1st"), ("LP-2ST", "lp_2st")],
                 groups=[("MNIST", "mnist"), ("Fashion-MNIST", "fmnist")],
                 legend="ε: label-DP (pure, substitution of one label); the column headers are inferred (the "
                        "extracted text lost them). Ours: a small CNN in place of the paper's Inception network. "
                        "The baselines the table quotes from other papers are in the full claim list.")


def _sadpsgd_table1() -> Grid:
    schemes = [("DP-SGD", "dpsgd"), ("DP-SGD, tanh", "dpsgd_tanh"), ("DP-SGD, AUTO-S", "dpsgd_auto_s"),
               ("SA-DPSGD", "sa_dpsgd"), ("SA-DPSGD, tuned", "sa_dpsgd_tuned"), ("non-private", "non_dp")]
    return cross("Table 1 (paper) / ours: test accuracy (%) at ε = 3", "sadpsgd.table1.{c}.{r}",
                 columns=[("MNIST", "mnist"), ("Fashion-MNIST", "fmnist"), ("CIFAR-10", "cifar10")], rows=schemes,
                 legend="ε: Theorem 1 (accepted steps only; RDP at integer orders, classic conversion), "
                        "δ = 1e-5; the sound ε of the same runs is in the chapter's findings.")


# Each paper's tables in its own layout, in the paper's order.
TABLES: dict[str, tuple[Callable[[], Grid], ...]] = {
    "dplis": (_dplis_table2,), "dpis": (_dpis_table3,), "gdp": (_gdp_table1,), "labeldp": (_labeldp_table4,),
    "sadpsgd": (_sadpsgd_table1,),
}


def paper_grids(paper: str, *, store=None) -> Html:
    """Every laid-out table of ``paper`` (:data:`TABLES`), from its scoreboard rows."""
    from dpnotes.report import scoreboard

    rows = scoreboard(store=store, paper=paper)
    parts = [grid(rows, make()) for make in TABLES[paper]]
    return Html("".join(p.html for p in parts), "\n\n".join(p.plain for p in parts))


def paper_what_held(paper: str, *, store=None) -> Html:
    """The "What held" box of ``paper``'s chapter."""
    from dpnotes.report import scoreboard

    return what_held(scoreboard(store=store, paper=paper), paper)
