"""The GDP chapter's tables and figures: the paper's next to ours (presentation only: the
values come from :mod:`dpnotes.experiments.gdp`, the verdicts from :mod:`dpnotes.report.verdicts`).

Each ``*_frame`` returns a pandas DataFrame whose "paper" columns come from the claims
registry and whose "ours" columns are computed (accounting) or read from run records
(training); each figure function draws on matplotlib axes it is given. Training numbers
are taken from paper-profile records; runs of a scaled-down profile are shown in their own
columns, labelled as such, never in place of the paper's settings.

Layout (the same for every paper, :mod:`dpnotes.report`):

* :mod:`.tables`: the paper's values next to ours, as tables (``*_frame``, ``*_table``)
* :mod:`.figures`: the chapter's figures, drawn on matplotlib axes
* :mod:`.notes`: the chapter's findings: data and text (:class:`dpnotes.report.findings.Finding` or markdown)
"""

from __future__ import annotations

from .figures import MA_ENVELOPE_DELTAS, appendix_a, figure2, figure3, figure4
from .notes import (
    _round_text,
    _truncate_text,
    digit_candidates,
    digit_explanations,
    findings,
    findings_markdown,
    summary_line,
    table1_rounding,
)
from .tables import (
    AUTHORS_SAMPLING,
    IMDB_COMPARISON,
    accountants_frame,
    clt_gap_frame,
    figure4_budget_frame,
    imdb_comparison_frame,
    min_error_frame,
    shuffling_frame,
    store_counts,
    table1_frame,
    table2_frame,
    table3_frame,
    table4_frame,
)

__all__ = [
    '_round_text', '_truncate_text', 'accountants_frame', 'appendix_a', 'AUTHORS_SAMPLING', 'clt_gap_frame',
    'digit_candidates', 'digit_explanations', 'figure2', 'figure3', 'figure4', 'figure4_budget_frame', 'findings',
    'findings_markdown', 'IMDB_COMPARISON', 'imdb_comparison_frame', 'MA_ENVELOPE_DELTAS', 'min_error_frame',
    'shuffling_frame', 'store_counts', 'summary_line', 'table1_frame', 'table1_rounding', 'table2_frame',
    'table3_frame', 'table4_frame',
]
