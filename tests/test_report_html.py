"""The book's verdict badges, claims tables and scoreboard figure show what ``dpnotes scoreboard`` says."""

from __future__ import annotations

import json
import re
from html import escape

import matplotlib
import pytest

from dpnotes.claims import PAPERS
from dpnotes.cli import main as cli
from dpnotes.report import VERDICTS, html, scoreboard, summary
from dpnotes.report.figure import verdict_bars
from dpnotes.results import Store

matplotlib.use("Agg")


def cli_counts(capsys) -> dict[str, dict[str, int]]:
    """Verdict counts per paper as ``dpnotes scoreboard --json`` prints them."""
    assert cli(["scoreboard", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["claims"]
    out = {p: dict.fromkeys(VERDICTS, 0) for p in PAPERS}
    for row in rows:
        if row["category"] == "claim":  # context rows are never counted
            out[row["paper"]][row["verdict"]] += 1
    return out


def badge_counts(fragment: str) -> dict[str, int]:
    """The counts that an HTML fragment's verdict badges show."""
    return {v: int(n) for v, n in re.findall(r'<span class="dpn-badge dpn-(\w+)[^>]*>(\d+) ', fragment)}


def test_scoreboard_page_shows_the_cli_counts(capsys):
    expected = cli_counts(capsys)
    table = html.scoreboard_table()._repr_html_()
    rows = re.findall(r'<tr class="dpn-row" data-paper="(\w+)"><th>\w+</th><td>(\d+)</td><td>(.*?)</td></tr>', table)
    assert [p for p, _, _ in rows] == list(PAPERS)
    for paper, total, badges in rows:
        assert badge_counts(badges) == expected[paper]
        assert int(total) == sum(expected[paper].values())
    every = html.all_summary()._repr_html_()
    assert badge_counts(every) == {v: sum(c[v] for c in expected.values()) for v in VERDICTS}


def test_scoreboard_figure_draws_the_cli_counts(capsys):
    import matplotlib.pyplot as plt

    expected = cli_counts(capsys)
    fig, ax = plt.subplots()
    verdict_bars(ax, summary(scoreboard()))
    drawn = {p: dict.fromkeys(VERDICTS, 0) for p in PAPERS}
    for container, verdict in zip(ax.containers, VERDICTS):
        for bar, label in zip(container, ax.get_yticklabels()):
            drawn[label.get_text()][verdict] = round(bar.get_width())
    plt.close(fig)
    assert drawn == expected


@pytest.mark.parametrize("paper", PAPERS)
def test_chapter_summary_and_table_cover_every_claim_once(paper):
    rows = scoreboard(paper=paper)
    badges = html.paper_summary(paper)
    assert badge_counts(badges._repr_html_()) == summary(rows)[paper]
    assert repr(badges) == f"{paper}: " + ", ".join(
        f"{summary(rows)[paper][v]} {html.BADGES[v][0]}" for v in VERDICTS)
    table = html.paper_claims(paper)._repr_html_()
    shown = re.findall(r'data-claim="([^"]+)" data-verdict="(\w+)"', table)
    assert sorted(shown) == sorted((r["id"], r["verdict"]) for r in rows)  # grouped, each once
    assert "<script" not in table and "http" not in table  # nothing to load


@pytest.mark.parametrize("claim_id, group, short", [
    ("gdp.table1.row3.accuracy", "Table 1", "row3.accuracy"),
    ("dpis.sec3_3.fig1c.dpsgd_sigma", "Section 3.3", "fig1c.dpsgd_sigma"),
    ("gdp.figure4.bottom.sigma_clt", "Figure 4", "bottom.sigma_clt"),
    ("sadpsgd.thm1.accepted_steps_only", "Theorem 1", "accepted_steps_only"),
    ("labeldp.appc.kmnist_similar", "Appendix C", "kmnist_similar"),
    ("dplis.intro.image_gain.min", "Introduction", "image_gain.min"),
])
def test_groups_and_short_ids(claim_id, group, short):
    assert html.group_of(claim_id) == group and html.short_id(claim_id) == short


def row(**over) -> dict:
    base = {"id": "gdp.table1.row1.mu", "paper": "gdp", "kind": "exact", "source": "Table 1 <row 1>",
            "paper_value": "0.23", "unit": None, "ours": 0.2273, "verdict": "reproduced",
            "evidence": "computed", "detail": None, "category": "claim", "seeds": None, "paired": None,
            "fidelity": "paper", "substitute": None, "note": None, "margin": None, "interval": None}
    return base | over


def test_claims_table_escapes_shortens_and_names_records(tmp_path):
    long_reason = "needs <a GPU> " + "x" * 300
    for rid in ("36826aa949865afb", "3bacfa8523ce9f46"):
        (tmp_path / "results" / "gdp" / "paper").mkdir(parents=True, exist_ok=True)
        (tmp_path / "results" / "gdp" / "paper" / f"{rid}.json").write_text("{}")
    out = html.claims_table([
        row(),
        row(id="gdp.table1.row1.accuracy", kind="training", unit="%", paper_value="95.0", ours=94.69,
            evidence=["36826aa949865afb", "3bacfa8523ce9f46"], detail="mean of 2 seed(s)"),
        row(id="gdp.table2.x", paper_value=None, ours=None, verdict="not_run", evidence=long_reason),
    ], store=Store(tmp_path / "results"))
    assert "<a GPU>" not in out and "&lt;row 1&gt;" in out  # text is escaped
    assert out.count("<details class=\"dpn-group\"") == 2 and out.count("<details class=\"dpn-group\" open>") == 1
    assert "95.0 %" in out and ">94.7<" in out  # ours at the paper's precision
    # nothing rests on a hover (a touch screen has none): the record files, the whole reason and the claim's
    # description are on the page, folded where long
    assert " title=" not in out
    assert '<details class="dpn-ids dpn-prov"><summary>2 records</summary>' in out
    assert "<code>36826aa949865afb</code> (results/gdp/paper/36826aa949865afb.json)" in out
    assert '<details class="dpn-more"><summary>' in out and "…" in out and escape(long_reason) in out
    assert f'<span class="dpn-desc">{escape(row()["source"])}</span>' in out
    assert html.BADGES["not_run"][2] in out


def test_claims_table_folds_record_ids_as_provenance(tmp_path):
    """Record ids (16-hex hashes) are provenance: folded under "N records", never in the row's text."""
    ids = [f"{k:016x}" for k in range(5)]
    (tmp_path / "results" / "gdp" / "paper").mkdir(parents=True)
    for rid in ids:
        (tmp_path / "results" / "gdp" / "paper" / f"{rid}.json").write_text("{}")
    store = Store(tmp_path / "results")
    for n in (1, len(ids)):
        out = html.claims_table([row(id="gdp.table1.row1.accuracy", kind="training", evidence=ids[:n])], store=store)
        summary = f"{n} record{'s' if n != 1 else ''}"
        assert f'<details class="dpn-ids dpn-prov"><summary>{summary}</summary>' in out
        folded = out[out.index('<details class="dpn-ids'):]
        assert all(f"<code>{rid}</code> (results/gdp/paper/{rid}.json)" in folded for rid in ids[:n])
        assert not any(rid in out[:out.index('<details class="dpn-ids')] for rid in ids[:n])


def test_claims_table_refuses_a_record_it_cannot_find(tmp_path):
    with pytest.raises(ValueError, match="0 files"):
        html.claims_table([row(evidence=["0000000000000000"])], store=Store(tmp_path))


def test_badge_rejects_an_unknown_verdict():
    with pytest.raises(KeyError):
        html.badge("maybe")


def test_scoreboard_page_links_the_audit_chapter_and_shows_its_campaign():
    """book/scoreboard.ipynb links the audit chapter (a sibling under book/executed/, in the toc)
    and calls the audit report for the campaign's state."""
    from pathlib import Path

    import nbformat

    repo = Path(__file__).resolve().parents[1]
    cells = nbformat.read(repo / "book" / "scoreboard.ipynb", as_version=4).cells
    links = [m for c in cells if c.cell_type == "markdown" for m in re.findall(r"\]\(([^)]+)\)", c.source)]
    assert "audit.ipynb" in links
    assert "book/executed/audit" in (repo / "_toc.yml").read_text()
    assert any("audit_report.scoreboard_note()" in c.source for c in cells if c.cell_type == "code")
