"""GDP's run configs per profile (:func:`configs`): Tables 1-4's MNIST, IMDb, Adult and MovieLens rows and
Figure 4's runs.
"""

from __future__ import annotations

from dpnotes import validate
from dpnotes.data import prepare
from dpnotes.experiments import plan
from dpnotes.results import PROFILES

from . import data as gdp_data
from .data import ML_SUBSTITUTE
from .privacy import adult_epochs, figure4_sigma_clt, table1_row
from .settings import DELTA, PAPER, SEEDS, _s

TABLE_MODELS = tuple(f"table1.row{i}" for i in range(1, 7)) + (
    "table2.private", "table3.private", "table4.private")
PRIVATE_MODELS = TABLE_MODELS + ("figure4.top.ma", "figure4.top.clt", "figure4.bottom.ma",
                                 "figure4.bottom.clt")


def _train(epochs, batch_size, lr, optimizer, clip, sigma, delta, **extra) -> dict:
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": optimizer,
            "clip": clip, "noise_multiplier": sigma, "sampling": "poisson",
            "normalize": "expected", "steps_per_epoch": "round", "delta": delta, **extra}


def _nonprivate(epochs, batch_size, lr, optimizer) -> dict:
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": optimizer,
            "private": False, "clip": None, "noise_multiplier": 0.0, "sampling": "shuffle",
            "accountants": [], "steps_per_epoch": "floor"}  # fixed batches: at most n // B


# How each profile scales a run down: epochs, steps per epoch (None: n/B) and data subsets.
SCALE = {
    "paper": {"epochs": None, "steps": None, "train": None, "test": None},
    "quick": {"epochs": 1, "steps": 40, "train": None, "test": 2000},
    "smoke": {"epochs": 1, "steps": 2, "train": 512, "test": 256},
}
# Table 3's LSTM-RNN baseline (Bu et al. Sec. 4.1, ref. [1]): TensorFlow's text-classification
# RNN tutorial trains it with Adam at lr 1e-4 on batches of 64 (not paper numbers: the tutorial's).
TF_RNN_TUTORIAL = {"lr": 1e-4, "batch_size": 64}
FIGURE4_QUICK_EPOCHS = 3  # quick Figure 4 runs: a short accuracy/eps curve
SMOKE_BATCH = 64


def _config(profile, experiment, seed, model, dataset, train, *, model_kwargs=None, method="dpsgd"):
    scale = SCALE[profile]
    train = dict(train)
    if scale["epochs"] is not None and method != "baseline":
        epochs = FIGURE4_QUICK_EPOCHS if experiment.startswith("figure4") and profile == "quick" else 1
        train.update(epochs=min(train["epochs"], epochs), steps_per_epoch=scale["steps"])
    if profile == "smoke" and method != "baseline":
        train["batch_size"] = SMOKE_BATCH  # q = 64/512 on the smoke subsets
    if profile == "paper" and train.get("noise_multiplier"):
        train["accountants"] = ["rdp", "rdp-classic", "clt", "prv"]  # prv: at the end only
    return {"paper": PAPER, "profile": profile, "experiment": experiment, "seed": seed,
            "model": model, "model_kwargs": model_kwargs or {}, "dataset": dataset,
            "subset": {"train": scale["train"], "test": scale["test"]}, "method": method,
            "train": {**train, "seed": seed} if method != "baseline" else train}


def _mnist_train(eta, clip, sigma, epochs) -> dict:
    return _train(int(epochs), int(_s("mnist.batch_size")), eta, "sgd", clip, sigma, DELTA["mnist"])


