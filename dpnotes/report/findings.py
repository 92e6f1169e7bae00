"""A chapter's finding: what the records and the paper's own numbers show, as data and text.

Each paper's report module (:mod:`dpnotes.report.dpis`, :mod:`dpnotes.report.labeldp`, ...)
computes its findings as :class:`Finding` values, so that a notebook cell is one call
(``report.some_finding(stored).show()``) and the logic is unit-tested on small records.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Finding:
    """``text``: the note (Markdown, or a plain line when ``markdown`` is False; empty: none);
    ``data``: the numbers it is written from; ``shown``: tables or figures displayed before it."""

    text: str
    data: Any = None
    shown: tuple = field(default_factory=tuple)
    markdown: bool = True

    def show(self) -> None:
        """Display ``shown`` in order, then the text (as Markdown, or printed)."""
        from IPython.display import Markdown, display

        from dpnotes.report import labels

        for item in self.shown:
            if type(item).__name__ == "DataFrame":  # a frame is shown as the book's tables are (no index column)
                from dpnotes.report import tables

                item = tables.table(item, title="The numbers behind the finding below")
            display(item)
        if self.text:
            if self.markdown:
                display(Markdown(labels.markdown(self.text)))
            else:
                print(labels.words(self.text))


def note(text: str, data: Any = None) -> Finding:
    """A plain printed line (e.g. what is not stored yet)."""
    return Finding(text, data, markdown=False)
