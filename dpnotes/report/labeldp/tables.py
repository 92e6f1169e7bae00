"""The LabelDP chapter's tables: the mechanisms, Theorem 3 and the exact checks, the runs, the recipe
grid, the split grid and MovieLens.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import labeldp as X
from dpnotes.record import Record
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note

from .cells import dataset_name


def mechanism_table(curves: dict):
    """k* and RRWithPrior's P[correct] per prior, and RR's, at eps 1, 2, 4 and 8."""
    eps = np.array(X.FIGURE_EPSILONS)
    idx = [int(np.argmin(abs(eps - e))) for e in (1.0, 2.0, 4.0, 8.0)]
    return tables.table(
        pd.DataFrame({(name, q): [c[q][i] for i in idx]
                      for name, c in curves.items() for q in ("k_star", "rr_with_prior")}
                     | {("any", "rr"): [curves["uniform"]["rr"][i] for i in idx]},
                     index=pd.Index([round(float(eps[i]), 2) for i in idx], name="ε")), decimals=4,
        title="k* and P[correct] of RRWithPrior per prior, and of RR")


def theorem3_table():
    """Theorem 3 checked per eps: LP optimum against the closed form, its DP slack, the gain over RR."""
    t3 = pd.DataFrame(X.theorem3_check())
    summary = t3.groupby("epsilon").agg(
        LPs=("lp", "size"), max_lp_minus_closed=("lp_minus_closed_form", "max"),
        min_lp_minus_closed=("lp_minus_closed_form", "min"), max_lp_dp_slack=("lp_dp_slack", "max"),
        mean_gain_over_rr=("rr_with_prior", "mean"), mean_rr=("rr", "mean"), mean_k_star=("k_star", "mean"))
    summary["mean_gain_over_rr"] -= summary.pop("mean_rr")
    return tables.table(summary.round(6).apply(lambda col: col + 0.0 if col.dtype.kind == "f" else col),  # no -0.0
                        title="Theorem 3 checked per ε")


def checks_table():
    """Lemma 1, Corollary 2 and LP-1ST = RR: the worst log-ratio of each randomizer's table, and whether it holds."""
    rc, uc, mst = X.ratio_check(), X.uniform_check(), X.lpmst_check()
    tol = X.RATIO_TOL
    return tables.table(pd.DataFrame([
        {"check": "RR tables: max log-ratio - eps", "value": rc["worst"]["rr"], "holds": rc["worst"]["rr"] <= tol},
        {"check": "RRTop-k tables (every k): max log-ratio - eps", "value": rc["worst"]["rr_top_k"],
         "holds": rc["worst"]["rr_top_k"] <= tol},
        {"check": "RRWithPrior tables: max log-ratio - eps", "value": rc["worst"]["rr_with_prior"],
         "holds": rc["worst"]["rr_with_prior"] <= tol},
        {"check": "uniform prior: max |RRWithPrior - RR| table entry (and k* = K)", "value": uc["max_table_diff"],
         "holds": uc["all_k_star_is_K"] and uc["max_table_diff"] == 0},
        {"check": "toy two-stage LP-MST: max log-ratio - eps", "value": mst["worst"], "holds": mst["worst"] <= tol},
    ]), title="Lemma 1, Corollary 2 and LP-1ST = RR, checked")


# Runs: tables and figures.
def runs_table(records: list[dict]):
    """The runs at hand: experiment, seed, stages, mechanism, label eps, what was measured on what."""
    rows = []
    for r in map(Record.of, records):
        lp = r.metric_or("lp_mst", {})
        rows.append({"experiment": r.experiment, "seed": r.seed, "stages": r.method_config["stages"],
                     "mechanism": r.method_config["mechanism"], "label eps": r.last_epoch["label_epsilon"],
                     "privacy notion": r.last_epoch["privacy_notion"], "accuracy": r.metric_or("test_acc"),
                     "evaluated on": "held-out training images" if r.subset.get("validation") else "test set",
                     "test RMSE": r.metric_or("test_rmse"), "stage sizes": lp.get("stage_sizes"),
                     "trained on": lp.get("train_sizes")})
    return tables.table(pd.DataFrame(rows), percent=["accuracy"],
                        dash="not measured by this run (RMSE for MovieLens, stage sizes for LP-MST only)",
                        title="Runs at hand", provenance=f"The {len(rows)} runs at hand, one by one (open)")


