"""One module per paper: the runs behind its tables and figures, and how they answer its claims.

Every module ``dpnotes.experiments.<paper>`` defines:

``TITLE: str``
    The paper's citation line.
``configs(profile: str) -> list[dict]``
    The run configs for a profile (``smoke``, ``quick``, ``paper``).  Each config is
    JSON-serialisable and holds everything that determines the run, at least
    ``paper``, ``profile``, ``experiment`` (e.g. ``"table1.row2"``) and ``seed``.
    ``--only PATTERN`` matches ``experiment`` with :func:`fnmatch.fnmatch`.
``execute(config: dict, *, device: str, progress: bool, checkpoint: pathlib.Path | None) -> dict``
    Runs one config and returns ``{"epochs": [per-epoch metric dicts], "final": {...},
    "privacy": {"accountant": name, "epsilon": .., "delta": .., ...}}``.  The runner
    adds the rest of the run record (see :mod:`dpnotes.results`).
``measure(records: list[dict]) -> list[dpnotes.experiments.measurement.Measurement]``
    Our value for each claim of the paper that the module can answer, computed from
    run records (training claims) or directly (exact claims), and the kind of rule that
    judges it; never a verdict: :mod:`dpnotes.report.verdicts` alone decides those.
    Claims a module does not answer are reported as ``not_run`` with
    ``NOT_RUN.get(claim_id, NOT_RUN_DEFAULT)`` as the reason.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from dpnotes.claims import PAPERS


def module(paper: str) -> ModuleType:
    """The experiments module of a paper; ``ValueError`` for an unknown paper."""
    if paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}; got {paper!r}")
    return importlib.import_module(f"{__name__}.{paper}")
