"""The pieces every chapter shares (Finding, chapter setup) and the GDP and SA-DPSGD cells that
moved into their report modules, on small made-up records."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from fake_records import record

from dpnotes.experiments import sadpsgd as sa
from dpnotes.report import chapter, findings
from dpnotes.report import gdp as gdp_report
from dpnotes.report import sadpsgd as sa_report
from dpnotes.report.findings import Finding, note


def test_finding_shows_its_tables_then_its_text(monkeypatch, capsys):
    import IPython.display

    shown = []
    monkeypatch.setattr(IPython.display, "display", shown.append)
    Finding("**bold**", shown=("table", "figure")).show()
    assert shown[:2] == ["table", "figure"] and shown[2].data == "**bold**"
    shown.clear()
    note("not stored yet").show()
    assert shown == [] and capsys.readouterr().out == "not stored yet\n"
    Finding("").show()
    assert shown == [] and capsys.readouterr().out == ""
    with pytest.raises(AttributeError):
        findings.Finding("x").text = "y"


def test_chapter_setup_seeds_and_shows_whole_frames():
    import torch

    chapter.setup(3)
    a, t = np.random.rand(), torch.rand(1)
    chapter.setup(3)
    assert np.random.rand() == a and torch.equal(torch.rand(1), t)
    assert pd.get_option("display.max_rows") is None and pd.get_option("display.width") == 250


def test_gdp_store_counts_per_profile():
    stored = [record("a", profile="paper"), record("b", profile="paper"), record("c", profile="quick")]
    lines = gdp_report.store_counts(stored).plain.splitlines()
    assert lines == ["Records in the store, per profile", "profile\trecords in the store", "paper\t2", "quick\t1"]


def test_sadpsgd_charts_say_when_nothing_is_stored():
    assert sa_report.acceptance_chart(pd.DataFrame(), []) == Finding("")
    empty = sa_report.figure3_chart([])
    assert not empty.markdown and empty.text == "no Table 3 run stored"
    settings = sa_report.settings_frame()
    assert list(settings.index) == list(sa.DATASETS) and "sigma" in settings.columns


def test_sadpsgd_findings_are_written_from_the_stopping_frame():
    stopping = pd.DataFrame({"all candidates, T_max": [10.0, 11.0, 12.0], "all candidates, rate 1/2": [5.0, 6.0, 7.0],
                             "pld, T_max": [8.0, 9.0, 9.5], "rdp, T_max": [1.0, 1.0, 1.0],
                             "rdp-classic, T_max": [2.0, 2.0, 2.0]}, index=["mnist", "fmnist", "cifar10"])
    text = sa_report.findings_markdown(stopping, pd.DataFrame(), [])
    assert "gives $\\varepsilon$ = 5.00 to 7.00 if half of the candidates are accepted" in text
    assert "up to 10.00 (MNIST), 11.00 (Fashion-MNIST) and 12.00 (CIFAR-10)" in text
    assert "only to 8.00, 9.00 and 9.50" in text and "gives 50% of `rdp-classic` on average" in text
    assert text.startswith("\n- **Theorem 1") and text.endswith("restored with the weights.\n")
