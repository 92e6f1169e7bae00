"""What LabelDP's run records hold, cell by cell: Table 4's cells, the recipe selection, Appendix C's LP
means and quoted baselines, the split grid and the MovieLens table, for :func:`~.answers.measure` and the chapter.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.record import Record

from .runs import (
    APPE_SEEDS,
    DATASETS,
    ML_EPSILONS,
    SELECTION_CANDIDATES,
    SELECTION_EPSILONS,
    SPLIT_EPSILON,
    SPLIT_FRACTIONS,
    TABLE4_EPSILONS,
    _eps_name,
    _jax_row,
    configs,
    selection_configs,
)
from .settings import EPSILONS, KS, PAPER


def _grid() -> str:
    return f"K in {KS[0]}..{KS[-1]}, eps in {{{', '.join(f'{e:g}' for e in EPSILONS)}}}"


def table4_cells():
    """``(claim id, experiment, eps)`` of Table 4's LP cells: LP-1ST's five printed values sit
    at eps 1, 2, 3, 4, inf, LP-2ST's four at 1..4 (:data:`TABLE4_EPSILONS`, inferred)."""
    for short in ("mnist", "fmnist"):
        for stages, n in ((1, 5), (2, 4)):
            for i, eps in enumerate(TABLE4_EPSILONS[:n]):
                yield (f"labeldp.table4.{short}.lp_{stages}st.value{i + 1}",
                       f"table4.{short}.lp_{stages}st.eps{_eps_name(eps)}", eps)


def recipe_selection(records: list[dict]) -> dict:
    """The recipe selection from its records (their ``final["test_acc"]`` is the accuracy on the
    held-out training images: ``subset["validation"]`` says so in the spec): ``rows`` (one per
    data set and candidate (augmentation, alpha): validation accuracy in % at each of SELECTION_EPSILONS and
    their mean; None where a run is
    missing), ``best`` (data set -> the (augment, alpha) of the highest mean, over complete rows
    only) and ``complete`` (data set -> whether every run of the grid is stored)."""
    from dpnotes.experiments import current

    runs = current(records, selection_configs())
    rows, best, complete = [], {}, {}
    for dataset in DATASETS:
        short = "mnist" if dataset == "mnist" else "fmnist"
        for augment, alpha in SELECTION_CANDIDATES:
            row = {"dataset": dataset, "augment": augment, "alpha": alpha}
            for eps in SELECTION_EPSILONS:
                rs = runs.get(f"recipe.{short}.eps{_eps_name(eps)}.{augment}.alpha{alpha:g}", [])
                row[f"eps {_eps_name(eps)}"] = Record.of(rs[0]).accuracy() if rs else None
            accs = [row[f"eps {_eps_name(e)}"] for e in SELECTION_EPSILONS]
            row["mean"] = None if None in accs else float(np.mean(accs))
            rows.append(row)
        done = [r for r in rows if r["dataset"] == dataset and r["mean"] is not None]
        complete[dataset] = len(done) == len(SELECTION_CANDIDATES)
        if done:
            top = max(done, key=lambda r: r["mean"])
            best[dataset] = (top["augment"], top["alpha"])
    return {"rows": rows, "best": best, "complete": complete}


APPC_EPSILONS = TABLE4_EPSILONS[:4]  # the budgets at which both LP rows print a value


