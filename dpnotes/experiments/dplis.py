"""DPlis: the experiments behind DPlis's tables and figures (placeholder).

W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. DPlis: Boosting Utility of Differentially
Private Deep Learning via Randomized Smoothing. PETS 2021.

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
    "W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. "
    "DPlis: Boosting Utility of Differentially Private Deep Learning via Randomized Smoothing. PETS 2021."
)

NOT_RUN_DEFAULT = "no reproduction implemented yet"

# Claim-id prefixes whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "dplis.table3.imagenet_cifar100": "CIFAR-100 and ImageNet-pretrained EfficientNet-b0 weights",
    "dplis.table3.celeba_pubfig83": "PubFig83 and CelebA",
    "dplis.table3.celeba_celeba1000": "CelebA",
    "dplis.table4.cifar100": "CIFAR-100",
    "dplis.table4.pubfig83": "PubFig83",
    "dplis.table4.celeba1000": "CelebA",
    "dplis.table5": "Reddit comments and the Brown corpus",
    "dplis.table12": "SVHN",
    "dplis.table13": "SVHN",
    "dplis.sec5_2.transfer": "CIFAR-100, PubFig83, CelebA",
    "dplis.sec5_2.pretrained_comparable": "CIFAR-100 and ImageNet-pretrained weights",
    "dplis.sec5_2.reddit": "Reddit comments and the Brown corpus",
    "dplis.sec5_2.lstm": "Reddit comments and the Brown corpus",
    "dplis.sec5_3.larger_k_better": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_3.k3_already_helps": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_7": "SVHN",
    "dplis.intro.perplexity_reduction": "Reddit comments and the Brown corpus",
    "dplis.intro.pate_gain": "SVHN",
}


def _reason(claim: claims.Claim) -> str | None:
    """Why a claim cannot be answered offline or at all, or ``None`` for the default."""
    note = claim.note or ""
    if claim.value is None and "missing from the extracted text" in note:
        return "paper value missing from the extracted text"
    for prefix, dataset in _OFFLINE.items():
        if claim.id.startswith(prefix):
            return f"data not available offline: {dataset}"
    return None


NOT_RUN = {c.id: r for c in claims.load("dplis") if (r := _reason(c)) is not None}


def configs(profile: str) -> list[dict]:
    """Run configs for ``profile`` (``smoke``, ``quick``, ``paper``): none yet."""
    validate.choice("profile", profile, PROFILES)
    return []


def execute(config: dict, *, device: str, progress: bool, checkpoint: Path | None) -> dict:
    """Not implemented: no DPlis run exists yet."""
    raise NotImplementedError(
        f"no DPlis experiment is implemented yet (config {config.get('experiment')!r})")


def evaluate(records: list[dict]) -> list:
    """Evidence for the claims this module answers: none yet."""
    return []
