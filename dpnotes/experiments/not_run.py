"""Why a claim is not run, where the registry itself says so (shared by the experiments modules).

Notes in the claims registry mark values lost in text extraction and baselines a paper quotes
from elsewhere; a module adds the datasets its claims need that the offline mirror lacks.
"""

from __future__ import annotations

from dpnotes import claims


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
