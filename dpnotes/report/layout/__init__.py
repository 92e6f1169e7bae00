"""The papers' tables in the papers' own layout, and the "What held" box that opens a chapter.

Both read rows of :func:`dpnotes.report.scoreboard` (the claims registry joined with our
measurements and verdicts) and add nothing to them: a cell shows the paper's value and ours,
coloured by the verdict, with the seeds, the difference and any caveat on the page (never only
in a hover). Rows are read with ``row.get`` for the keys of the verdict rules' second version
(``seeds``, ``paired``, ``fidelity``, ``substitute``, ``note``, ``category``), shown when present.

- :func:`grid`: one paper table (a :class:`Grid`) as HTML. Cells not run are not spread over
  the page: rows, columns and groups with nothing run are dropped, and every cell not run is
  counted in one line per reason under the table.
- :func:`what_held`: a paper's headline claims (:mod:`dpnotes.report.headlines`), paper against
  ours with seeds, fidelity and verdict, and one sentence from :func:`answer`.
- :func:`answers`: the five answers, linked, for the index page.

Modules:

* :mod:`.cells`: one cell of a paper table: the paper's value and ours, seeds, difference, basis, caveats (``Grid``)
* :mod:`.tables`: a paper table laid out (:func:`grid`) and each paper's tables in its own layout (``TABLES``)
* :mod:`.summary`: the "What held" box that opens a chapter and the five answers of the index page
"""

from __future__ import annotations

from .cells import STYLE, Grid, basis, cross, ours_text, paper_text, seeds
from .summary import RULE, answer, answers, answers_markdown, paper_what_held, seed_spread, what_held
from .tables import TABLES, grid, paper_grids

__all__ = [
    'answer', 'answers', 'answers_markdown', 'basis', 'cross', 'Grid', 'grid', 'ours_text', 'paper_grids',
    'paper_text', 'paper_what_held', 'RULE', 'seed_spread', 'seeds', 'STYLE', 'TABLES', 'what_held',
]
