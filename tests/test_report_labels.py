"""One name per thing (:mod:`dpnotes.report.labels`): raw ids become reader names in every renderer."""

from __future__ import annotations

import re

import pytest

from dpnotes import claims
from dpnotes.report import labels, tables

RAW = re.compile(r"\beps\d|fmnist|dpsgd_|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b|\b[0-9a-f]{16}\b")


@pytest.mark.parametrize("raw, named", [
    ("dpis.table3.fmnist.eps1.dpsgd_hf", "DPIS Table 3, Fashion-MNIST, ε = 1, DP-SGD-HF"),
    ("fmnist.eps1", "Fashion-MNIST, ε = 1"),
    ("mnist_mlp.eps1_99.gain_rbest", "MNIST MLP, ε = 1.99, gain of R_best"),
    ("gdp.table1.row2.eps_clt", "GDP Table 1, row 2, ε, CLT"),
    ("figure4.top.ma", "Figure 4, top, moments accountant"),
    ("tau", "τ"), ("mu0", "μ0"), ("dpsgd_hf", "DP-SGD-HF"), ("mnist_mlp", "MNIST MLP"),
])
def test_ids_get_reader_names(raw, named):
    assert labels.name(raw) == named


def test_every_claim_id_reads_without_a_raw_id():
    """Every claim id of the registry, named, shows none of the raw-id patterns the browser test looks for."""
    bad = [(c.id, labels.name(c.id)) for c in claims.load() if RAW.search(labels.name(c.id))]
    assert not bad, bad[:5]


def test_words_names_ids_in_text_and_leaves_prose_and_files_alone():
    text = ("needs the paper profile: 1 run (table2.mnist_mlp.eps10_00.no), tau and mu0; no change, see plan.toml; "
            "difference to the runs 8742cf119bfbb27d, 993750242c73a5a3")
    out = labels.words(text)
    assert "Table 2, MNIST MLP, ε = 10.00, No (DP-SGD)" in out and "τ and μ0" in out
    assert "no change" in out and "plan.toml" in out and "the runs (their record ids are listed with the claim)" in out
    assert not RAW.search(out)
    md = labels.markdown("zero for `dplis.table9.cifar10_mlp.sharpness_r10`; run `dpnotes run x --only 'a.*'`")
    assert "DPlis Table 9, CIFAR-10 MLP, sharpness, R = 10" in md and "`dpnotes run x --only 'a.*'`" in md
    sub = labels.markdown("`dpis.sec5_4.dpis_best_everywhere[fmnist.eps1 DPIS - dpsgd_hf]`, "
                          "`dpnotes.x.GHOST_FROM_SEED`")
    assert sub.startswith("DPIS Sec. 5.4, DPIS best everywhere (Fashion-MNIST, ε = 1 DPIS - DP-SGD-HF)")
    assert "`dpnotes.x.GHOST_FROM_SEED`" in sub


@pytest.mark.parametrize("value, digits, signed, text", [
    (-0.04333, 2, True, "−0.04"), (0.98, 2, True, "+0.98"), (-0.004, 2, True, "0.00"), (-0.004, 2, False, "0.00"),
    (92.08, 2, False, "92.08"), (-1.5, 1, False, "−1.5"),
])
def test_numbers_at_the_papers_precision_signed_differences_and_no_negative_zero(value, digits, signed, text):
    assert labels.number(value, digits, signed=signed) == text


def test_tables_name_headers_and_cells_but_keep_raw_columns():
    import pandas as pd

    out = tables.table(pd.DataFrame({"dataset": ["fmnist"], "mu0": [3], "experiment": ["table1.fmnist.dpsgd_hf"],
                                     "id": ["8742cf119bfbb27d"]}), raw=("id",), title="Runs", provenance="1 run")
    assert "Fashion-MNIST" in out.html and ">μ0</th>" in out.html and "DP-SGD-HF" in out.html
    assert "8742cf119bfbb27d" in out.html and '<details class="dpn-prov"><summary>1 run</summary>' in out.html
    assert '<p class="dpn-tabletitle">Runs</p>' in out.html and out.plain.startswith("Runs")


def test_tables_show_no_row_numbers_of_a_filtered_frame():
    import pandas as pd

    frame = pd.DataFrame({"claim": ["a", "b", "c"], "v": [1, 2, 3]})
    out = tables.table(frame[frame.v > 1]).plain.splitlines()
    assert out == ["claim\tv", "b\t2", "c\t3"]
    named = tables.table(pd.DataFrame({"v": [1]}, index=pd.Index(["top"], name="part"))).plain.splitlines()
    assert named[0] == "part\tv"
