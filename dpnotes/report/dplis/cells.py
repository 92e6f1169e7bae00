"""The records and paper values the DPlis chapter reads: Table 9's runs and the paper's sharpness cells
(:mod:`dpnotes.experiments.dplis`).
"""

from __future__ import annotations

from dpnotes import claims, experiments
from dpnotes.experiments import dplis as X
from dpnotes.record import Record

PAPER = "dplis"


def _table9_runs(stored: list[dict]) -> list[tuple[str, str, Record]]:
    """``(row, arm, record)`` of every current paper-profile Table 9 run, in Table 9's order."""
    runs = experiments.current(stored, X.configs("paper"))
    return [(row, arm, Record.of(r)) for row in X.TABLE9_ROWS for arm in X.TABLE9_ARMS
            for r in runs.get(f"table9.{row}.eps1_99.{arm}", [])]


def _paper_sharpness(row: str, arm: str):
    return claims.get(f"dplis.table9.{row}.sharpness_{arm}")
