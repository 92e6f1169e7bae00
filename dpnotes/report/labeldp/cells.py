"""The cells the LabelDP chapter reads: Table 4's claim cells and eps names, the mechanisms' P[correct]
curves and Table 4's points (:mod:`dpnotes.experiments.labeldp`).
"""

from __future__ import annotations

import numpy as np

from dpnotes import experiments
from dpnotes.experiments import labeldp as X
from dpnotes.record import Record

PAPER = "labeldp"


def eps_name(epsilon: float) -> str:
    """A budget as it appears in experiment names: 2 -> ``2``, infinity -> ``inf``."""
    return "inf" if np.isinf(epsilon) else f"{epsilon:g}"


def table4_cells() -> list[tuple[str, str, float]]:
    """``(claim id, experiment, eps)`` of Table 4's LP cells (:func:`dpnotes.experiments.labeldp.table4_cells`)."""
    return list(X.table4_cells())


def dataset_name(d: str) -> str:
    """The reader's name of a LabelDP data set id (``mnist``, ``fashion_mnist``/``fmnist``)."""
    return "MNIST" if d == "mnist" else "Fashion-MNIST"


def mechanism_curves() -> dict:
    """P[output = true label] of RR, RRWithPrior and LP1's optimum, and k*, for K = 10 and three priors."""
    return X.figure_curves()


def table4_points(stored: list[dict]) -> dict[tuple[str, int, float], list[float]]:
    """Our accuracy (%) per seed in each Table 4 LP cell ``(short, stages, eps)`` with a paper-profile run."""
    runs = experiments.current(stored, X.configs("paper"))
    return {(e.split(".")[1], int(e.split(".")[2][3]), eps): [Record.of(r).accuracy() for r in runs.get(e, [])]
            for _, e, eps in table4_cells()}
