"""The contract every paper's experiments module meets, as a :class:`typing.Protocol`.

:mod:`dpnotes.experiments` describes each name; ``tests/test_experiments_protocol.py`` checks
all five paper modules (and the audit study, which runs like a paper) against it: the names
exist with the right types, and the functions take the parameters the runner and the report
pass them. Optional names (``SUBSTITUTES``, ``METHOD_VERSIONS``, ``NOT_RUN``) are listed in
:data:`OPTIONAL` with their types.

Each paper's module is a package of the same layout (:data:`LAYOUT`, plus the paper's own
:data:`EXTRAS`), every module of it at most :data:`LINE_CAP` lines; its ``__init__`` re-exports
the contract from the submodule :data:`HOME` names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class PaperModule(Protocol):
    """A paper's experiments module (:mod:`dpnotes.experiments`)."""

    TITLE: str
    PAPER: str
    DATA_VERSION: int

    def configs(self, profile: str) -> list[dict]:
        """The run configs at ``profile`` (smoke, quick, paper)."""

    def execute(self, spec: Any, *, device: str = "cpu", progress: bool = True,
                checkpoint: Path | None = None) -> dict:
        """One resolved spec trained: ``{"epochs", "final", "privacy"}``."""

    def measure(self, records: list[dict]) -> list:
        """Our value for each claim it answers (:class:`dpnotes.experiments.measurement.Measurement`)."""


@runtime_checkable
class StudyModule(Protocol):
    """A study that runs like a paper (:data:`dpnotes.experiments.STUDIES`): configs and execute."""

    DATA_VERSION: int

    def configs(self, profile: str) -> list[dict]: ...

    def execute(self, spec: Any, *, device: str = "cpu", progress: bool = True,
                checkpoint: Path | None = None) -> dict: ...


OPTIONAL = {"SUBSTITUTES": dict, "DIFFERENCES": tuple, "METHOD_VERSIONS": dict, "NOT_RUN": dict, "NOT_RUN_DEFAULT": str}


LAYOUT = {
    "settings": "the paper's identity (TITLE, PAPER, DATA_VERSION), its settings from the claims registry and ours",
    "privacy": "the paper's privacy arithmetic, exact (no training)",
    "runs": "the profiles and run configs (configs)",
    "training": "data loading and one run (execute)",
    "cells": "what the records hold, cell by cell, for measure and the chapter",
    "answers": "our value for each claim (measure)",
    "not_run": "why every other claim is not run (the reason table; reasons() gives NOT_RUN)",
}
EXTRAS = {"dplis": ("toy",), "gdp": ("data",)}  # Figure 2's toy example; the four data sets as GDP prepares them
HOME = {"configs": "runs", "execute": "training", "measure": "answers", "reasons": "not_run"}
LINE_CAP = 300
