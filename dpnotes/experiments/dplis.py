"""Wang et al.: DPlis, randomized smoothing of the loss for DP-SGD (PETS 2021).

Every paper number is read from the claims registry (``dpnotes/claims/dplis.toml``).

What it answers without training: the privacy budgets printed as the column headers of
Tables 2 and 3 (pure accounting) and the dataset counts of Table 4. What it runs (profile
``paper``): the four rows of Table 2 and Table 11's tanh CIFAR-10 CNN at the eps = 1.99 column,
and Table 9 / Figure 6's landscape of the eps = 1.99 models; ``quick`` and ``smoke`` are
scaled-down versions of the Table 2 runs, never compared with the paper.

Accounting as in the paper (Sec. 2.3, 5.1) and the authors' code (REFERENCE.md, "DPlis"):
Poisson subsampling at q = L/N, N // L steps per epoch, the subsampled Gaussian's RDP at
the integer orders 2..64 with the classic conversion (autodp's ``get_eps``, which refines
between integer orders, agrees to about 1e-4 here), delta from Sec. 5.1, eps computed once per
epoch. The registry has no DPlis accountant: its ``rdp-classic`` uses TF Privacy's tutorial
orders (fractional, no 11), which give visibly different eps here (the chapter shows it), and
the only integer-order classic accountant is SA-DPSGD's ``sadpsgd-accepted-only``, whose name
and "unsound" label belong to that paper. So eps is computed with
:mod:`dpnotes.accounting.rdp` at explicit integer orders; the test suite checks that it equals
that accountant's price of the same (candidate-free) ledger.

The paper prints no epoch counts: a column's eps is read at the epoch boundary whose eps is
nearest to the printed value (the columns are checkpoints of one run). Where no epoch boundary
prints the paper's value, the measurement keeps the nearest one: a finding, not a match.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpnotes import claims, validate
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.registry import price
from dpnotes.experiments import measurement, not_run
from dpnotes.experiments.measurement import Measurement
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.record import Record
from dpnotes.results import PROFILES

TITLE = (
    "W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. "
    "DPlis: Boosting Utility of Differentially Private Deep Learning via Randomized Smoothing. PETS 2021."
)
PAPER = "dplis"
DATA_VERSION = 1  # MNIST / 255; CIFAR-10 / 255 then per-channel mean/std (REFERENCE.md)

ORDERS = "integer"  # RDP orders 2..64 (see the module docstring: not a registry accountant)
CONVERSION = "classic"
TF_TUTORIAL = "rdp-classic"  # the registry's TF-tutorial-orders accountant, for comparison only
DELTA = claims.setting("dplis.setup.delta")


def _s(name: str) -> float:
    return claims.setting(f"dplis.{name}")


# --------------------------------------------------------------------------------------
# Accounting.

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
    """The epoch of ``dataset`` at which eps column ``claim_id`` is read (nearest eps)."""
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


# --------------------------------------------------------------------------------------
# Table 4: the data sets' counts.

_T4_OFFLINE = {"cifar100": "CIFAR-100", "pubfig83": "PubFig83", "celeba1000": "CelebA"}


@lru_cache(maxsize=None)
def dataset_counts(name: str) -> tuple[int, int]:
    """(N_train, number of classes) counted on the training labels of ``mnist`` or ``cifar10``."""
    from dpnotes.data import read_labels

    y = read_labels({"mnist": "mnist", "cifar10": "cifar-10"}[validate.choice("name", name, ("mnist", "cifar10"))])
    return len(y), len(np.unique(y))


def _table4_claims() -> list[Measurement]:
    out = []
    for name in ("mnist", "cifar10"):
        try:
            n, m = dataset_counts(name)
        except FileNotFoundError as err:
            out += [measurement.missing(f"dplis.table4.{name}.{f}", f"data not available: {err}")
                    for f in ("n_train", "n_classes", "n_train_per_class")]
            continue
        basis = f"counted on the {name} training labels"
        out += [measurement.exact(f"dplis.table4.{name}.n_train", n, basis),
                measurement.exact(f"dplis.table4.{name}.n_classes", m, basis),
                measurement.exact(f"dplis.table4.{name}.n_train_per_class", n / m, basis)]
    # Offline data sets: only arithmetic on the paper's own counts (never a check of the data).
    for name, label in _T4_OFFLINE.items():
        n, m = (claims.get(f"dplis.table4.{name}.{f}").number for f in ("n_train", "n_classes"))
        out.append(measurement.exact(
            f"dplis.table4.{name}.n_train_per_class", n / m,
            f"arithmetic only: N_train / M of the paper's own Table 4 row ({label} is offline)"))
    out.append(measurement.exact(
        "dplis.table4.pubfig83.n_train", int(_s("setup.pubfig83_n_images") - _s("setup.pubfig83_n_test")),
        "arithmetic only: Section 5.1's image count minus its test-set size (PubFig83 offline)"))
    out.append(measurement.exact(
        "dplis.table4.pubfig83.n_classes", _s("setup.pubfig83_n_test") / _s("setup.pubfig83_test_per_identity"),
        "arithmetic only: Section 5.1's test-set size / test images per identity (PubFig83 offline)"))
    out.append(measurement.exact(
        "dplis.table4.celeba1000.n_train",
        int(_s("setup.celeba1000_n_identities") * _s("setup.celeba1000_images_per_identity")
            - _s("setup.celeba1000_n_test")),
        "arithmetic only: Section 5.1's identities x images per identity minus its test-set size (CelebA offline)"))
    return out


# --------------------------------------------------------------------------------------
# Run configs.
#
# Profile "paper": the eps = 1.99 column of Table 2's rows (MLP and CNN; MNIST, CIFAR-10) and of
# Table 11's row (the CIFAR-10 CNN with tanh, Sec. 5.6), for the three arms No smoothing (method
# dpsgd), R = 10 and R = R_best (Tables 6 and 11), K = 10 (Sec. 5.1). Every setting is the
# paper's (Table 1: L, eta/L as the lr of plain SGD on the noisy sum, sigma, C; Poisson
# sampling, N // L steps per epoch); the run stops at the epoch where eps reaches the column (26
# on MNIST, 21 on CIFAR-10, computed above). With a constant learning rate and evaluation after
# every epoch, those epochs ARE the first epochs of the paper's run to eps = 10, so the last
# epoch's test accuracy is the column's cell. The draws are combined by SUM over the K draws, as
# the authors' code that produced the tables (Alg. 2 / Eq. 6 write a mean; the chapter says so).
# Seed 0 first (the paper's tables are single runs), then seeds 1 and 2 (EXTRA_SEEDS); the arms of
# a seed share it, hence the same initialisation, batches and DP-noise stream (paired "gain" claims).
# Where R_best equals R = 10 (Table 11 at
# eps = 1.99) the R = 10 run answers both arms.
# The other three columns, Table 10 and Figures 3 and 7: the long runs below.
# Profile "quick": the same arms for 20 steps on a 2,000-image test subset (never compared
# with the paper); "smoke": MNIST, two arms, 2 steps of B = 64 on 512 examples.


@dataclass(frozen=True)
class Row:
    """A row of Table 2 or 11: its data set, model (registry name and kwargs) and the
    per-example gradient backend of its runs (None: the engine's default, ``func``)."""

    table: str
    dataset: str
    model: str
    model_kwargs: tuple = ()
    backend: str | None = None


ARMS = ("no", "r10", "rbest")
# grad_backend "ghost" (per-example norms and clipped sums from layer factors) makes K = 10
# draws cost 13-17x a non-private step instead of about 640x (MNIST MLP) or 27x (CIFAR-10 CNN)
# with torch.func; the MNIST CNN row keeps the default backend its stored records were made with.
ROWS = {
    "mnist_mlp": Row("table2", "mnist", "dplis-mlp-mnist", backend="ghost"),
    "mnist_cnn": Row("table2", "mnist", "tf-mnist-cnn"),
    "cifar10_mlp": Row("table2", "cifar10", "dplis-mlp-cifar", backend="ghost"),
    "cifar10_cnn": Row("table2", "cifar10", "dplis-cifar-cnn", backend="ghost"),
    "cifar10_cnn_tanh": Row("table11", "cifar10", "dplis-cifar-cnn", (("activation", "tanh"),), backend="ghost"),
}
COMBINE = "sum"  # the authors' code (REFERENCE.md "DPlis"); the paper's Alg. 2 averages
SCALE = {
    "paper": {"steps": None, "train": None, "test": None, "batch": None},
    "quick": {"steps": 20, "train": None, "test": 2000, "batch": None},
    "smoke": {"steps": 2, "train": 512, "test": 256, "batch": 64},
}
SMOKE_ROWS, SMOKE_ARMS = ("mnist_cnn",), ("no", "r10")
# Seeds 1 and 2 of every eps-1.99 cell (issue "Seeds"), all arms of a row under one seed so that the gains are
# paired (same initialisation, batches and noise stream), cheapest rows first (CPU minutes per seed, from the
# seed-0 records: MNIST MLP 22, Table 11 59, CIFAR-10 CNN 86, CIFAR-10 MLP 90, MNIST CNN 146).
EXTRA_SEEDS = (1, 2)
SEED_ORDER = ("mnist_mlp", "cifar10_cnn_tanh", "cifar10_cnn", "cifar10_mlp", "mnist_cnn")


def experiment(row: str, arm: str, column: str = "eps1_99") -> str:
    """The experiment name of a cell's run, e.g. ``table2.mnist_cnn.eps1_99.r10``."""
    return f"{ROWS[validate.choice('row', row, ROWS)].table}.{row}.{column}.{arm}"


def radius(row: str, arm: str, column: str = "eps1_99") -> float | None:
    """R of an arm of a Table 2 or 11 row (None: no smoothing)."""
    validate.choice("arm", arm, ARMS)
    table = ROWS[validate.choice("row", row, ROWS)].table
    if arm == "no":
        return None
    if arm == "r10":
        return _s("setup.r_default")
    return _s(f"table6.{row}.{column}.r_best" if table == "table2" else f"{table}.{column}.r_best")


def run_arm(row: str, arm: str, column: str = "eps1_99") -> str:
    """The arm whose run answers ``arm``: ``r10`` for R_best where R_best is 10."""
    return "r10" if arm == "rbest" and radius(row, arm, column) == radius(row, "r10", column) else arm


def _config(profile: str, row: str, arm: str, column: str = "eps1_99", seed: int = 0) -> dict:
    r_ = ROWS[validate.choice("row", row, ROWS)]
    scale = SCALE[profile]
    train = {"epochs": column_epoch(r_.dataset, column) if scale["steps"] is None else 1,
             "batch_size": scale["batch"] or int(_s(f"table1.{r_.dataset}.batch_size")),
             "lr": _s(f"table1.{r_.dataset}.lr_over_batch"), "optimizer": "sgd",
             "clip": _s(f"table1.{r_.dataset}.clip"), "noise_multiplier": _s(f"table1.{r_.dataset}.sigma"),
             "sampling": "poisson", "normalize": "none", "lr_schedule": "constant",
             "steps_per_epoch": scale["steps"] or "floor", "delta": DELTA, "seed": seed}
    if r_.backend is not None:
        train["grad_backend"] = r_.backend
    r = radius(row, arm, column)
    method = ({"method": "dpsgd"} if r is None else
              {"method": "dplis", "method_config": {"K": int(_s("setup.k_image")), "R": r, "combine": COMBINE}})
    return {"paper": PAPER, "profile": profile, "experiment": experiment(row, arm, column), "seed": seed,
            "model": r_.model, "model_kwargs": dict(r_.model_kwargs), "dataset": r_.dataset,
            "subset": {"train": scale["train"], "test": scale["test"]}, **method, "train": train}


# Table 9 and Figure 6 (Sec. 5.4): the landscape around models trained as Table 2's eps = 1.99
# cells of the four Table 2 rows, No and R = 10. The paper does not say which checkpoint it
# measures (nor on which data); ours are the eps = 1.99 models, retrained (same spec as the
# Table 2 cell plus the analysis, so the same weights on the same device and threads).
# Sharpness: Keskar et al.'s (C_eps; I) with Sec. 5.4's eps, L-BFGS-B from y = 0 capped at
# SHARPNESS_MAXITER iterations, on a fixed SHARPNESS_EXAMPLES training examples (ours: cost).
# Figure 6: test loss and accuracy on theta + alpha d, d filter-normalised (seed 0), alpha on
# SLICE_POINTS points of Sec. 5.4's [-0.8, 0.8], on the full test set.
TABLE9_ROWS = ("mnist_mlp", "mnist_cnn", "cifar10_mlp", "cifar10_cnn")
TABLE9_ARMS = ("no", "r10")
SHARPNESS_MAXITER = 10
SHARPNESS_EXAMPLES = 10_000
SLICE_POINTS = 17
# What Table 9's measurements do otherwise than the paper (the verdicts' fidelity).
SUBSTITUTES = {
    "dplis.table9.*": ("sharpness settings ours (the paper prints none): the eps-1.99 model, L-BFGS-B capped at "
                       f"{SHARPNESS_MAXITER} iterations on {SHARPNESS_EXAMPLES:,} fixed training examples"),
    "dplis.sec5_4.*": "the eps-1.99 models of Table 2 (the paper does not say which checkpoint it measures)",
}


def _table9_config(row: str, arm: str) -> dict:
    config = _config("paper", row, arm)
    config["experiment"] = f"table9.{row}.eps1_99.{arm}"
    config["analysis"] = {
        "sharpness": {"box": _s("sec5_4.sharpness_epsilon"), "maxiter": SHARPNESS_MAXITER,
                      "examples": SHARPNESS_EXAMPLES, "split": "train"},
        "slice": {"alpha_max": _s("sec5_4.visualization_alpha_max"), "points": SLICE_POINTS, "seed": 0,
                  "split": "test"}}
    return config


# The long runs (issue 34; GPU-scale: 132-554 epochs each, see ``dpnotes run dplis --profile paper
# --list``). Table 2 and 11's other columns (eps 5.01, 7.01, 10.00): with a constant learning rate
# and evaluation after every epoch, one run per (row, R) trained to the last column that R is
# read at gives every column it serves, each read at that column's epoch (column_epoch; the
# same read-out as the eps = 1.99 cells). R_best varies by column only in Table 11 (15, 20, 15)
# and CIFAR-10 MLP (30 at eps 1.99 only): one run per distinct R. Their per-epoch records also
# hold Figure 7a's training accuracy on CIFAR-10 (the running accuracy of the epoch's batches at
# the perturbed draws, as the authors' log; the paper does not say which model: both CIFAR-10
# rows are there). Table 10 (Sec. 5.5: 5 runs per cell; MNIST MLP and CIFAR-10 CNN; No, R = 10
# and R_large; eps 5.01 and 10.00): seeds 1-4 of the same runs (seed 0 is Table 2's). Figure 3
# (accuracy vs R, K = 10, MNIST and CIFAR-10, four eps): the paper prints no R grid; ours is
# FIGURE3_R, which brackets Table 6's R_best (30, 40) and R = 10 with a point on each side,
# on the four Table 2 rows, seed 0, to eps = 10 (R = 10 and R_best come from the Table 2 runs).
# Figure 7b (SGD with clipping, three checkpoints) prints no setting at all: not run.
LONG_COLUMNS = TABLE2_COLUMNS[1:]
TABLE10_ROWS = ("mnist_mlp", "cifar10_cnn")
TABLE10_SEEDS = (1, 2, 3, 4)  # with seed 0: Section 5.5's 5 runs
FIGURE3_R = (5.0, 10.0, 20.0, 30.0, 40.0, 60.0)
FIGURE3_ROWS = ("mnist_mlp", "mnist_cnn", "cifar10_mlp", "cifar10_cnn")


def _tag(r: float | None) -> str:
    return "no" if r is None else f"r{r:g}"


def long_radii(row: str) -> dict[float | None, str]:
    """R of each long run of a Table 2 / 11 row (None: No smoothing) -> the last column it is read at."""
    out: dict[float | None, str] = {}
    for column in LONG_COLUMNS:
        for arm in ARMS:
            out[radius(row, arm, column)] = column  # columns in order: the last one wins
    return out


def long_run(row: str, arm: str, column: str) -> tuple[str, int]:
    """(experiment, epoch) of the long run that answers cell (row, arm, column), column one of
    LONG_COLUMNS: its test accuracy after that epoch is the cell."""
    validate.choice("column", column, LONG_COLUMNS)
    r = radius(row, arm, column)
    return (f"{ROWS[row].table}.{row}.{long_radii(row)[r]}.{_tag(r)}",
            column_epoch(ROWS[row].dataset, column))


def table10_radius(row: str) -> float:
    """Table 10's R_large of ``row`` (the paper's setting)."""
    return _s(f"table10.{validate.choice('row', row, TABLE10_ROWS)}.r_large")


def table10_radii(row: str) -> tuple[float | None, float, float]:
    """Table 10's arms of ``row``: No, R = 10 and R_large."""
    return None, _s("setup.r_default"), table10_radius(row)


def _long_config(row: str, r: float | None, column: str, experiment: str, seed: int = 0) -> dict:
    config = _config("paper", row, "no" if r is None else "r10", column, seed)
    if r is not None:
        config["method_config"]["R"] = r
    config["experiment"] = experiment
    return config


def long_configs() -> list[dict]:
    """The paper profile's long runs (see the comment above), cheapest rows first: Table 2 / 11,
    then Table 10's extra seeds, then Figure 3's sweep."""
    order = ("mnist_mlp", "mnist_cnn", "cifar10_cnn_tanh", "cifar10_cnn", "cifar10_mlp")
    out = [_long_config(row, r, column, f"{ROWS[row].table}.{row}.{column}.{_tag(r)}")
           for row in order for r, column in long_radii(row).items()]
    for row in TABLE10_ROWS:
        for r in table10_radii(row):
            if long_radii(row).get(r) != "eps10_00":
                raise ValueError(f"Table 10's {row} R = {r} has no Table 2 run to eps 10")
            out += [_long_config(row, r, "eps10_00", f"{ROWS[row].table}.{row}.eps10_00.{_tag(r)}", seed)
                    for seed in TABLE10_SEEDS]
    for row in FIGURE3_ROWS:
        out += [_long_config(row, r, "eps10_00", f"figure3.{row}.eps10_00.{_tag(r)}")
                for r in FIGURE3_R if r not in long_radii(row)]
    return out


def configs(profile: str) -> list[dict]:
    """The run configs of ``profile`` (see the comment above); the paper profile goes on with
    Table 9's runs, the extra seeds of the eps = 1.99 cells and the long runs."""
    validate.choice("profile", profile, PROFILES)
    rows, arms = (SMOKE_ROWS, SMOKE_ARMS) if profile == "smoke" else (tuple(ROWS), ARMS)
    out = [_config(profile, row, arm) for row in rows for arm in arms if run_arm(row, arm) == arm]
    if profile == "paper":
        out += [_table9_config(row, arm) for row in TABLE9_ROWS for arm in TABLE9_ARMS]
        out += [_config(profile, row, arm, seed=seed) for row in SEED_ORDER for seed in EXTRA_SEEDS
                for arm in ARMS if run_arm(row, arm) == arm]
        out += long_configs()
    return out


# --------------------------------------------------------------------------------------
# Execution.

CIFAR10_MEAN = (0.4914, 0.4822, 0.4465)  # the authors' code (REFERENCE.md "DPlis")
CIFAR10_STD = (0.2023, 0.1994, 0.2010)


@lru_cache(maxsize=2)
def _images(dataset: str):
    """(train, test) of ``dataset`` as the authors' code prepares it: MNIST / 255; CIFAR-10
    / 255, then per-channel mean and std (REFERENCE.md "DPlis"); no augmentation."""
    from dpnotes.data import prepare

    if dataset == "mnist":
        return prepare.images("mnist", "train"), prepare.images("mnist", "test")

    def prep(split):
        x, y = prepare.images("cifar-10", split)
        return prepare.standardize(x, CIFAR10_MEAN, CIFAR10_STD), y
    return prep("train"), prep("test")


def load(dataset: str, subset: dict | None = None):
    """``(train, test)`` of ``dataset`` (``mnist`` or ``cifar10``); ``subset`` sizes pick fixed
    random examples (the same for every run)."""
    from dpnotes.data.prepare import fixed_subset

    train, test = _images(validate.choice("dataset", dataset, TABLE2_DATASETS))
    subset = subset or {}
    return fixed_subset(train, subset.get("train")), fixed_subset(test, subset.get("test"))


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec

    train_data, test_data = load(spec.dataset, spec.subset)
    analyse = None
    if spec.analysis:
        def analyse(model):
            return landscape_of(model, spec.analysis, train_data, test_data, device)
    return train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                      analyse=analyse)


