"""LabelDP: the experiments behind LabelDP's tables and figures (placeholder).

B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep Learning with Label Differential Privacy.
NeurIPS 2021.

No reproduction is implemented yet: :func:`configs` returns no runs for any profile,
:func:`execute` refuses, and :func:`evaluate` answers no claim, so every claim of the paper
is reported as not run, with the reason in :data:`NOT_RUN` where one is known (data that
is not available offline, values the extracted paper text lost,
baselines the paper quotes from other papers).
"""

from __future__ import annotations

from pathlib import Path

from dpnotes import claims, validate
from dpnotes.results import PROFILES

TITLE = (
    "B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. "
    "Deep Learning with Label Differential Privacy. NeurIPS 2021."
)

NOT_RUN_DEFAULT = "no reproduction implemented yet"

# Claim-id prefixes whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "labeldp.table1.lp_1st_pretrain": "CIFAR-100 (pre-training)",
    "labeldp.table1.lp_2st_pretrain": "CIFAR-100 (pre-training)",
    "labeldp.table2": "CIFAR-100",
    "labeldp.sec5_1.cifar100": "CIFAR-100",
    "labeldp.table3": "MovieLens 1M (MovieLens 100k is the labelled substitute)",
    "labeldp.sec5_1.movielens": "MovieLens 1M (MovieLens 100k is the labelled substitute)",
    "labeldp.table5": "KMNIST",
    "labeldp.appc.kmnist": "KMNIST",
    "labeldp.appb.dino": "ImageNet-pretrained DINO weights",
    "labeldp.sec5_2.ssl_priors_help": "ImageNet-pretrained DINO weights (Figure 1(b) also uses BYOL on CIFAR-10)",
}


def _reason(claim: claims.Claim) -> str | None:
    """Why a claim cannot be answered offline or at all, or ``None`` for the default."""
    note = claim.note or ""
    if claim.value is None and "missing from the extracted text" in note:
        return "paper value missing from the extracted text"
    if note.startswith("Baseline quoted from"):
        return "baseline quoted from another paper, not an experiment of this paper"
    for prefix, dataset in _OFFLINE.items():
        if claim.id.startswith(prefix):
            return f"data not available offline: {dataset}"
    if "missing from the extracted text" in note:
        return "its privacy budget (the column header) is missing from the extracted text"
    return None


NOT_RUN = {c.id: r for c in claims.load("labeldp") if (r := _reason(c)) is not None}


def configs(profile: str) -> list[dict]:
    """Run configs for ``profile`` (``smoke``, ``quick``, ``paper``): none yet."""
    validate.choice("profile", profile, PROFILES)
    return []


def execute(config: dict, *, device: str, progress: bool, checkpoint: Path | None) -> dict:
    """Not implemented: no LabelDP run exists yet."""
    raise NotImplementedError(
        f"no LabelDP experiment is implemented yet (config {config.get('experiment')!r})")


def evaluate(records: list[dict]) -> list:
    """Evidence for the claims this module answers: none yet."""
    return []
