"""The paper-layout tables, the What held box and the book's table and figure formatting
(:mod:`dpnotes.report.layout`, :mod:`dpnotes.report.headlines`, :mod:`dpnotes.report.tables`)."""

from __future__ import annotations

import math

import pytest

from dpnotes import claims
from dpnotes.claims import PAPERS
from dpnotes.report import layout, tables
from dpnotes.report.headlines import HEADLINES


def _row(cid, verdict, ours=None, paper="95.0", **extra):
    return {"id": cid, "paper": cid.split(".")[0], "kind": "training", "source": "s", "paper_value": paper,
            "unit": "%", "ours": ours, "verdict": verdict, "evidence": ["r1"] if verdict != "not_run" else "no GPU",
            "detail": "mean of 3 seed(s), sd 0.2; band +-1 (floor 1)" if verdict != "not_run" else None,
            "flags": "", **extra}


def test_every_headline_and_layout_cell_is_a_registered_claim():
    known = {c.id for c in claims.load()}
    for paper, spec in HEADLINES.items():
        assert {cid for cid, _ in spec.claims} <= known, paper
    for paper, makers in layout.TABLES.items():
        for make in makers:
            ids = make().ids()
            assert ids and set(ids) <= known and all(i.startswith(paper + ".") for i in ids)


def _rows_for(paper, verdicts):
    return [_row(cid, v, ours=95.0 if v != "not_run" else None)
            for (cid, _), v in zip(HEADLINES[paper].claims, verdicts)]


@pytest.mark.parametrize("verdicts, word", [
    (["reproduced"] * 7, "holds"),
    (["not_reproduced", "reproduced"] + ["reproduced"] * 5, "holds in part"),
    (["not_reproduced", "not_reproduced"] + ["reproduced"] * 5, "holds in part"),
    (["not_reproduced", "not_reproduced", "inconclusive"] + ["reproduced"] * 4, "does not hold"),
    (["not_reproduced", "inconclusive", "not_run"] + ["reproduced"] * 4, "undecided"),
    (["not_run"] * 7, "undecided"),
    (["inconclusive", "reproduced"] + ["reproduced"] * 5, "undecided"),
])
def test_the_answer_rule(verdicts, word):
    assert layout.answer(_rows_for("gdp", verdicts), "gdp")[0] == word  # gdp: 7 headlines, 3 central


def test_a_grid_shows_paper_and_ours_and_counts_the_cells_not_run():
    spec = layout.Grid("T", ("a", "b"), (("", (("r1", ("x.t.1", "x.t.2")), ("r2", ("x.t.3", None)))),))
    rows = [_row("x.t.1", "reproduced", 95.2, seeds=3, fidelity="substitute", substitute="a small CNN",
                 note="header inferred"),
            _row("x.t.2", "not_run"), _row("x.t.3", "inconclusive", 94.0)]
    html = layout.grid(rows, spec).html
    assert "95.0</span> | <strong>95.2</strong>" in html and "3 seeds" in html and "a small CNN" in html
    assert "header inferred" in html  # the caveat on the page, not in a hover
    assert "<sup>3</sup> 1 cell not run, no GPU" in html and "inconclusive" in html
    assert "<sup>1</sup> Substitute: a small CNN" in html and "<sup>2</sup> header inferred" in html
    assert "<sup>1,2</sup>" in html  # two notes of one cell: never read as 12


