"""The comparison's protocol as data: methods, data, models, eps, the search spaces and the
tuning budget, declared before any run (the commit that adds them is their preregistration).

Every method trains the same model on the same data with the same expected batch, epochs and
delta; its noise is calibrated so that the WHOLE tuning -- K trials, each a training run with a
candidate drawn uniformly from the method's search space, the best (validation accuracy)
released -- meets the target eps under ``rdp`` (Papernot and Steinke 2022, Theorem 2:
:mod:`dpnotes.accounting.tuning`). Epochs, batch and noise are NOT in the search spaces: every
candidate of a method then makes the same releases, so one trial event bounds every candidate
(the theorem's Q). The untuned run ("default": each paper's own setting, one run at the target
eps, no selection) shows what tuning costs and buys.

Paper values (DPlis's R, DPIS's Table 2, SA-DPSGD's Table 2) are read from the claims registry.
"""

from __future__ import annotations

from dpnotes import claims

TITLE = "Which method? The five on equal footing: tuning charged, paired seeds (beyond the papers)"
STUDY = "compare"
DATA_VERSION = 1  # images / 255; test split: a fixed half selects (validation), the other half reports
DELTA = 1e-5
EPSILONS = (1.0, 2.0, 4.0, 8.0)
DATASETS = ("mnist", "fashion-mnist", "cifar-10")
SEEDS = (0, 1, 2)  # paired: a seed fixes K, the initialisation and the data order of every method
# One model per row: the end-to-end CNN, and ScatterNet features + CNN (Tramer and Boneh 2021).
MODELS = {"mnist": ("tf-mnist-cnn", "scatternet-cnn"), "fashion-mnist": ("tf-mnist-cnn", "scatternet-cnn"),
          "cifar-10": ("dplis-cifar-cnn", "scatternet-cifar-cnn")}
METHODS = ("dpsgd", "dpsgd_tanh", "dpsgd_decay", "dplis", "dpis", "sadpsgd")
LABELS = {"dpsgd": "DP-SGD", "dpsgd_tanh": "DP-SGD, tanh", "dpsgd_decay": "DP-SGD-Decay", "dplis": "DPlis",
          "dpis": "DPIS", "sadpsgd": "SA-DPSGD"}


def methods(model: str) -> tuple[str, ...]:
    """The methods of a row: all, except the tanh variant on ScatterNet rows (Tramer and Boneh's
    ScatterNet CNN fixes its own activations; the tanh network is an end-to-end CNN's variant)."""
    return tuple(m for m in METHODS if not (m == "dpsgd_tanh" and model.startswith("scatternet")))


ENGINE_METHOD = {"dpsgd_tanh": "dpsgd"}  # dpnotes.methods module of each (the tanh network is a model change)
ACCOUNTANT = "rdp"  # prices the tuning event (PLD and PRV cannot: they refuse it)
# Tuning budget: K ~ truncated negative binomial (Papernot and Steinke, Definition 1), eta = SHAPE,
# E[K] = MEAN. eta = 0 (logarithmic) charges least at E[K] = 3 among eta = 0, 1/2, 1; K is drawn
# per seed when the configs are made (it depends on no data), so every run's cost is known before.
TUNING = {"mean": 3.0, "shape": 0.0}  # eta = 0: the logarithmic distribution
BATCH = 256
EPOCHS = {"paper": 6, "quick": 1, "smoke": 1}
SUBSET = {"paper": None, "quick": 3000, "smoke": 300}  # training images (None: all)
VALIDATION = {"paper": 5000, "quick": 1000, "smoke": 100}  # test images that select; as many report
ENERGY_IMAGES = 1000  # SA-DPSGD's energy: the mean loss on this many validation images


def _s(name: str) -> float:
    return claims.setting(name)


def paper_defaults(method: str, dataset: str) -> dict:
    """The untuned candidate: lr and clip of DP-SGD's usual setting, the paper's own knobs."""
    ds = {"mnist": "mnist", "fashion-mnist": "fmnist", "cifar-10": "cifar10"}[dataset]
    base = {"lr": 0.5, "clip": 1.0}
    if method == "dplis":
        return {**base, "R": _s("dplis.table6.mnist_cnn.eps1_99.r_best")}
    if method == "dpis":
        return {**base, "a_e": _s(f"dpis.table2.{ds}.a_e"), "k": _s(f"dpis.table2.{ds}.k")}
    if method == "sadpsgd":
        return {**base, "Q0": _s(f"sadpsgd.table2.{ds}.q0"), "mu0": int(_s(f"sadpsgd.table2.{ds}.mu0"))}
    if method == "dpsgd_decay":
        return {**base, "decay_rate": 0.01}  # DPIS's DP-SGD-Decay rate (dpnotes.experiments.dpis.DECAY_RATE)
    return base


# The search spaces: a candidate is one value of each knob, uniformly at random. Learning rate and
# clip norm for all (the noise is sigma C: the clip norm changes no release); each method's own
# knobs beside them where they change no release.
COMMON = {"lr": (0.1, 0.25, 0.5, 1.0, 2.0), "clip": (0.1, 0.5, 1.0, 2.0)}


def search_space(method: str, dataset: str) -> dict[str, tuple]:
    """The knobs a trial draws for ``method`` (module docstring)."""
    own = {"dplis": {"R": (_s("dplis.setup.r_default"), paper_defaults("dplis", dataset)["R"])},
           "sadpsgd": {"Q0": (1.0, 10.0, 100.0), "mu0": (5, 10)}}
    # DP-SGD-Decay's rate and DPIS's a_E and k shape the noise schedule (the trial's releases): fixed
    # at the paper's values, so that every candidate's releases are the same (module docstring)
    return {**COMMON, **own.get(method, {})}


# The part the 2-core CPU runs (about 25 CPU-h, `dpnotes.experiments.compare.runs.plan`): MNIST and
# Fashion-MNIST at eps 1 and 4 on the end-to-end CNN, every method, 3 paired seeds, tuning included.
# Every other paper-profile run is queued for the GPU campaign (dpnotes.campaign.PLAN).
CPU_PART = tuple(f"{d}.tf-mnist-cnn.eps{e:g}.*" for d in ("mnist", "fashion-mnist") for e in (1.0, 4.0))
