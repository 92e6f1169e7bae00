"""The LabelDP chapter's figures: the mechanisms' P[correct] over eps and Table 4's accuracies, on
matplotlib axes.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.experiments import labeldp as X
from dpnotes.report import tables

from .cells import dataset_name, eps_name, table4_cells, table4_points


def mechanism_figure(curves: dict):
    """The probability of answering correctly against eps, and the k* RRWithPrior picks."""
    import matplotlib.pyplot as plt

    eps = np.array(X.FIGURE_EPSILONS)
    fig, (ax, axk) = plt.subplots(2, 1, figsize=(7.5, 7), sharex=True, gridspec_kw={"height_ratios": [3, 1.3]})
    for (name, c), color in zip(curves.items(), ("C0", "C1", "C2")):
        ax.plot(eps, c["rr_with_prior"], color=color, label=f"RRWithPrior, {name} prior")
        ax.plot(eps, c["lp"], "o", color=color, ms=3, label=f"LP1 optimum, {name} prior")
        axk.step(eps, c["k_star"], where="mid", color=color)
    ax.plot(eps, curves["uniform"]["rr"], "k--", lw=1, label="RR (any prior)")
    ax.set(ylabel="P[output = true label]", title="K = 10: probability of answering correctly")
    ax.legend()
    axk.set(xlabel="label privacy budget ε", ylabel="k*", yticks=range(1, 11, 3))
    fig.tight_layout()
    return tables.figure(
        fig, number="Ours (Algorithms 1-2, Theorem 3)",
        caption="For K = 10 classes and three priors: the probability that RR, RRWithPrior (lines) and the optimum of "
                "the linear program LP1 (dots) output the true label, against ε; below, the k* that RRWithPrior picks.",
        alt="Line plot of the probability of a correct label against epsilon: RRWithPrior's lines pass through the LP "
            "optimum's dots and lie above the dashed RR line; a step plot below shows k* growing with epsilon.")


def table4_figure(stored: list[dict]):
    """Table 4's LP-1ST and LP-2ST cells: the paper's value against each of our seeds."""
    import matplotlib.pyplot as plt

    paper_cells = {(e.split(".")[1], int(e.split(".")[2][3]), eps): claims.get(cid).number
                   for cid, e, eps in table4_cells()}
    ours = table4_points(stored)
    fig, axes = plt.subplots(2, 1, figsize=(7.5, 7.5), sharey=False)
    for ax, short in zip(axes, ("mnist", "fmnist")):
        xs = list(range(len(X.TABLE4_EPSILONS)))
        for stages, color in ((1, "C0"), (2, "C1")):
            for j, eps in enumerate(X.TABLE4_EPSILONS):
                if (short, stages, eps) not in paper_cells:
                    continue
                off = (stages - 1.5) * 0.15
                ax.plot(j + off, paper_cells[(short, stages, eps)], "x", color=color, ms=8)
                for acc in ours[(short, stages, eps)]:
                    ax.plot(j + off, acc, "o", color=color, ms=4, alpha=0.8)
            ax.plot([], [], "o", color=color, label=f"LP-{stages}ST ours (one dot per seed)")
            ax.plot([], [], "x", color=color, label=f"LP-{stages}ST paper")
        ax.set(xticks=xs, xticklabels=[eps_name(e) for e in X.TABLE4_EPSILONS],
               xlabel="label privacy budget ε (header inferred)", ylabel="test accuracy (%)",
               title=dataset_name(short))
        ax.legend(fontsize=9, ncols=2)
    fig.tight_layout()
    return tables.figure(
        fig, number="Table 4 (paper) / ours",
        caption="Test accuracy of LP-1ST and LP-2ST against the label ε (column headers inferred), MNIST above and "
                "Fashion-MNIST below: the paper's value as a cross, each of our seeds as a dot; ours use a small CNN "
                "in place of the paper's Inception network.",
        alt="Two dot plots of test accuracy per label epsilon for LP-1ST and LP-2ST, crosses for the paper and dots "
            "for our seeds.")