def _lp_means(records: list[dict]) -> tuple[dict, dict, list[str]]:
    """Table 4's LP cells from paper-profile records: accuracy (%) per seed and their mean per
    ``(short, stages, eps)`` (``by_seed``, ``means``), and the record ids."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    means, by_seed, ids = {}, {}, []
    for _, experiment, eps in table4_cells():
        rs = paper.get(experiment, [])
        if rs:
            short, lp = experiment.split(".")[1:3]
            key = (short, int(lp[3]), eps)
            by_seed[key] = {Record.of(r).seed: Record.of(r).accuracy() for r in rs}
            means[key] = float(np.mean(list(by_seed[key].values())))
            ids += [Record.of(r).id for r in rs]
    return means, by_seed, ids


def quoted_baselines(short: str) -> list[tuple[str, float, float]]:
    """Table 4's baselines on ``short`` ("mnist" or "fmnist") that print their own budget:
    ``(claim id, accuracy %, eps)`` (the others' budgets are lost in the extracted text)."""
    out = []
    for c in claims.load(PAPER):
        if c.id.startswith(f"labeldp.table4.{short}.") and ".lp_" not in c.id and c.number is not None:
            try:
                out.append((c.id, c.number, claims.setting(f"{c.id}.budget")))
            except KeyError:
                continue
    return out


def split_grid(records: list[dict], seed: int = 0) -> dict[str, list[dict]]:
    """App. E's stage-1 fractions at eps SPLIT_EPSILON (``seed``), per data set that has every
    fraction stored: one row per fraction with the final test accuracy (%), the stage-1 model's
    top-k̄ test accuracy (%), k̄ and the record id (the JAX fraction's run is Table 4's)."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    out = {}
    for dataset in DATASETS:
        short = "mnist" if dataset == "mnist" else "fmnist"
        rows = []
        for f in SPLIT_FRACTIONS:
            name = (f"table4.{short}.lp_2st.eps{_eps_name(SPLIT_EPSILON)}" if f == _jax_row(SPLIT_EPSILON)[2]
                    else f"appe.{short}.lp_2st.eps{_eps_name(SPLIT_EPSILON)}.split{f:g}")
            r = next((Record.of(r) for r in paper.get(name, []) if Record.of(r).seed == seed), None)
            if r is None:
                break
            info = r.metric_or("lp_mst", {})
            if not info.get("k_bar") or not info.get("test_top_k_bar_acc"):
                break  # a record without the stage-1 top-k accuracy cannot place the run
            rows.append({"split": f, "test_acc": r.accuracy(), "k_bar": info["k_bar"][0],
                         "stage1_top_k_bar_acc": 100 * info["test_top_k_bar_acc"][0], "id": r.id})
        else:
            out[dataset] = rows
    return out


def split_grid_mean(records: list[dict]) -> tuple[int, dict[str, list[dict]]]:
    """``(n, grid)``: App. E's split grid averaged over the ``n`` seeds of APPE_SEEDS whose grid is
    complete on every data set (n = 0: none is, and ``grid`` is empty). Each row: the fraction, the
    mean final test accuracy (%) with its lowest and highest seed, the mean stage-1 top-k̄ accuracy
    (%), the seeds' k̄ joined by "/", and the accuracies (``test_acc_seeds``) and record ids (``ids``)
    it averages, seed by seed."""
    grids = [g for g in (split_grid(records, seed) for seed in APPE_SEEDS) if len(g) == len(DATASETS)]
    if not grids:
        return 0, {}
    mean = {}
    for d in grids[0]:
        rows = []
        for i, row in enumerate(grids[0][d]):
            acc = [g[d][i]["test_acc"] for g in grids]
            rows.append({"split": row["split"], "test_acc": float(np.mean(acc)), "test_acc_low": min(acc),
                         "test_acc_high": max(acc), "test_acc_seeds": acc,
                         "stage1_top_k_bar_acc": float(np.mean([g[d][i]["stage1_top_k_bar_acc"] for g in grids])),
                         "k_bar": "/".join(str(g[d][i]["k_bar"]) for g in grids),
                         "ids": [g[d][i]["id"] for g in grids]})
        mean[d] = rows
    return len(grids), mean


def movielens_table(records: list[dict]) -> dict:
    """Table 3's LP rows: ours on MovieLens-100k (the substitute) and the paper's on MovieLens-1M.
    ``ours``: one row per eps of ML_EPSILONS with the test RMSE of LP-1ST and LP-2ST (None: not
    stored); ``paper``: each LP row's printed cells in order (their eps headers are lost);
    ``directions``: for each side, whether RMSE falls from each eps (column) to the next and
    whether LP-2ST is below LP-1ST, wherever both are known."""
    from dpnotes.experiments import current

    runs = current(records, configs("paper"))
    ours = []
    for eps in ML_EPSILONS:
        row = {"eps": eps}
        for stages in (1, 2):
            rs = runs.get(f"table3.ml100k.lp_{stages}st.eps{_eps_name(eps)}", [])
            row[f"LP-{stages}ST"] = Record.of(rs[0]).metric("test_rmse") if rs else None
        ours.append(row)
    paper = {f"LP-{stages}ST": [c.number for c in claims.load(PAPER)
                                if c.id.startswith(f"labeldp.table3.lp_{stages}st.col")] for stages in (1, 2)}

    def directions(one: list, two: list) -> dict:
        falls = [b < a for a, b in zip(one, one[1:]) if a is not None and b is not None]
        below = [b < a for a, b in zip(one, two) if a is not None and b is not None]
        return {"lp_1st_falls": falls, "lp_2st_below_lp_1st": below}

    return {"ours": ours, "paper": paper,
            "directions": {"ours": directions([r["LP-1ST"] for r in ours], [r["LP-2ST"] for r in ours]),
                           "paper": directions(paper["LP-1ST"], paper["LP-2ST"])}}
