"""LabelDP's run configs per profile (:func:`configs`): Table 4's RR-with-prior and LP cells, the recipe
selection on held-out data, Appendix C's LP-3ST grid, Appendix E's MovieLens and Table 4's CIFAR-10 cells.
"""

from __future__ import annotations

import math

from dpnotes import claims, validate
from dpnotes.data import prepare
from dpnotes.experiments import plan
from dpnotes.results import PROFILES

from .settings import PAPER, _s

SMOKE = {"train": 512, "test": 256, "batch": 64, "epochs": 1}
SMOKE_EPSILON = 2.0
MODEL = "tf-mnist-cnn"  # small CNN: announced substitution for the paper's simplified Inception
NUM_CLASSES = 10
DATASETS = ("mnist", "fashion_mnist")

# Table 4's eps columns, inferred (its header is lost in the extracted text): Table 5 of the same
# appendix, whose first four headers survive, then inf (its fifth, printed bare, as LP-2ST's lack
# of a fifth value shows); LP-1ST fills 5 cells, LP-2ST 4.
TABLE4_EPSILONS = tuple(_s(f"table5.col{i}.epsilon") for i in range(1, 5)) + (math.inf,)
# Seeds 1, 2 of Table 4's LP rows at every eps column, where the claimed LP-2ST gains are largest
# first (eps 1, 2), then eps 3, 4, then LP-1ST at inf (issue "Seeds": every training verdict on 3 seeds).
EXTRA_SEEDS_AT = (1.0, 2.0, 3.0, 4.0, math.inf)
PAPER_AUGMENT = ("crop", "flip", "cutout")  # App. B: "on all datasets" (flip on digits included)
WEIGHT_DECAY = 1e-4  # App. B: L2 penalty 1e-4
# LP-2ST settings per eps: (mixup alpha stage 1, stage 2, stage-1 fraction, prior temperature).
# The paper gives none for MNIST; these are the authors' JAX CIFAR-10 profile's (the only
# published ones), eps 3 taking eps 4's row and inf eps 8's (nearest in log eps).
JAX_STAGE_SETTINGS = {1.0: (16.0, 8.0, 0.8, 0.6), 2.0: (8.0, 8.0, 0.7, 0.5),
                      4.0: (8.0, 4.0, 0.6, 0.5), 8.0: (4.0, 4.0, 0.6, 0.5)}

# --- The recipe's regularisation, chosen on held-out training data (ours) ------------------
# App. B's augmentations and the JAX CIFAR-10 mixup strengths are tuned for a large network; on
# the small CNN that replaces the Inception net they underfit (non-private LP-1ST: 96.2% on MNIST
# against the paper's 99.3). So the augmentations and the mixup alpha are chosen per data set on
# a validation split: VALIDATION training images held out (a fixed permutation, never the test
# set), LP-1ST at each of SELECTION_EPSILONS for the full 40 epochs, every candidate of
# SELECTION_CANDIDATES, seed 0; the candidate of the best mean validation accuracy over the eps
# is RECIPE's (tests check it against the records). A 10-epoch selection (commit 8b991f4) chose
# no augmentation and no mixup; over 40 epochs that recipe overfits the noisy labels (MNIST
# LP-1ST at eps 1 peaked at 95.5% near epoch 20 and ended at 92.2%), hence the full budget here.
# The selection reads true held-out labels: the recipe is outside the label-DP guarantee, as the
# paper's own tuning is (App. E: tuned without privacy accounting).
VALIDATION = 10_000
VALIDATION_SEED = 20211206  # the permutation that holds the validation images out
SELECTION_EPSILONS = (1.0, math.inf)
SELECTION_AUGMENTS = {"paper": PAPER_AUGMENT, "crop_cutout": ("crop", "cutout"), "none": ()}
# (augment, alpha): no flip (digits are not mirror-symmetric) with and without crop/cutout, at
# alpha 0 (no mixup), 1 and 4 (App. E's lower end), and App. B's own augmentations at alpha 4
SELECTION_CANDIDATES = tuple((a, alpha) for a in ("none", "crop_cutout") for alpha in (0.0, 1.0, 4.0)) + (
    ("paper", 4.0),)
