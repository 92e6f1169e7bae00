"""Why every LabelDP claim that :func:`~.answers.measure` does not answer is not run: a table of
(claim-id pattern, reason) rows (:mod:`dpnotes.experiments.not_run`).
"""

from __future__ import annotations

import math

from dpnotes import claims
from dpnotes.experiments import not_run

from .runs import CIFAR_COLUMNS, MIXUP_PROBE, SPLIT_EPSILON, SPLIT_FRACTIONS, cifar10_config, cifar10_configs
from .settings import PAPER

_LP2ST = ("no LP-MST run of it yet (LP-2ST/LP-MST is implemented: Algorithm 3 with staged priors, filtering, "
          "temperature)")
_HEADER = "its column's eps (the table header) is missing from the extracted text"
_BASELINES = "the baselines it compares with are quoted from other papers"
_FIG3_EPS = "Figure 3's eps is missing from the extracted text"
_CPU = ("paper-profile CPU run not done yet: `dpnotes run labeldp --profile paper` trains LP-1ST and LP-2ST on "
        "MNIST and Fashion-MNIST at eps 1, 2, 3, 4 and inf with a small CNN (announced substitution for the "
        "paper's Inception net), about 4 CPU-min per LP-1ST and 6 per LP-2ST run at one thread")

# Claim-id patterns whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "labeldp.table1.lp_1st_pretrain.*": "CIFAR-100 (pre-training)",
    "labeldp.table1.lp_2st_pretrain.*": "CIFAR-100 (pre-training)",
    "labeldp.table2.*": "CIFAR-100",
    "labeldp.sec5_1.cifar100*": "CIFAR-100",
    "labeldp.table3.*": "MovieLens 1M (MovieLens 100k is the labelled substitute)",
    "labeldp.table5.*": "KMNIST",
    "labeldp.appc.kmnist*": "KMNIST",
    "labeldp.sec5_2.ssl_priors_help": "ImageNet-pretrained DINO weights (Figure 1(b) also uses BYOL on CIFAR-10)",
}
NOT_RUN_DEFAULT = not_run.DEFAULT


def _cifar(stages: int, column: int) -> str:
    """Why Table 1's CIFAR-10 cell (LP-``stages``ST, column ``column``) is not run."""
    if column not in CIFAR_COLUMNS:
        return f"{_HEADER} (Table 1 on CIFAR-10: the paper profile runs the columns whose eps is inferred)"
    eps = CIFAR_COLUMNS[column]
    return not_run.needs_runs([cifar10_config(eps, stages)], f"Table 1 on CIFAR-10 at eps {eps:g}, inferred: {_HEADER}")


def not_run_table() -> not_run.Table:
    """(claim-id pattern, reason) for every claim :func:`measure` does not answer (without records:
    Table 4's cells and the sentences on them are measured once their runs are stored)."""
    table1 = cifar10_configs()
    rows = list(not_run.offline(_OFFLINE))
    for claim in claims.load(PAPER):
        parts = claim.id.split(".")
        if parts[:2] == ["labeldp", "table1"] and parts[2] in ("lp_1st", "lp_2st") and claim.value is not None:
            rows.append((claim.id, _cifar(int(parts[2][3]), int(parts[3].removeprefix("col")))))
    rows += [
        ("labeldp.sec5_1.resnet18_nonprivate", not_run.needs_runs([cifar10_config(math.inf, 1)],
                                                                  "non-private ResNet18-v2 on CIFAR-10")),
        ("labeldp.sec5_1.margin_20", f"{not_run.needs_runs(table1, 'Table 1 on CIFAR-10')}; {_BASELINES}; "
                                     "Table 1's other eps headers are missing from the extracted text"),
        ("labeldp.sec5_1.beats_pretrained_dpsgd", "data not available offline: CIFAR-100 (pre-training); "
                                                  + not_run.needs_runs(table1, "Table 1 on CIFAR-10")),
        ("labeldp.sec5_1.outperforms_everywhere", f"compares every table: {not_run.needs_runs(table1, 'Table 1')}; "
                                                  f"CIFAR-100, MovieLens 1M and KMNIST are not available offline; "
                                                  f"{_BASELINES}"),
        ("labeldp.table4.*.lp_?st.value?", f"{_CPU}; {_HEADER}"),  # measured once their runs are stored
        ("labeldp.sec5_1.lp3st_gain", "paper-profile runs missing: judged once LP-3ST and LP-2ST at eps 1 and 2 on "
                                      "MNIST and Fashion-MNIST are stored (Figure 1(a)'s own data sets and stage "
                                      "counts are missing from the extracted text)"),
        ("labeldp.appc.outperforms_mnist_fmnist", "paper-profile runs missing: it is judged once Table 4's LP-1ST "
                                                  "and LP-2ST cells at eps 1-4 on MNIST and Fashion-MNIST are stored"),
        ("labeldp.appe.split_above_half",
         f"paper-profile runs missing: judged once the stage-1 fractions {SPLIT_FRACTIONS} of LP-2ST at eps "
         f"{SPLIT_EPSILON:g} are stored on MNIST and Fashion-MNIST (Figure 4(a) itself is CIFAR-10's: GPU)"),
        ("labeldp.appe.top_k_tradeoff", "paper-profile runs missing: judged on the stage-1 fraction grid of LP-2ST "
                                        "(Figure 5 itself is CIFAR-10's: GPU)"),
        ("labeldp.appe.stage2_less_mixup", "paper-profile runs missing: judged once LP-2ST at eps 2 with stage-1 mixup "
                                           f"alpha {MIXUP_PROBE:g} and stage 2 at {MIXUP_PROBE:g} or none is stored on "
                                           "MNIST and Fashion-MNIST (Figure 4(b) itself is CIFAR-10's: GPU)"),
        ("labeldp.appb.fig2_cluster_tradeoff", "needs BYOL features of CIFAR-10 (self-supervised training on a GPU)"),
        ("labeldp.appd.lp2st_beats_lp1st", f"{_FIG3_EPS}, so Figure 3 has no paper-profile config; {_LP2ST}"),
        ("labeldp.appd.stage1_top2_accuracy", f"{_FIG3_EPS}, so Figure 3 has no paper-profile config; {_LP2ST}"),
    ]
    return tuple(rows)


# What measure() answers whatever the records (computed, no training).
_MEASURED = ("labeldp.lemma1.rrtopk_dp", "labeldp.cor2.rrwithprior_dp", "labeldp.thm3.rrwithprior_optimal",
             "labeldp.sec4.lp1st_is_rr", "labeldp.obs4.lpmst_labeldp")


def reasons() -> dict[str, str]:
    """Claim id -> why it is not run, for every claim not measured (``NOT_RUN``)."""
    return not_run.reasons(PAPER, not_run_table(), _MEASURED)
