"""The SA-DPSGD chapter's findings: what the paper-profile runs measured, the energy split, and the whole
list as markdown.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import sadpsgd as sa
from dpnotes.record import Record
from dpnotes.report import labels

from .tables import break_even_frame


def measured_findings(acceptance: pd.DataFrame) -> list[str]:
    """Findings that rest on our SA-DPSGD runs (:func:`acceptance_frame`), as Markdown bullets;
    none without runs."""
    if not len(acceptance):
        return []
    be = break_even_frame()["break_even_rate"]
    out = []
    for ds, rows in acceptance.groupby(level="dataset"):
        rate = rows["acceptance rate"]
        n = len(rows)
        seeds = f"{n} seed{'s' if n > 1 else ''}"
        ds_be = be.loc[ds] if ds in be.index.get_level_values(0) else be.iloc[:0]
        below = int((ds_be > rate.max()).sum())
        out.append(
            f"**{ds}: measured acceptance {rate.min():.1%}" + (f" to {rate.max():.1%}" if n > 1 else "")
            + f"** ({seeds}). " + ("The run" if n == 1 else "The runs")
            + f" that Theorem 1 prices at eps {rows['Thm 1 eps'].max():.2f} made "
            f"{'' if n == 1 else 'up to '}{int(rows['candidates'].max()):,} candidates for "
            f"{int(rows['accepted'].max()):,} accepted steps; priced soundly (every candidate), "
            f"{'it' if n == 1 else 'they'} spent eps {rows['all candidates (Thm 1 formula)'].max():.2f} "
            f"(Theorem 1's own formula), {rows['rdp (sound)'].max():.2f} (RDP, improved conversion) and "
            f"{rows['pld (sound)'].max():.2f} (PLD). The acceptance rate is below the break-even rate of "
            f"{below} of the {len(ds_be)} Table 3 levels: there SA-DPSGD cannot have the lowest sound eps.")
        q0 = sa.setting(ds)["q0"]
        for (_, seed), row in rows.iterrows():
            q_end = q0 * row["accepted"]
            text = (f"**{ds}, seed {seed}: how greedy the schedule makes the rule.** Q = Q0 tau grows with every "
                    f"accepted step, to {q_end:,.0f} at the end. Eq. 3's draw kept {int(row['uphill']):,} worse "
                    f"candidates ({row['uphill by the draw, per quarter of tau']} in the four quarters of the "
                    f"accepted steps)")
            if pd.isna(row["median uphill dE, last quarter"]):
                last = row["last Eq. 3 uphill accept (tau)"]
                text += ("" if pd.isna(last) else f", the last judged at tau = {int(last):,}") + (
                    f"; after that the rule was greedy: a worse model was kept only when forced "
                    f"({int(row['forced']):,} forced accepts in the run).")
            else:
                d_e = row["median uphill dE, last quarter"]
                text += (f". Those of the last quarter were tiny increases of the test loss (median Delta E "
                         f"{d_e:.1e}, kept with exp(-Delta E Q) = {np.exp(-d_e * q_end):.2f} even at the final Q): "
                         f"the rule is greedy only for increases well above 1/Q = {1 / q_end:.1e}; "
                         f"{int(row['forced']):,} accepts were forced.")
            out.append(text)
    return out


def energy_finding(records: list[dict]) -> str:
    """How optimistic a test-energy run's accuracy is, measured within our ``energy.*`` runs: the
    energy on part of the test set, the accuracy at the end on that part (selected on) and on the
    rest (untouched); the gap's sampling error assumes independent examples."""
    from dpnotes.experiments import current

    paper = current([r for r in records if Record.of(r).profile == "paper"], sa.configs("paper"))
    parts = []
    for exp in sorted(e for e in paper if e.startswith("energy.")):
        for run in paper[exp]:
            last = Record.of(run).last_epoch
            a, b = last["energy_acc"], last["test_acc"]
            se = np.sqrt(a * (1 - a) / last["energy_n"] + b * (1 - b) / last["test_n"])
            parts.append(
                f"{exp.split('.')[1]}, seed {Record.of(run).seed}: at the end, accuracy {a:.2%} on the "
                f"{last['energy_n']:,} test images that judged the candidates and {b:.2%} on the other "
                f"{last['test_n']:,}, a gap of {100 * (a - b):+.2f} points (sampling error of the gap "
                f"{100 * se:.2f}: " + ("within twice it, no optimism measurable at this size)" if abs(a - b) <= 2 * se
                                       else "beyond twice it)"))
    if not parts:
        return ("Not measured yet: the paper profile's `energy.*` run judges candidates on half the test set "
                "and measures accuracy on both halves.")
    return "Measured: " + "; ".join(parts) + (". Single seed." if len(parts) == 1 else ".")