def landscape_of(model, analysis, train_data, test_data, device: str = "cpu") -> dict:
    """Table 9's sharpness and Figure 6's slice of a trained ``model`` as ``analysis`` asks."""
    from dpnotes.data.prepare import fixed_subset
    from dpnotes.train import landscape

    data = {"train": train_data, "test": test_data}
    out = {}
    if "sharpness" in analysis:
        a = analysis["sharpness"]
        x, y = fixed_subset(data[a["split"]], a["examples"])
        out["sharpness"] = landscape.sharpness(model, (x.to(device), y.to(device)), a["box"], maxiter=a["maxiter"])
    if "slice" in analysis:
        a = analysis["slice"]
        x, y = data[a["split"]]
        alphas = np.linspace(-a["alpha_max"], a["alpha_max"], a["points"]).tolist()
        out["slice"] = landscape.loss_slice(model, (x.to(device), y.to(device)), alphas, seed=a["seed"])
    return out


# --------------------------------------------------------------------------------------
# Our answer to every claim.

def _current(records: list[dict], profile: str) -> dict[str, list[dict]]:
    """Records of the current configs of ``profile``, by experiment (stale configs ignored)."""
    from dpnotes.experiments import current

    return current(records, configs(profile))


def _acc_at(record: dict, epoch: int) -> float | None:
    """Test accuracy (%) of ``record`` after ``epoch`` epochs (None if it stopped earlier)."""
    return Record.of(record).accuracy_at_epoch(epoch)