# (augment, alpha), set from the selection's records (made at commit 995d2a5): MNIST crop and
# cutout without mixup (mean 96.97%, none with alpha 1 next at 96.84%), Fashion-MNIST neither.
RECIPE = {"mnist": ("crop_cutout", 0.0), "fashion_mnist": ("none", 0.0)}
# Sec. 5.1's LP-3ST and App. E's stage-1 fraction (Fig. 4a): the paper prints the settings of
# neither on MNIST; ours. Each LP-3ST run shares its stage 1 with the LP-2ST run of the same eps
# and seed (the same first part of the same permutation), so LP-3ST - LP-2ST is paired.
LP3ST_EPSILONS = (1.0, 2.0)
LP3ST_GAIN_RANGE = (0.5, 4.0)  # points: the claimed 1-2 within a factor of two
SPLIT_EPSILON = 2.0
SPLIT_FRACTIONS = (0.3, 0.5, 0.6, 0.7, 0.8)
SPLIT_HALF, SPLIT_SLIGHTLY_ABOVE = 0.5, 0.7  # "slightly higher than 50%": (0.5, 0.7]
# App. E / Fig. 4(b), "stage-2 typically requires less regularization than stage-1": LP-2ST at
# SPLIT_EPSILON with stage-1 mixup alpha MIXUP_PROBE and stage 2 at the same alpha or none (ours:
# App. E's lower end of its good range 4-8; the figure's grid is not printed).
MIXUP_PROBE = 4.0
APPE_SEEDS = (0, 1, 2)  # App. E's grid and mixup pairs; their statements average over the stored seeds
# MovieLens-100k, the offline substitute for Table 3's MovieLens-1M (direction only): NeuMF on
# (user, item) pairs, ratings as 5 classes, test RMSE of the softmax-expected rating, the GDP
# chapter's 80/20 split. Sec. 5.1 says the model is "trained similarly" and prints only the batch
# (128); the optimiser, lr and epochs are the GDP paper's non-private NeuMF (Adam, 0.01, 20).
ML_EPSILONS = (1.0, 2.0, 4.0, math.inf)  # LP-2ST at the finite ones
ML_CLASSES = 5
QUICK = {"train": 6000, "test": 2000, "epochs": 2}


def _jax_row(epsilon: float) -> tuple[float, float, float, float]:
    nearest = min(JAX_STAGE_SETTINGS, key=lambda e: abs(math.log(e) - math.log(min(epsilon, 1e300))))
    return JAX_STAGE_SETTINGS[nearest]


def _nonprivate(epochs: int, batch_size: int, lr: float, momentum: float, **extra) -> dict:
    """The loop's non-private path (the same keys as GDP's non-private runs)."""
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": "momentum", "momentum": momentum,
            "private": False, "clip": None, "noise_multiplier": 0.0, "sampling": "shuffle",
            "accountants": [], "steps_per_epoch": "floor", **extra}


def _eps_name(epsilon: float) -> str:
    return "inf" if math.isinf(epsilon) else f"{epsilon:g}"


def _method(dataset: str, epsilon: float, stages: int, split: float | None = None) -> dict:
    """LP-1ST (RR) or LP-MST (RRWithPrior) with the data set's RECIPE. LP-2ST takes its stage-1
    fraction (or ``split``) and temperature from the JAX row and RECIPE's alpha in both stages;
    LP-3ST (ours: the paper prints no setting) is LP-2ST with its stage 2 cut into two halves."""
    augment, alpha = RECIPE[dataset]
    common = {"epsilon": epsilon, "num_classes": NUM_CLASSES, "augment": list(SELECTION_AUGMENTS[augment])}
    if stages == 1:
        return {**common, "mechanism": "rr", "mixup_alpha": [alpha]}
    _, _, jax_split, temperature = _jax_row(epsilon)
    first = jax_split if split is None else split
    rest = [round((1 - first) / (stages - 1), 12)] * (stages - 1)
    return {**common, "mechanism": "rr_prior", "stages": stages, "stage_fractions": [first, *rest],
            "temperature": temperature, "mixup_alpha": [alpha] * stages}