def test_a_grid_draws_every_column_and_numbers_its_footnotes():
    """Every column of the paper's table is drawn (even one with nothing run); footnotes run 1, 2, 3 past 26
    (never letters, punctuation or control characters); cells not run group by the kind of their reason."""
    import re

    n = 40
    spec = layout.Grid("T", tuple(f"ε = {k}" for k in range(n + 1)),
                       (("", (("r", tuple(f"x.t.{k}" for k in range(n + 1))),)),))
    rows = [_row("x.t.0", "reproduced", 95.0)] + [
        _row(f"x.t.{k}", "reproduced" if k % 2 else "not_run", 95.0 if k % 2 else None,
             note=f"caveat {k}" if k % 2 else None,
             evidence=["r1"] if k % 2 else f"needs the paper profile: 1 run (table2.mnist_mlp.eps{k}.no)")
        for k in range(1, n + 1)]
    html = layout.grid(rows, spec).html
    assert html.count("<th>ε = ") == n + 1  # every column drawn
    marks = re.findall(r"<sup>([^<]*)</sup>", html)
    assert set(marks) == {str(k) for k in range(1, n // 2 + 2)}  # 20 caveats and one kind of reason not run
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", html)
    assert f"{n // 2} cells not run, needs the paper profile" in html and "mnist_mlp" not in html
    with pytest.raises(ValueError, match="no claim in any cell"):
        layout.Grid("T", ("a",), (("", (("r", (None,)),)),))


def test_tables_print_no_nan_no_repr_and_integers_as_integers():
    import pandas as pd

    out = tables.table(pd.DataFrame({"n": [512.0, 60000.0], "acc": [0.5, math.nan], "d": [{"a": 1}, [1, 2]]}),
                       percent=["acc"], dash="not run").plain
    assert "512" in out and "60,000" in out and "512.0" not in out
    assert "nan" not in out.lower() and "{" not in out and "—: not run" in out and "acc (%)" in out
    with pytest.raises(ValueError, match="percent"):
        tables.table(pd.DataFrame({"a": [1]}), percent=["b"])


def test_a_figure_needs_labelled_axes_and_drops_empty_panels():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 3))
    a.plot([0, 1], [0, 1])
    a.set(xlabel="epochs", ylabel="accuracy")
    html = tables.figure(fig, number="Figure 1 (paper) / ours", caption="c", alt="a line").html
    assert "No panel for" in html and "<figcaption>" in html and 'alt="a line"' in html
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    with pytest.raises(ValueError, match="no label"):
        tables.figure(fig, number="F", caption="c", alt="a")


@pytest.mark.parametrize("paper", PAPERS)
def test_what_held_shows_the_scoreboards_verdict_for_every_headline(paper, tmp_path):
    """The box's verdicts are the scoreboard's (same rows), for the committed store and an empty one."""
    import re

    from dpnotes.report import scoreboard
    from dpnotes.report.headlines import HEADLINES
    from dpnotes.results import Store

    for store in (Store(), Store(tmp_path)):
        verdicts = {r["id"]: r["verdict"] for r in scoreboard(store=store, paper=paper)}
        html = layout.paper_what_held(paper, store=store)._repr_html_()
        shown = dict(re.findall(r'<li data-claim="([^"]+)" data-verdict="(\w+)"', html))
        assert shown == {cid: verdicts[cid] for cid, _ in HEADLINES[paper].claims}


def test_seed_spread_recovers_the_seeds_standard_deviation():
    """The sentence's SDs are those of the seeds behind each row's t interval."""
    import statistics

    from dpnotes.report.layout import seed_spread
    from dpnotes.report.verdicts import interval

    rows = []
    for values in ([90.0, 91.0, 92.0], [80.0, 80.5, 80.25, 80.75]):
        mean, low, high = interval(values)
        rows.append({"kind": "training", "unit": "%", "category": "claim", "seeds": len(values),
                     "interval": [low, high], "paired": None})
    rows.append({"kind": "training", "unit": "%", "category": "claim", "seeds": 1, "interval": None})
    text = seed_spread(rows)
    low_sd, high_sd = statistics.stdev([80.0, 80.5, 80.25, 80.75]), statistics.stdev([90.0, 91.0, 92.0])
    assert "over the 2 accuracy claims" in text and f"{low_sd:.2f}-{high_sd:.2f} points" in text
    assert seed_spread(rows[2:]) is None
