"""What DPlis's run records hold: the current records per experiment, the accuracy at an epoch, Figure 3's
run of each R, and Table 4's data-set counts, for :func:`~.answers.measure` and the chapter.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from dpnotes import validate
from dpnotes.record import Record

from .runs import ROWS, _tag, configs, long_radii


@lru_cache(maxsize=None)
def dataset_counts(name: str) -> tuple[int, int]:
    """(N_train, number of classes) counted on the training labels of ``mnist`` or ``cifar10``."""
    from dpnotes.data import read_labels

    y = read_labels({"mnist": "mnist", "cifar10": "cifar-10"}[validate.choice("name", name, ("mnist", "cifar10"))])
    return len(y), len(np.unique(y))


def _current(records: list[dict], profile: str) -> dict[str, list[dict]]:
    """Records of the current configs of ``profile``, by experiment (stale configs ignored)."""
    from dpnotes.experiments import current

    return current(records, configs(profile))


def _acc_at(record: dict, epoch: int) -> float | None:
    """Test accuracy (%) of ``record`` after ``epoch`` epochs (None if it stopped earlier)."""
    return Record.of(record).accuracy_at_epoch(epoch)


def figure3_run(paper: dict[str, list[dict]], row: str, r: float) -> dict | None:
    """The seed-0 record of Figure 3's point R on ``row`` among ``paper`` (current records by
    experiment): Table 2's long run where R is one of its radii, else the sweep's own run."""
    radii = long_radii(row)
    name = f"{ROWS[row].table}.{row}.{radii[r]}.{_tag(r)}" if r in radii else f"figure3.{row}.eps10_00.{_tag(r)}"
    return next((x for x in paper.get(name, []) if Record.of(x).seed == 0), None)
