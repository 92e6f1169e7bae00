"""DPlis's accounting, exact (no training): Table 1's settings and their epsilon (RDP of the subsampled
Gaussian, as the paper and TensorFlow Privacy's tutorial price it), the eps columns of Tables 2-3 matched to
epochs (:func:`column_match`, :func:`epoch_table`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpnotes import calc_cache, claims, validate
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.registry import price
from dpnotes.experiments.measurement import Measurement
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

from .settings import CONVERSION, DELTA, ORDERS, TF_TUTORIAL, _s


@dataclass(frozen=True)
class Setting:
    """How a data set is accounted: N training examples, expected batch L, noise sigma."""

    name: str
    label: str
    n: int
    batch_size: int
    sigma: float

    @property
    def q(self) -> float:
        return self.batch_size / self.n

    @property
    def steps_per_epoch(self) -> int:
        return self.n // self.batch_size  # N // L, as the authors' sampler

    def ledger(self, epochs: int) -> Ledger:
        """``epochs`` epochs of Poisson-subsampled Gaussian steps."""
        validate.integer("epochs", epochs, minimum=1)
        return Ledger().append(PoissonSampledDpEvent(self.q, GaussianDpEvent(self.sigma)),
                               epochs * self.steps_per_epoch)


def _table1(row: str, label: str, n: float) -> Setting:
    return Setting(row, label, int(n), int(_s(f"table1.{row}.batch_size")), _s(f"table1.{row}.sigma"))


@lru_cache(maxsize=None)
def setting(name: str) -> Setting:
    """The accounting setting of ``name``: a Table 2 data set (``mnist``, ``cifar10``) or a
    Table 3 transfer task (``imagenet_cifar100``, ``celeba_pubfig83``, ``celeba_celeba1000``).
    N is Table 4's N_train for the first three and Section 5.1's training-set size for the
    face tasks (the same numbers Table 4 prints)."""
    makers = {
        "mnist": lambda: _table1("mnist", "MNIST", claims.get("dplis.table4.mnist.n_train").number),
        "cifar10": lambda: _table1("cifar10", "CIFAR-10", claims.get("dplis.table4.cifar10.n_train").number),
        "imagenet_cifar100": lambda: _table1("imagenet_cifar100", "ImageNet->CIFAR-100",
                                             claims.get("dplis.table4.cifar100.n_train").number),
        "celeba_pubfig83": lambda: _table1("celeba_pubfig83", "CelebA->PubFig83",
                                           _s("setup.pubfig83_n_train")),
        "celeba_celeba1000": lambda: _table1("celeba_celeba1000", "CelebA->CelebA1000",
                                             _s("setup.celeba1000_n_train")),
    }
    return makers[validate.choice("name", name, makers)]()


@lru_cache(maxsize=None)
def _rdp_per_epoch(name: str) -> np.ndarray:
    s = setting(name)
    return subsampled_gaussian_rdp(s.q, s.sigma, s.steps_per_epoch, resolve_orders(ORDERS))


def epsilon(name: str, epochs: int) -> float:
    """The paper's eps after ``epochs`` epochs of ``name`` (integer orders, classic, DELTA)."""
    validate.integer("epochs", epochs, minimum=1)
    return rdp_to_epsilon(epochs * _rdp_per_epoch(name), resolve_orders(ORDERS), DELTA, CONVERSION)[0]


def epsilon_tf_tutorial(name: str, epochs: int) -> float:
    """eps of the same ledger priced by the registry's ``rdp-classic`` (TF-tutorial orders)."""
    return price(setting(name).ledger(epochs), DELTA, TF_TUTORIAL)[TF_TUTORIAL]["epsilon"]


@dataclass(frozen=True)
class ColumnMatch:
    """Where a printed eps column falls on the epoch grid of one data set."""

    claim_id: str
    dataset: str
    printed: float  # the paper's value
    decimals: int
    epoch: int  # the epoch boundary whose eps is nearest to the printed value
    eps: float
    below: tuple[int, float]  # last epoch with eps <= printed, and its eps
    above: tuple[int, float]  # first epoch with eps > printed, and its eps

    @property
    def attained(self) -> bool:
        """Whether the nearest epoch's eps prints as the paper's value."""
        return float(f"{self.eps:.{self.decimals}f}") == self.printed

    def describe(self) -> str:
        s = setting(self.dataset)
        where = (f"{s.label} (q = {s.batch_size}/{s.n}, {s.steps_per_epoch} steps/epoch, "
                 f"sigma {s.sigma:g})")
        if self.attained:
            return f"{where}: epoch {self.epoch} gives {self.eps:.4f}"
        (e0, v0), (e1, v1) = self.below, self.above
        return (f"{where}: no epoch boundary prints {self.printed:.{self.decimals}f} "
                f"(epoch {e0}: {v0:.4f}, epoch {e1}: {v1:.4f}); nearest shown")


