"""The DPlis chapter's record readers on small made-up records (the chapter's notebook calls these;
the registry arithmetic is tested in test_dplis_findings.py, of dpnotes.report.dplis.checks)."""

from __future__ import annotations

import pytest
from fake_records import for_config

from dpnotes import claims
from dpnotes.experiments import dplis as X
from dpnotes.report import dplis as report


def test_nothing_stored():
    runs, gains, scale, t9 = (report.runs_table([]), report.gains_figure([]), report.table9_scale([]),
                              report.table9_figure([]))
    assert not runs.markdown and runs.text.startswith("no paper-profile run stored")
    assert gains.text == "" and not gains.shown and gains.data.empty
    assert scale.text.startswith("**Table 9's scale.** No Table 9 run is stored yet")
    assert not t9.markdown and t9.text.startswith("no Table 9 run stored")


def _epochs(accs: dict[int, float]) -> list[dict]:
    return [{"epoch": e, "test_acc": a, "wall_s": 60.0} for e, a in accs.items()]


def test_first_column_gains_pair_seeds_at_the_columns_epoch():
    e = X.column_epoch("mnist", "eps1_99")
    stored = [for_config(X, "table2.mnist_mlp.eps1_99.no", 0, epochs=_epochs({e - 1: 0.5, e: 0.90, e + 1: 0.99})),
              for_config(X, "table2.mnist_mlp.eps1_99.r10", 0, epochs=_epochs({e - 1: 0.5, e: 0.93, e + 1: 0.10})),
              # seed 1 has only the smoothed arm: unpaired, left out of the gain and of the seed count
              for_config(X, "table2.mnist_mlp.eps1_99.r10", 1, epochs=_epochs({e - 1: 0.5, e: 0.99, e + 1: 0.10}))]
    df = report.first_column_gains(stored)
    assert df.to_dict("records") == [{"cell": "mnist mlp, R = 10", "seeds": 1, "ours": pytest.approx(3.0),
                                      "paper": claims.get("dplis.table2.mnist_mlp.eps1_99.gain_r10").number}]
    f = report.gains_figure(stored)
    assert len(f.shown) == 1 and f.text == ""


def test_runs_table_reads_each_current_run():
    r = for_config(X, "table2.mnist_mlp.eps1_99.no", 0, test_acc=0.91234, devices=("cuda:0", "cpu", "cpu"),
                   epsilon={"rdp-classic": {"epsilon": 1.987654}})
    f = report.runs_table([r])
    (row,) = f.data.to_dict("records")
    assert row["test acc (%)"] == 91.23 and row["ε (RDP, classic conversion)"] == 1.987654
    assert row["device"] == "cpu, cuda:0" and row["wall (min)"] == 0.2 and row["epochs"] == 3
    assert row["backend"] == r["spec"]["train"]["grad_backend"]
    assert "1.988" in f.shown[0].plain


def _sharpness(value: float, corner: float | None) -> dict:
    out = {"sharpness": value, "loss": 0.1, "evaluations": 30, "maxiter": 10, "examples": 1000, "max_loss": 0.2}
    return out | ({"corner_sharpness": corner} if corner is not None else {})


def test_table9_scale_compares_the_corner_with_the_printed_value():
    paper = claims.get("dplis.table9.mnist_mlp.sharpness_no")
    analysis = {"sharpness": _sharpness(1.0, 2 * paper.number + 1.0),
                "slice": {"alpha": [-0.5, 0.0, 0.5], "loss": [0.3, 0.1, 0.4]}}
    stored = [for_config(X, "table9.mnist_mlp.eps1_99.no", 0, final={"analysis": analysis})]
    f = report.table9_scale(stored)
    assert "For 1 of the 1 models we measured, that corner alone raises the loss" in f.text
    assert f"mnist_mlp no: corner {2 * paper.number + 1.0:.4g}, paper {paper.value}" in f.text
    if paper.number > 0:
        assert "Where it does, by a factor of at least" in f.text
    figure = report.table9_figure(stored)
    assert figure.data[0]["ours"] == 1.0 and figure.data[0]["paper"] == paper.number and len(figure.shown) == 2


def test_table9_without_the_corner_is_not_checked():
    analysis = {"sharpness": _sharpness(1.0, None), "slice": {"alpha": [0.0], "loss": [0.1]}}
    stored = [for_config(X, "table9.mnist_mlp.eps1_99.r10", 0, final={"analysis": analysis})]
    assert report.table9_scale(stored).text.startswith("**Table 9's scale.** No Table 9 run is stored yet")
