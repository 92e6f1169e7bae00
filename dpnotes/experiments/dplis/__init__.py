"""Wang et al.: DPlis, randomized smoothing of the loss for DP-SGD (PETS 2021).

Every paper number is read from the claims registry (``dpnotes/claims/dplis.toml``).

What it answers without training: the privacy budgets printed as the column headers of
Tables 2 and 3 (pure accounting) and the dataset counts of Table 4. What it runs (profile
``paper``): the four rows of Table 2 and Table 11's tanh CIFAR-10 CNN at the eps = 1.99 column,
and Table 9 / Figure 6's landscape of the eps = 1.99 models, then the long runs to eps 10.00
(Tables 2 and 11's other columns, each read after its column's epoch; Table 10's five seeds;
Figure 3's R sweep), answered once stored; ``quick`` and ``smoke`` are scaled-down versions of
the Table 2 runs, never compared with the paper.

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

Layout (the same for every paper, :mod:`dpnotes.experiments`):

* :mod:`.settings`: the paper's identity (``TITLE``, ``PAPER``, ``DATA_VERSION``), its settings read from the claims
  registry and ours
* :mod:`.privacy`: the paper's privacy arithmetic, exact (no training)
* :mod:`.runs`: the profiles and run configs (``configs``)
* :mod:`.training`: data loading and one run (``execute``)
* :mod:`.cells`: what the records hold, cell by cell, for ``measure`` and the chapter
* :mod:`.answers`: our value for each claim (``measure``)
* :mod:`.not_run`: why every other claim is not run: the reason table; ``reasons()`` gives ``NOT_RUN``
* :mod:`.toy`: the paper's toy example
"""

from __future__ import annotations

from .answers import measure
from .cells import _acc_at, dataset_counts
from .not_run import MEASURED, NOT_RUN_DEFAULT, measured_ids, not_run_table, reasons
from .privacy import (
    TABLE2_COLUMNS,
    TABLE2_DATASETS,
    TABLE3_TASKS,
    ColumnMatch,
    Setting,
    column_epoch,
    column_match,
    epoch_table,
    eps_columns,
    epsilon,
    epsilon_tf_tutorial,
    setting,
    unattained_columns,
)
from .runs import (
    ARMS,
    COMBINE,
    DRAWS_FROM_SEED,
    EXTRA_SEEDS,
    FIGURE3_R,
    FIGURE3_ROWS,
    GHOST_FROM_SEED,
    LONG_COLUMNS,
    ROWS,
    SCALE,
    SEED_ORDER,
    SHARPNESS_EXAMPLES,
    SHARPNESS_MAXITER,
    SLICE_POINTS,
    SMOKE_ARMS,
    SMOKE_ROWS,
    SUBSTITUTES,
    TABLE9_ARMS,
    TABLE9_ROWS,
    TABLE10_ROWS,
    TABLE10_SEEDS,
    Row,
    _config,
    _tag,
    choose_draws,
    configs,
    experiment,
    long_configs,
    long_radii,
    long_run,
    radius,
    run_arm,
    table10_radii,
    table10_radius,
)
from .settings import CONVERSION, DATA_VERSION, DELTA, DIFFERENCES, ORDERS, PAPER, TF_TUTORIAL, TITLE
from .training import CIFAR10_MEAN, CIFAR10_STD, execute, landscape_of, load

__all__ = [
    'DRAWS_FROM_SEED', 'GHOST_FROM_SEED', 'choose_draws',
    '_acc_at', '_config', '_tag', 'ARMS', 'CIFAR10_MEAN', 'CIFAR10_STD', 'column_epoch', 'column_match',
    'ColumnMatch', 'COMBINE', 'configs', 'DIFFERENCES',
    'CONVERSION', 'DATA_VERSION', 'dataset_counts', 'DELTA', 'epoch_table',
    'eps_columns', 'epsilon', 'epsilon_tf_tutorial', 'execute', 'experiment', 'EXTRA_SEEDS', 'FIGURE3_R',
    'FIGURE3_ROWS', 'landscape_of', 'load', 'LONG_COLUMNS', 'long_configs', 'long_radii', 'long_run', 'measure',
    'MEASURED', 'measured_ids', 'NOT_RUN', 'NOT_RUN_DEFAULT', 'not_run_table', 'ORDERS', 'PAPER', 'radius',
    'reasons', 'Row', 'ROWS', 'run_arm', 'SCALE', 'SEED_ORDER', 'Setting', 'setting', 'SHARPNESS_EXAMPLES',
    'SHARPNESS_MAXITER', 'SLICE_POINTS', 'SMOKE_ARMS', 'SMOKE_ROWS', 'SUBSTITUTES', 'table10_radii',
    'table10_radius', 'TABLE10_ROWS', 'TABLE10_SEEDS', 'TABLE2_COLUMNS', 'TABLE2_DATASETS', 'TABLE3_TASKS',
    'TABLE9_ARMS', 'TABLE9_ROWS', 'TF_TUTORIAL', 'TITLE', 'unattained_columns',
]


def __getattr__(name: str):
    """``NOT_RUN`` (claim id -> why it is not run) is computed on first use (:func:`.not_run.reasons`)."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = table = reasons()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
