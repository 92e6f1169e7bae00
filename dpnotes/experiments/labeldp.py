"""LabelDP: the experiments behind LabelDP's tables and figures (placeholder).

B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. Deep Learning with Label Differential Privacy.
NeurIPS 2021.

No reproduction is implemented yet: :func:`configs` returns no runs for any profile,
:func:`execute` refuses, and :func:`measure` answers no claim, so every claim of the paper
is reported as not run, with the reason in :data:`NOT_RUN` where one is known (data that
is not available offline, values the extracted paper text lost,
baselines the paper quotes from other papers).
"""

from __future__ import annotations

from dpnotes.experiments.placeholder import (  # noqa: F401  (the module contract)
    NOT_RUN_DEFAULT, configs, measure, not_run_reasons, unimplemented)

TITLE = (
    "B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. "
    "Deep Learning with Label Differential Privacy. NeurIPS 2021."
)

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

NOT_RUN = not_run_reasons("labeldp", _OFFLINE)
execute = unimplemented("LabelDP")