def recipe_grid(stored: list[dict]) -> Finding:
    """The recipe selection grid (validation accuracy per candidate and eps), and the recipe chosen."""
    sel = X.recipe_selection(stored)
    if not any(sel["complete"].values()):
        return note("no recipe selection stored (`dpnotes run labeldp --profile paper --only 'recipe.*'`)", sel)
    chosen = {d: X.RECIPE[d] for d in sel["best"]}
    return Finding(f"chosen: {tables.text(chosen)} | best on validation: {tables.text(sel['best'])}", sel,
                   (tables.table(pd.DataFrame(sel["rows"]),
                       title="Recipe selection: validation accuracy"),), markdown=False)


def split_grid(stored: list[dict]) -> Finding:
    """App. E's stage-1 fraction grid, as its two statements judge it: the mean over the seeds whose
    grid is complete (bars: the lowest and highest seed), final accuracy against the fraction and
    against the stage-1 top-k̄ accuracy."""
    import matplotlib.pyplot as plt

    seeds, grid = X.split_grid_mean(stored)
    if not seeds:
        return note("split grid not stored yet", grid)
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.6))
    for d, rows in grid.items():
        acc = [r["test_acc"] for r in rows]
        bars = [[a - r["test_acc_low"] for a, r in zip(acc, rows)], [r["test_acc_high"] - a for a, r in zip(acc, rows)]]
        for ax, x in zip(axes, ([r["split"] for r in rows], [r["stage1_top_k_bar_acc"] for r in rows])):
            ax.errorbar(x, acc, yerr=bars if seeds > 1 else None, fmt="o-", capsize=3, label=dataset_name(d))
    axes[0].set(xlabel="stage-1 fraction", ylabel="final test accuracy (%)")
    axes[1].set(xlabel="stage-1 model's top-k̄ test accuracy (%)", ylabel="final test accuracy (%)")
    for ax in axes:
        ax.legend()
    fig.tight_layout()
    basis = (f"mean of {seeds} seeds (bars: lowest and highest seed)" if seeds > 1 else "one seed")
    figure = tables.figure(
        fig, number="Figures 4-5 (paper, CIFAR-10) / ours (MNIST, Fashion-MNIST)",
        caption="LP-2ST at ε = 2 with stage-1 fractions 0.3 to 0.8: final test accuracy against the fraction (left) "
                f"and against the stage-1 model's top-k̄ test accuracy (right); {basis}, the small CNN.",
        alt="Two line plots with one line per data set: final accuracy against the stage-1 fraction, and against the "
            "stage-1 top-k accuracy.")
    spread = {"test_acc_low": "lowest seed", "test_acc_high": "highest seed"} if seeds > 1 else {}
    names = {"split": "stage-1 fraction", "test_acc": "final test acc. (%)", **spread,
             "stage1_top_k_bar_acc": "stage-1 top-k̄ test acc. (%)", "k_bar": "k̄ (per seed)"}
    frame = pd.DataFrame([{"data set": dataset_name(d), **{v: r[k] for k, v in names.items()}}
                          for d, rows in grid.items() for r in rows])  # the seeds: in the caption
    table = tables.table(frame, decimals=2, title="App. E's stage-1 fraction grid (ours)")
    return Finding("", grid, (figure, table))


def movielens(stored: list[dict]) -> Finding:
    """Table 3's LP rows: ours on MovieLens-100k, the paper's on MovieLens-1M, and their directions."""
    ml = X.movielens_table(stored)
    lines = [f"paper (MovieLens-1M, headers lost): {tables.text(ml['paper'])}",
             f"directions, ours: {tables.text(ml['directions']['ours'])}",
             f"directions, paper: {tables.text(ml['directions']['paper'])}"]
    if all(r["LP-1ST"] is None for r in ml["ours"]):
        return note("\n".join(["MovieLens-100k runs not stored yet", *lines]), ml)
    return Finding("\n".join(lines), ml, (tables.table(pd.DataFrame(ml["ours"]), decimals=4,
        title="Table 3's LP rows, ours on MovieLens-100k"),), markdown=False)
