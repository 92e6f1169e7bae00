"""Ghazi, Golowich, Kumar, Manurangsi, Zhang: Deep Learning with Label Differential Privacy (NeurIPS 2021).

What is answered now, by computation alone (every paper number is read from the claims
registry, ``dpnotes/claims/labeldp.toml``):

* Lemma 1 and Corollary 2 (RRTop-k and RRWithPrior are eps-DP): the exact output tables of
  :mod:`dpnotes.mechanisms.rr_prior` meet ``M[y, o] <= e^eps M[y', o]`` for every pair of
  labels and every output (:func:`ratio_check`).
* Theorem 3 (RRWithPrior maximises P[output = true label] among eps-DP randomizers): the
  linear program LP1 of its proof, solved over all ``K^2`` entries
  (:mod:`dpnotes.mechanisms.label_dp_lp`), never exceeds RRWithPrior's closed form
  (:func:`theorem3_check`).
* Section 4's "LP-1ST is vanilla RR": a uniform prior gives ``k* = K`` and RR's table
  (:func:`uniform_check`).
* Observation 4 (LP-MST is eps-label-DP), on toy instances: the exact output distribution of a
  two-stage LP-MST whose stage-2 prior is an arbitrary function of the stage-1 release
  (:func:`lpmst_check`).
* The chapter's finding on the authors' JAX code, whose k* scores use the denominator of
  ``k - 1`` (:func:`jax_k_star`, :func:`jax_off_by_one`).

Runs (:func:`configs`): ``smoke`` and ``quick`` = LP-1ST and LP-2ST at eps = 2 on MNIST
subsets (CI and a laptop; never compared with the paper); ``paper`` = the recipe selection on
held-out training images (:data:`RECIPE`, :func:`recipe_selection`), then Table 4's LP rows on
MNIST and Fashion-MNIST with the paper's training (App. B: 40 epochs a stage, peak LR 0.02
with 15 % linear warm-up then linear decay, momentum 0.9, L2 1e-4) but a small CNN in place of
the simplified Inception net (an announced substitution: the Inception net trains at ~15-40
samples/s on this CPU) and the augmentations and mixup strength the selection chose for it;
App. E's stage-1 fractions (:func:`split_grid`, averaged over seeds by :func:`split_grid_mean`)
and Sec. 5.1's LP-3ST on the same two data sets. Table 4's eps header is lost: its columns are
read as eps 1, 2, 3, 4, inf (:data:`TABLE4_EPSILONS`, inferred from Table 5). Computed from the runs, besides Table 4's
cells: App. C's "outperform previous methods ... LP-2ST consistently improves over LP-1ST"
(:func:`_appc`), App. E's split and top-k statements (:func:`_appe`) and the LP-3ST gain
(:func:`_lp3st`).

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

import importlib

from .answers import measure
from .cells import (
    APPC_EPSILONS,
    movielens_table,
    quoted_baselines,
    recipe_selection,
    split_grid,
    split_grid_mean,
    table4_cells,
)
from .not_run import _MEASURED, NOT_RUN_DEFAULT, not_run_table, reasons
from .runs import (
    APPB_MODEL,
    APPB_SEEDS,
    APPE_SEEDS,
    CIFAR_COLUMNS,
    CIFAR_MEAN,
    CIFAR_MODEL,
    CIFAR_STD,
    DATASETS,
    EXTRA_SEEDS_AT,
    JAX_STAGE_SETTINGS,
    LP3ST_EPSILONS,
    LP3ST_GAIN_RANGE,
    MIXUP_PROBE,
    ML_CLASSES,
    ML_EPSILONS,
    MODEL,
    MOVIELENS,
    NUM_CLASSES,
    PAPER_AUGMENT,
    QUICK,
    RECIPE,
    SELECTION_AUGMENTS,
    SELECTION_CANDIDATES,
    SELECTION_EPSILONS,
    SMOKE,
    SMOKE_EPSILON,
    SPLIT_EPSILON,
    SPLIT_FRACTIONS,
    SPLIT_HALF,
    SPLIT_SLIGHTLY_ABOVE,
    TABLE4_EPSILONS,
    VALIDATION,
    VALIDATION_SEED,
    WEIGHT_DECAY,
    _eps_name,
    _jax_row,
    appb_config,
    appb_configs,
    cifar10_config,
    cifar10_configs,
    configs,
    selection_configs,
)
from .settings import (
    CHECK_SEED,
    DATA_VERSION,
    DIFFERENCES,
    DIRICHLET,
    EPSILONS,
    KS,
    LP_TOL,
    LPMST_K,
    LPMST_MAPS,
    OFF_BY_ONE_PRIORS,
    PAPER,
    PRIORS_PER_CELL,
    RATIO_TOL,
    SUBSTITUTES,
    TITLE,
)

# Imported on first use (PEP 562): the exact mechanisms' tables and one run compute with torch;
# the scoreboard, which takes the computed claims from dpnotes.calc_cache, needs neither.
_LAZY = {**{name: ".privacy" for name in (
    "FIGURE_EPSILONS", "FIGURE_PRIORS", "_lpmst_law", "dp_violation", "figure_curves", "jax_k_star", "jax_off_by_one",
    "lp_scaling_check", "lpmst_check", "max_log_ratio", "p_correct", "ratio_check", "table1_margins",
    "theorem3_check", "uniform_check")},
         **{name: ".training" for name in ("MOVIELENS_SPLIT_SEED", "MOVIELENS_TEST_FRACTION", "execute",
                                           "validation_split")}}


__all__ = [
    'APPB_MODEL', 'APPB_SEEDS', 'appb_config', 'appb_configs', 'APPE_SEEDS',
    '_eps_name', '_jax_row', '_lpmst_law', '_MEASURED', 'APPC_EPSILONS', 'CHECK_SEED', 'cifar10_config',
    'cifar10_configs', 'CIFAR_COLUMNS', 'CIFAR_MEAN', 'CIFAR_MODEL', 'CIFAR_STD', 'configs', 'DATA_VERSION',
    'DATASETS', 'DIRICHLET', 'dp_violation', 'EPSILONS', 'execute', 'EXTRA_SEEDS_AT', 'figure_curves',
    'FIGURE_EPSILONS', 'FIGURE_PRIORS', 'jax_k_star', 'jax_off_by_one', 'JAX_STAGE_SETTINGS', 'KS',
    'LP3ST_EPSILONS', 'LP3ST_GAIN_RANGE', 'lp_scaling_check', 'LP_TOL', 'lpmst_check', 'LPMST_K', 'LPMST_MAPS',
    'max_log_ratio', 'measure', 'MIXUP_PROBE', 'ML_CLASSES', 'ML_EPSILONS', 'MODEL', 'MOVIELENS',
    'MOVIELENS_SPLIT_SEED', 'movielens_table', 'MOVIELENS_TEST_FRACTION', 'NOT_RUN', 'NOT_RUN_DEFAULT',
    'not_run_table', 'NUM_CLASSES', 'OFF_BY_ONE_PRIORS', 'p_correct', 'PAPER', 'PAPER_AUGMENT', 'PRIORS_PER_CELL',
    'QUICK', 'quoted_baselines', 'ratio_check', 'RATIO_TOL', 'reasons', 'RECIPE', 'recipe_selection',
    'SELECTION_AUGMENTS', 'SELECTION_CANDIDATES', 'selection_configs', 'SELECTION_EPSILONS', 'SMOKE',
    'SMOKE_EPSILON', 'SPLIT_EPSILON', 'SPLIT_FRACTIONS', 'split_grid', 'split_grid_mean', 'SPLIT_HALF',
    'SPLIT_SLIGHTLY_ABOVE',
    'SUBSTITUTES', 'DIFFERENCES',
    'table1_margins', 'table4_cells', 'TABLE4_EPSILONS', 'theorem3_check', 'TITLE', 'uniform_check',
    'VALIDATION', 'VALIDATION_SEED', 'validation_split', 'WEIGHT_DECAY',
]


def __getattr__(name: str):
    """``NOT_RUN`` (claim id -> why it is not run) is computed on first use (:func:`.not_run.reasons`);
    the names of :data:`_LAZY` are imported on first use."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = table = reasons()
        return table
    if name in _LAZY:
        globals()[name] = value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
