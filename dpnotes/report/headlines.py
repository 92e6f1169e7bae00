"""Each paper's headline claims: the few claims of its main tables and sentences that a reader
asks about first, shown in the "What held" box that opens its chapter
(:func:`dpnotes.report.layout.what_held`).

Only claim ids and words live here; every value shown beside them comes from the claims
registry (the paper's) and the run records (ours) through :func:`dpnotes.report.scoreboard`.
A headline is ``(claim id, label)``; the first ``central`` headlines of a paper carry its main
claim (``question`` states it) and decide the answer by the rule of
:func:`dpnotes.report.layout.answer`. Headlines are claims, never checks (identities, fitted values):
a test holds every id to the registry and to that.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Headlines:
    """One paper's main claim in words, and the claims that answer it (central ones first)."""

    question: str
    claims: tuple[tuple[str, str], ...]  # (claim id, label)
    central: int  # the first ``central`` claims carry the main claim

    def __post_init__(self):
        if not 4 <= len(self.claims) <= 8:
            raise ValueError(f"a paper has 4 to 8 headline claims, got {len(self.claims)}")
        if not 1 <= self.central <= len(self.claims):
            raise ValueError(f"central must be 1..{len(self.claims)}, got {self.central}")


HEADLINES = {
    "dplis": Headlines(
        question="Does smoothing the loss (R_best) raise test accuracy over DP-SGD at the same ε (Table 2)?",
        claims=(
            ("dplis.table2.mnist_mlp.eps1_99.gain_rbest", "MNIST MLP, R_best − No, ε = 1.99"),
            ("dplis.table2.mnist_cnn.eps1_99.gain_rbest", "MNIST CNN, R_best − No, ε = 1.99"),
            ("dplis.table2.cifar10_mlp.eps1_99.gain_rbest", "CIFAR-10 MLP, R_best − No, ε = 1.99"),
            ("dplis.table2.cifar10_cnn.eps1_99.gain_rbest", "CIFAR-10 CNN, R_best − No, ε = 1.99"),
            ("dplis.sec5_4.sharpness_smaller", "Sec. 5.4: smoothed models are less sharp (Table 9)"),
        ),
        central=4,
    ),
    "dpis": Headlines(
        question="Does DPIS beat DP-SGD and its variants at the same (ε, δ) (Table 3)?",
        claims=(
            ("dpis.sec5_4.dpis_best_everywhere", "Sec. 5.4: DPIS beats every competitor in every setting"),
            ("dpis.table3.mnist.eps1.dpis", "MNIST, ε = 1: DPIS"),
            ("dpis.table3.mnist.eps1.dpsgd_hf", "MNIST, ε = 1: DP-SGD-HF"),
            ("dpis.table3.fmnist.eps1.dpis", "Fashion-MNIST, ε = 1: DPIS"),
            ("dpis.table3.fmnist.eps1.dpsgd_hf", "Fashion-MNIST, ε = 1: DP-SGD-HF"),
            ("dpis.sec3_3.sigma_dpis_le_dpsgd", "Sec. 3.3: DPIS's σ_G never exceeds DP-SGD's (accounting)"),
            ("dpis.sec4_2.noise_drop.mnist_fmnist", "Sec. 4.2: σ_G drops by 40-50 % during training"),
        ),
        central=1,
    ),
    "gdp": Headlines(
        question="Does the CLT accountant give a smaller ε than the moments accountant, and so better models "
                 "at the same budget?",
        claims=(
            ("gdp.figure2.clt_below_ma", "Figure 2: ε of the CLT below the moments accountant's"),
            ("gdp.figure4.top.clt_more_accurate", "Figure 4 (top): less noise, higher accuracy"),
            ("gdp.figure4.bottom.clt_faster", "Figure 4 (bottom): less noise, fewer epochs to an accuracy"),
            ("gdp.table1.row2.eps_clt", "Table 1, row 2: ε of the CLT"),
            ("gdp.table1.row2.accuracy", "Table 1, row 2: MNIST test accuracy"),
            ("gdp.table3.private.accuracy", "Table 3: IMDb test accuracy, private"),
            ("gdp.appendixA.clt_close", "Appendix A: the CLT is close after one epoch"),
        ),
        central=3,
    ),
    "labeldp": Headlines(
        question="Does multi-stage training with RRWithPrior (LP-2ST) beat plain randomized response (LP-1ST) "
                 "at the same label ε?",
        claims=(
            ("labeldp.appc.outperforms_mnist_fmnist",
             "App. C: LP-MST beats the quoted baselines, LP-2ST beats LP-1ST (MNIST, Fashion-MNIST)"),
            ("labeldp.table4.mnist.lp_2st.value1", "Table 4, MNIST, first ε: LP-2ST"),
            ("labeldp.table4.mnist.lp_1st.value1", "Table 4, MNIST, first ε: LP-1ST"),
            ("labeldp.table4.fmnist.lp_2st.value1", "Table 4, Fashion-MNIST, first ε: LP-2ST"),
            ("labeldp.sec5_1.lp3st_gain", "Sec. 5.1: a third stage adds 1-2 %"),
        ),
        central=1,
    ),
    "sadpsgd": Headlines(
        question="Does SA-DPSGD reach higher accuracy at a lower privacy cost than DP-SGD, under a sound ε?",
        claims=(
            ("sadpsgd.thm1.accepted_steps_only", "Theorem 1: only accepted steps cost privacy"),
            ("sadpsgd.sec4_2.lowest_privacy_cost", "Sec. 4.2: SA-DPSGD always has the lowest privacy cost"),
            ("sadpsgd.table1.mnist.sa_dpsgd", "Table 1, MNIST: SA-DPSGD"),
            ("sadpsgd.table1.mnist.dpsgd", "Table 1, MNIST: DP-SGD"),
            ("sadpsgd.table1.fmnist.sa_dpsgd", "Table 1, Fashion-MNIST: SA-DPSGD"),
            ("sadpsgd.table1.fmnist.dpsgd", "Table 1, Fashion-MNIST: DP-SGD"),
            ("sadpsgd.table1.cifar10.sa_dpsgd", "Table 1, CIFAR-10: SA-DPSGD"),
        ),
        central=2,
    ),
}

# The chapter titles, as the index page links them.
TITLES = {"dplis": "DPlis", "dpis": "DPIS", "gdp": "GDP", "labeldp": "LabelDP", "sadpsgd": "SA-DPSGD"}
