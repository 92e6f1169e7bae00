"""Tables and the figure of the SA-DPSGD chapter, all computed (:mod:`dpnotes.experiments.sadpsgd`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import sadpsgd as sa

RATES = (1.0, 2 / 3, 1 / 2, 1 / 3)  # acceptance rates drawn in the figure (plus 1/(mu0+1))


def stopping_frame(tight: bool = True) -> pd.DataFrame:
    """Per dataset: Table 2's q and sigma, tau at the budget, Theorem 1's eps there, and the sound
    eps of the same run at acceptance rate 1/2 and in the worst case (mu0 rejections per accept).
    ``tight`` adds the PLD accountant's worst-case eps (about a second per dataset)."""
    rows = []
    for ds in sa.DATASETS:
        s, tau = sa.setting(ds), sa.tau_at(ds)
        t_max = sa.worst_case_candidates(ds, tau)
        row = {"dataset": ds, "q": s["q"], "sigma": s["sigma"], "mu0": int(s["mu0"]),
               "tau (eps <= budget)": tau, "Thm 1 eps": sa.eps_paper(ds, tau),
               "Thm 1 eps at tau + 1": sa.eps_paper(ds, tau + 1),
               "all candidates, rate 1/2": sa.eps_all(ds, tau, tau),
               "T_max = (mu0+1) tau": t_max,
               "all candidates, T_max": sa.eps_all(ds, tau, t_max - tau)}
        sound = sa.eps_sound(ds, tau, t_max - tau, ("rdp-classic", "rdp") + (("pld",) if tight else ()))
        row.update({f"{name}, T_max": v for name, v in sound.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("dataset").round(4)


def break_even_frame() -> pd.DataFrame:
    """Every Table 3 row: SA-DPSGD's printed eps, the lowest printed baseline eps, and the
    acceptance rate above which SA-DPSGD's sound eps is the lower one."""
    rows = [sa.table3_break_even(ds, level) for ds in sa.DATASETS for level in sa.table3_levels(ds)]
    return pd.DataFrame(rows).set_index(["dataset", "level"]).round({"break_even_rate": 3})


def figure(axes) -> None:
    """eps against accepted steps: Theorem 1 (accepted only) and Theorem 1's formula over all
    candidates at several acceptance rates, one panel per dataset, up to tau at the budget."""
    for ax, ds in zip(axes, sa.DATASETS):
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


def runs_frame(records: list[dict]) -> pd.DataFrame:
    """The runs at hand: accuracy, steps, acceptance rate, and eps under Theorem 1 and the
    registry's sound accountants (from each record's ledger, priced when it ended)."""
    rows = []
    for r in records:
        eps = r["privacy"]["epsilon"]
        rows.append({"profile": r["spec"]["profile"], "experiment": r["spec"]["experiment"],
                     "seed": r["spec"]["seed"], "test acc %": sa.accuracy(r),
                     "candidates": r["final"]["steps"], "accepted": r["final"]["accepted_steps"],
                     "acceptance rate": sa.acceptance_rate(r),
                     **{f"eps {k}": v["epsilon"] for k, v in eps.items()}})
    return pd.DataFrame(rows)
