"""The contract every paper's experiments module meets, as a :class:`typing.Protocol`.

:mod:`dpnotes.experiments` describes each name; ``tests/test_experiments_protocol.py`` checks
all five paper modules (and the audit study, which runs like a paper) against it: the names
exist with the right types, and the functions take the parameters the runner and the report
pass them. Optional names (``SUBSTITUTES``, ``METHOD_VERSIONS``, ``NOT_RUN``) are listed in
:data:`OPTIONAL` with their types.
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


OPTIONAL = {"SUBSTITUTES": dict, "METHOD_VERSIONS": dict, "NOT_RUN": dict, "NOT_RUN_DEFAULT": str}
