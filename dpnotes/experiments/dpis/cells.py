"""What DPIS's run records hold, cell by cell: Table 3 and the ablation cells (Tables 4-7), the
competitors, gains, run costs and sigma_G trajectories that :func:`~.answers.measure` and the chapter read.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.record import Record

from .runs import (
    ABLATION_A_E,
    ABLATION_C_STAR,
    ABLATION_EPSILON,
    ABLATION_K,
    DECAY_PROBE,
    PAPER_EPSILONS,
    RAW_METHODS,
    RAW_VARIANTS,
    configs,
)
from .settings import ACCOUNTANT, DATASETS, PAPER, _n_train, _s


def _eps_key(epsilon: float) -> str:
    return f"eps{epsilon:g}".replace(".", "_")


def table3_cells() -> dict[str, str]:
    """Table 3 claim id -> the paper-profile experiment that answers it."""
    out = {}
    for data, names in PAPER_EPSILONS.items():
        for name in names:
            eps = _s(name)
            for tag in ("dpis", "dpsgd_hf", *RAW_METHODS):
                out[f"dpis.table3.{DATASETS[data]}.{_eps_key(eps)}.{tag}"] = f"{DATASETS[data]}.eps{eps:g}.{tag}"
    return out


def _key(value: float) -> str:
    return f"{value:g}".replace(".", "_")


def ablation_cells() -> dict[str, str]:
    """Tables 4-7's MNIST and Fashion-MNIST cells that a paper-profile run answers -> its
    experiment (a Table 2 default is the CPU part's eps-1 DPIS run, or Table 4's DPIS+AC run)."""
    eps = _s(ABLATION_EPSILON)
    out = {}
    for data in ("mnist", "fashion-mnist"):
        d = DATASETS[data]
        base, ac = f"{d}.eps{eps:g}.dpis", f"{d}.eps{eps:g}.dpis_ac"
        out[f"dpis.table4.{d}.{_eps_key(eps)}.dpis_no_ac"] = base
        out[f"dpis.table4.{d}.{_eps_key(eps)}.dpis_ac"] = ac
        for a in ABLATION_A_E:
            out[f"dpis.table5.{d}.a_e{_key(a)}"] = base if a == _s(f"table2.{d}.a_e") else f"{base}.a_e{a:g}"
        for k in ABLATION_K:
            out[f"dpis.table6.{d}.k{k:g}"] = base if k == _s(f"table2.{d}.k") else f"{base}.k{k:g}"
        for c in ABLATION_C_STAR:
            out[f"dpis.table7.{d}.c_star{c:g}"] = ac if c == _s("setup.c_star_over_c1") else f"{ac}.c_star{c:g}"
    for data, names in PAPER_EPSILONS.items():  # Table 4's DPIS\AC at the CPU part's other budget
        for name in names:
            e = _s(name)
            cid = f"dpis.table4.{DATASETS[data]}.{_eps_key(e)}.dpis_no_ac"
            if e != eps and cid in {c.id for c in claims.load(PAPER)}:
                out[cid] = f"{DATASETS[data]}.eps{e:g}.dpis"
    return out


def _runs_of(paper: dict, experiments: dict[str, str]) -> dict[str, list[dict]] | None:
    """``label -> runs`` of each experiment, or None while any has no record."""
    out = {label: paper.get(e, []) for label, e in experiments.items()}
    return out if all(out.values()) else None


def _mean_acc(runs: list[dict]) -> float:
    return float(np.mean([Record.of(r).accuracy() for r in runs]))


_COMPETITORS = ("dpsgd_hf", *RAW_METHODS)


def table3_methods(paper: dict) -> dict[str, dict[str, float]] | None:
    """``cell -> {method tag: mean test accuracy (%)}`` over every Table 3 cell we run (DPIS,
    DP-SGD-HF and the raw-pixel baselines), each mean over the seeds that every method of the
    cell has (paired); None while any cell lacks a run of some method."""
    by_cell: dict[str, dict[str, list[dict]]] = {}
    for experiment in table3_cells().values():
        cell, tag = experiment.rsplit(".", 1)
        by_cell.setdefault(cell, {})[tag] = paper.get(experiment, [])
    out = {}
    for cell, tags in by_cell.items():
        seeds = set.intersection(*({Record.of(r).seed for r in runs} for runs in tags.values()))
        if not seeds:
            return None
        out[cell] = {t: _mean_acc([r for r in runs if Record.of(r).seed in seeds]) for t, runs in tags.items()}
    return out


def gains(records: list[dict]) -> list[dict]:
    """DPIS - DP-SGD-HF per Table 3 budget we run: the paper's (its two printed cells) and ours,
    paired by seed over the seeds both methods have (rows only where both have a record)."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    cells = {e: cid for cid, e in table3_cells().items()}
    out = []
    for experiment in (e for e in cells if e.endswith(".dpis")):
        base = experiment[:-len("dpis")] + "dpsgd_hf"
        ours = {r.seed: r.accuracy() for r in map(Record.of, paper.get(experiment, []))}
        hf = {r.seed: r.accuracy() for r in map(Record.of, paper.get(base, []))}
        seeds = sorted(set(ours) & set(hf))
        if not seeds:
            continue
        per_seed = [ours[s] - hf[s] for s in seeds]
        out.append({"cell": experiment[:-len(".dpis")],
                    "paper_gain": claims.get(cells[experiment]).number - claims.get(cells[base]).number,
                    "ours_gain": float(np.mean(per_seed)), "ours_sd": float(np.std(per_seed, ddof=1)) if len(seeds) > 1
                    else None, "seeds": len(seeds), "per_seed": per_seed})
    return out