def _cell_claims(paper: dict, quick: dict) -> list[Measurement]:
    """The eps = 1.99 cells of Tables 2 and 11: each arm's accuracy and each smoothed arm's
    gain over No, paired by seed."""
    out = []
    for row, r_ in ROWS.items():
        column = "eps1_99"
        epoch = column_epoch(r_.dataset, column)
        runs = {arm: paper.get(experiment(row, run_arm(row, arm), column), []) for arm in ARMS}
        qruns = {arm: quick.get(experiment(row, run_arm(row, arm), column), []) for arm in ARMS}
        shared = {arm: (f"R_best = R = {radius(row, arm, column):g} at this column: the R = 10 run answers it"
                        if run_arm(row, arm, column) != arm else None) for arm in ARMS}
        for arm in ARMS:
            cid = f"dplis.{r_.table}.{row}.{column}.acc_{arm}"
            if runs[arm]:
                values = [_acc_at(r, epoch) for r in runs[arm]]
                out.append(measurement.training(cid, values, [Record.of(r).id for r in runs[arm]],
                                                f"no record reached epoch {epoch}" if None in values else shared[arm]))
            elif qruns[arm]:
                quick_run = Record.of(qruns[arm][0])
                acc = quick_run.accuracy()
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)",
                                               f"scaled-down quick run: {acc:.1f}% after "
                                               f"{quick_run.metric('steps')} steps (not comparable)"))
            else:
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)"))
            if arm == "no":
                continue
            gid = f"dplis.{r_.table}.{row}.{column}.gain_{arm}"
            smoothed = {Record.of(r).seed: r for r in runs[arm]}
            plain = {Record.of(r).seed: r for r in runs["no"]}
            seeds = sorted(set(smoothed) & set(plain))  # paired: the seeds both arms have
            if not seeds:
                out.append(measurement.missing(gid, "paper-profile runs (smoothed and No) not run yet"))
                continue
            out.append(measurement.gain(gid, {s: _acc_at(smoothed[s], epoch) for s in seeds},
                                        {s: _acc_at(plain[s], epoch) for s in seeds},
                                        {s: Record.of(smoothed[s]).id for s in seeds},
                                        "difference to the No-smoothing run(s) " +
                                        ", ".join(Record.of(plain[s]).id for s in seeds) +
                                        (f"; {shared[arm]}" if shared[arm] else "")))
    return out


