"""The cells the DPIS chapter reads: Table 3's and the ablations' claim cells, the training set sizes,
Figure 1's settings, a cell's name and the points of the training curves (:mod:`dpnotes.experiments.dpis`).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from dpnotes import claims, experiments
from dpnotes.experiments import dpis as X
from dpnotes.record import Record

PAPER = "dpis"
METHODS = {"dpis": "DPIS", "dpsgd_hf": "DP-SGD-HF", "dpsgd_ts": "DP-SGD-TS", "dpsgd_decay": "DP-SGD-Decay",
           "dpsgd": "DP-SGD"}


def n_train(dataset: str) -> int:
    """The training-set size the paper states for ``dataset`` ("mnist", "fmnist", ...)."""
    return int(claims.setting(f"dpis.data.{dataset}.n_train"))


def eps_key(epsilon: float) -> str:
    """A budget as it appears in claim ids: 1 -> ``eps1``, 0.5 -> ``eps0_5``."""
    return f"eps{epsilon:g}".replace(".", "_")


def table3_cells() -> dict[str, str]:
    """Table 3 claim id -> the paper-profile experiment that answers it."""
    return X.table3_cells()


def ablation_cells() -> dict[str, str]:
    """Tables 4-7 claim id -> the paper-profile experiment that answers it."""
    return X.ablation_cells()


@dataclass(frozen=True)
class Figure1:
    """Figure 1's accounting: DP-SGD at the printed sigma per batch size (``batches``), the batch
    size the printed sigma implies (``b``), and Section 4.2's sigma_G schedules at that b."""

    batches: pd.DataFrame
    b: int
    schedules: dict


def cell_name(cid: str) -> str:
    """A Tables 3-7 claim id as a tick label: dpis.table5.mnist.a_e0_8 -> "Table 5: a.E 0.8" (the underscore of
    a_E becomes a dot with the decimal one: the label the chapter has always shown)."""
    parts = cid.split(".")
    rest = [METHODS.get(p, p.replace("eps", "ε ").replace("a_e", "a_E ").replace("c_star", "C* ").replace("_", "."))
            for p in parts[3:]]
    return f"Table {parts[1][5:]}: " + ", ".join(rest)


def training_points(stored: list[dict]) -> pd.DataFrame:
    """One row per paper-profile run answering a Tables 3-7 cell: claim, paper value, seed, ours (%)."""
    runs = experiments.current(stored, X.configs("paper"))
    cells = {**table3_cells(), **ablation_cells()}
    return pd.DataFrame([{"claim": cid, "paper": claims.get(cid).number, "seed": r.seed, "ours": r.accuracy()}
                         for cid, e in cells.items() for r in map(Record.of, runs.get(e, []))])
