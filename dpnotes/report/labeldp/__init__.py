"""The LabelDP chapter's findings, tables and figures, computed from run records and the claims
registry (:mod:`dpnotes.experiments.labeldp`); each returns data and text (:class:`Finding`) or a
rendered table or figure, so that a notebook cell is one call.

Layout (the same for every paper, :mod:`dpnotes.report`):

* :mod:`.cells`: the cells and settings the tables, figures and findings read
* :mod:`.tables`: the paper's values next to ours, as tables (``*_frame``, ``*_table``)
* :mod:`.figures`: the chapter's figures, drawn on matplotlib axes
* :mod:`.notes`: the chapter's findings: data and text (:class:`dpnotes.report.findings.Finding` or markdown)
"""

from __future__ import annotations

from .cells import PAPER, eps_name, mechanism_curves, table4_cells, table4_points
from .figures import mechanism_figure, table4_figure
from .notes import column_budgets, jax_off_by_one, lp1st_noise, lp_scaling, margin_20, recipe, settings_as_run
from .tables import checks_table, mechanism_table, movielens, recipe_grid, runs_table, split_grid, theorem3_table

__all__ = [
    'checks_table', 'column_budgets', 'eps_name', 'jax_off_by_one', 'lp1st_noise', 'lp_scaling', 'margin_20',
    'mechanism_curves', 'mechanism_figure', 'mechanism_table', 'movielens', 'PAPER', 'recipe', 'recipe_grid',
    'runs_table', 'settings_as_run', 'split_grid', 'table4_cells', 'table4_figure', 'table4_points',
    'theorem3_table',
]