_TABLE9_RUN = ("paper-profile run not run yet (Table 9's models: a Table 2 eps-1.99 run plus the analysis, "
               "1-70 CPU-min each; `dpnotes run dplis --profile paper --only 'table9.*'`)")


def _slice_rise(record: dict) -> float:
    """Mean test-loss increase over Figure 6's slice (alpha != 0) above the loss at theta."""
    sl = Record.of(record).metric("analysis")["slice"]
    base = sl["loss"][sl["alpha"].index(min(sl["alpha"], key=abs))]
    return float(np.mean([v - base for a, v in zip(sl["alpha"], sl["loss"]) if a != 0]))


def _table9_claims(paper: dict) -> list[Measurement]:
    """Table 9's sharpness of each model, and Section 5.4's two sentences on all four rows."""
    out, runs = [], {}
    for row in TABLE9_ROWS:
        for arm in TABLE9_ARMS:
            cid = f"dplis.table9.{row}.sharpness_{arm}"
            rs = paper.get(f"table9.{row}.eps1_99.{arm}", [])
            runs[row, arm] = rs
            if not rs:
                out.append(measurement.missing(cid, _TABLE9_RUN))
                continue
            sh = [Record.of(r).metric("analysis")["sharpness"] for r in rs]
            out.append(measurement.training(
                cid, [v["sharpness"] for v in sh], [Record.of(r).id for r in rs],
                f"the eps-1.99 model ({len(Record.of(rs[0]).epochs)} epochs; the paper does not say which checkpoint "
                f"Table 9 measures); L-BFGS-B, at most {sh[0]['maxiter']} iterations ({sh[0]['evaluations']} loss "
                f"evaluations), on {sh[0]['examples']:,} fixed training examples (ours); loss {sh[0]['loss']:.4f} -> "
                f"{sh[0]['max_loss']:.4f}"
                + (f"; the box's gradient-sign corner alone gives {sh[0]['corner_sharpness']:.4g}"
                   if "corner_sharpness" in sh[0] else "")))
    ids = [Record.of(r).id for rs in runs.values() for r in rs]
    if not all(runs.values()):
        return out + [measurement.missing(c, _TABLE9_RUN) for c in ("dplis.sec5_4.sharpness_smaller",
                                                                    "dplis.sec5_4.flatter_visualization")]
    sharpness = {k: [Record.of(r).metric("analysis")["sharpness"] for r in rs] for k, rs in runs.items()}
    sharp = {k: float(np.mean([v["sharpness"] for v in vs])) for k, vs in sharpness.items()}
    corner = {k: [v.get("corner_sharpness") for v in vs] for k, vs in sharpness.items()}
    corner = {k: float(np.mean(v)) for k, v in corner.items() if None not in v}
    corner_rows = [row for row in TABLE9_ROWS if (row, "no") in corner and (row, "r10") in corner]
    corner_note = (f"; the gradient-sign corner (a lower bound of the same maximum) puts R = 10 below No in "
                   f"{sum(corner[row, 'r10'] < corner[row, 'no'] for row in corner_rows)} of {len(corner_rows)} rows"
                   if corner_rows else "")
    out.append(measurement.statement(
        "dplis.sec5_4.sharpness_smaller", all(sharp[row, "r10"] < sharp[row, "no"] for row in TABLE9_ROWS),
        "; ".join(f"{row}: No {sharp[row, 'no']:.4g}, R = 10 {sharp[row, 'r10']:.4g}"
                  + (f" ({100 * (sharp[row, 'r10'] / sharp[row, 'no'] - 1):+.1f}%)" if sharp[row, "no"] > 0 else "")
                  for row in TABLE9_ROWS) + corner_note,
        "sharpness with R = 10 below No's in every row of Table 9 (the eps-1.99 models; paper: 'always smaller')",
        ids, min(len(rs) for rs in runs.values())))
    rise = {k: float(np.mean([_slice_rise(r) for r in rs])) for k, rs in runs.items()}
    flatter = sum(rise[row, "r10"] < rise[row, "no"] for row in TABLE9_ROWS)
    out.append(measurement.statement(
        "dplis.sec5_4.flatter_visualization", 2 * flatter > len(TABLE9_ROWS),
        f"R = 10 flatter in {flatter} of {len(TABLE9_ROWS)} rows; " + "; ".join(
            f"{row}: mean test-loss rise over the slice No {rise[row, 'no']:.3f}, R = 10 {rise[row, 'r10']:.3f}"
            for row in TABLE9_ROWS),
        "mean test-loss rise over Figure 6's filter-normalised slice (alpha in [-0.8, 0.8], one direction) smaller "
        "with R = 10 than with No in most of Table 9's rows (the paper: 'tends to be flatter', three settings shown)",
        ids, min(len(rs) for rs in runs.values())))
    return out