def _config(profile: str, dataset: str, epsilon: float, stages: int, seed: int = 0,
            split: float | None = None) -> dict:
    """One LP-1ST (``stages`` 1) or LP-MST run on ``dataset`` at label-DP ``epsilon``: Table 4's
    cells, Sec. 5.1's LP-3ST (``stages`` 3) and App. E's stage-1 fractions (``split``)."""
    short = "mnist" if dataset == "mnist" else "fmnist"
    name = f"table4.{short}.lp_{stages}st.eps{_eps_name(epsilon)}"
    if stages == 3:
        name = f"sec5_1.{short}.lp_3st.eps{_eps_name(epsilon)}"
    if split is not None:
        name = f"appe.{short}.lp_2st.eps{_eps_name(epsilon)}.split{split:g}"
    method = _method(dataset, epsilon, stages, split)
    if profile == "smoke":
        subset, epochs, batch = {"train": SMOKE["train"], "test": SMOKE["test"]}, SMOKE["epochs"], SMOKE["batch"]
    elif profile == "quick":
        subset, epochs, batch = {"train": QUICK["train"], "test": QUICK["test"]}, QUICK["epochs"], 256
    else:
        subset, epochs, batch = {"train": None, "test": None}, int(_s("setup.small.epochs")), 256
    # Batch 256: App. B prints 265 (setting labeldp.setup.small.batch_size), read as a typo.
    train = _nonprivate(epochs, batch, _s("setup.small.peak_lr"), _s("setup.small.momentum"),
                        weight_decay=WEIGHT_DECAY, lr_schedule="warmup_linear",
                        lr_warmup=_s("setup.small.warmup_fraction"))
    return {"paper": PAPER, "profile": profile, "experiment": name, "seed": seed,
            "model": MODEL, "model_kwargs": {}, "dataset": dataset, "subset": subset, "method": "labeldp",
            "method_config": method, "train": {**train, "seed": seed}}


def _movielens_config(epsilon: float, stages: int) -> dict:
    """LP-1ST or LP-2ST on MovieLens-100k (paper profile, seed 0; see ML_EPSILONS)."""
    _, _, split, temperature = _jax_row(epsilon)
    method = {"epsilon": epsilon, "num_classes": ML_CLASSES, "mechanism": "rr", "mixup_alpha": [0.0]}
    if stages == 2:
        method.update(mechanism="rr_prior", stages=2, stage_fractions=[split, round(1 - split, 12)],
                      temperature=temperature, mixup_alpha=[0.0, 0.0])
    train = _nonprivate(int(claims.setting("gdp.table4.epochs")), int(_s("setup.movielens.batch_size")),
                        claims.setting("gdp.table4.eta"), 0.0)
    train.update(optimizer="adam", seed=0)
    del train["momentum"]
    sizes = dict(zip(("num_users", "num_items"), prepare.movielens_sizes()))
    return {"paper": PAPER, "profile": "paper", "experiment": f"table3.ml100k.lp_{stages}st.eps{_eps_name(epsilon)}",
            "seed": 0, "model": "neumf", "model_kwargs": sizes, "dataset": MOVIELENS,
            "subset": {"train": None, "test": None}, "method": "labeldp", "method_config": method, "train": train}


def _mixup_config(dataset: str, stage2_alpha: float, seed: int = 0) -> dict:
    """LP-2ST at SPLIT_EPSILON with mixup alpha MIXUP_PROBE in stage 1 and ``stage2_alpha`` in stage 2."""
    short = "mnist" if dataset == "mnist" else "fmnist"
    config = _config("paper", dataset, SPLIT_EPSILON, 2, seed)
    config["experiment"] = f"appe.{short}.lp_2st.eps{_eps_name(SPLIT_EPSILON)}.mixup{MIXUP_PROBE:g}_{stage2_alpha:g}"
    config["method_config"]["mixup_alpha"] = [MIXUP_PROBE, stage2_alpha]
    return config


def _selection_config(dataset: str, epsilon: float, augment: str, alpha: float) -> dict:
    """One run of the recipe selection: LP-1ST on the training set less VALIDATION held-out
    images, evaluated on those (``subset["validation"]``), the paper profile's 40 epochs."""
    short = "mnist" if dataset == "mnist" else "fmnist"
    config = _config("paper", dataset, epsilon, 1)
    config["experiment"] = f"recipe.{short}.eps{_eps_name(epsilon)}.{augment}.alpha{alpha:g}"
    config["method_config"].update(augment=list(SELECTION_AUGMENTS[augment]), mixup_alpha=[alpha])
    config["subset"] = {"train": None, "test": None, "validation": VALIDATION}
    return config


def selection_configs() -> list[dict]:
    """The recipe selection's runs (module comment above RECIPE), in the paper profile."""
    return [_selection_config(d, e, a, alpha) for d in DATASETS for e in SELECTION_EPSILONS
            for a, alpha in SELECTION_CANDIDATES]