def findings_markdown(stopping: pd.DataFrame, acceptance: pd.DataFrame, stored: list[dict]) -> str:
    """The chapter's findings: Theorem 1 against a sound count (from :func:`stopping_frame`), the
    acceptance Table 3's advantage needs, the conversion, the equations' typos, the energy on the
    test set (:func:`energy_finding`), what our runs measured (:func:`measured_findings` of
    ``acceptance``) and Table 2's provenance, as Markdown."""
    be = break_even_frame()["break_even_rate"]
    worst = stopping["all candidates, T_max"]
    half = stopping["all candidates, rate 1/2"]
    text = ("\n"
        "- **Theorem 1 is not a sound privacy bound** (What held, above: not reproduced). Every candidate releases a "
        "noisy gradient of a fresh batch, and the accept decision, hence the output, depends on it. At the paper's "
        "stopping point the accepted-steps $\\varepsilon$ is the budget, but counting every candidate gives "
        f"$\\varepsilon$ = {half.min():.2f} to {half.max():.2f} if half of the candidates are accepted, and up to "
        f"{worst['mnist']:.2f} (MNIST), {worst['fmnist']:.2f} (Fashion-MNIST) and {worst['cifar10']:.2f} (CIFAR-10) in "
        "the worst case that a data-independent guarantee must cover ($\\mu_0$ rejections before every accept). A "
        f"tight accountant (PLD) lowers these worst cases only to {stopping['pld, T_max']['mnist']:.2f}, "
        f"{stopping['pld, T_max']['fmnist']:.2f} and {stopping['pld, T_max']['cifar10']:.2f}. Moreover $\\tau$ is "
        "data-dependent, so even an accepted-steps count would be an ex-post value.\n"
        "- **Table 3's privacy advantage needs near-total acceptance.** Under sound accounting SA-DPSGD has the "
        f"lowest $\\varepsilon$ of a Table 3 row only if it accepts more than {be.min():.0%} to {be.max():.0%} of its "
        "candidates, depending on the row (table above); the acceptance rule forces an accept only after $\\mu_0$ "
        "rejections, and as $\\tau$ grows $Q = Q_0 \\tau$ makes the rule ever more greedy, so rates well below 1 are "
        "expected. Our measured rates are below.\n"
        "- **Classic conversion** (claim `sadpsgd.sec3_3.classic_conversion`: reproduced): for the same RDP curve the "
        "improved conversion (Lemma 3) gives a smaller $\\varepsilon$ than the classic one the paper uses; at the "
        "worst case above, `rdp` (improved) gives "
        f"{stopping['rdp, T_max'].div(stopping['rdp-classic, T_max']).mean():.0%} of `rdp-classic` on average.\n"
        "- **Eqs. (4) and (9) omit the logarithm** in front of the binomial sum of the subsampled-Gaussian RDP; Eq. "
        "(8) and the cited result (Mironov, Talwar, Zhang 2019) have it, and our accountants use it: we read the "
        "printed equations as typos.\n"
        "- **The energy is the test loss**: candidates are kept by how they change the loss on the test set, so the "
        "reported test accuracy is selected on the test set itself and can be optimistic. "
        f"{energy_finding(stored)}\n")
    text += "".join(f"- {line}\n" for line in measured_findings(acceptance))
    text += ("- **Table 2 is Tramèr and Boneh's setup** {cite:p}`tramer2021differentially`: their end-to-end tanh "
             "CNNs with the same batch sizes, learning rates, noise multipliers and $C = 0.1$. They trained with "
             "momentum 0.9 on shuffled fixed-size batches. Alg. 2 uses Poisson batches and writes a plain gradient "
             "step; we use Poisson batches for every scheme and, like Tramèr and Boneh, momentum 0.9, for which these "
             "learning rates were tuned (`dpnotes.experiments.sadpsgd.MOMENTUM`). A rejected candidate leaves no "
             "trace: the momentum buffer is restored with the weights.\n")
    return labels.markdown(text)
