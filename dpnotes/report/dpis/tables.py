"""The DPIS chapter's tables: the runs stored and the sigma_G schedule.
"""

from __future__ import annotations

import pandas as pd

from dpnotes.experiments import dpis as X
from dpnotes.record import Record
from dpnotes.report import tables

from .cells import Figure1


def runs_table(records: list[dict]):
    """The runs at hand: experiment, method, accuracy, DPIS eps and the last epoch's DPIS statistics."""
    rows = []
    for r in map(Record.of, records):
        last = r.epochs[-1:]
        rows.append({"experiment": r.experiment, "method": r.method, "test acc": r.test_acc,
                     "ε (DPIS accountant)": r.epsilon("dpis"),
                     **{k: v for e in last for k, v in e.items() if k.startswith("dpis_")}})
    return tables.table(pd.DataFrame(rows), percent=["test acc"], decimals=3,
                        dash="not recorded: only DPIS runs release the DPIS statistics", title="Runs at hand",
                        provenance=f"The {len(rows)} runs at hand, one by one (open)")


def schedule_table(fig1: Figure1):
    """sigma_G at the first epoch, the last of phase 1, the next one and the last, per schedule."""
    e = X.FIG1C_EPOCHS
    return tables.table(pd.DataFrame({f"a_E={a:g}, r={r:g}": s[[0, int(a * e) - 1, min(int(a * e), e - 1), -1]]
                                      for (a, r), s in fig1.schedules["dpis"].items()},
                                     index=["first epoch", "last of phase 1", "next epoch", "last epoch"]), decimals=3,
                        title="σ_G per schedule (Section 4.2)")
