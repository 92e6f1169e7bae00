"""LabelDP (Ghazi et al., NeurIPS 2021): the paper's identity, the grids of our computed checks, its
settings read from the claims registry (``dpnotes/claims/labeldp.toml``) and ``SUBSTITUTES``.
"""

from __future__ import annotations

from dpnotes import claims
from dpnotes.experiments.differences import Difference

TITLE = (
    "B. Ghazi, N. Golowich, R. Kumar, P. Manurangsi, C. Zhang. "
    "Deep Learning with Label Differential Privacy. NeurIPS 2021."
)
PAPER = "labeldp"
DATA_VERSION = 1  # MNIST and Fashion-MNIST / 255, fixed random subsets; MovieLens-100k split as GDP's (seed 0)

# --- The grids of the computed checks (ours: the paper states its results for every K, eps, p) ---
KS = tuple(range(2, 11))
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
PRIORS_PER_CELL = 4  # random priors per (K, eps) for Theorem 3
DIRICHLET = (0.1, 0.3, 1.0, 3.0)  # concentrations of the random priors (one per prior of a cell)
CHECK_SEED = 0
# Float rounding: at eps = 8 the off-diagonal entry (1 - keep) / (k - 1) ~ 3e-4 is computed by a
# subtraction, so its log carries ~1e-16 / 3e-4 ~ 3e-13 of error.
RATIO_TOL = 1e-12
LP_TOL = 1e-9  # one-sided: the LP optimum may not exceed the closed form by more than this
OFF_BY_ONE_PRIORS = 200
LPMST_K = 3  # toy LP-MST instances: K labels, two examples (one per stage), a few stage-2 prior maps
LPMST_MAPS = 5


def _s(name: str) -> float:
    return claims.setting(f"labeldp.{name}")


# What our runs do otherwise than the paper, by claim pattern (the verdicts' fidelity).
_SMALL_CNN = "model: a small CNN in place of the simplified Inception net (App. B)"
SUBSTITUTES = {
    "labeldp.table4.*.lp_*": _SMALL_CNN + "; eps columns inferred as 1, 2, 3, 4, inf (the header is lost)",
    "labeldp.appc.*": _SMALL_CNN + "; eps columns inferred (the header is lost)",
    "labeldp.sec5_1.lp3st_gain": _SMALL_CNN + "; MNIST and Fashion-MNIST (Figure 1(a)'s data sets are lost)",
    "labeldp.appe.*": _SMALL_CNN + "; MNIST and Fashion-MNIST in place of CIFAR-10 (Figures 4-5)",
    "labeldp.table1.lp_[12]st.*": ("eps columns inferred (the header is lost); mixup alpha, LP-2ST's stage-1 "
                                   "fraction and temperature from the authors' JAX CIFAR-10 profile; inputs "
                                   "standardised with CIFAR-10's usual channel mean and std (ours)"),
    "labeldp.sec5_1.resnet18_nonprivate": ("LP-1ST at eps = inf (the labels as they are) with the JAX profile's mixup "
                                           "at its nearest eps (ours)"),
}

# Each substitute, what it changes, how much of a verdict it explains and whether the paper's setting
# was run (dpnotes.experiments.differences; the chapter's "Where we differ from the paper").
DIFFERENCES = (
    Difference(
        "small CNN for Table 4", "the model: App. B trains a simplified Inception net on MNIST and Fashion-MNIST",
        ("labeldp.table4.*.lp_*",), "queued: Table 4 on App. B's network, LP-1ST and LP-2ST at every eps, paired seeds",
        measured="per seed, our small CNN's non-private accuracy (LP-1ST at eps = inf) minus the paper's eps = inf "
                 "column (a seed without that run: the mean of those with it)",
        queued=("table4.*.appb",)),
    Difference(
        "eps columns inferred", "which eps each of Table 4's columns is: the header is lost in the text",
        ("labeldp.table4.*.lp_*", "labeldp.appc.*"), "cannot be run: the header is lost",
        unmeasured="no run can read a lost header; the columns are read as ascending budgets"),
    Difference(
        "small CNN for App. C and LP-3ST", "the model under comparisons of our own runs on paired seeds",
        ("labeldp.appc.*", "labeldp.sec5_1.lp3st_gain"),
        "App. C's runs on App. B's network queued with Table 4's; LP-3ST on it not queued",
        unmeasured="the model moves both arms of each comparison, and how it moves their difference needs the "
                   "same comparison on App. B's network (App. C: Table 4's queued App. B runs)",
        queued=("table4.*.appb",)),
    Difference(
        "MNIST and Fashion-MNIST, small CNN, for App. E", "the data and model of Figures 4-5: CIFAR-10 with ResNet-18",
        ("labeldp.appe.*",), "not queued: the split grid on CIFAR-10 with ResNet-18",
        unmeasured="no record runs the stage-1 split grid on CIFAR-10 with ResNet-18, the only setting that measures "
                   "it (one LP-2ST run of Table 1's CIFAR-10 setting per fraction and seed)",
        would_measure=("table1.cifar10.lp_2st.eps*", ("SPLIT_FRACTIONS", "APPE_SEEDS"))),
    Difference(
        "CIFAR-10 recipe from the authors' JAX profile", "Table 1's mixup, stage-1 fraction, temperature and input "
        "standardisation, which the paper does not print", ("labeldp.table1.lp_[12]st.*", "labeldp.sec5_1.*nonprivate"),
        "the authors' code's reading; Table 1's CIFAR-10 runs queued (GPU)",
        unmeasured="the paper prints none of these settings and no record runs another",
        queued=("table1.cifar10.*",)),
)