def measure(records: list[dict]) -> list[Measurement]:
    """Our value for every DPlis claim we answer (verdicts: :mod:`dpnotes.report.verdicts`):
    the eps columns of Tables 2-3 and the counts of Table 4 computed directly; the eps = 1.99
    cells of Tables 2 and 11, Table 9's sharpness and Sec. 5.4's sentences on it from
    paper-profile records of the current configs only."""
    out = [_eps_column_claim(cid, ds) for cid, ds in eps_columns()]
    out += _table4_claims()
    paper = _current(records, "paper")
    return out + _cell_claims(paper, _current(records, "quick")) + _table9_claims(paper)


# --------------------------------------------------------------------------------------
# Why the other claims are not run (a table of claim-id patterns and reasons: not_run).

# Claim-id patterns whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "dplis.table3.imagenet_cifar100.eps*": "CIFAR-100 and ImageNet-pretrained EfficientNet-b0 weights",
    "dplis.table3.celeba_pubfig83.eps*": "PubFig83 and CelebA",
    "dplis.table3.celeba_celeba1000.eps*": "CelebA",
    "dplis.table4.cifar100.n_train": "CIFAR-100",
    "dplis.table4.cifar100.n_classes": "CIFAR-100",
    "dplis.table4.celeba1000.n_classes": "CelebA",
    "dplis.table5.mlp*": "Reddit comments and the Brown corpus",
    "dplis.table5.lstm*": "Reddit comments and the Brown corpus",
    "dplis.table12*": "SVHN",
    "dplis.table13*": "SVHN",
    "dplis.sec5_2.transfer*": "CIFAR-100, PubFig83, CelebA",
    "dplis.sec5_2.pretrained_comparable*": "CIFAR-100 and ImageNet-pretrained weights",
    "dplis.sec5_2.reddit*": "Reddit comments and the Brown corpus",
    "dplis.sec5_2.lstm*": "Reddit comments and the Brown corpus",
    "dplis.sec5_3.larger_k_better*": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_3.k3_already_helps*": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_7*": "SVHN",
    "dplis.intro.perplexity_reduction*": "Reddit comments and the Brown corpus",
    "dplis.intro.pate_gain*": "SVHN",
}
# What measure() answers whatever the records (values, or "missing" with its own reason).
NOT_RUN_DEFAULT = not_run.DEFAULT
MEASURED = ("dplis.table2.*.eps1_99.*", "dplis.table11.*.eps1_99.*", "dplis.table9.*",
            "dplis.sec5_4.sharpness_smaller", "dplis.sec5_4.flatter_visualization",
            "dplis.table4.mnist.*", "dplis.table4.cifar10.*", "dplis.table4.*.n_train_per_class",
            "dplis.table4.pubfig83.n_train", "dplis.table4.pubfig83.n_classes", "dplis.table4.celeba1000.n_train")


