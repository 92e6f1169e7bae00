"""The DPlis chapter's findings, tables and figures, written from run records, the claims
registry and the computations of :mod:`dpnotes.report.dplis_findings`,
:mod:`dpnotes.experiments.dplis` and :mod:`dpnotes.experiments.dplis.toy`; each returns data and
text (:class:`Finding`) or a rendered table or figure, so that a notebook cell is one call."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes import claims, experiments
from dpnotes.experiments import dplis as X
from dpnotes.experiments.dplis import toy as dplis_toy
from dpnotes.record import Record
from dpnotes.report import dplis_findings as F
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note

PAPER = "dplis"


# --------------------------------------------------------------------------------------
# Findings.

def budgets_and_toy() -> Finding:
    """Budgets attained at no epoch boundary, accounting orders at the printed digits, Table 5's
    budgets, and what Figure 2's toy depends on."""
    missed = X.unattained_columns()
    lines = [f"- **{len(missed)} printed budgets are attained at no epoch boundary**, so their cells cannot be "
             "the accuracy at that exact budget (presumably the nearest epoch was used):"]
    lines += [f"  - `{m.claim_id}`, {m.describe()}." for m in missed]
    t3 = [(cid, ds) for cid, ds in X.eps_columns() if cid.startswith("dplis.table3")]
    ok3 = sum(all(X.column_match(cid, d).attained for d in ds) for cid, ds in t3)
    lines.append(f"- Table 3: {ok3} of its {len(t3)} budgets print exactly at an epoch boundary, with no data needed.")
    e, last = X.column_epoch("mnist", "eps7_01"), X.column_epoch("mnist", "eps10_00")
    lines.append(f"- **Accounting orders matter at the printed digits**: MNIST after {e} epochs has "
                 f"eps {X.epsilon('mnist', e):.4f} at integer orders (the paper's accountant) but "
                 f"{X.epsilon_tf_tutorial('mnist', e):.4f} with the TF Privacy tutorial orders; after "
                 f"{last} epochs {X.epsilon('mnist', last):.4f} vs {X.epsilon_tf_tutorial('mnist', last):.4f}. "
                 "A reproduction with the common TF-tutorial orders would wrongly miss these columns.")
    lines.append(f"- Table 5's budgets cannot be checked: {X.NOT_RUN['dplis.table5.col1.epsilon']}.")
    toy = pd.DataFrame(dplis_toy.cells())
    reach = toy[toy["always flat"]]
    lines.append(
        "- **Figure 2's toy hinges on settings the paper omits.** In our grid smoothing sends at least "
        f"{dplis_toy.ALWAYS:.0%} of the runs to the flat basin in {len(reach)} of its {len(toy)} smoothed cells "
        f"(DP-SGD: {toy['DP-SGD flat share'].min():.0%} to {toy['DP-SGD flat share'].max():.0%}); "
        f"{int(reach['shorter tail'].sum())} of those {len(reach)} also shorten the loss tail (99th percentile) "
        "relative to DP-SGD. Runs in the smoothed flat basin end farther from its centre (90th-percentile distance "
        f"{reach['distance to u, q90 (flat runs)'].min():.2f} to {reach['distance to u, q90 (flat runs)'].max():.2f}, "
        f"DP-SGD {toy['DP-SGD distance to u, q90'].min():.2f} to {toy['DP-SGD distance to u, q90'].max():.2f}): "
        "the smoothed basin is flatter, so it pulls less against the same DP noise.")
    return Finding("\n".join(lines), {"unattained": missed, "toy": toy})


def combine_effect(profile: str) -> Finding:
    """Sum (the authors' code) against mean (Alg. 2) of the K gradients, on real per-example
    gradients (one DP-SGD epoch count at the smoke profile, two otherwise)."""
    effect = pd.DataFrame(F.combine_effect(epochs=(0,) if profile == "smoke" else (0, 2)))
    last = effect[effect["epochs of DP-SGD"] == effect["epochs of DP-SGD"].max()].iloc[0]
    return Finding(
        "**Alg. 2 averages the K gradients, the authors' code sums them (and shares each draw across the batch).** "
        "Clipping makes the two equal for an example whose averaged gradient is at least C long (clip(K g) = clip(g)); "
        "below C the sum weighs the example up to K times more, so the update leans toward a unit-norm direction of "
        "the averaged gradient. On 256 MNIST training images with the MNIST MLP after "
        f"{int(last['epochs of DP-SGD'])} epoch(s) of DP-SGD at Table 1's settings (R = {last['R']:g}), the engine "
        f"clips {100 * last['sum: share clipped']:.0f}% of the summed gradients against "
        f"{100 * last['mean: share clipped']:.0f}% of the averaged ones. Our runs follow the code (the tables came "
        "from it); `combine=\"mean\"` gives the paper's Alg. 2. Both share one draw per step across the batch, as "
        "the code does (the paper does not say).", effect, (tables.table(effect, decimals=3),))


