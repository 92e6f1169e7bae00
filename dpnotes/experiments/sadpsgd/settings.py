"""SA-DPSGD (Simulated-annealing DP-SGD): the paper's identity, its settings read from the claims registry
(``dpnotes/claims/sadpsgd.toml``), the schemes we run and ``SUBSTITUTES``.
"""

from __future__ import annotations

from dpnotes import claims, validate
from dpnotes.experiments.differences import Difference

TITLE = (
    "J. Fu, Z. Chen, X. Ling. "
    "SA-DPSGD: Differentially Private Stochastic Gradient Descent based on Simulated Annealing. 2022."
)
PAPER = "sadpsgd"
DATA_VERSION = 1
DATASETS = ("mnist", "fmnist", "cifar10")
DATA_NAMES = {"mnist": "mnist", "fmnist": "fashion-mnist", "cifar10": "cifar-10"}
READER_NAMES = {"mnist": "MNIST", "fmnist": "Fashion-MNIST", "cifar10": "CIFAR-10"}  # on pages and in verdicts
# Section 4.1 states one training-set size for MNIST and Fashion-MNIST (registered under mnist).
_SIZE_KEY = {"mnist": "mnist", "fmnist": "mnist", "cifar10": "cifar10"}
ACCEPTED_ONLY = "sadpsgd-accepted-only"  # Theorem 1, as printed (not a sound bound)
SOUND = ("rdp-classic", "rdp", "pld")  # the registry's sound accountants shown beside it
SCHEMES = ("sa_dpsgd", "dpsgd_tanh", "dpsgd", "dpsgd_auto_s")  # Table 1 columns we can run (see NOT_RUN)
TABLE3_SCHEME = {"d": "dpsgd", "h": "dpsgd_tanh", "a": "dpsgd_auto_s", "s": "sa_dpsgd"}  # Table 3 column keys


def _s(name: str) -> float:
    return claims.setting(f"sadpsgd.{name}")


def _dataset(ds: str) -> str:
    return validate.choice("dataset", ds, DATASETS)


# Each substitute, what it changes, how much of a verdict it explains and whether the paper's setting
# was run (dpnotes.experiments.differences; the chapter's "Where we differ from the paper").
DIFFERENCES = (
    Difference(
        "Sec. 4.2 judged without CIFAR-10", "the data sets of the comparison: the sentence covers three",
        ("sadpsgd.sec4_2.lowest_privacy_cost",), "queued: CIFAR-10's Table 3 runs (GPU campaign)",
        unmeasured="a missing data set is not a shift: the sentence may fail on CIFAR-10 alone, which only its runs "
                   "can tell", queued=("table3.cifar10.*",)),
)
