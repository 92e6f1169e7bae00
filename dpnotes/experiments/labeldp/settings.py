"""LabelDP (Ghazi et al., NeurIPS 2021): the paper's identity, the grids of our computed checks, its
settings read from the claims registry (``dpnotes/claims/labeldp.toml``) and ``SUBSTITUTES``.
"""

from __future__ import annotations

from dpnotes import claims

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
