"""The SA-DPSGD chapter's figures: eps against steps at each acceptance rate, the acceptance over
training and Figure 3, on matplotlib axes or as charts.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import sadpsgd as sa
from dpnotes.record import Record
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note

from .tables import RATES, _dataset_of, sa_runs


def figure(axes, records=()) -> None:
    """eps against accepted steps: Theorem 1 (accepted only) and Theorem 1's formula over all
    candidates at several acceptance rates, one panel per dataset, up to tau at the budget;
    with ``records``, each measured SA-DPSGD run's own sound eps (every candidate) on top."""
    runs = sa_runs(list(records))
    for ax, ds in zip(axes, sa.DATASETS):
        for r in (r for r in runs if _dataset_of(r) == ds):
            points = sa.curve(r)[::max(1, len(sa.curve(r)) // 60)] + sa.curve(r)[-1:]
            ax.plot([p["accepted_steps"] for p in points],
                    [sa.eps_all(ds, p["accepted_steps"], p["step"] - p["accepted_steps"]) for p in points],
                    color="tab:purple", lw=2.5, label=f"our run, seed {Record.of(r).seed}: all candidates")
        s, tau = sa.setting(ds), sa.tau_at(ds)
        accepted = np.unique(np.linspace(1, tau, 40).round())
        ax.plot(accepted, [sa.eps_paper(ds, t) for t in accepted], "k-", lw=2.5,
                label="Theorem 1 (accepted only)")
        rates = RATES[1:] + (1 / (s["mu0"] + 1),)
        for rate in rates:
            worst = " = 1/(mu0+1): worst case" if rate == rates[-1] else ""
            ax.plot(accepted, [sa.eps_all(ds, t, t / rate - t) for t in accepted], "--",
                    label=f"all candidates, acceptance {rate:.2f}{worst}")
        ax.axhline(s["epsilon"], color="grey", lw=0.8)
        ax.set(title=f"{ds}: q = {s['q']:.4f}, sigma = {s['sigma']}", xlabel="accepted steps tau",
               ylabel="eps (delta = 1e-5)")
        ax.legend(fontsize=7)


def acceptance_figure(axes, records: list[dict], window: int = 200) -> None:
    """Per dataset: the acceptance rate over the last ``window`` candidates and the share of
    them accepted uphill by Eq. 3's draw and by force, against accepted steps tau."""
    runs = sa_runs(records)
    for ax, ds in zip(axes, sa.DATASETS):
        mine = [r for r in runs if _dataset_of(r) == ds]
        for r in mine:
            decided = sa.decisions(r)
            if len(decided) < window:
                continue
            taus = np.array([d["tau"] for d in decided])
            kinds = np.array([d["kind"] for d in decided])
            kernel = np.ones(window) / window

            def share(mask):
                return np.convolve(mask.astype(float), kernel, mode="valid")

            x = taus[window - 1:]
            seed = Record.of(r).seed
            ax.plot(x, share(kinds != "rejected"), label=f"accepted, seed {seed}")
            ax.plot(x, share(kinds == "uphill"), label=f"uphill by Eq. 3, seed {seed}")
            ax.plot(x, share(kinds == "forced"), label=f"forced, seed {seed}")
        ax.set(title=f"{ds}" + ("" if mine else ": not run"), xlabel="accepted steps tau",
               ylabel=f"share of the last {window} candidates", ylim=(0, 1.02))
        if mine:
            ax.legend(fontsize=7)


FIG3_SCHEMES = {"d": "DP-SGD", "h": "DP-SGD, tanh", "a": "DP-SGD, AUTO-S", "s": "SA-DPSGD"}


def figure3(axes, records: list[dict], points: int = 80) -> list[str]:
    """Figure 3 of the paper from our runs: per dataset with Table 3 runs stored (a row of
    ``axes``), test loss (left) and test accuracy in % (right) against eps under Theorem 1's
    accounting (the paper's; a baseline accepts every step), for the four schemes of Table 3,
    one line per seed, at most ``points`` points each. Returns the datasets drawn."""
    from dpnotes.experiments import current

    paper = current([r for r in records if Record.of(r).profile == "paper"], sa.configs("paper"))
    drawn = [ds for ds in sa.DATASETS if all(paper.get(sa.table3_run(ds, k)) for k in sa.TABLE3_SCHEME)]
    for (ax_loss, ax_acc), ds in zip(axes, drawn):
        for colour, (key, label) in zip(("C0", "C1", "C2", "C3"), FIG3_SCHEMES.items()):
            for n, r in enumerate(sorted(paper[sa.table3_run(ds, key)], key=lambda r: Record.of(r).seed)):
                curve = sa.curve(r)
                shown = curve[::max(1, len(curve) // points)] + curve[-1:]
                eps = [sa.eps_paper(ds, p["accepted_steps"]) for p in shown]
                kw = {"color": colour, "lw": 1.5, "alpha": 1.0 if n == 0 else 0.5,
                      "label": label if n == 0 else None}
                ax_loss.plot(eps, [p["test_loss"] for p in shown], **kw)
                ax_acc.plot(eps, [100 * p["test_acc"] for p in shown], **kw)
        name = sa.READER_NAMES[ds]
        ax_loss.set(title=f"{name}: test loss", xlabel="ε, Theorem 1 (accepted steps)", ylabel="test loss")
        ax_acc.set(title=f"{name}: test accuracy", xlabel="ε, Theorem 1 (accepted steps)", ylabel="test accuracy (%)")
        ax_acc.legend(loc="lower right")
    return drawn


def acceptance_chart(acceptance: pd.DataFrame, records: list[dict]) -> Finding:
    """:func:`acceptance_figure` of our SA-DPSGD runs, rendered (nothing while none is stored)."""
    import matplotlib.pyplot as plt

    if not len(acceptance):
        return Finding("")
    fig, axes = plt.subplots(3, 1, figsize=(7.5, 10))
    acceptance_figure(axes, records)
    fig.tight_layout()
    return Finding("", shown=(tables.figure(
        fig, number="Ours (how Alg. 2 decided)",
        caption="Per data set, over the last 200 candidates of each of our SA-DPSGD runs: the share accepted, the "
                "share accepted uphill by Eq. 3's draw and the share forced after μ0 rejections, against accepted "
                "steps τ.",
        alt="Line plots of the acceptance share, falling as training goes on, with the uphill and forced shares below "
            "it."),))


def figure3_chart(records: list[dict]) -> Finding:
    """:func:`figure3` of our Table 3 runs, rendered (a note while none is stored)."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(7.5, 7.5), squeeze=False)
    drawn = figure3(axes, records)
    if not drawn:
        plt.close(fig)
        return note("no Table 3 run stored")
    fig.tight_layout()
    names = sa.READER_NAMES
    return Finding("", drawn, (tables.figure(
        fig, number="Figure 3 (paper) / ours",
        caption="Test loss (left) and test accuracy (right) against ε under Theorem 1's accounting, the paper's, for "
                "DP-SGD, its tanh and AUTO-S variants and SA-DPSGD, on " + " and ".join(names[d] for d in drawn)
                + "; one line per seed. Under a sound count SA-DPSGD's lines would move right (see above).",
        alt="Line plots of test loss falling and test accuracy rising with epsilon for four schemes on each data set "
            "drawn."),))