def measured_ids() -> set[str]:
    """The claims :func:`measure` answers (the eps columns and :data:`MEASURED`'s patterns)."""
    columns = {cid for cid, _ in eps_columns()}
    return {c.id for c in claims.load(PAPER)
            if c.id in columns or any(fnmatch.fnmatchcase(c.id, p) for p in MEASURED)}


@lru_cache(maxsize=1)
def _long_configs() -> tuple[dict, ...]:
    """:func:`long_configs`, computed once for the not-run reasons (read, never changed)."""
    return tuple(long_configs())


def _long(rows, radii=None, columns=LONG_COLUMNS) -> list[dict]:
    """The long runs of ``rows`` read at ``columns`` (all radii, or those of ``radii``: arm names)."""
    wanted = {long_run(row, arm, column)[0] for row in rows for column in columns
              for arm in (radii or ARMS)}
    return [c for c in _long_configs() if c["experiment"] in wanted and c["seed"] == 0]


def _table10(rows=TABLE10_ROWS, tags=None) -> list[dict]:
    """Table 10's runs (all five seeds) of ``rows``, of the arms tagged ``tags`` (all: None)."""
    names = {f"{ROWS[row].table}.{row}.eps10_00.{_tag(r)}" for row in rows for r in table10_radii(row)}
    return [c for c in _long_configs() if c["experiment"] in names
            and (tags is None or c["experiment"].rsplit(".", 1)[1] in tags)]


