"""The LabelDP chapter's findings and tables on small made-up records (the chapter's notebook calls these)."""

from __future__ import annotations

import math

import pytest
from fake_records import for_config, record

from dpnotes import claims
from dpnotes.experiments import labeldp as X
from dpnotes.report import labeldp as report
from dpnotes.report import tables


def test_public_helpers_match_the_experiments_module():
    assert report.table4_cells() == list(X.table4_cells())
    assert [report.eps_name(e) for e in (1.0, 2.5, math.inf)] == [X._eps_name(e) for e in (1.0, 2.5, math.inf)]
    assert report.eps_name(math.inf) == "inf"


def test_nothing_stored():
    assert report.recipe([]).text.endswith("The recipe selection is not stored yet.")
    grid = report.recipe_grid([])
    assert not grid.markdown and grid.text.startswith("no recipe selection stored")
    assert report.split_grid([]).text == "split grid not stored yet"
    ml = report.movielens([])
    assert not ml.markdown and ml.text.splitlines()[0] == "MovieLens-100k runs not stored yet"
    assert ml.text.splitlines()[1].startswith("paper (MovieLens-1M, headers lost): ") and not ml.shown
    assert all(v == [] for v in report.table4_points([]).values())


def _recipe_records(best: tuple[str, float]) -> list[dict]:
    out = []
    for d, short in (("mnist", "mnist"), ("fashion_mnist", "fmnist")):
        for augment, alpha in X.SELECTION_CANDIDATES:
            for eps in X.SELECTION_EPSILONS:
                acc = 0.95 if (augment, alpha) == best else 0.90
                out.append(for_config(X, f"recipe.{short}.eps{report.eps_name(eps)}.{augment}.alpha{alpha:g}", 0,
                                      test_acc=acc + (0.03 if math.isinf(eps) else 0.0)))
    return out


def test_recipe_names_the_chosen_augmentation_against_the_papers():
    stored = _recipe_records(("crop_cutout", 1.0))
    f = report.recipe(stored)
    assert f.data["best"] == {"mnist": ("crop_cutout", 1.0), "fashion_mnist": ("crop_cutout", 1.0)}
    assert "is not the best for the small CNN" in f.text
    assert ("MNIST: App. B's augmentations with mixup alpha 4 give 90.0% at eps 1 and 93.0% without noise, the chosen "
            "'crop_cutout' with alpha 1 95.0% and 98.0%") in f.text
    grid = report.recipe_grid(stored)
    assert grid.text.startswith("chosen: ") and "| best on validation: " in grid.text and len(grid.shown) == 1


def test_table4_points_are_our_seeds_per_cell():
    stored = [for_config(X, "table4.mnist.lp_2st.eps2", s, test_acc=a) for s, a in ((0, 0.98), (1, 0.97))]
    points = report.table4_points(stored)
    assert points[("mnist", 2, 2.0)] == pytest.approx([98.0, 97.0])
    assert sum(map(len, points.values())) == 2, "no other cell has a record"
    assert report.table4_points([record("table4.mnist.lp_2st.eps2")])[("mnist", 2, 2.0)] == [], "not a current config"


def test_split_grid_needs_every_fraction_of_a_data_set():
    lp = {"lp_mst": {"k_bar": [3, 2], "test_top_k_bar_acc": [0.99, 0.98]}}
    jax = X._jax_row(X.SPLIT_EPSILON)[2]  # the fraction of the JAX code: its run is Table 4's
    names = [("table4.mnist.lp_2st.eps2" if f == jax else f"appe.mnist.lp_2st.eps2.split{f:g}")
             for f in X.SPLIT_FRACTIONS]
    stored = [for_config(X, n, 0, test_acc=0.9 + i / 100, final=lp) for i, n in enumerate(names)]
    assert report.split_grid(stored).text == "split grid not stored yet", "Fashion-MNIST's grid missing: no grid"
    stored += [for_config(X, n.replace("mnist", "fmnist"), 0, test_acc=0.8, final=lp) for n in names]
    f = report.split_grid(stored)
    assert list(f.data) == ["mnist", "fashion_mnist"]
    assert [r["split"] for r in f.data["mnist"]] == list(X.SPLIT_FRACTIONS)
    assert f.data["mnist"][0]["test_acc"] == pytest.approx(90.0) and f.data["mnist"][0]["stage1_top_k_bar_acc"] == 99.0
    assert len(f.shown) == 2 and f.text == "" and "one seed" in f.shown[0].plain
    assert report.split_grid(stored[:-1]).text == "split grid not stored yet", "a fraction missing: no grid"


