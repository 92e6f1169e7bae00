"""The DPIS chapter's findings, tables and figures, computed from run records and the claims
registry (:mod:`dpnotes.experiments.dpis`); each returns data and text (:class:`Finding`) or a
rendered table or figure, so that a notebook cell is one call.

Layout (the same for every paper, :mod:`dpnotes.report`):

* :mod:`.cells`: the cells and settings the tables, figures and findings read
* :mod:`.tables`: the paper's values next to ours, as tables (``*_frame``, ``*_table``)
* :mod:`.figures`: the chapter's figures, drawn on matplotlib axes
* :mod:`.notes`: the chapter's findings: data and text (:class:`dpnotes.report.findings.Finding` or markdown)
"""

from __future__ import annotations

from .cells import METHODS, PAPER, Figure1, ablation_cells, cell_name, eps_key, n_train, table3_cells, training_points
from .figures import sampling_figure, schedule_figure, sigma_figure, training_figure
from .notes import (
    ac_statistic,
    decay_activation,
    eq11_placement,
    features_confound,
    figure1_accounting,
    gain_over_hf,
    implied_batch,
    lemma31_in_runs,
    line32_vs_eq7,
    phase2,
    precondition,
    printed_decay_cells,
    repeated_cells,
)
from .tables import runs_table, schedule_table

__all__ = [
    'ablation_cells', 'ac_statistic', 'cell_name', 'decay_activation', 'eps_key', 'eq11_placement',
    'features_confound', 'Figure1', 'figure1_accounting', 'gain_over_hf', 'implied_batch', 'lemma31_in_runs',
    'line32_vs_eq7', 'METHODS', 'n_train', 'PAPER', 'phase2', 'precondition', 'printed_decay_cells',
    'repeated_cells', 'runs_table', 'sampling_figure', 'schedule_figure', 'schedule_table', 'sigma_figure',
    'table3_cells', 'training_figure', 'training_points',
]
