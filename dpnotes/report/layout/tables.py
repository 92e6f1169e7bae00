"""The papers' tables in the papers' own layout (:func:`grid`): cells not run are not spread over the page,
rows, columns and groups with nothing run are dropped, and every cell not run is counted in one line per reason
under the table; each paper's tables in the paper's order (:data:`TABLES`, :func:`paper_grids`).
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import Callable

from dpnotes import claims as registry
from dpnotes.report import labels
from dpnotes.report.html import BADGES, Html, inline_code

from .cells import STYLE, Grid, _cell, _Notes, _reason, cross, ours_text


def grid(rows: list[dict], spec: Grid) -> Html:
    """``spec`` filled from scoreboard ``rows``: each cell "paper | ours" coloured by verdict, with
    the verdict, ours − paper and the seeds under it; every column of the paper's table drawn, groups
    and rows with nothing run dropped; footnotes numbered 1, 2, 3 under the table, one per substitute
    or caveat and one per kind of reason not run (its cells counted, each reason listed)."""
    by_id = {r["id"]: r for r in rows}
    missing = [i for i in spec.ids() if i not in by_id]
    if missing:
        raise ValueError(f"grid {spec.title!r}: no scoreboard row for {missing[:3]}")
    ran = lambda cid: cid is not None and by_id[cid]["verdict"] != "not_run"  # noqa: E731
    cols = range(len(spec.columns))
    shown_groups = []
    for glabel, grows in spec.groups:
        kept = [(label, ids) for label, ids in grows if any(ran(i) for i in ids)]
        if kept:
            shown_groups.append((glabel, kept))
    notes = _Notes()
    head = "<tr><th></th>" + "".join(f"<th>{escape(labels.words(spec.columns[j]))}</th>" for j in cols) + "</tr>"
    body = []
    for glabel, grows in shown_groups:
        if glabel:
            body.append(f'<tr><th class="dpn-group" colspan="{len(cols) + 1}">{escape(labels.words(glabel))}</th></tr>')
        for label, ids in grows:
            body.append(f"<tr><th>{escape(labels.words(label))}</th>"
                        + "".join(_cell(by_id[ids[j]] if ids[j] else None, notes) for j in cols) + "</tr>")
    shown = {i for _, grows in shown_groups for _, ids in grows for i in ids if i}
    for i in spec.ids():  # cells of rows left out still count under their reason
        if i not in shown and by_id[i]["verdict"] == "not_run":
            notes.not_run_ref(_reason(by_id[i]))
    verdicts = Counter(by_id[i]["verdict"] for i in spec.ids())
    tally = ", ".join(f"{verdicts[v]} {BADGES[v][0]}" for v in BADGES if verdicts[v])
    key = []
    for k, text in enumerate(notes.texts):
        kind = text.removeprefix("not run: ")
        if text.startswith("not run: ") and kind in notes.not_run:
            reasons = Counter(notes.not_run[kind])
            n = sum(reasons.values())
            listed = "".join(f"<li>{m} × {inline_code(labels.words(r))}</li>" for r, m in reasons.items())
            only = labels.words(next(iter(reasons)))
            detail = (f"<details><summary>{len(reasons)} reasons</summary><ul>{listed}</ul></details>"
                      if len(reasons) > 1 else "" if only == kind else f": {inline_code(only)}")
            key.append(f"<li><sup>{k + 1}</sup> {n} cell{'s' if n != 1 else ''} not run, "
                       f"{escape(kind)}{detail}</li>")
        else:
            key.append(f"<li><sup>{k + 1}</sup> {escape(text)}</li>")
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
    columns = [(f"ε = {e.removeprefix('eps').replace('_', '.')}", e)  # the header as printed: ε = 0.5, 1, ...
               for e in ("eps0_5", "eps1", "eps2", "eps3", "eps4")]

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
