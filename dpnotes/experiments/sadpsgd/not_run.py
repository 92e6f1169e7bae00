"""Why every SA-DPSGD claim that :func:`~.answers.measure` does not answer is not run: a table of (claim-id
pattern, reason) rows (:mod:`dpnotes.experiments.not_run`).
"""

from __future__ import annotations

from dpnotes.experiments import not_run

from .runs import figure4_configs
from .settings import PAPER

_GPU = "paper-profile run missing (MNIST/Fashion-MNIST: hours on a CPU; CIFAR-10: GPU)"
_TABLE3 = "needs the Table 3 runs (baselines to eps 6, SA-DPSGD to accepted eps 3) of the paper profile"
NOT_RUN_DEFAULT = not_run.DEFAULT
NOT_RUN_TABLE = (  # the rows that need no pricing (not_run_table() adds Figure 4's)
    ("sadpsgd.table1.*.sa_dpsgd_tuned", "the 'freely adjusted' hyperparameters are not printed"),
    ("sadpsgd.sec4_4.lr_floor", "Figure 4a sweep: the learning-rate grid and seeds are not given"),
    ("sadpsgd.sec4_4.q0_insensitive", "Figure 4c sweep: the Q0 grid and seeds are not given"),
    ("sadpsgd.sec4_4.mu0_plateau", "Figure 4d sweep: the mu0 grid and seeds are not given"),
    ("sadpsgd.sec1_3.fig1_trajectory", "Figure 1's simulation (linear regression) has no settings at all"),
    ("sadpsgd.sec4_3.fig3_loss", "needs the paper-profile loss-vs-eps curves of all four schemes"),
    ("sadpsgd.sec4_3.fig3_accuracy", "needs the paper-profile accuracy-vs-eps curves of all four schemes"),
    ("sadpsgd.sec4_3.table1_consistent", "needs the tuned runs, whose hyperparameters are not printed"),
)


def not_run_table() -> not_run.Table:
    """:data:`NOT_RUN_TABLE` and the rows of Figure 4's two runs, with their cost."""
    lr, b = figure4_configs()
    return NOT_RUN_TABLE + (
        ("sadpsgd.sec4_4.lr1_5_accuracy", not_run.needs_runs([lr], "Figure 4a: lr 1.5 on MNIST")),
        ("sadpsgd.sec4_4.batch256_accuracy", not_run.needs_runs([b], "Figure 4b: B 256 on MNIST")))


def reasons() -> dict[str, str]:
    """Claim id -> why it is not run, for every claim not measured (``NOT_RUN``)."""
    return not_run.reasons(PAPER, not_run_table())
