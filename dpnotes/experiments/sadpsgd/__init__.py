"""Fu, Chen, Ling: SA-DPSGD, DP-SGD based on simulated annealing (2022).

The accounting behind the paper's privacy statements, computed now, and the runs behind
Tables 1 and 3, defined for later. Every paper number is read from the claims registry
(``dpnotes/claims/sadpsgd.toml``); see :mod:`dpnotes.report.sadpsgd` for the chapter's
tables and figure.

Accounting (Section 3.3): a step is one Poisson-subsampled Gaussian release (q = B/N, noise
multiplier sigma, Table 2). The paper's Theorem 1 composes its RDP over the ``tau``
ACCEPTED steps only, at integer orders 2..64 with the classic conversion (Lemma 2): the
registry's ``sadpsgd-accepted-only`` accountant on a ledger of ``CandidateStepDpEvent``.
Every candidate reads private data, so a sound bound counts all ``T`` candidates
(:mod:`dpnotes.accounting.sadpsgd`). We give two sound values: Theorem 1's own formula over
all candidates (same orders and conversion, so the difference is the counting alone) and
the registry's sound accountants (``rdp-classic``, ``rdp``, ``pld``).

The paper gives no number of steps: a run stops when the accepted-steps eps reaches the
budget (eps 3, Table 2). We stop *before* the step that would exceed it (the engine's
``target_epsilon``), so ``tau`` is the largest count with eps <= 3; a loop that runs
``while eps < budget`` (the first author's DPSUR code) makes one step more.

Profiles: ``paper`` = Table 2's settings, 5 seeds (the paper's runs count), until the
accepted eps reaches 3 (Table 1) or, for the Table 3 baselines, eps 6; ``quick`` = MNIST and
Fashion-MNIST at Table 2's q and sigma for a hundred accepted steps with the energy on 2,000
test images (a deviation: never compared with the paper); ``smoke`` = a few steps on a few
hundred MNIST examples (CI).

Layout (the same for every paper, :mod:`dpnotes.experiments`):

* :mod:`.settings`: the paper's identity (``TITLE``, ``PAPER``, ``DATA_VERSION``), its settings read from the claims
  registry and ours
* :mod:`.privacy`: the paper's privacy arithmetic, exact (no training)
* :mod:`.runs`: the profiles and run configs (``configs``)
* :mod:`.training`: data loading and one run (``execute``)
* :mod:`.cells`: what the records hold, cell by cell, for ``measure`` and the chapter
* :mod:`.not_run`: why every other claim is not run: the reason table; ``reasons()`` gives ``NOT_RUN``
* :mod:`.answers`: our value for each claim (``measure``)
"""

from __future__ import annotations

from .answers import _beats_sota, _lowest_privacy_cost, _table3_claims, measure
from .cells import (
    acceptance_rate,
    accuracy,
    curve,
    decisions,
    first_reaching,
    last_uphill,
    level_eps,
    mean_or_never,
    table3_run,
)
from .not_run import NOT_RUN_DEFAULT, NOT_RUN_TABLE, not_run_table, reasons
from .privacy import (
    break_even_rate,
    candidate_ledger,
    eps_all,
    eps_paper,
    eps_sound,
    released,
    setting,
    step_event,
    steps_for,
    table3_break_even,
    table3_levels,
    tau_at,
    top_level,
    worst_case_candidates,
)
from .runs import (
    ENERGY_SPLIT,
    FIGURE4,
    GHOST_FROM_SEED,
    MODEL,
    MOMENTUM,
    QUICK_ACCEPTED,
    QUICK_TEST,
    RELU_MODEL,
    SEEDS,
    SMOKE,
    TABLE3_EVAL_EVERY,
    configs,
    figure4_configs,
    non_dp_lr,
)
from .settings import (
    ACCEPTED_ONLY,
    DATA_NAMES,
    DATA_VERSION,
    DATASETS,
    DIFFERENCES,
    PAPER,
    READER_NAMES,
    SCHEMES,
    SOUND,
    TABLE3_SCHEME,
    TITLE,
)
from .training import CIFAR_MEAN, CIFAR_STD, SUBSET_SEED, execute, load

__all__ = [
    'GHOST_FROM_SEED',
    '_beats_sota', '_lowest_privacy_cost', '_table3_claims', 'acceptance_rate', 'ACCEPTED_ONLY', 'accuracy',
    'break_even_rate', 'candidate_ledger', 'CIFAR_MEAN', 'CIFAR_STD', 'configs', 'curve', 'DATA_NAMES', 'READER_NAMES',
    'DATA_VERSION', 'DATASETS', 'decisions', 'DIFFERENCES',
    'ENERGY_SPLIT', 'eps_all', 'eps_paper', 'eps_sound', 'execute',
    'FIGURE4', 'figure4_configs', 'first_reaching', 'last_uphill', 'level_eps', 'load', 'mean_or_never', 'measure',
    'MODEL', 'MOMENTUM', 'non_dp_lr', 'NOT_RUN', 'NOT_RUN_DEFAULT', 'NOT_RUN_TABLE', 'not_run_table', 'PAPER',
    'QUICK_ACCEPTED', 'QUICK_TEST', 'reasons', 'released', 'RELU_MODEL', 'SCHEMES', 'SEEDS', 'setting', 'SMOKE',
    'SOUND', 'step_event', 'steps_for', 'SUBSET_SEED', 'table3_break_even', 'TABLE3_EVAL_EVERY', 'table3_levels',
    'table3_run', 'TABLE3_SCHEME', 'tau_at', 'TITLE', 'top_level', 'worst_case_candidates',
]


def __getattr__(name: str):
    """``NOT_RUN`` (claim id -> why it is not run) is computed on first use (:func:`.not_run.reasons`)."""
    if name == "NOT_RUN":
        globals()["NOT_RUN"] = table = reasons()
        return table
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