# Table 1 on CIFAR-10 (Sec. 5.1, App. B; GPU-scale: 200 epochs of ResNet18-v2 per stage): LP-1ST
# and LP-2ST at the columns whose eps is inferred (labeldp.table1.colN.epsilon_inferred: 1, 2, 4,
# 8; the other headers are lost), and LP-1ST at eps = inf, Sec. 5.1's non-private ResNet18-v2
# (the labels released as they are). App. B's CIFAR-10 settings: batch 512, momentum 0.9, peak lr
# 0.4, linear warm-up over 15 % of the steps, lr / 10 at 30, 60 and 90 % of the 200 epochs
# ("warmup_step" with lr_step_epochs = 60), weight decay 1e-4, crop, flip and cutout. Mixup and
# LP-2ST's stage-1 fraction and prior temperature: the authors' JAX CIFAR-10 profile
# (JAX_STAGE_SETTINGS; LP-1ST takes its stage-1 alpha, ours). Inputs / 255, standardised per
# channel with CIFAR-10's usual mean and std (ours: the paper prints no preprocessing). App. D's
# Figure 3 (LP-2ST vs LP-1ST, stage-1 top-2 accuracy) prints no eps: not run.
CIFAR_MODEL = "resnet18v2"
CIFAR_COLUMNS = {i: _s(f"table1.col{i}.epsilon_inferred") for i in (1, 2, 4, 6)}
CIFAR_MEAN, CIFAR_STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)


def _cifar_train(epochs: int, batch_size: int) -> dict:
    total = _s("setup.cifar10.epochs")
    at = [_s(f"setup.cifar10.lr_decay_at{i}") for i in (1, 2, 3)]
    step = round(at[0] * total)
    if [round(a * total) for a in at] != [step, 2 * step, 3 * step]:
        raise ValueError(f"App. B's lr decay points {at} are not equally spaced: 'warmup_step' cannot express them")
    return _nonprivate(epochs, batch_size, _s("setup.cifar10.peak_lr"), _s("setup.cifar10.momentum"),
                       weight_decay=WEIGHT_DECAY, lr_schedule="warmup_step",
                       lr_warmup=_s("setup.cifar10.warmup_fraction"), lr_step_epochs=step,
                       lr_gamma=1 / _s("setup.cifar10.lr_decay_factor"))


def cifar10_config(epsilon: float, stages: int, seed: int = 0) -> dict:
    """LP-1ST (``stages`` 1) or LP-2ST on CIFAR-10 with ResNet18-v2 at label-DP ``epsilon``
    (Table 1; the comment above)."""
    alpha1, alpha2, split, temperature = _jax_row(epsilon)
    common = {"epsilon": epsilon, "num_classes": NUM_CLASSES, "augment": list(PAPER_AUGMENT)}
    if stages == 1:
        method = {**common, "mechanism": "rr", "mixup_alpha": [alpha1]}
    else:
        method = {**common, "mechanism": "rr_prior", "stages": 2, "stage_fractions": [split, round(1 - split, 12)],
                  "temperature": temperature, "mixup_alpha": [alpha1, alpha2]}
    train = _cifar_train(int(_s("setup.cifar10.epochs")), int(_s("setup.cifar10.batch_size")))
    return {"paper": PAPER, "profile": "paper", "experiment": f"table1.cifar10.lp_{stages}st.eps{_eps_name(epsilon)}",
            "seed": seed, "model": CIFAR_MODEL, "model_kwargs": {"num_classes": NUM_CLASSES}, "dataset": "cifar10",
            "subset": {"train": None, "test": None}, "method": "labeldp", "method_config": method,
            "train": {**train, "seed": seed}}


def cifar10_configs() -> list[dict]:
    """Table 1's CIFAR-10 runs (LP-1ST, LP-2ST at each inferred eps; LP-1ST at inf), seed 0."""
    out = [cifar10_config(eps, stages) for eps in CIFAR_COLUMNS.values() for stages in (1, 2)]
    return out + [cifar10_config(math.inf, 1)]


# Table 4 on App. B's own MNIST / Fashion-MNIST model (issue 47): the simplified Inception
# (dpnotes.models.inception) in place of the small CNN, every other setting the small-CNN cell's
# (_config: batch 256, SGD momentum 0.9, lr 0 -> 0.02 over 15 % then linearly to 0, 40 epochs a
# stage, weight decay 1e-4, the data set's RECIPE of augmentation and mixup, the JAX split and
# temperature), so that an App. B cell minus the small-CNN cell of the same eps and seed measures
# the architecture alone. LP-1ST at every TABLE4_EPSILONS, LP-2ST at the finite ones, seeds
# APPB_SEEDS (paired: the same seeds, hence the same label releases, in every cell). GPU-scale
# (about half a day of one CPU thread per stage): the paper profile's last runs.
APPB_MODEL = "labeldp-inception"
APPB_SEEDS = (0, 1, 2)


