"""Issue 47: no verdict reads not reproduced on a substitute setting without the share of the difference the
substitute explains (measured from records on the same seeds, or why no record can), checked on fabricated
records both ways (the substitute explains the gap; it does not) and on every declared substitute."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from fake_records import for_config

from dpnotes import claims, experiments
from dpnotes.experiments import differences, measurement
from dpnotes.experiments.differences import Difference
from dpnotes.report import _rows
from dpnotes.report import differences as report_differences
from dpnotes.report.verdicts import judge, lacking_share

CELL = "dpis.table3.mnist.eps1.dpsgd_decay"


def _store(records):
    return SimpleNamespace(scan=lambda paper: SimpleNamespace(records=records, excluded=[]))


def _decay_rows(relu: list[float], tanh: list[float] | None):
    """The DPIS scoreboard rows from fabricated MNIST eps-1 DP-SGD-Decay records (ReLU, the Table 3
    cell) and, if given, the tanh probe's, seeds 0-2 (accuracies in %)."""
    dpis = experiments.module("dpis")
    records = [for_config(dpis, "mnist.eps1.dpsgd_decay", s, test_acc=a / 100) for s, a in enumerate(relu)]
    records += [for_config(dpis, "mnist.eps1.dpsgd_decay_tanh", s, test_acc=a / 100)
                for s, a in enumerate(tanh or [])]
    return {r["id"]: r for r in _rows("dpis", _store(records))}


def test_decay_cell_explained_by_the_activation_reads_inconclusive_with_its_share():
    paper = claims.get(CELL).number
    row = _decay_rows([paper - 3.1, paper - 3.0, paper - 2.9], [paper - 0.2, paper - 0.1, paper])[CELL]
    assert row["fidelity"] == "substitute" and row["verdict"] == "inconclusive"
    assert "explained by the substitute" in row["detail"]
    assert row["share"].startswith("measured: ") and row["share_value"] == pytest.approx(-2.9, abs=1e-6)


def test_decay_cell_beyond_its_substitute_stays_not_reproduced_and_says_the_share():
    paper = claims.get(CELL).number
    rows = _decay_rows([paper - 3.1, paper - 3.0, paper - 2.9], [paper - 2.6, paper - 2.5, paper - 2.4])
    row = rows[CELL]
    assert row["verdict"] == "not_reproduced" and "beyond what the substitute explains" in row["detail"]
    assert row["share_value"] == pytest.approx(-0.5, abs=1e-6) and "unmeasured" in row["share"]
    assert lacking_share(list(rows.values())) == []


def test_decay_cell_without_the_probe_says_its_share_is_not_measured_and_does_not_read_not_reproduced():
    # 3 points below the paper on a substitute whose share no record measures: nothing shows the difference
    # exceeds what the substitute explains, so the paper's failure cannot be told from ours (inconclusive)
    paper = claims.get(CELL).number
    row = _decay_rows([paper - 3.1, paper - 3.0, paper - 2.9], None)[CELL]
    assert row["verdict"] == "inconclusive" and row["share_value"] is None
    assert "not measured on these seeds" in row["share"]
    assert "on our substitute the rule reads not reproduced" in row["detail"]


def test_a_substitute_verdict_without_a_share_is_caught():
    import dataclasses

    claim = claims.get(CELL)
    m = measurement.training(CELL, [90.0, 90.1, 89.9], ["a", "b", "c"], substitute="a model of ours")
    ev = judge(claim, m)  # an undeclared substitute: the rule's verdict stands, and the missing share is named
    assert ev.verdict == "not_reproduced" and ev.share is None and lacking_share([ev]) == [CELL]
    # far below the paper on a declared substitute whose share nothing measures: never not reproduced
    ev = judge(claim, dataclasses.replace(m, share="model: unmeasured, no run of the paper's"))
    assert ev.verdict == "inconclusive" and "on our substitute the rule reads not reproduced" in ev.detail
    assert lacking_share([ev]) == []


@pytest.mark.parametrize("paper", claims.PAPERS)
def test_every_declared_substitute_is_a_difference_with_its_share(paper):
    """Every claim a paper's SUBSTITUTES names is touched by one of its DIFFERENCES, which says how its share
    is measured or why no record can: so any such verdict that reads not reproduced carries a share."""
    table = getattr(experiments.module(paper), "SUBSTITUTES", {})
    ids = [c.id for c in claims.load(paper) if experiments.substitute(paper, c.id)]
    assert all(differences.touching(paper, cid) for cid in ids), [c for c in ids if not differences.touching(paper, c)]
    assert not table or ids


def test_the_committed_scoreboard_has_no_substitute_verdict_without_its_share():
    from dpnotes.report import scoreboard

    rows = scoreboard()
    assert lacking_share(rows) == []
    assert all(r["share"] for r in rows if r["fidelity"] == "substitute")


def test_a_difference_gives_exactly_one_of_measured_and_unmeasured():
    with pytest.raises(ValueError, match="exactly one"):
        Difference("x", "y", ("a.*",), "z")
    with pytest.raises(ValueError, match="exactly one"):
        Difference("x", "y", ("a.*",), "z", measured="m", unmeasured="u")
    with pytest.raises(ValueError, match="claims"):
        Difference("x", "y", (), "z", measured="m")


def test_the_chapter_table_lists_every_declared_substitute_and_undeclared_ones():
    rows = [{"id": CELL, "paper": "dpis", "category": "claim", "verdict": "not_reproduced", "fidelity": "substitute",
             "substitute": "s", "share": "measured: x", "share_value": -2.5, "unit": "%", "detail": "..."},
            {"id": "dpis.zzz", "paper": "dpis", "category": "claim", "verdict": "inconclusive",
             "fidelity": "substitute", "substitute": "something else", "share": None, "share_value": None}]
    out = report_differences.rows("dpis", rows, costs=False)
    assert [r["substitute"] for r in out[:-1]] == [d.substitute for d in differences.declared("dpis")]
    decay = out[0]
    assert decay["verdicts it touches"] == "1 not reproduced"
    assert "-2.50 points" in decay["share it explains"] and f"not reproduced beyond it: {CELL}" in \
        decay["share it explains"]
    assert out[-1]["substitute"] == "undeclared" and out[-1]["verdicts it touches"] == "dpis.zzz: inconclusive"