@lru_cache(maxsize=None)
def column_match(claim_id: str, dataset: str) -> ColumnMatch:
    """The epoch of ``dataset`` at which eps column ``claim_id`` is read (nearest eps). A pure
    value: within ``dpnotes scoreboard``, from :mod:`dpnotes.calc_cache`."""
    return calc_cache.cached("dplis.column_match", (claim_id, dataset), lambda: _column_match(claim_id, dataset))


def _column_match(claim_id: str, dataset: str) -> ColumnMatch:
    claim = claims.get(claim_id)
    target = claim.number
    if target is None:
        raise ValueError(f"{claim_id} has no printed value")
    epoch = 1
    while epsilon(dataset, epoch) <= target:
        epoch += 1  # eps grows with the epochs: the first epoch above the printed value
    if epoch == 1:
        raise ValueError(f"{claim_id}: one epoch of {dataset} already exceeds {target}")
    below, above = (epoch - 1, epsilon(dataset, epoch - 1)), (epoch, epsilon(dataset, epoch))
    nearest = min((below, above), key=lambda p: abs(p[1] - target))
    return ColumnMatch(claim_id, dataset, target, claim.decimals, nearest[0], nearest[1], below, above)


TABLE2_DATASETS = ("mnist", "cifar10")
TABLE2_COLUMNS = ("eps1_99", "eps5_01", "eps7_01", "eps10_00")  # claim-id names of the columns
TABLE3_TASKS = ("imagenet_cifar100", "celeba_pubfig83", "celeba_celeba1000")


def eps_columns() -> list[tuple[str, tuple[str, ...]]]:
    """(claim id, data sets that share the column) of every eps column we compute."""
    out = [(f"dplis.table2.col{i}.epsilon", TABLE2_DATASETS) for i in range(1, 5)]
    out += [(f"dplis.table3.{t}.col{i}.epsilon", (t,)) for t in TABLE3_TASKS for i in range(1, 6)]
    return out


def column_epoch(dataset: str, column: str) -> int:
    """The epoch at which Table 2 column ``column`` (e.g. ``"eps1_99"``) is read on ``dataset``."""
    i = TABLE2_COLUMNS.index(validate.choice("column", column, TABLE2_COLUMNS)) + 1
    return column_match(f"dplis.table2.col{i}.epsilon", validate.choice("dataset", dataset, TABLE2_DATASETS)).epoch


def _eps_column_claim(claim_id: str, datasets: tuple[str, ...]) -> Measurement:
    """Our eps for a column shared by ``datasets``: the nearest epoch's eps of the first data
    set that does not attain the printed value (else of the first data set); the basis lists
    every data set's epoch and eps."""
    matches = [column_match(claim_id, d) for d in datasets]
    shown = next((m for m in matches if not m.attained), matches[0])
    basis = (f"computed: RDP of the Poisson-subsampled Gaussian at integer orders 2..64, classic "
             f"conversion, delta {DELTA:g}, at epoch boundaries; " + "; ".join(m.describe() for m in matches))
    return Measurement(claim_id, "exact", (shown.eps,), basis=basis,
                       detail=None if shown.attained else shown.describe())


def unattained_columns() -> list[ColumnMatch]:
    """Every (eps column, data set) whose printed eps no epoch boundary gives (a finding)."""
    return [m for cid, ds in eps_columns() for m in (column_match(cid, d) for d in ds) if not m.attained]


def epoch_table(max_epochs: int | None = None):
    """For the chapter: each Table 2/3 eps column on each of its data sets: the epoch read,
    our eps there (integer orders) and the TF-tutorial-orders eps of the same ledger."""
    import pandas as pd

    rows = []
    for cid, datasets in eps_columns():
        for d in datasets:
            m = column_match(cid, d)
            rows.append({"column": cid.removeprefix("dplis.").removesuffix(".epsilon"),
                         "data": setting(d).label, "paper eps": claims.get(cid).value,
                         "epoch": m.epoch, "eps (integer orders)": round(m.eps, 4),
                         "eps (TF-tutorial orders)": round(epsilon_tf_tutorial(d, m.epoch), 4),
                         "prints as paper": m.attained})
    return pd.DataFrame(rows)
