"""What the experiments module of a paper without a reproduction shares with the others.

Such a module runs nothing: :func:`configs` returns no runs, :func:`measure` answers no
claim, and its ``execute`` (made by :func:`unimplemented`) refuses.  Every claim of the paper
is then reported ``not_run``, with the reason from :func:`not_run_reasons` where a specific
one is known.
"""

from __future__ import annotations

from pathlib import Path

from dpnotes import claims, validate
from dpnotes.experiments.measurement import Measurement
from dpnotes.results import PROFILES

NOT_RUN_DEFAULT = "no reproduction implemented yet"


def not_run_reasons(paper: str, offline: dict[str, str]) -> dict[str, str]:
    """Claim id -> why it cannot be answered, for the claims with a specific reason.

    ``offline`` maps claim-id prefixes to the datasets (absent from the offline mirror)
    their reproduction needs.  Notes in the registry mark values lost in text extraction
    and baselines a paper quotes from elsewhere.
    """
    reasons = {}
    for claim in claims.load(paper):
        note = claim.note or ""
        dataset = next((d for prefix, d in offline.items() if claim.id.startswith(prefix)), None)
        if claim.value is None and "missing from the extracted text" in note:
            reasons[claim.id] = "paper value missing from the extracted text"
        elif note.startswith("Baseline quoted from"):
            reasons[claim.id] = "baseline quoted from another paper, not an experiment of this paper"
        elif dataset is not None:
            reasons[claim.id] = f"data not available offline: {dataset}"
        elif "missing from the extracted text" in note:
            reasons[claim.id] = "its privacy budget (the column header) is missing from the extracted text"
    return reasons


def configs(profile: str) -> list[dict]:
    """Run configs for ``profile`` (``smoke``, ``quick``, ``paper``): none yet."""
    validate.choice("profile", profile, PROFILES)
    return []


def measure(records: list[dict]) -> list[Measurement]:
    """Measurements of the claims this module answers: none yet."""
    return []


def unimplemented(paper_name: str):
    """An ``execute`` that refuses, naming the paper."""

    def execute(config: dict, *, device: str, progress: bool, checkpoint: Path | None) -> dict:
        raise NotImplementedError(
            f"no {paper_name} experiment is implemented yet (config {config.get('experiment')!r})")

    execute.__doc__ = f"Not implemented: no {paper_name} run exists yet."
    return execute