def code_vs_paper() -> Finding:
    """The authors' CIFAR-10 example run against Table 1."""
    cv = F.code_vs_paper()
    return Finding(
        f"**The authors' CIFAR-10 example run is not Table 1's.** Its learning rate (eta/L) is {cv['code_lr']:g}, "
        f"{cv['ratio']:.0f}x below Table 1's {cv['paper_lr']:g}, and its radius R = {cv['code_r']:g} is neither "
        f"R = {cv['r_default']:g} nor the CIFAR-10 CNN's R_best = {cv['r_best']:g}. We follow Table 1.", cv)


def sd_convention() -> Finding:
    """Table 10's SDs are population SDs, read off the printed SD / range ratios."""
    sd = F.table10_sd_convention()
    t10 = pd.DataFrame(sd["rows"])
    only_pop = t10[t10["population fits"] & ~t10["sample fits"]]
    return Finding(
        f"**Table 10's standard deviations are population SDs (ddof 0).** For {sd['runs']} values, SD / range lies in "
        f"[{sd['population'][0]:.3f}, {sd['population'][1]:.3f}] for the population SD and in "
        f"[{sd['sample'][0]:.3f}, {sd['sample'][1]:.3f}] for the sample SD. Allowing for the printed digits, all "
        f"{int(t10['population fits'].sum())} of {len(t10)} cells fit the population SD and {len(only_pop)} fit only "
        f"it (SD / range {only_pop['sd/range'].min():.3f} to {only_pop['sd/range'].max():.3f}). A population SD of 5 "
        "runs understates the run-to-run spread by a factor sqrt(4/5) = 0.89.", sd)


def single_run_gains() -> Finding:
    """Table 2's single-run gains against Table 10's five-run ranges of the No arm."""
    g = pd.DataFrame(F.single_run_gains())
    low = g[g["gain within No's range"]]
    columns = sorted({c.split(".")[1] for c in low.cell})
    return Finding(
        "**Single-run gains against five-run spreads.** Tables 2, 3, 5 and 11 are single runs; Table 10 repeats two "
        f"rows five times. Of the {len(g)} Table 2 gains of those rows, {len(low)} are no larger than the No arm's "
        "five-run range (" + ", ".join(f"{r['cell']} {r['Table 2 gain']:+.2f} vs {r['No: 5-run range']:.2f} at "
                                       f"{r['range read at']}" for _, r in low.iterrows())
        + f"), all in column(s) {', '.join(columns)}; every other "
        "gain exceeds it. Table 10 prints no spread at the first eps column (we read its second column's range there). "
        "Our own cells of that column are single runs too, so their gains are read with the same caution.", g)


def r_best() -> Finding:
    """How R_best was chosen (on test accuracy), with its table."""
    rb = pd.DataFrame(F.r_best_choices()).set_index("row")
    return Finding(
        "**R_best is chosen on test accuracy, at no privacy cost.** Section 5.3 picks, per row and column, the R of "
        "Figure 3's sweep with the best test accuracy (the grid is not printed), with no validation split and no "
        "privacy charge for the search; the R_best columns of Tables 2, 3 and 11 are therefore optimistic. "
        f"{int((rb == rb.values.max()).all(axis=1).sum())} of {len(rb)} rows use the largest value, "
        f"{rb.values.max():g}, in every column, which may be the edge of the unprinted grid.", rb, (tables.table(rb),))


def zero_sharpness() -> Finding:
    """Table 9 cells printed as exactly zero."""
    z = F.zero_sharpness()
    return Finding(
        "**Table 9 prints a sharpness of exactly zero** for " + ", ".join(f"`{c}`" for c in z) + ": no point of the "
        "Keskar et al. box around the model raised the training loss at all, which a maximiser started at the centre "
        "finds only if it never moved or the loss is flat to the printed digits. We flag it rather than compare with "
        "it; Table 9's models (which checkpoint, which eps) are not specified.", z)


def _table9_runs(stored: list[dict]) -> list[tuple[str, str, Record]]:
    """``(row, arm, record)`` of every current paper-profile Table 9 run, in Table 9's order."""
    runs = experiments.current(stored, X.configs("paper"))
    return [(row, arm, Record.of(r)) for row in X.TABLE9_ROWS for arm in X.TABLE9_ARMS
            for r in runs.get(f"table9.{row}.eps1_99.{arm}", [])]


def _paper_sharpness(row: str, arm: str):
    return claims.get(f"dplis.table9.{row}.sharpness_{arm}")