def run_costs(records: list[dict]) -> list[dict]:
    """Per Table 3 DPIS run: per-example gradients per epoch over N (the norm pass over every
    record plus one per first-stage draw: (k+1)N in expectation, Sec. 3.4 says "k times"), the
    capped first-stage draws and the least margin K~ - k b C over the run (Lemma 3.1's
    precondition), and the wall time per epoch against DP-SGD-HF's at the same budget and seed
    when both ran on the same device."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    out = []
    for experiment in (e for e in table3_cells().values() if e.endswith(".dpis")):
        hf = {r.seed: r for r in map(Record.of, paper.get(experiment[:-len("dpis")] + "dpsgd_hf", []))}
        for r in map(Record.of, paper.get(experiment, [])):
            n = _n_train(DATASETS[r.dataset])
            wall = float(np.mean(r.series("wall_s")))
            base = hf.get(r.seed)
            same = base is not None and set(r.devices) == set(base.devices)
            out.append({"run": experiment, "seed": r.seed, "k": r.method_config["k"],
                        "grads_per_epoch_over_n": float(np.mean([(n + d) / n for d in r.series("dpis_drawn")])),
                        "capped_draws": sum(r.series("dpis_capped_draws")),
                        "capped_epochs": [e["epoch"] for e in r.epochs if e["dpis_capped_draws"]],
                        "epochs": len(r.epochs), "epsilon": r.epsilon(ACCOUNTANT),
                        "budget": r.method_config["epsilon"],
                        "min_margin": min(r.series("dpis_min_margin")),
                        "wall_per_epoch_vs_hf": wall / float(np.mean(base.series("wall_s"))) if same else None})
    return out


def repeated_cells() -> list[dict]:
    """Table cells that print the same setting twice (Table 3's eps-1 DPIS, Table 4's DPIS\\AC,
    Table 5's and 6's Table 2 defaults, Table 7's C* = 4 and Table 4's DPIS+AC): the paper's values
    per setting, flagged where they differ."""
    groups: dict[str, list[str]] = {}
    for cid, experiment in {**table3_cells(), **ablation_cells()}.items():
        groups.setdefault(experiment, []).append(cid)
    return [{"setting": e, "cells": {c: claims.get(c).number for c in cids},
             "differ": len({claims.get(c).number for c in cids}) > 1} for e, cids in groups.items() if len(cids) > 1]


def features_share() -> list[dict]:
    """Table 3's printed accuracies: how much of DPIS's gain over raw-pixel DP-SGD the
    ScatterNet features alone (DP-SGD-HF) already give, per data set and eps."""
    out = []
    for cid in (c.id for c in claims.load(PAPER)):
        parts = cid.split(".")
        if parts[1] != "table3" or parts[-1] != "dpis" or parts[2] not in DATASETS.values():
            continue
        stem = cid[:-len("dpis")]
        dpis, hf, raw = (claims.get(stem + m).number for m in ("dpis", "dpsgd_hf", "dpsgd"))
        out.append({"dataset": parts[2], "eps": parts[3], "dpis": dpis, "dpsgd_hf": hf, "dpsgd": raw,
                    "features_share": (hf - raw) / (dpis - raw)})
    return out


def raw_gaps(records: list[dict]) -> list[dict]:
    """Per Table 3 cell we run: DPIS's and DP-SGD-HF's accuracy above raw-pixel DP-SGD's, the
    paper's (printed cells) and ours (mean over seeds), and the share of DPIS's gap that the
    features alone (DP-SGD-HF) give in each."""
    from dpnotes.experiments import current

    acc = table3_methods(current(records, configs("paper")))
    out = []
    for cell, ours in (acc or {}).items():
        name, eps = cell.split(".")
        paper = {m: claims.get(f"dpis.table3.{name}.{_eps_key(float(eps[3:]))}.{m}").number
                 for m in ("dpis", "dpsgd_hf", "dpsgd")}
        row = {"cell": cell}
        for who, a in (("paper", paper), ("ours", ours)):
            row[f"{who}: DPIS - DP-SGD"] = a["dpis"] - a["dpsgd"]
            row[f"{who}: HF - DP-SGD"] = a["dpsgd_hf"] - a["dpsgd"]
            row[f"{who}: features share"] = (a["dpsgd_hf"] - a["dpsgd"]) / (a["dpis"] - a["dpsgd"])
        out.append(row)
    return out


def decay_activation(records: list[dict]) -> list[dict]:
    """Per Table 3 cell we run: the paper's DP-SGD-Decay against its DP-SGD-TS and DP-SGD, and
    ours with ReLU (the Table 3 cell) and with tanh (the probe), each minus our DP-SGD and TS
    (seed 0; rows only where every run is stored)."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    out = []
    for data, names in PAPER_EPSILONS.items():
        for name in names:
            eps, d = _s(name), DATASETS[data]
            stem = f"{d}.eps{eps:g}."
            ours = {t: paper.get(stem + t, []) for t in RAW_VARIANTS}
            if not all(ours.values()):
                continue
            acc = {t: _mean_acc([r for r in rs if Record.of(r).seed == 0]) for t, rs in ours.items()}
            printed = {t: claims.get(f"dpis.table3.{d}.{_eps_key(eps)}.{t}").number for t in RAW_METHODS}
            out.append({"cell": stem[:-1],
                        "paper: Decay - DP-SGD": printed["dpsgd_decay"] - printed["dpsgd"],
                        "paper: Decay - TS": printed["dpsgd_decay"] - printed["dpsgd_ts"],
                        "ours ReLU: Decay - DP-SGD": acc["dpsgd_decay"] - acc["dpsgd"],
                        "ours tanh: Decay - TS": acc[DECAY_PROBE] - acc["dpsgd_ts"],
                        "ours ReLU Decay": acc["dpsgd_decay"], "ours tanh Decay": acc[DECAY_PROBE],
                        "paper Decay": printed["dpsgd_decay"]})
    return out


