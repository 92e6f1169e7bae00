"""Why every GDP claim that :func:`~.answers.measure` does not answer is not run: a table of (claim-id
pattern, reason) rows (:mod:`dpnotes.experiments.not_run`).
"""

from __future__ import annotations

from dpnotes.experiments import not_run

from .settings import PAPER

NOT_RUN_DEFAULT = not_run.DEFAULT
NOT_RUN_TABLE = (
    ("gdp.table4.*.rmse",
     "MovieLens-1M is not available offline; the MovieLens-100k substitute is shown in the chapter"),
)


def reasons() -> dict[str, str]:
    """Claim id -> why it is not run, for every claim not measured (``NOT_RUN``)."""
    return not_run.reasons(PAPER, NOT_RUN_TABLE)