def table9_scale(stored: list[dict]) -> Finding:
    """Table 9's printed sharpness against the gradient-sign corner, a lower bound of the quantity it defines."""
    t9 = [(row, arm, r.metric("analysis")["sharpness"]) for row, arm, r in _table9_runs(stored)]
    with_corner = [(row, arm, s) for row, arm, s in t9 if "corner_sharpness" in s]
    above = [(row, arm, s) for row, arm, s in with_corner if s["corner_sharpness"] > _paper_sharpness(row, arm).number]
    if not with_corner:
        return Finding("**Table 9's scale.** No Table 9 run is stored yet, so the printed sharpness values are not "
                       "checked.", with_corner)
    text = ("**Table 9's values against a lower bound of the quantity they define.** Any point of the box bounds its "
            "maximum from below; the corner along the signs of the training-loss gradient needs no solver. For "
            f"{len(above)} of the {len(with_corner)} models we measured, that corner alone raises the loss by more "
            "than the paper's sharpness: " + "; ".join(
                f"{row} {arm}: corner {s['corner_sharpness']:.4g}, paper "
                f"{_paper_sharpness(row, arm).value}" for row, arm, s in with_corner)
            + ".")
    if above:
        ratios = [s["corner_sharpness"] / _paper_sharpness(row, arm).number for row, arm, s in above
                  if _paper_sharpness(row, arm).number > 0]
        text += ((f" Where it does, by a factor of at least {min(ratios):.3g}." if ratios else "")
                 + " Our models are trained with the paper's settings (the first eps column, not necessarily the "
                 "paper's checkpoint); unless the paper's models are that much flatter, its printed values are not "
                 "the maximum over the full parameter box, whatever the solver: a smaller box, a subspace A, other "
                 "data, or a solver that barely moves (the exact zero above) would explain them.")
    return Finding(text, with_corner)


def theorem3() -> Finding:
    """Theorems 2 and 3: their assumptions, and Theorem 3's bound at the paper's MNIST run."""
    t3 = F.theorem3_bound()
    return Finding(
        "**Theorem 2 and Theorem 3.** Theorem 2 assumes a gradient variance bound \"for some parameter sigma <= 0\" "
        "(it must be sigma >= 0; sigma is also the noise multiplier, and L both the batch size and the Lipschitz "
        "constant), ignores clipping and the DP noise, and its \"smaller beta, smaller left-hand side\" compares upper "
        "bounds only. Theorem 3's bound (Eq. 8) is vacuous at the paper's settings: for the MNIST run to the last eps "
        f"column ({t3['epochs']} epochs, T = {t3['steps']:,} steps, n = {t3['n']:,}, eta = {t3['eta']:g}, "
        f"C = {t3['clip']:g}, and L = {t3['lipschitz']:g}, ours) the prefactor 2 eta C L T / n is already "
        f"{t3['prefactor']:.2f}, and (1 + eta beta)^(T-1) is 10^{t3['log10_growth']:.0f} at beta = {t3['beta']:g}; the "
        f"bound stays below 1 only for beta <= {t3['beta_max_for_bound_1']:.1e}, a loss that is almost linear. Its "
        "smoothness constant also belongs to the exact smoothed loss, not to the K-sample estimate that is "
        "trained.", t3)


# --------------------------------------------------------------------------------------
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


def toy_table():
    """Figure 2's toy over our grid of settings."""
    return tables.table(pd.DataFrame(dplis_toy.grid()), decimals=3)


def epoch_table():
    """The epoch at which each eps column is read, per data set."""
    return tables.table(X.epoch_table())


# --------------------------------------------------------------------------------------
# Runs.

def runs_table(stored: list[dict]) -> Finding:
    """The current paper-profile runs: model, epochs, accuracy, classic-conversion eps, backend, wall time, device."""
    runs = experiments.current(stored, X.configs("paper"))
    table = pd.DataFrame([{"experiment": e, "model": r.model, "epochs": len(r.epochs),
                           "test acc (%)": round(r.accuracy(), 2),
                           "ε (RDP, classic conversion)": r.epsilon("rdp-classic") if "rdp-classic" in r.accountants
                           else None,
                           "backend": r.train["grad_backend"], "wall (min)": round(r.wall_time_s / 60, 1),
                           "device": ", ".join(sorted(set(r.devices)))}
                          for e, rs in runs.items() for r in map(Record.of, rs)])
    if not len(table):
        return note("no paper-profile run stored (`dpnotes run dplis --profile paper`)", table)
    shown = tables.table(table.sort_values("experiment"), decimals={"ε (RDP, classic conversion)": 3},
                         dash="the record has no classic-conversion ε")
    return Finding("", table, (shown,))


def first_column_gains(stored: list[dict]) -> pd.DataFrame:
    """Per model and smoothed arm: the paper's gain over No at the first eps column and ours
    (mean over the seeds both arms have, accuracy after the column's epoch)."""
    runs = experiments.current(stored, X.configs("paper"))
    gains = []
    for row, r_ in X.ROWS.items():
        e = X.column_epoch(r_.dataset, "eps1_99")
        acc = {arm: {r.seed: r.accuracy_at_epoch(e)
                     for r in map(Record.of, runs.get(X.experiment(row, X.run_arm(row, arm)), []))} for arm in X.ARMS}
        for arm in [a for a in X.ARMS if a != "no"]:
            paired = sorted(set(acc[arm]) & set(acc["no"]))
            if paired:
                radius = arm.replace("rbest", "R_best").replace("r10", "R = 10")
                gains.append({"cell": f"{row.replace('_', ' ')}, {radius}", "seeds": len(paired),
                              "paper": claims.get(f"dplis.{r_.table}.{row}.eps1_99.gain_{arm}").number,
                              "ours": np.mean([acc[arm][s] - acc["no"][s] for s in paired])})
    return pd.DataFrame(gains)


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
    table = tables.table(pd.DataFrame(rows), decimals=4)
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
