"""Tables and the figure of the SA-DPSGD chapter, all computed (:mod:`dpnotes.experiments.sadpsgd`).

Layout (the same for every paper, :mod:`dpnotes.report`):

* :mod:`.tables`: the paper's values next to ours, as tables (``*_frame``, ``*_table``)
* :mod:`.figures`: the chapter's figures, drawn on matplotlib axes
* :mod:`.notes`: the chapter's findings: data and text (:class:`dpnotes.report.findings.Finding` or markdown)
"""

from __future__ import annotations

from .figures import FIG3_SCHEMES, acceptance_chart, acceptance_figure, figure, figure3, figure3_chart
from .notes import energy_finding, findings_markdown, measured_findings
from .tables import (
    KINDS,
    RATES,
    acceptance_frame,
    break_even_frame,
    coverage_frame,
    runs_frame,
    sa_runs,
    settings_frame,
    stopping_frame,
    table3_frame,
)

__all__ = [
    'acceptance_chart', 'acceptance_figure', 'acceptance_frame', 'break_even_frame', 'coverage_frame',
    'energy_finding', 'FIG3_SCHEMES', 'figure', 'figure3', 'figure3_chart', 'findings_markdown', 'KINDS',
    'measured_findings', 'RATES', 'runs_frame', 'sa_runs', 'settings_frame', 'stopping_frame', 'table3_frame',
]
