"""The DPIS chapter's findings on small made-up records (the chapter's notebook calls these)."""

from __future__ import annotations

import pytest
from fake_records import for_config, record

from dpnotes import claims
from dpnotes.experiments import dpis as X
from dpnotes.report import dpis as report
from dpnotes.report.findings import Finding


def test_public_helpers_match_the_experiments_module():
    assert report.table3_cells() == X.table3_cells() and report.ablation_cells() == X.ablation_cells()
    for eps in (0.5, 1.0, 3.0, 4.0):
        assert report.eps_key(eps) == X._eps_key(eps)
    assert report.n_train("mnist") == X._n_train("mnist") == 60000
    assert report.cell_name("dpis.table5.mnist.a_e0_8") == "Table 5: a.E 0.8"  # as the chapter has always shown it
    assert report.cell_name("dpis.table3.fmnist.eps1.dpsgd_hf") == "Table 3: ε 1, DP-SGD-HF"


def test_nothing_stored_gives_plain_notes():
    for finding, says in ((report.gain_over_hf([]), "no Table 3 pair stored"),
                          (report.lemma31_in_runs([]), "no Table 3 DPIS run stored"),
                          (report.ac_statistic([]), "No DPIS+AC run stored yet"),
                          (report.training_figure([]), "no paper-profile training run stored"),
                          (report.sigma_figure([]), "no Table 3 DPIS run stored")):
        assert isinstance(finding, Finding) and not finding.markdown and says in finding.text
    assert report.features_confound([]).text.endswith("Our raw-pixel baselines are not all stored yet.")
    assert report.decay_activation([]).text.endswith("The tanh probe is not stored yet.")


def test_gain_over_hf_pairs_seeds_and_compares_with_the_paper():
    accs = {("mnist.eps1.dpis", 0): 0.95, ("mnist.eps1.dpsgd_hf", 0): 0.94,
            ("mnist.eps1.dpis", 1): 0.96, ("mnist.eps1.dpsgd_hf", 1): 0.94}
    stored = [for_config(X, e, s, test_acc=a) for (e, s), a in accs.items()]
    f = report.gain_over_hf(stored)
    (row,) = f.data
    assert row["cell"] == "mnist.eps1" and row["seeds"] == 2
    assert row["per_seed"] == pytest.approx([1.0, 2.0]) and row["ours_gain"] == pytest.approx(1.5)
    paper = (claims.get("dpis.table3.mnist.eps1.dpis").number - claims.get("dpis.table3.mnist.eps1.dpsgd_hf").number)
    assert row["paper_gain"] == pytest.approx(paper)
    assert f.markdown and "Paired by seed (2 seeds)" in f.text and "+1.50 (sd 0.71) points on mnist.eps1" in f.text
    assert f"(paper {paper:+.1f})" in f.text


def test_gain_over_hf_reads_a_lost_seed_as_unpaired():
    stored = [for_config(X, "mnist.eps1.dpis", 0, test_acc=0.9), for_config(X, "mnist.eps1.dpsgd_hf", 1, test_acc=0.9)]
    assert not report.gain_over_hf(stored).data, "no seed has both methods: nothing to compare"


def _dpis_epochs(capped: int) -> list[dict]:
    return [{"epoch": e, "test_acc": 0.9, "wall_s": 2.0, "dpis_drawn": 60000,
             "dpis_capped_draws": capped if e == 2 else 0,
             "dpis_min_margin": 1.5 - e, "dpis_sigma_g": 3.0 - 0.5 * e} for e in (1, 2)]


def test_lemma31_names_the_runs_whose_draws_were_capped():
    eps = {X.ACCOUNTANT: {"epsilon": 0.99, "order": 12.0}}
    dpis = for_config(X, "mnist.eps1.dpis", 0, epochs=_dpis_epochs(capped=7), epsilon=eps)
    hf = for_config(X, "mnist.eps1.dpsgd_hf", 0, epochs=[{"epoch": e, "test_acc": 0.9, "wall_s": 1.0} for e in (1, 2)])
    f = report.lemma31_in_runs([dpis, hf])
    (row,) = f.data.to_dict("records")
    assert row["capped_draws"] == 7 and row["capped_epochs"] == [2] and row["min_margin"] == pytest.approx(-0.5)
    assert row["grads_per_epoch_over_n"] == pytest.approx(2.0) and row["wall_per_epoch_vs_hf"] == pytest.approx(2.0)
    assert "It failed in 1 of 1 Table 3 DPIS runs: mnist.eps1.dpis (seed 0): 7 capped" in f.text
    assert "final eps 0.990000 of 1" in f.text and "2.0-2.0x DP-SGD-HF's on the same device" in f.text
    assert len(f.shown) == 1, "the table of the runs' costs comes first"
    held = report.lemma31_in_runs([for_config(X, "mnist.eps1.dpis", 0, epochs=_dpis_epochs(0), epsilon=eps)])
    assert "It held in all 1 Table 3 DPIS runs (no capped draw)" in held.text
    assert held.text.endswith("k times DP-SGD's N)."), "no DP-SGD-HF run: no wall-time ratio"


def test_sigma_trajectory_is_the_mean_over_seeds():
    runs = [for_config(X, "mnist.eps1.dpis", s, epochs=_dpis_epochs(0)) for s in (0, 1)]
    f = report.sigma_figure(runs)
    assert f.data == {"mnist.eps1.dpis": [2.5, 2.0]} and len(f.shown) == 1


def test_training_points_one_row_per_seed_with_the_paper_value():
    stored = [for_config(X, "fmnist.eps4.dpis", s, test_acc=a) for s, a in ((0, 0.85), (1, 0.87))]
    df = report.training_points(stored)
    assert list(df.claim) == ["dpis.table3.fmnist.eps4.dpis"] * 2 and list(df.seed) == [0, 1]
    assert list(df.ours) == pytest.approx([85.0, 87.0])
    assert set(df.paper) == {claims.get("dpis.table3.fmnist.eps4.dpis").number}
    assert report.training_points([record("fmnist.eps1.dpis")]).empty, "a record of no current config answers nothing"


def test_runs_table_shows_dpis_statistics_of_the_last_epoch():
    r = record("smoke.dpis", epochs=_dpis_epochs(3), epsilon={"dpis": {"epsilon": 0.5}})
    html = report.runs_table([r])
    assert "capped draws" in html.plain and "dpis_capped_draws" not in html.plain  # the reader's name
    assert "90.000" in html.plain and "0.500" in html.plain
    plain = record("smoke.dpsgd")
    with pytest.raises(KeyError, match=f"record {plain['id']}: no privacy.epsilon.dpis"):
        report.runs_table([r, plain])


def test_printed_decay_cells_read_the_registry():
    printed = report.printed_decay_cells()
    assert sorted(printed.cell) == ["fmnist.eps1", "fmnist.eps4", "mnist.eps1", "mnist.eps3"]
    row = printed.set_index("cell").loc["mnist.eps1"]
    assert row.dpsgd_decay == claims.get("dpis.table3.mnist.eps1.dpsgd_decay").number
