"""Bu, Dong, Long, Su: Deep Learning with Gaussian Differential Privacy (HDSR 2020).

The runs behind Tables 1-4 and Figure 4, and the accounting behind Tables 1-4, Figures 2-3
and the Appendix A figure (see :mod:`dpnotes.report.gdp` for the chapter's tables
and plots). Every paper number is read from the claims registry (``dpnotes/claims/gdp.toml``).

Accounting as in the paper's code (REFERENCE.md, "Accounting"): Poisson subsampling at rate
q = B/n, ``steps = epochs * n / B`` (fractional), delta 1e-5 (1e-6 for MovieLens). The
"CLT" columns are mu-GDP by the privacy CLT (Eq. 5) converted with Eq. 6; the "MA" columns
are the moments accountant: RDP with TF Privacy's tutorial orders and the classic conversion.

Profiles: ``paper`` = the paper's settings (Table 1 at three seeds); ``quick`` = the same
q, sigma, eta and R but only a few dozen steps per run (scaled down: never compared with the
paper's accuracies); ``smoke`` = a few steps on a few hundred examples (CI).
MovieLens-1M is not available offline; MovieLens-100k runs as a labelled substitute.

Layout (the same for every paper, :mod:`dpnotes.experiments`):

* :mod:`.settings`: the paper's identity (``TITLE``, ``PAPER``, ``DATA_VERSION``), its settings read from the claims
  registry and ours
* :mod:`.privacy`: the paper's privacy arithmetic, exact (no training)
* :mod:`.runs`: the profiles and run configs (``configs``)
* :mod:`.training`: data loading and one run (``execute``)
* :mod:`.cells`: what the records hold, cell by cell, for ``measure`` and the chapter
* :mod:`.answers`: our value for each claim (``measure``)
* :mod:`.not_run`: why every other claim is not run: the reason table; ``reasons()`` gives ``NOT_RUN``
* :mod:`.data`: the paper's data sets
"""

from __future__ import annotations

from .answers import measure
from .cells import (
    EPS_KEY,
    FIGURE2_EPOCHS,
    FIGURE4_EPOCHS_TO,
    accuracy,
    appendix_a_curves,
    current_runs,
    figure2_curves,
    figure4_target,
    min_errors,
)
from .not_run import NOT_RUN_DEFAULT, NOT_RUN_TABLE, reasons
from .privacy import (
    SIGMA_DIGITS,
    Mechanism,
    _mnist,
    adult_epochs,
    figure4_sigma_clt,
    ma_epsilons,
    mechanism,
    rdp_per_step,
    table1_row,
)
from .runs import FIGURE4_QUICK_EPOCHS, PRIVATE_MODELS, SCALE, SMOKE_BATCH, TABLE_MODELS, TF_RNN_TUTORIAL, configs
from .settings import (
    ADULT_DELTA,
    ALPHA,
    ALPHA_FINE,
    DATA_VERSION,
    DELTA,
    MA_ACCOUNTANT,
    MA_ORDERS,
    METHOD_VERSIONS,
    PAPER,
    SEEDS,
    TITLE,
)
from .training import execute

__all__ = [
    '_mnist', 'accuracy', 'ADULT_DELTA', 'adult_epochs', 'ALPHA', 'ALPHA_FINE', 'appendix_a_curves', 'configs',
    'current_runs', 'DATA_VERSION', 'DELTA', 'EPS_KEY', 'execute', 'figure2_curves', 'FIGURE2_EPOCHS',
    'FIGURE4_EPOCHS_TO', 'FIGURE4_QUICK_EPOCHS', 'figure4_sigma_clt', 'figure4_target', 'MA_ACCOUNTANT',
    'ma_epsilons', 'MA_ORDERS', 'measure', 'Mechanism', 'mechanism', 'METHOD_VERSIONS', 'min_errors', 'NOT_RUN',
    'NOT_RUN_DEFAULT', 'NOT_RUN_TABLE', 'PAPER', 'PRIVATE_MODELS', 'rdp_per_step', 'reasons', 'SCALE', 'SEEDS',
    'SIGMA_DIGITS', 'SMOKE_BATCH', 'table1_row', 'TABLE_MODELS', 'TF_RNN_TUTORIAL', 'TITLE',
]


def __getattr__(name: str):
    """``NOT_RUN`` (claim id -> why it is not run) is computed on first use (:func:`.not_run.reasons`)."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = table = reasons()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
