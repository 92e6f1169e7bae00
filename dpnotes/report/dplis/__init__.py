"""The DPlis chapter's findings, tables and figures, written from run records, the claims
registry and the computations of :mod:`.checks`,
:mod:`dpnotes.experiments.dplis` and :mod:`dpnotes.experiments.dplis.toy`; each returns data and
text (:class:`Finding`) or a rendered table or figure, so that a notebook cell is one call.

Layout (the same for every paper, :mod:`dpnotes.report`):

* :mod:`.cells`: the cells and settings the tables, figures and findings read
* :mod:`.tables`: the paper's values next to ours, as tables (``*_frame``, ``*_table``)
* :mod:`.figures`: the chapter's figures, drawn on matplotlib axes
* :mod:`.notes`: the chapter's findings: data and text (:class:`dpnotes.report.findings.Finding` or markdown)
* :mod:`.checks`: the computed findings of the paper's code and conventions, each data and text
"""

from __future__ import annotations

from .cells import PAPER
from .figures import gains_figure, table9_figure, toy_figure
from .notes import (
    budgets_and_toy,
    code_vs_paper,
    combine_effect,
    r_best,
    sd_convention,
    single_run_gains,
    table9_scale,
    theorem3,
    zero_sharpness,
)
from .tables import epoch_table, first_column_gains, runs_table, toy_table

__all__ = [
    'budgets_and_toy', 'code_vs_paper', 'combine_effect', 'epoch_table', 'first_column_gains', 'gains_figure',
    'PAPER', 'r_best', 'runs_table', 'sd_convention', 'single_run_gains', 'table9_figure', 'table9_scale',
    'theorem3', 'toy_figure', 'toy_table', 'zero_sharpness',
]