def appb_config(dataset: str, epsilon: float, stages: int, seed: int = 0) -> dict:
    """Table 4's LP-1ST (``stages`` 1) or LP-2ST cell on ``dataset`` at ``epsilon`` with App. B's
    simplified Inception (the comment above): experiment ``table4.<data>.lp_<k>st.eps<e>.appb``."""
    config = _config("paper", dataset, epsilon, stages, seed)
    config["experiment"] += ".appb"
    config["model"] = APPB_MODEL
    return config


def appb_configs() -> list[dict]:
    """The App. B runs of Table 4, seed by seed (all cells of seed 0 first), MNIST first."""
    return [appb_config(d, eps, stages, seed) for seed in APPB_SEEDS for d in DATASETS for eps in TABLE4_EPSILONS
            for stages in ((1, 2) if math.isfinite(eps) else (1,))]


def configs(profile: str) -> list[dict]:
    """``smoke``: LP-1ST and LP-2ST at eps 2 on an MNIST subset (CI). ``quick``: the same at eps 2
    on 6,000 MNIST images, 2 epochs a stage. ``paper``: the recipe selection on held-out training
    images (:func:`selection_configs`), then Table 4's LP rows on MNIST and Fashion-MNIST with the
    small CNN (LP-1ST at eps 1, 2, 3, 4, inf; LP-2ST at 1, 2, 3, 4; 40 epochs a stage), seed 0,
    App. E's stage-1 fractions at eps 2 and Sec. 5.1's LP-3ST at eps 1 and 2 (seed 0), Table 3's
    LP rows on MovieLens-100k (the substitute for MovieLens-1M, seed 0), then seeds 1 and 2 of
    Table 4 at every eps, then of Sec. 5.1's LP-3ST (paired with LP-2ST's), then of App. E's
    fractions and mixup pairs; MNIST first; then Table 1's CIFAR-10 runs (:func:`cifar10_configs`);
    last, Table 4's cells on App. B's simplified Inception, seeds 0-2 (:func:`appb_configs`)."""
    validate.choice("profile", profile, PROFILES)
    if profile in ("smoke", "quick"):
        return [_config(profile, "mnist", SMOKE_EPSILON, stages) for stages in (1, 2)]
    out = selection_configs()
    for dataset in DATASETS:
        for eps in (1.0, 2.0):  # the cells of the largest claimed gains first
            out += [_config(profile, dataset, eps, stages) for stages in (1, 2)]
    for dataset in DATASETS:
        for eps in TABLE4_EPSILONS[2:]:
            out += [_config(profile, dataset, eps, stages) for stages in ((1, 2) if math.isfinite(eps) else (1,))]
    out += [_config(profile, d, SPLIT_EPSILON, 2, split=f) for d in DATASETS for f in SPLIT_FRACTIONS
            if f != _jax_row(SPLIT_EPSILON)[2]]  # the JAX fraction's run is Table 4's
    out += [_config(profile, d, eps, 3) for d in DATASETS for eps in LP3ST_EPSILONS]
    out += [_mixup_config(d, a) for d in DATASETS for a in (MIXUP_PROBE, 0.0)]
    out += [_movielens_config(eps, stages) for eps in ML_EPSILONS
            for stages in ((1, 2) if math.isfinite(eps) else (1,))]
    for seed in (1, 2):
        for dataset in DATASETS:
            for eps in EXTRA_SEEDS_AT:
                out += [_config(profile, dataset, eps, stages, seed)
                        for stages in ((1, 2) if math.isfinite(eps) else (1,))]
    out += [_config(profile, d, eps, 3, seed) for seed in (1, 2) for d in DATASETS for eps in LP3ST_EPSILONS]
    out += [_config(profile, d, SPLIT_EPSILON, 2, seed, split=f) for seed in APPE_SEEDS[1:] for d in DATASETS
            for f in SPLIT_FRACTIONS if f != _jax_row(SPLIT_EPSILON)[2]]
    out += [_mixup_config(d, a, seed) for seed in APPE_SEEDS[1:] for d in DATASETS for a in (MIXUP_PROBE, 0.0)]
    # the seeds the plan adds (dpnotes.experiments.plan), then the GPU-scale tails
    return plan.extend(PAPER, out) + cifar10_configs() + appb_configs()


MOVIELENS = "movielens-100k"