def _figure3() -> list[dict]:
    """Figure 3's runs: Table 2's long runs and the sweep's other radii."""
    return _long(FIGURE3_ROWS) + [c for c in _long_configs() if c["experiment"].startswith("figure3.")]


def not_run_table() -> not_run.Table:
    """(claim-id pattern, reason) for every claim :func:`measure` does not answer."""
    reddit = Setting("reddit", "Reddit", int(_s("setup.reddit_n_train")), int(_s("table1.reddit.batch_size")),
                     _s("table1.reddit.sigma"))
    one_epoch = rdp_to_epsilon(subsampled_gaussian_rdp(reddit.q, reddit.sigma, reddit.steps_per_epoch,
                                                       resolve_orders(ORDERS)),
                               resolve_orders(ORDERS), DELTA, CONVERSION)[0]
    rows = list(not_run.offline(_OFFLINE))
    rows.append(("dplis.table5.col?.epsilon",
                 f"the privacy unit behind q is not given: with N = {reddit.n} training comments, "
                 f"L = {reddit.batch_size} and sigma {reddit.sigma:g}, one epoch already gives eps "
                 f"{one_epoch:.2f}, above every Table 5 column"))
    rows.append(("dplis.sec3_1.fig2_toy_flat_minimum",
                 "the toy's settings (lr, sigma, C, steps, start, K, smoothing scale) are not printed, and which "
                 "part of the claim holds depends on them: the chapter's Figure 2 section shows a grid of ours "
                 "(a finding)"))
    rows.append(("dplis.sec1.fig1_flat_surface",
                 "needs the pretrained ResNet-56 of Li et al.'s loss-surface code (not available offline) and a GPU"))
    rows.append(("dplis.sec5_3.fig5_k_flattens",
                 "needs the pretrained ResNet-56 of Li et al.'s loss-surface code (Figure 5's model; not available "
                 "offline)"))
    # Tables 2 and 11 beyond eps = 1.99: the long runs, read at the column's epoch.
    for row, r_ in ROWS.items():
        for column in LONG_COLUMNS:
            at = f"read after {column_epoch(r_.dataset, column)} epochs"
            for arm in ARMS:
                exp = long_run(row, arm, column)[0]
                rows.append((f"dplis.{r_.table}.{row}.{column}.acc_{arm}",
                             not_run.needs_runs(_long([row], [arm], [column]), f"{exp}, {at}")))
                if arm != "no":
                    rows.append((f"dplis.{r_.table}.{row}.{column}.gain_{arm}",
                                 not_run.needs_runs(_long([row], ["no", arm], [column]),
                                                    f"{exp} and No, {at}")))
    for row in TABLE10_ROWS:
        for r in table10_radii(row):
            rows.append((f"dplis.table10.{row}.*.{_tag(r)}.*",
                         not_run.needs_runs(_table10([row], [_tag(r)]),
                                            "Table 10: 5 seeds to eps 10.00, read at eps 5.01 and 10.00")))
    rows.append(("dplis.sec5_5.smoothing_reduces_spread",
                 not_run.needs_runs(_table10(),
                                    "every cell of Table 10")))
    table2 = [row for row, r_ in ROWS.items() if r_.table == "table2"]
    summary = not_run.needs_runs(_long(table2), "Table 2 to eps 10.00")
    rows += [(f"dplis.sec5_2.nontransfer_{x}", summary) for x in ("gain_*", "dplis_beats_dpsgd")]
    rows.append(("dplis.intro.image_gain.*", f"{summary}; Table 3's transfer tasks need data not available offline"))
    rows.append(("dplis.sec5_2.cifar10_mlp_degrades", not_run.needs_runs(_long(["cifar10_mlp"]), "CIFAR-10 MLP")))
    rows.append(("dplis.sec5_6.tanh_*", not_run.needs_runs(_long(["cifar10_cnn_tanh"]), "Table 11 to eps 10.00")))
    rows.append(("dplis.sec5_4.training_accuracy_degrades",
                 not_run.needs_runs(_long(["cifar10_cnn", "cifar10_mlp"], ["no", "r10"]),
                                    "Figure 7a: CIFAR-10 No and R = 10 to eps 10.00, training accuracy per epoch")))
    grid = ", ".join(f"{r:g}" for r in FIGURE3_R)
    figure3 = not_run.needs_runs(_figure3(), f"Figure 3's R grid {grid} (ours: the paper prints none) on Table 2's "
                                             "rows to eps 10.00")
    rows += [(f"dplis.sec5_3.{c}", figure3) for c in ("unimodal_in_r", "r10_rule_of_thumb")]
    return tuple(rows)


def __getattr__(name: str):
    """``NOT_RUN`` is computed on first use (it needs the epoch of every Table 2 column and the
    long runs' cost)."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = reasons = not_run.reasons(PAPER, not_run_table(), measured_ids())
        return reasons
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
