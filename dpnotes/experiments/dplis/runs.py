"""DPlis's run configs per profile (:func:`configs`): the rows and arms of Tables 2-3, Table 9's sharpness
runs, Table 10's and Figure 3's long runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from dpnotes import validate
from dpnotes.experiments import backends, plan
from dpnotes.results import PROFILES

from .privacy import TABLE2_COLUMNS, column_epoch
from .settings import DELTA, PAPER, _s


#
# Profile "paper": the eps = 1.99 column of Table 2's rows (MLP and CNN; MNIST, CIFAR-10) and of
# Table 11's row (the CIFAR-10 CNN with tanh, Sec. 5.6), for the three arms No smoothing (method
# dpsgd), R = 10 and R = R_best (Tables 6 and 11), K = 10 (Sec. 5.1). Every setting is the
# paper's (Table 1: L, eta/L as the lr of plain SGD on the noisy sum, sigma, C; Poisson
# sampling, N // L steps per epoch); the run stops at the epoch where eps reaches the column (26
# on MNIST, 21 on CIFAR-10, computed above). With a constant learning rate and evaluation after
# every epoch, those epochs ARE the first epochs of the paper's run to eps = 10, so the last
# epoch's test accuracy is the column's cell. The draws are combined by SUM over the K draws, as
# the authors' code that produced the tables (Alg. 2 / Eq. 6 write a mean; the chapter says so).
# Seed 0 first (the paper's tables are single runs), then seeds 1 and 2 (EXTRA_SEEDS); the arms of
# a seed share it, hence the same initialisation, batches and DP-noise stream (paired "gain" claims).
# Where R_best equals R = 10 (Table 11 at
# eps = 1.99) the R = 10 run answers both arms.
# The other three columns, Table 10 and Figures 3 and 7: the long runs below.
# Profile "quick": the same arms for 20 steps on a 2,000-image test subset (never compared
# with the paper); "smoke": MNIST, two arms, 2 steps of B = 64 on 512 examples.
@dataclass(frozen=True)
class Row:
    """A row of Table 2 or 11: its data set, model (registry name and kwargs) and the
    per-example gradient backend of its runs (None: the engine's default, ``func``)."""

    table: str
    dataset: str
    model: str
    model_kwargs: tuple = ()
    backend: str | None = None


ARMS = ("no", "r10", "rbest")
# grad_backend "ghost" (per-example norms and clipped sums from layer factors) makes K = 10
# draws cost 13-17x a non-private step instead of about 640x (MNIST MLP) or 27x (CIFAR-10 CNN)
# with torch.func; the MNIST CNN row keeps the default backend its stored records were made with.
ROWS = {
    "mnist_mlp": Row("table2", "mnist", "dplis-mlp-mnist", backend="ghost"),
    "mnist_cnn": Row("table2", "mnist", "tf-mnist-cnn"),
    "cifar10_mlp": Row("table2", "cifar10", "dplis-mlp-cifar", backend="ghost"),
    "cifar10_cnn": Row("table2", "cifar10", "dplis-cifar-cnn", backend="ghost"),
    "cifar10_cnn_tanh": Row("table11", "cifar10", "dplis-cifar-cnn", (("activation", "tanh"),), backend="ghost"),
}
COMBINE = "sum"  # the authors' code (REFERENCE.md "DPlis"); the paper's Alg. 2 averages
SCALE = {
    "paper": {"steps": None, "train": None, "test": None, "batch": None},
    "quick": {"steps": 20, "train": None, "test": 2000, "batch": None},
    "smoke": {"steps": 2, "train": 512, "test": 256, "batch": 64},
}
SMOKE_ROWS, SMOKE_ARMS = ("mnist_cnn",), ("no", "r10")
# Seeds 1 and 2 of every eps-1.99 cell (issue "Seeds"), all arms of a row under one seed so that the gains are
# paired (same initialisation, batches and noise stream), cheapest rows first (CPU minutes per seed, from the
# seed-0 records: MNIST MLP 22, Table 11 59, CIFAR-10 CNN 86, CIFAR-10 MLP 90, MNIST CNN 146).
EXTRA_SEEDS = (1, 2)
SEED_ORDER = ("mnist_mlp", "cifar10_cnn_tanh", "cifar10_cnn", "cifar10_mlp", "mnist_cnn")


def experiment(row: str, arm: str, column: str = "eps1_99") -> str:
    """The experiment name of a cell's run, e.g. ``table2.mnist_cnn.eps1_99.r10``."""
    return f"{ROWS[validate.choice('row', row, ROWS)].table}.{row}.{column}.{arm}"


def radius(row: str, arm: str, column: str = "eps1_99") -> float | None:
    """R of an arm of a Table 2 or 11 row (None: no smoothing)."""
    validate.choice("arm", arm, ARMS)
    table = ROWS[validate.choice("row", row, ROWS)].table
    if arm == "no":
        return None
    if arm == "r10":
        return _s("setup.r_default")
    return _s(f"table6.{row}.{column}.r_best" if table == "table2" else f"{table}.{column}.r_best")


# The MNIST CNN row ran on func (Row.backend None); its smoothed arms' seeds 1 and 2 and its long
# runs (none stored) run on the ghost backend (issue #36, :mod:`dpnotes.experiments.backends`).
GHOST_FROM_SEED = {"table2.mnist_cnn.eps1_99.r*": 1, "*.mnist_cnn.eps10_00.*": 0}
# The CIFAR-10 MLP's smoothed arms from seed 1 (none stored; seed 0 keeps its id) and the two MLPs'
# smoothed long runs (none stored) draw the first layer's perturbation as its output's (issue #36;
# dpnotes.methods.dplis, draws="implicit-first-layer": the same distribution of the step, a different
# stream, about half the step time on the CIFAR-10 MLP); same format as GHOST_FROM_SEED.
DRAWS_FROM_SEED = {"table2.cifar10_mlp.eps1_99.r*": 1, "*.cifar10_mlp.eps10_00.r*": 0,
                   "*.mnist_mlp.eps10_00.r*": 0}
IMPLICIT = "implicit-first-layer"


def choose_draws(config: dict) -> dict:
    """``config`` with DPlis' ``draws = "implicit-first-layer"`` when :data:`DRAWS_FROM_SEED` gives its
    experiment a first seed at or below its seed, otherwise ``config`` unchanged (the same object)."""
    first = backends.first_ghost_seed(config["experiment"], DRAWS_FROM_SEED)
    if first is None or config["seed"] < first or config["method"] != "dplis":
        return config
    if config["train"].get("grad_backend") != backends.GHOST:
        raise ValueError(f"experiment {config['experiment']!r} seed {config['seed']}: draws={IMPLICIT!r} "
                         "needs grad_backend='ghost' (DRAWS_FROM_SEED)")
    return {**config, "method_config": {**config["method_config"], "draws": IMPLICIT}}


def run_arm(row: str, arm: str, column: str = "eps1_99") -> str:
    """The arm whose run answers ``arm``: ``r10`` for R_best where R_best is 10."""
    return "r10" if arm == "rbest" and radius(row, arm, column) == radius(row, "r10", column) else arm


def _config(profile: str, row: str, arm: str, column: str = "eps1_99", seed: int = 0) -> dict:
    r_ = ROWS[validate.choice("row", row, ROWS)]
    scale = SCALE[profile]
    train = {"epochs": column_epoch(r_.dataset, column) if scale["steps"] is None else 1,
             "batch_size": scale["batch"] or int(_s(f"table1.{r_.dataset}.batch_size")),
             "lr": _s(f"table1.{r_.dataset}.lr_over_batch"), "optimizer": "sgd",
             "clip": _s(f"table1.{r_.dataset}.clip"), "noise_multiplier": _s(f"table1.{r_.dataset}.sigma"),
             "sampling": "poisson", "normalize": "none", "lr_schedule": "constant",
             "steps_per_epoch": scale["steps"] or "floor", "delta": DELTA, "seed": seed}
    if r_.backend is not None:
        train["grad_backend"] = r_.backend
    r = radius(row, arm, column)
    method = ({"method": "dpsgd"} if r is None else
              {"method": "dplis", "method_config": {"K": int(_s("setup.k_image")), "R": r, "combine": COMBINE}})
    config = {"paper": PAPER, "profile": profile, "experiment": experiment(row, arm, column), "seed": seed,
              "model": r_.model, "model_kwargs": dict(r_.model_kwargs), "dataset": r_.dataset,
              "subset": {"train": scale["train"], "test": scale["test"]}, **method, "train": train}
    return choose_draws(backends.choose(config, GHOST_FROM_SEED)) if profile == "paper" else config


# Table 9 and Figure 6 (Sec. 5.4): the landscape around models trained as Table 2's eps = 1.99
# cells of the four Table 2 rows, No and R = 10. The paper does not say which checkpoint it
# measures (nor on which data); ours are the eps = 1.99 models, retrained (same spec as the
# Table 2 cell plus the analysis, so the same weights on the same device and threads).
# Sharpness: Keskar et al.'s (C_eps; I) with Sec. 5.4's eps, L-BFGS-B from y = 0 capped at
# SHARPNESS_MAXITER iterations, on a fixed SHARPNESS_EXAMPLES training examples (ours: cost).
# Figure 6: test loss and accuracy on theta + alpha d, d filter-normalised (seed 0), alpha on
# SLICE_POINTS points of Sec. 5.4's [-0.8, 0.8], on the full test set.
TABLE9_ROWS = ("mnist_mlp", "mnist_cnn", "cifar10_mlp", "cifar10_cnn")
TABLE9_ARMS = ("no", "r10")
SHARPNESS_MAXITER = 10
SHARPNESS_EXAMPLES = 10_000
SLICE_POINTS = 17
# What Table 9's measurements do otherwise than the paper (the verdicts' fidelity).
SUBSTITUTES = {
    "dplis.table9.*": ("sharpness settings ours (the paper prints none): the eps-1.99 model, L-BFGS-B capped at "
                       f"{SHARPNESS_MAXITER} iterations on {SHARPNESS_EXAMPLES:,} fixed training examples"),
    "dplis.sec5_4.*": "the eps-1.99 models of Table 2 (the paper does not say which checkpoint it measures)",
}


def _table9_config(row: str, arm: str) -> dict:
    config = _config("paper", row, arm)
    config["experiment"] = f"table9.{row}.eps1_99.{arm}"
    config["analysis"] = {
        "sharpness": {"box": _s("sec5_4.sharpness_epsilon"), "maxiter": SHARPNESS_MAXITER,
                      "examples": SHARPNESS_EXAMPLES, "split": "train"},
        "slice": {"alpha_max": _s("sec5_4.visualization_alpha_max"), "points": SLICE_POINTS, "seed": 0,
                  "split": "test"}}
    return config


# The long runs (issue 34; GPU-scale: 132-554 epochs each, see ``dpnotes run dplis --profile paper
# --list``). Table 2 and 11's other columns (eps 5.01, 7.01, 10.00): with a constant learning rate
# and evaluation after every epoch, one run per (row, R) trained to the last column that R is
# read at gives every column it serves, each read at that column's epoch (column_epoch; the
# same read-out as the eps = 1.99 cells). R_best varies by column only in Table 11 (15, 20, 15)
# and CIFAR-10 MLP (30 at eps 1.99 only): one run per distinct R. Their per-epoch records also
# hold Figure 7a's training accuracy on CIFAR-10 (the running accuracy of the epoch's batches at
# the perturbed draws, as the authors' log; the paper does not say which model: both CIFAR-10
# rows are there). Table 10 (Sec. 5.5: 5 runs per cell; MNIST MLP and CIFAR-10 CNN; No, R = 10
# and R_large; eps 5.01 and 10.00): seeds 1-4 of the same runs (seed 0 is Table 2's). Figure 3
# (accuracy vs R, K = 10, MNIST and CIFAR-10, four eps): the paper prints no R grid; ours is
# FIGURE3_R, which brackets Table 6's R_best (30, 40) and R = 10 with a point on each side,
# on the four Table 2 rows, seed 0, to eps = 10 (R = 10 and R_best come from the Table 2 runs).
# Figure 7b (SGD with clipping, three checkpoints) prints no setting at all: not run.
LONG_COLUMNS = TABLE2_COLUMNS[1:]
TABLE10_ROWS = ("mnist_mlp", "cifar10_cnn")
TABLE10_SEEDS = (1, 2, 3, 4)  # with seed 0: Section 5.5's 5 runs
FIGURE3_R = (5.0, 10.0, 20.0, 30.0, 40.0, 60.0)
FIGURE3_ROWS = ("mnist_mlp", "mnist_cnn", "cifar10_mlp", "cifar10_cnn")


def _tag(r: float | None) -> str:
    return "no" if r is None else f"r{r:g}"


def long_radii(row: str) -> dict[float | None, str]:
    """R of each long run of a Table 2 / 11 row (None: No smoothing) -> the last column it is read at."""
    out: dict[float | None, str] = {}
    for column in LONG_COLUMNS:
        for arm in ARMS:
            out[radius(row, arm, column)] = column  # columns in order: the last one wins
    return out


def long_run(row: str, arm: str, column: str) -> tuple[str, int]:
    """(experiment, epoch) of the long run that answers cell (row, arm, column), column one of
    LONG_COLUMNS: its test accuracy after that epoch is the cell."""
    validate.choice("column", column, LONG_COLUMNS)
    r = radius(row, arm, column)
    return (f"{ROWS[row].table}.{row}.{long_radii(row)[r]}.{_tag(r)}",
            column_epoch(ROWS[row].dataset, column))


def table10_radius(row: str) -> float:
    """Table 10's R_large of ``row`` (the paper's setting)."""
    return _s(f"table10.{validate.choice('row', row, TABLE10_ROWS)}.r_large")


def table10_radii(row: str) -> tuple[float | None, float, float]:
    """Table 10's arms of ``row``: No, R = 10 and R_large."""
    return None, _s("setup.r_default"), table10_radius(row)


def _long_config(row: str, r: float | None, column: str, experiment: str, seed: int = 0) -> dict:
    config = _config("paper", row, "no" if r is None else "r10", column, seed)
    if r is not None:
        config["method_config"]["R"] = r
    config["experiment"] = experiment
    return choose_draws(backends.choose(config, GHOST_FROM_SEED))


def long_configs() -> list[dict]:
    """The paper profile's long runs (see the comment above), cheapest rows first: Table 2 / 11,
    then Table 10's extra seeds, then Figure 3's sweep."""
    order = ("mnist_mlp", "mnist_cnn", "cifar10_cnn_tanh", "cifar10_cnn", "cifar10_mlp")
    out = [_long_config(row, r, column, f"{ROWS[row].table}.{row}.{column}.{_tag(r)}")
           for row in order for r, column in long_radii(row).items()]
    for row in TABLE10_ROWS:
        for r in table10_radii(row):
            if long_radii(row).get(r) != "eps10_00":
                raise ValueError(f"Table 10's {row} R = {r} has no Table 2 run to eps 10")
            out += [_long_config(row, r, "eps10_00", f"{ROWS[row].table}.{row}.eps10_00.{_tag(r)}", seed)
                    for seed in TABLE10_SEEDS]
    for row in FIGURE3_ROWS:
        out += [_long_config(row, r, "eps10_00", f"figure3.{row}.eps10_00.{_tag(r)}")
                for r in FIGURE3_R if r not in long_radii(row)]
    return out


def configs(profile: str) -> list[dict]:
    """The run configs of ``profile`` (see the comment above); the paper profile goes on with
    Table 9's runs, the extra seeds of the eps = 1.99 cells and the long runs."""
    validate.choice("profile", profile, PROFILES)
    rows, arms = (SMOKE_ROWS, SMOKE_ARMS) if profile == "smoke" else (tuple(ROWS), ARMS)
    out = [_config(profile, row, arm) for row in rows for arm in arms if run_arm(row, arm) == arm]
    if profile == "paper":
        out += [_table9_config(row, arm) for row in TABLE9_ROWS for arm in TABLE9_ARMS]
        out += [_config(profile, row, arm, seed=seed) for row in SEED_ORDER for seed in EXTRA_SEEDS
                for arm in ARMS if run_arm(row, arm) == arm]
        out += long_configs()
        out = plan.extend(PAPER, out)  # the seeds the plan adds (dpnotes.experiments.plan)
    return out
