"""The DPIS chapter's figures: the sampling probabilities, the sigma_G schedule, the training curves
and sigma_G along training, on matplotlib axes.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.experiments import dpis as X
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note

from .cells import Figure1, cell_name, n_train, training_points


def sampling_figure():
    """How DPIS samples on MNIST: a record's probability of entering a batch against its clipped norm."""
    import matplotlib.pyplot as plt

    b, n, k = X.TRAMER_BONEH["mnist"]["batch_size"], n_train("mnist"), claims.setting("dpis.table2.mnist.k")
    g = np.linspace(0, 1, 201)  # clipped norm / C
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    ax.axhline(b / n, color="k", ls="--", label=f"DP-SGD: b/N = {b / n:.4f}")
    for r in (1.0, 0.5, 0.2, 0.1):
        ax.plot(g, b * g / (r * n), label=f"DPIS, r = {r:g}")
    r_min = k * b / n
    ax.plot(g, b * g / (r_min * n), ":", color="gray", label=f"r = k b/N = {r_min:.3f}: the first stage reaches 1 at "
                                                             "g = C")
    ax.set(xlabel="clipped gradient norm / C", ylabel="probability of entering a step's batch", yscale="log",
           ylim=(1e-4, 1))
    ax.legend(loc="lower right")
    return tables.figure(
        fig, number="Ours (Section 3 illustrated)",
        caption=f"How DPIS samples on MNIST (b = {b}, N = {n:,}, k = {k:g}): the probability that a record enters a "
                "step's batch against its clipped gradient norm, for DP-SGD and for DPIS at four ratios r of the mean "
                "clipped norm to C.",
        alt="Log-scale line plot: a flat dashed line for DP-SGD and rising lines for DPIS at r = 1, 0.5, 0.2 and 0.1, "
            "the probability growing with the clipped gradient norm.")


def schedule_figure(fig1: Figure1):
    """Section 4.2's sigma_G per epoch on Fashion-MNIST at eps 4 (Figure 1c's setting, ours)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    epochs = np.arange(1, X.FIG1C_EPOCHS + 1)
    ax.axhline(fig1.schedules["dpsgd"], color="k", ls="--", label="DP-SGD")
    for (a_e, r), s in fig1.schedules["dpis"].items():
        ax.plot(epochs, s, marker=".", ls="-" if a_e < 1 else ":", label=f"DPIS, $a_E$ = {a_e:g}, r = {r:g}")
    ax.set(xlabel="epoch", ylabel="noise multiplier σ_G", title="Fashion-MNIST, ε = 4")
    ax.legend()
    return tables.figure(
        fig, number="Figure 1c (paper) / ours",
        caption=f"The noise multiplier σ_G per epoch that Section 4.2's schedule picks on Fashion-MNIST at ε = 4, "
                f"b = {fig1.b} and {X.FIG1C_EPOCHS} epochs (both ours: the paper prints neither), for two epoch "
                "dividers a_E and two constant ratios r, against DP-SGD's constant σ.",
        alt="Line plot of the noise multiplier against the epoch: a dashed horizontal line for DP-SGD and four DPIS "
            "schedules that stay below it and fall towards the end.")


def training_figure(stored: list[dict]) -> Finding:
    """Our paper-profile runs against Tables 3-7, cell by cell (one dot per seed)."""
    import matplotlib.pyplot as plt

    df = training_points(stored)
    if df.empty:
        return note("no paper-profile training run stored (`dpnotes run dpis --profile paper`)", df)
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 10))
    for ax, d in zip(axes, ("mnist", "fmnist")):
        sub = df[df.claim.str.contains(f".{d}.", regex=False)]
        labels = list(dict.fromkeys(sub.claim))
        pos = {c: i for i, c in enumerate(labels)}
        ax.plot([pos[c] for c in labels], [claims.get(c).number for c in labels], "x", color="k", ms=8, label="paper")
        ax.plot(sub.claim.map(pos), sub.ours, "o", color="C0", ms=4, alpha=0.8, label="ours (one dot per seed)")
        ax.set_xticks(range(len(labels)), [cell_name(c) for c in labels], rotation=70, ha="right")
        ax.set(ylabel="test accuracy (%)", title="MNIST" if d == "mnist" else "Fashion-MNIST")
        ax.legend()
    fig.tight_layout()
    return Finding("", df, (tables.figure(
        fig, number="Tables 3-7 (paper) / ours",
        caption="Test accuracy of our paper-profile runs (one dot per seed) against the paper's value (cross), cell by "
                "cell: Table 3's DPIS and DP-SGD-HF cells and the ablations of Tables 4-7 at ε = 1, MNIST above, "
                "Fashion-MNIST below.",
        alt="Two dot plots, MNIST and Fashion-MNIST, of test accuracy per table cell, crosses for the paper and dots "
            "for our seeds."),))


def sigma_figure(stored: list[dict]) -> Finding:
    """sigma_G per epoch of our Table 3 DPIS runs (mean over seeds)."""
    import matplotlib.pyplot as plt

    traj = X.sigma_trajectories(stored)
    if not traj:
        return note("no Table 3 DPIS run stored", traj)
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for e, s in traj.items():
        ax.plot(range(1, len(s) + 1), s, marker=".", label=e.replace("table3.", "").replace("fmnist", "Fashion-MNIST")
                .replace("mnist", "MNIST").replace(".eps", ", ε ").replace(".dpis", ""))
    ax.set(xlabel="epoch", ylabel="noise multiplier σ_G")
    ax.legend()
    return Finding("", traj, (tables.figure(
        fig, number="Figure 1 (paper) / ours, from runs",
        caption="The noise multiplier σ_G per epoch of our Table 3 DPIS runs (mean over seeds): what Figure 1 plots "
                "and Section 4.2's noise drop measures.",
        alt="Line plot of the noise multiplier against the epoch for four DPIS runs, MNIST and Fashion-MNIST at two "
            "budgets each, all falling as training proceeds."),))
