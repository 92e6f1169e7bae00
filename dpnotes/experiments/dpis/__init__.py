"""Wei, Bao, Xiao, Yang: DPIS, DP-SGD with importance sampling (CCS 2022).

What is answered now, by accounting alone (every paper number is read from the claims
registry, ``dpnotes/claims/dpis.toml``):

* Section 3.3's statement that, at the same budget, DPIS's noise multiplier sigma_G is no
  larger than DP-SGD's (Lemma 3.1 at a ratio ``r = K~/(N~ C) <= 1`` against ``r = 1``),
  checked on a grid of settings (:func:`sigma_le_dpsgd`).
* Figure 1c's DP-SGD noise multiplier: its batch size and epochs are not printed, so the claim
  stays not run ("unpublished setting"); the chapter derives the batch size it implies
  (:func:`figure1_batch_sizes`: the epochs are read off the figure's x-axis, ours) and draws
  the sigma_G schedule of Section 4.2 under the ``a_E`` split (:func:`figure1_schedules`).
* The chapter's findings on Lemma 3.1's unenforced precondition, Eq. (11)'s noise placement and
  Algorithm 1's line 32 (:func:`precondition_frame`, :func:`eq11_cost`, :func:`line32_vs_eq7`).

Runs (the method: :mod:`dpnotes.methods.dpis` with Table 2's k, i.e. the two-stage rejection
sampler, and adaptive clipping where a table asks for it): ``smoke`` = DPIS and DP-SGD-HF (the same
ScatterNet CNN, DP-SGD at the same eps) on a 512-example MNIST subset, two steps; ``quick`` =
MNIST and Fashion-MNIST at eps 1, two short epochs on 10,000 examples with Tramer & Boneh's b,
lr and C (scaled down: never compared with the paper); ``paper`` = its CPU part, both methods on
the full MNIST (eps 1, 3) and Fashion-MNIST (eps 1, 4), seed 0, with epochs per eps of our
choosing (:data:`PAPER_EPOCHS`: the paper tunes them and prints none), then the ablations at
eps 1 on both, seed 0 (:func:`ablation_configs`: Table 4's DPIS+AC, Table 5's a_E, Table 6's k,
Table 7's C*), then the CPU part's seeds 1 and 2, then the ablations' seeds 1 and 2. The other Table 3-8
cells say why they are not run (:data:`NOT_RUN`).

Layout (the same for every paper, :mod:`dpnotes.experiments`):

* :mod:`.settings`: the paper's identity (``TITLE``, ``PAPER``, ``DATA_VERSION``), its settings read from the claims
  registry and ours
* :mod:`.privacy`: the paper's privacy arithmetic, exact (no training)
* :mod:`.runs`: the profiles and run configs (``configs``)
* :mod:`.training`: data loading and one run (``execute``)
* :mod:`.cells`: what the records hold, cell by cell, for ``measure`` and the chapter
* :mod:`.answers`: our value for each claim (``measure``)
* :mod:`.not_run`: why every other claim is not run: the reason table; ``reasons()`` gives ``NOT_RUN``
"""

from __future__ import annotations

from .answers import measure
from .cells import (
    _eps_key,
    ablation_cells,
    ac_release_rdp,
    decay_activation,
    features_share,
    gains,
    raw_gaps,
    repeated_cells,
    run_costs,
    sigma_trajectories,
    table3_cells,
    table3_methods,
)
from .not_run import NOT_RUN_DEFAULT, measured_ids, not_run_table, reasons
from .privacy import (
    SIGMA_DIGITS,
    SIGMA_GRID_RATIOS,
    capped_draws,
    dpsgd_epsilon,
    dpsgd_ledger,
    dpsgd_sigma,
    eq11_cost,
    fig1c_accountant,
    figure1_batch_sizes,
    figure1_schedules,
    implied_batch_sizes,
    line32_vs_eq7,
    precondition_frame,
    schedule,
    sigma_at_ratio,
    sigma_le_dpsgd,
)
from .runs import (
    ABLATION_A_E,
    ABLATION_C_STAR,
    ABLATION_EPSILON,
    ABLATION_K,
    CIFAR_EPOCHS,
    CIFAR_EPSILONS,
    CIFAR_MODEL,
    DECAY_GRID,
    DECAY_PROBE,
    DECAY_RATE,
    GHOST_FROM_SEED,
    MODEL,
    MODEL_KWARGS,
    ON_CAPPED,
    PAPER_EPOCHS,
    PAPER_EPSILONS,
    PAPER_SEEDS,
    QUICK_EPSILON,
    RAW_METHODS,
    RAW_MODEL,
    RAW_VARIANTS,
    SCALE,
    SMOKE_EPSILON,
    TB_END_TO_END,
    _config,
    ablation_configs,
    cifar10_configs,
    configs,
    decay_paper_configs,
    raw_configs,
)
from .settings import (
    ACCOUNTANT,
    DATA_VERSION,
    DATASETS,
    DIFFERENCES,
    FIG1_BATCHES,
    FIG1C_EPOCHS,
    PAPER,
    SCHEDULE_RATIOS,
    SUBSTITUTES,
    TB_CLIP,
    TITLE,
    TRAMER_BONEH,
    _n_train,
)
from .training import _images, execute

__all__ = [
    'GHOST_FROM_SEED',
    '_config', '_eps_key', '_images', '_n_train', 'ABLATION_A_E', 'ABLATION_C_STAR', 'ablation_cells',
    'ablation_configs', 'ABLATION_EPSILON', 'ABLATION_K', 'ac_release_rdp', 'ACCOUNTANT', 'capped_draws',
    'cifar10_configs', 'decay_paper_configs', 'DECAY_GRID',
    'CIFAR_EPOCHS', 'CIFAR_EPSILONS', 'CIFAR_MODEL', 'configs', 'DATA_VERSION', 'DATASETS',
    'decay_activation', 'DECAY_PROBE', 'DECAY_RATE', 'dpsgd_epsilon', 'dpsgd_ledger', 'dpsgd_sigma', 'eq11_cost',
    'execute', 'features_share', 'FIG1_BATCHES', 'fig1c_accountant', 'FIG1C_EPOCHS', 'figure1_batch_sizes',
    'figure1_schedules', 'gains', 'implied_batch_sizes', 'line32_vs_eq7', 'measure', 'measured_ids', 'MODEL',
    'MODEL_KWARGS', 'NOT_RUN', 'NOT_RUN_DEFAULT', 'not_run_table', 'ON_CAPPED', 'PAPER', 'PAPER_EPOCHS',
    'PAPER_EPSILONS', 'PAPER_SEEDS', 'precondition_frame', 'QUICK_EPSILON', 'raw_configs', 'raw_gaps',
    'RAW_METHODS', 'RAW_MODEL', 'RAW_VARIANTS', 'reasons', 'repeated_cells', 'run_costs', 'SCALE', 'schedule',
    'SCHEDULE_RATIOS', 'sigma_at_ratio', 'SIGMA_DIGITS', 'SIGMA_GRID_RATIOS', 'sigma_le_dpsgd',
    'sigma_trajectories', 'SMOKE_EPSILON', 'SUBSTITUTES', 'DIFFERENCES',
    'table3_cells', 'table3_methods', 'TB_CLIP',
    'TB_END_TO_END', 'TITLE', 'TRAMER_BONEH',
]


def __getattr__(name: str):
    """``NOT_RUN`` (claim id -> why it is not run) is computed on first use (:func:`.not_run.reasons`)."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = table = reasons()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
