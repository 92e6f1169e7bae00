"""The DPlis chapter's figures: Figure 2's toy, the gains over No and Table 9's sharpness, on
matplotlib axes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import dplis as X
from dpnotes.experiments.dplis import toy as dplis_toy
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note

from .cells import _paper_sharpness, _table9_runs
from .tables import first_column_gains


# Figure 2's toy and the accounting.
def toy_figure():
    """Figure 2's toy: where 100 runs of DP-SGD and of DPlis end, and the final loss of 1,000 runs each."""
    import matplotlib.pyplot as plt
    import torch

    lr, smooth = 2.0, 3.0
    xs, ys = torch.linspace(-9, 9, 181, dtype=torch.float64), torch.linspace(-5, 5, 101, dtype=torch.float64)
    surface = dplis_toy.loss(torch.stack(torch.meshgrid(xs, ys, indexing="xy"), -1))
    fig, ax_ = plt.subplot_mosaic("AB;CC", figsize=(7.5, 6.4))
    axes = [ax_["A"], ax_["B"], ax_["C"]]
    ends = {}
    for ax, s, title in ((axes[0], 0.0, "DP-SGD"), (axes[1], smooth, f"DPlis, sigma_smooth {smooth:g}")):
        ends[title] = dplis_toy.dpsgd(lr, s)
        ax.contourf(xs, ys, surface, levels=20, cmap="viridis")
        ax.scatter(*ends[title][:100].T, s=6, c="white")
        ax.set(title=f"{title}: 100 end points", xlabel="first weight θ₁", ylabel="second weight θ₂")
    bins = np.linspace(0, 0.7, 36)
    for title, theta in ends.items():
        axes[2].hist(dplis_toy.loss(theta).numpy(), bins=bins, alpha=0.6, label=title)
    axes[2].set(yscale="log", xlabel="final loss (Eq. 1)", ylabel="runs (of 1,000)", title="loss at the end")
    axes[2].legend()
    fig.tight_layout()
    return tables.figure(
        fig, number="Figure 2 (paper) / ours",
        caption=f"The toy loss of Eq. 1 with a flat minimum (left) and a sharp one (right): where 100 runs of DP-SGD "
                f"and of DPlis (σ_smooth {smooth:g}, learning rate {lr:g}) end, on the loss landscape, and the final "
                "loss of 1,000 runs each (log scale).",
        alt="Two contour maps of a two-dimensional loss with white dots where runs end, DP-SGD left and DPlis right, "
            "and below them overlaid histograms of the final loss of 1,000 runs of each method on a log scale.")


def gains_figure(stored: list[dict]) -> Finding:
    """Tables 2 and 11's gains at the first eps column, the paper's against ours (nothing while none is stored)."""
    import matplotlib.pyplot as plt

    df = first_column_gains(stored)
    if df.empty:
        return Finding("", df)
    fig, ax = plt.subplots(figsize=(7.5, 0.4 * len(df) + 1.2))
    y = np.arange(len(df))
    ax.axvline(0, color="gray", lw=1)
    ax.plot(df.paper, y, "x", color="k", ms=8, label="paper (one run)")
    ax.plot(df.ours, y, "o", color="C0", label="ours (mean over paired seeds)")
    ax.set_yticks(y, [f"{c} ({n} seed{'s' * (n > 1)})" for c, n in zip(df.cell, df.seeds)])
    ax.set(xlabel="gain over DP-SGD (No), accuracy points", ylabel="model and radius")
    ax.legend(loc="lower right")
    fig.tight_layout()
    return Finding("", df, (tables.figure(
        fig, number="Tables 2 and 11 (paper) / ours: gains at the first ε column",
        caption="The gain of DPlis over DP-SGD (No) in test accuracy at the first ε column: the paper's (one run) "
                "against ours: the mean over the seeds stored for both arms (each seed's arms see the same batches "
                "and noise: paired differences); each gain's interval and verdict are in the claims table.",
        alt="Dot plot: for each model and radius, the paper's gain as a cross and ours as a dot on an axis of accuracy "
            "points around zero."),))


def table9_figure(stored: list[dict]) -> Finding:
    """Table 9's sharpness, ours against the paper's, and Figure 6's loss slices of our models."""
    import matplotlib.pyplot as plt

    t9 = _table9_runs(stored)
    if not t9:
        return note("no Table 9 run stored (`dpnotes run dplis --profile paper --only 'table9.*'`)", t9)
    rows = []
    for row, arm, r in t9:
        sharp = r.metric("analysis")["sharpness"]
        rows.append({"row": row, "arm": arm, "paper": _paper_sharpness(row, arm).number, "ours": sharp["sharpness"],
                     "ours, gradient-sign corner": sharp.get("corner_sharpness"), "loss at theta": sharp["loss"],
                     "L-BFGS-B evaluations": sharp["evaluations"]})
    table = tables.table(pd.DataFrame(rows), decimals=4, title="Table 9 (paper) / ours: sharpness")
    shown = sorted({row for row, _, _ in t9}, key=X.TABLE9_ROWS.index)
    fig, axes = plt.subplots((len(shown) + 1) // 2, 2, figsize=(7.5, 3 * ((len(shown) + 1) // 2)), squeeze=False)
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    for ax, row in zip(axes.flat, shown):
        for row_, arm, r in t9:
            if row_ == row:
                sl = r.metric("analysis")["slice"]
                ax.plot(sl["alpha"], sl["loss"], marker=".", label="No" if arm == "no" else "R = 10")
        ax.set(title=row.replace("_", " "), xlabel="step along the direction, α", ylabel="test loss")
        ax.legend()
    fig.tight_layout()
    return Finding("", rows, (table, tables.figure(
        fig, number="Figure 6 (paper) / ours",
        caption="Test loss along one filter-normalised random direction θ + α d around our models of the first ε "
                "column, without smoothing (No) and with R = 10.",
        alt="Line plots, one per model, of the test loss against the step α from -0.8 to 0.8 for the unsmoothed and "
            "the smoothed model.")))
