"""The DPlis chapter's tables: Figure 2's toy grid, the epochs of each eps column, the runs stored and
the gains at the first eps column.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes import claims, experiments
from dpnotes.experiments import dplis as X
from dpnotes.experiments.dplis import toy as dplis_toy
from dpnotes.record import Record
from dpnotes.report import tables
from dpnotes.report.findings import Finding, note


def toy_table():
    """Figure 2's toy over our grid of settings."""
    return tables.table(pd.DataFrame(dplis_toy.grid()), decimals=3, title="Figure 2's toy over our grid of settings")


def epoch_table():
    """The epoch at which each eps column is read, per data set."""
    return tables.table(X.epoch_table(), title="The epoch at which each ε column is read, per model")


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
                         dash="the record has no classic-conversion ε", title="Paper-profile runs",
                         provenance=f"The {len(table)} paper-profile runs, one by one (open)")
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