def test_split_grid_shows_the_mean_of_the_complete_seeds_with_their_range():
    """The figure is what App. E's statements judge: the mean over the seeds whose grid is complete
    on both data sets, bars from the lowest to the highest seed; a seed with a fraction missing is left out."""
    lp = {"lp_mst": {"k_bar": [2], "test_top_k_bar_acc": [0.9]}}
    jax = X._jax_row(X.SPLIT_EPSILON)[2]
    names = [("table4.{d}.lp_2st.eps2" if f == jax else "appe.{d}.lp_2st.eps2.split%g" % f) for f in X.SPLIT_FRACTIONS]
    accs = {0: 0.90, 1: 0.94, 2: 0.50}
    stored = [for_config(X, n.format(d=d), seed, test_acc=accs[seed], final=lp)
              for seed in (0, 1, 2) for d in ("mnist", "fmnist") for n in names]
    stored = [r for r in stored if not (r["spec"]["seed"] == 2 and r["spec"]["experiment"].endswith("split0.3"))]
    f = report.split_grid(stored)
    row = f.data["mnist"][0]
    assert row["test_acc"] == pytest.approx(92.0)
    assert (row["test_acc_low"], row["test_acc_high"]) == pytest.approx((90, 94))
    assert row["k_bar"] == "2/2" and len(row["ids"]) == 2 and "mean of 2 seeds" in f.shown[0].plain
    ms = {m.claim_id: m for m in X.measure(stored)}
    assert ms["labeldp.appe.split_above_half"].seeds == 2


def test_movielens_rows_and_directions():
    stored = [for_config(X, f"table3.ml100k.lp_{s}st.eps{report.eps_name(e)}", 0, final={"test_rmse": r})
              for s, e, r in ((1, 1.0, 1.2), (1, 2.0, 1.1), (2, 1.0, 1.15))]
    f = report.movielens(stored)
    assert f.data["ours"][0] == {"eps": 1.0, "LP-1ST": 1.2, "LP-2ST": 1.15}
    assert f.data["directions"]["ours"] == {"lp_1st_falls": [True], "lp_2st_below_lp_1st": [True]}
    assert len(f.shown) == 1 and f.text.splitlines()[1] == "directions, ours: " + tables.text(
        f.data["directions"]["ours"])


def test_runs_table_reads_lp_mst_and_rmse_runs():
    image = record("table4.mnist.lp_2st.eps2", final={"lp_mst": {"stage_sizes": [30, 30], "train_sizes": [30, 50]}},
                   epochs=[{"epoch": 1, "label_epsilon": 2.0, "privacy_notion": "label-DP", "test_acc": 0.9}],
                   spec={"method_config": {"stages": 2, "mechanism": "rr_with_prior"}})
    ml = record("table3.ml100k.lp_1st.eps1", final={"test_rmse": 1.1}, spec={"method_config": {
        "stages": 1, "mechanism": "rr"}}, epochs=[{"epoch": 1, "label_epsilon": 1.0, "privacy_notion": "label-DP"}])
    del ml["final"]["test_acc"]
    html = report.runs_table([image, ml])
    lines = html.plain.splitlines()  # lines[0]: the title
    assert lines[2].split("\t")[-5:] == ["90.00", "test set", "—", "30, 30", "30, 50"]
    assert lines[3].split("\t")[-5:] == ["—", "test set", "1.1", "—", "—"]


def test_findings_from_the_registry_and_the_mechanisms():
    assert "columns 1, 2, 4 and 6" in report.column_budgets().text
    keep = report.lp1st_noise()
    assert keep.data[1.0] == pytest.approx(math.e / (math.e + 9)) and "0.232 at eps = 1" in keep.text
    margins = report.margin_20()
    assert margins.data and "'A margin of 20% across all eps'" in margins.text
    batch = claims.setting("labeldp.setup.small.batch_size")
    assert f"printed as {batch:g}, which we read as a typo for 256" in report.settings_as_run().text
