"""The DPlis chapter's findings, each data and text (:class:`~dpnotes.report.findings.Finding`): the
budgets and the toy, sum against mean, the authors' code against the paper, Table 10's SD convention, single-run
gains, R_best, zero sharpness, Table 9's scale and Theorem 3, from the computations of :mod:`.checks`.
"""

from __future__ import annotations

import pandas as pd

from dpnotes.experiments import dplis as X
from dpnotes.experiments.dplis import toy as dplis_toy
from dpnotes.report import tables
from dpnotes.report.findings import Finding

from . import checks as F
from .cells import _paper_sharpness, _table9_runs


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
        "the code does (the paper does not say).", effect, (tables.table(effect, decimals=3,
            title="Sum against mean of the K gradients"),))


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
        f"{rb.values.max():g}, in every column, which may be the edge of the unprinted grid.", rb, (tables.table(rb,
            title="R_best per model and ε column (Tables 6 and 11)"),))


def zero_sharpness() -> Finding:
    """Table 9 cells printed as exactly zero."""
    z = F.zero_sharpness()
    return Finding(
        "**Table 9 prints a sharpness of exactly zero** for " + ", ".join(f"`{c}`" for c in z) + ": no point of the "
        "Keskar et al. box around the model raised the training loss at all, which a maximiser started at the centre "
        "finds only if it never moved or the loss is flat to the printed digits. We flag it rather than compare with "
        "it; Table 9's models (which checkpoint, which eps) are not specified.", z)


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
