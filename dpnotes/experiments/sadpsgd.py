"""SA-DPSGD: the experiments behind SA-DPSGD's tables and figures (placeholder).

J. Fu, Z. Chen, X. Ling. SA-DPSGD: Differentially Private Stochastic Gradient Descent based on Simulated
Annealing. 2022.

No reproduction is implemented yet: :func:`configs` returns no runs for any profile,
:func:`execute` refuses, and :func:`evaluate` answers no claim, so every claim of the paper
is reported as not run, with the reason in :data:`NOT_RUN` where one is known (data that
is not available offline, values the extracted paper text lost).
"""

from __future__ import annotations

from pathlib import Path

from dpnotes import claims, validate
from dpnotes.results import PROFILES

TITLE = (
    "J. Fu, Z. Chen, X. Ling. "
    "SA-DPSGD: Differentially Private Stochastic Gradient Descent based on Simulated Annealing. 2022."
)

NOT_RUN_DEFAULT = "no reproduction implemented yet"

# Claim-id prefixes whose reproduction needs data that is not in the offline mirror (all of
# SA-DPSGD's datasets, MNIST, Fashion-MNIST and CIFAR-10, are in it).
_OFFLINE: dict[str, str] = {}


def _reason(claim: claims.Claim) -> str | None:
    """Why a claim cannot be answered offline or at all, or ``None`` for the default."""
    note = claim.note or ""
    if claim.value is None and "missing from the extracted text" in note:
        return "paper value missing from the extracted text"
    for prefix, dataset in _OFFLINE.items():
        if claim.id.startswith(prefix):
            return f"data not available offline: {dataset}"
    return None


NOT_RUN = {c.id: r for c in claims.load("sadpsgd") if (r := _reason(c)) is not None}


def configs(profile: str) -> list[dict]:
    """Run configs for ``profile`` (``smoke``, ``quick``, ``paper``): none yet."""
    validate.choice("profile", profile, PROFILES)
    return []


def execute(config: dict, *, device: str, progress: bool, checkpoint: Path | None) -> dict:
    """Not implemented: no SA-DPSGD run exists yet."""
    raise NotImplementedError(
        f"no SA-DPSGD experiment is implemented yet (config {config.get('experiment')!r})")


def evaluate(records: list[dict]) -> list:
    """Evidence for the claims this module answers: none yet."""
    return []
