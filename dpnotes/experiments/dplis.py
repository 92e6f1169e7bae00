"""DPlis: the experiments behind DPlis's tables and figures (placeholder).

W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. DPlis: Boosting Utility of Differentially
Private Deep Learning via Randomized Smoothing. PETS 2021.

No reproduction is implemented yet (see :mod:`dpnotes.experiments.placeholder`): every claim
of the paper is reported as not run, with the reason in :data:`NOT_RUN` where one is known
(data that is not available offline, values the extracted paper text lost).
"""

from __future__ import annotations

from dpnotes.experiments.placeholder import (  # noqa: F401  (the module contract)
    NOT_RUN_DEFAULT, configs, measure, not_run_reasons, unimplemented)

TITLE = (
    "W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. "
    "DPlis: Boosting Utility of Differentially Private Deep Learning via Randomized Smoothing. PETS 2021."
)

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

NOT_RUN = not_run_reasons("dplis", _OFFLINE)
execute = unimplemented("DPlis")