def ac_release_rdp(records: list[dict]) -> list[dict]:
    """Per stored DPIS+AC run of the paper profile: the RDP its E - 1 releases of K~*_e add at the
    order that sets the run's eps, under two of the paper's readings of K~*_e: the sum over all N
    records (Alg. 1 line 35; ours: a Gaussian of multiplier sigma_K, no amplification) and Eq. 19's
    b/N~-subsampled Gaussian (Sec. 3.5's "tuples in X_p")."""
    from dpnotes.accounting.rdp import subsampled_gaussian_rdp
    from dpnotes.experiments import current

    out = []
    for experiment, runs in current(records, configs("paper")).items():
        for r in map(Record.of, runs):
            mc = r.method_config
            if not mc.get("adaptive_clipping"):
                continue
            n, b = _n_train(DATASETS[r.dataset]), r.train["batch_size"]
            order = r.epsilon_entry(ACCOUNTANT)["order"]
            releases = r.train["epochs"] - 1
            full, sub = (float(subsampled_gaussian_rdp(q, mc["sigma_k"], releases, [order])[0]) for q in (1.0, b / n))
            out.append({"run": experiment, "seed": r.seed, "releases": releases, "order": order,
                        "rdp_full_sum": full, "rdp_subsampled": sub,
                        "epsilon": r.epsilon(ACCOUNTANT)})
    return out


def sigma_trajectories(records: list[dict]) -> dict[str, list[float]]:
    """sigma_G per epoch of each stored paper-profile DPIS run of Table 3 (experiment -> values;
    the mean over seeds where there are several)."""
    from dpnotes.experiments import current

    paper = current(records, configs("paper"))
    out = {}
    for experiment in table3_cells().values():
        runs = [r for r in map(Record.of, paper.get(experiment, [])) if r.method == "dpis"]
        if runs:
            out[experiment] = [float(np.mean(v)) for v in zip(*[r.series("dpis_sigma_g") for r in runs])]
    return out
