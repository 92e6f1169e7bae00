"""The GDP chapter's figures: Figure 2's and Figure 3's trade-off curves, Appendix A's and Figure 4's
accuracy against eps, each drawn on matplotlib axes.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders
from dpnotes.accounting.tradeoff import envelope_tradeoff, epsdelta_tradeoff, gaussian_tradeoff
from dpnotes.experiments import gdp
from dpnotes.record import Record
from dpnotes.report import labels

from .tables import _runs


def figure2(ax) -> None:
    """eps against epochs by the CLT (solid) and the moments accountant (dashed) at each
    Table 1 noise level (q = 256/60000, delta 1e-5). The paper's Figure 2 caption is lost in
    the extracted text; this is our rendering of the comparison it makes."""
    for (sigma, (clt, ma)), color in zip(gdp.figure2_curves().items(), _colors()):
        ax.plot(gdp.FIGURE2_EPOCHS, clt, color=color, label=f"CLT, sigma {sigma:g}")
        ax.plot(gdp.FIGURE2_EPOCHS, ma, color=color, ls="--", label=f"MA, sigma {sigma:g}")
    ax.set(xlabel="epochs", ylabel="eps (delta = 1e-5)", yscale="log",
           title="CLT (solid) vs moments accountant (dashed)")
    ax.legend(fontsize=7, ncol=2)


def _colors():
    import matplotlib.pyplot as plt

    return plt.rcParams["axes.prop_cycle"].by_key()["color"]


MA_ENVELOPE_DELTAS = np.geomspace(1e-12, 0.5, 60)


def figure3(axes) -> None:
    """Figure 3: for each Table 1 model (``axes``: six axes), G_mu of the CLT against the
    trade-off function of the moments accountant's (eps, 1e-5) and the envelope of its whole
    (eps, delta) curve (the paper's middle row)."""
    axes = np.ravel(axes)
    if axes.size != 6:
        raise ValueError(f"axes must hold six axes (one per Table 1 row), got {axes.size}")
    a = gdp.ALPHA
    for i, ax in enumerate(axes, start=1):
        m = gdp.mechanism(f"table1.row{i}")
        rdp, orders = m.steps * gdp.rdp_per_step(m.q, m.sigma), resolve_orders(gdp.MA_ORDERS)
        eps = [rdp_to_epsilon(rdp, orders, d)[0] for d in MA_ENVELOPE_DELTAS]
        ax.plot(a, gaussian_tradeoff(m.mu, a), color="C0", label="CLT: G_μ")
        ax.plot(a, epsdelta_tradeoff(m.eps_ma, m.delta, a), color="C1", ls="--", label="MA at (ε, 1e-5)")
        ax.plot(a, envelope_tradeoff(eps, MA_ENVELOPE_DELTAS, a), color="C2", ls=":", lw=2,
                label="MA, all (ε, δ)")
        ax.plot(a, 1 - a, color="grey", lw=0.5)
        ax.set(title=f"row {i}: μ {m.mu:.2f}, ε {m.eps_ma:.2f}", xlabel="type I error", ylabel="type II error",
               aspect="equal")
    # one legend for the six panels (the same three curves in each), over them
    axes[0].figure.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncols=3,
                          bbox_to_anchor=(0.5, 1.0), frameon=False)


def appendix_a(ax) -> None:
    """Appendix A figure: the composed trade-off at T = 234 (p enlarged) against G_mu of
    Table 1 row 2; beyond the paper, the composition at the real T (14,063 steps)."""
    c = gdp.appendix_a_curves()
    ax.plot(c["alpha"], c["clt"], color="red", label="CLT limit G_mu")
    ax.plot(c["alpha"], c["numeric"], color="blue", ls="--", label="numerical, T = 234")
    ax.plot(c["alpha"], c["numeric_full"], color="black", ls=":", label="numerical, T of row 2 (ours)")
    ax.set(xlabel="type I error", ylabel="type II error", aspect="equal",
           title="Composition of (p G_1/sigma + (1-p) Id) vs its CLT limit")
    ax.legend(fontsize=8)


def figure4(axes, records: list[dict], profile: str = "quick") -> str:
    """Figure 4: test accuracy (left) and eps at delta 1e-5 (right) against epochs, for the
    top pair (sigma 1.3 vs sigma~) and the bottom pair (0.7 vs sigma~) of runs. Uses the
    paper-profile records where present, else the (scaled-down) ``profile`` ones; returns
    which were used. ``axes``: a 2 x 2 array."""
    axes = np.asarray(axes)
    if axes.shape != (2, 2):
        raise ValueError(f"axes must be a 2 x 2 array, got shape {axes.shape}")
    paper, scaled = _runs(records, "paper"), _runs(records, profile)
    used = []
    for row, part in enumerate(("top", "bottom")):
        for acc, style in (("ma", "--"), ("clt", "-")):
            name = f"figure4.{part}.{acc}"
            runs, source = (paper[name], "paper") if name in paper else (scaled.get(name, []), profile)
            m = gdp.mechanism(name)
            label = f"{'MA' if acc == 'ma' else 'CLT'}, sigma {m.sigma:.3g}"
            if runs:
                used.append(f"{labels.name(name)} at the {source} profile")
                epochs = Record.of(runs[0]).series("epoch")
                acc_curve = np.mean([[gdp.accuracy(r, e) for e in Record.of(r).epochs] for r in runs], axis=0)
                axes[row, 0].plot(epochs, acc_curve, ls=style, label=f"{label} ({source})")
            per_epoch = m.steps / claims.setting(f"gdp.figure4.{part}.epochs")
            grid = np.arange(1, claims.setting(f"gdp.figure4.{part}.epochs") + 1)
            eps = (gdp.ma_epsilons(m.q, m.sigma, grid * per_epoch, m.delta) if acc == "ma" else
                   [epsilon_from_mu(mu_poisson(m.q, m.sigma, t), m.delta) for t in grid * per_epoch])
            axes[row, 1].plot(grid, eps, ls=style, label=label)
        axes[row, 0].set(xlabel="epochs", ylabel="test accuracy %", title=f"{part}: accuracy")
        axes[row, 1].set(xlabel="epochs", ylabel="eps (delta = 1e-5)", title=f"{part}: privacy spent")
        for ax in axes[row]:
            ax.legend(fontsize=7)
    return "; ".join(used) or "no runs"