def configs(profile: str) -> list[dict]:
    """The run configs of ``profile``, seed-major so that one full seed completes first:
    Table 1 (rows by increasing epochs) for every seed; then Adult, IMDb and MovieLens-100k
    (seed 0 of each, then the further seeds of Adult and IMDb); then Figure 4."""
    validate.choice("profile", profile, PROFILES)
    seeds = SEEDS[profile]
    rows = sorted(range(1, 7), key=lambda i: table1_row(i)["epochs"])
    out = [_config(profile, f"table1.row{i}", seed, "tf-mnist-cnn", "mnist",
                   _mnist_train(**{k: table1_row(i)[k] for k in ("eta", "clip", "sigma", "epochs")}))
           for seed in seeds for i in rows]
    imdb = {"vocab_size": int(_s("table3.num_words")), "seq_len": int(_s("table3.maxlen"))}

    def adult(seed):
        return _config(profile, "table2.private", seed, "gdp-adult", "adult",
                       _train(adult_epochs(), int(_s("table2.batch_size")), _s("table2.eta"), "sgd",
                              _s("table2.clip"), _s("table2.sigma"), DELTA["adult"]))

    def imdb_private(seed):
        return _config(profile, "table3.private", seed, "gdp-imdb", "imdb",
                       _train(int(_s("table3.private.epochs")), int(_s("table3.batch_size")),
                              _s("table3.eta"), "adam", _s("table3.clip"), _s("table3.sigma"),
                              DELTA["imdb"]), model_kwargs=imdb)

    out += [adult(seeds[0]), imdb_private(seeds[0])]

    def imdb_nonprivate(seed):
        # The paper gives only the epochs; we keep NoisyAdam's lr and batch size.
        return _config(profile, "table3.nonprivate", seed, "gdp-imdb", "imdb",
                       _nonprivate(int(_s("table3.nonprivate.epochs")), int(_s("table3.batch_size")),
                                   _s("table3.eta"), "adam"), model_kwargs=imdb)

    def figure4(seed):
        runs = []
        for part in ("top", "bottom"):
            for acc in ("ma", "clt"):
                sigma = _s(f"figure4.{part}.sigma_ma") if acc == "ma" else figure4_sigma_clt(part)
                train = _mnist_train(_s("figure4.eta"), _s("figure4.clip"), sigma,
                                     _s(f"figure4.{part}.epochs"))
                # Each run tracks the accountant it was calibrated with (plus the others).
                runs.append(_config(profile, f"figure4.{part}.{acc}", seed, "tf-mnist-cnn", "mnist", train))
        return runs

    out.append(imdb_nonprivate(seeds[0]))
    out += _movielens_configs(profile, seeds[0])
    out += [make(seed) for seed in seeds[1:] for make in (adult, imdb_private)]
    out += figure4(seeds[0])
    # The further seeds of the cheap runs first, then of Figure 4 (about 50 CPU-min a seed).
    out += [imdb_nonprivate(seed) for seed in seeds[1:]]
    out += [c for seed in seeds[1:] for c in _movielens_configs(profile, seed, baselines=False)]
    out += [c for seed in seeds[1:] for c in figure4(seed)]
    # Appended last, so that no earlier config moves: Table 3's LSTM baseline, every seed.
    out += [_config(profile, "table3.lstm", seed, "tf-text-rnn", "imdb",
                    _nonprivate(int(_s("table3.lstm.epochs")), TF_RNN_TUTORIAL["batch_size"],
                                TF_RNN_TUTORIAL["lr"], "adam"), model_kwargs=imdb)
            for seed in seeds]
    return plan.extend(PAPER, out) if profile == "paper" else out  # the seeds the plan adds


def _movielens_configs(profile: str, seed: int, *, baselines: bool = True) -> list[dict]:
    """MovieLens-100k substitute runs: NeuMF private and not at ``seed``, and (``baselines``)
    the deterministic non-private baselines (:data:`gdp_data.BASELINES`; quick: the global
    average only)."""
    n_train = gdp_data.movielens_split_sizes()[0]
    batch = round(n_train / _s("table4.sample_rate_inverse"))  # q = 1/80 as in the paper
    epochs = int(_s("table4.epochs"))
    sizes = dict(zip(("num_users", "num_items"), prepare.movielens_sizes()))
    out = [_config(profile, "table4.private", seed, "neumf", ML_SUBSTITUTE,
                   _train(epochs, batch, _s("table4.eta"), "adam", _s("table4.clip"),
                          _s("table4.sigma"), DELTA["movielens"]), model_kwargs=sizes),
           _config(profile, "table4.nonprivate", seed, "neumf", ML_SUBSTITUTE,
                   _nonprivate(epochs, batch, _s("table4.eta"), "adam"), model_kwargs=sizes)]
    if not baselines:
        return out
    # The library baselines need the optional scikit-surprise: paper profile only.
    names = gdp_data.BASELINES if profile == "paper" else ("global_average",)
    out += [_config(profile, f"table4.{b}", 0, b, ML_SUBSTITUTE, {"epochs": 1}, method="baseline")
            for b in names]
    return out
