"""Data and helpers of the GDP runs (:mod:`dpnotes.experiments.gdp`): the four data sets
as the paper prepares them, fixed random subsets for the scaled-down profiles, the test RMSE
of the MovieLens model, and the library baselines of Table 4.

Bu, Dong, Long, Su (HDSR 2020), Section 4.1: MNIST (inputs / 255), Adult (123 a9a features,
a random 10% test split), IMDb (top 10,000 words, length 256), MovieLens (a random 20% test
split; 1M in the paper, 100k here).
"""

from __future__ import annotations

from functools import lru_cache

from dpnotes import claims, validate
from dpnotes.data import prepare

ML_SUBSTITUTE = "movielens-100k"
# Behaviour versions (dpnotes.spec): bump VERSION when loading, splits or preprocessing change
# what a run sees; BASELINE_VERSION when Table 4's non-DP baselines change.
VERSION = 1
BASELINE_VERSION = 2  # 2: Surprise's SVD, NMF, KNNBasic, BaselineOnly (1: our own Adam-fitted SVD)

ADULT_SPLIT_SEED = 0  # the paper's random 10% test split is unknown; ours is fixed by this seed
MOVIELENS_SPLIT_SEED = 0


@lru_cache(maxsize=2)
def _mnist_data():
    return prepare.images("mnist", "train"), prepare.images("mnist", "test")  # inputs / 255 only, as the paper's code


@lru_cache(maxsize=1)
def _adult_data():
    """The 32,561 a9a-style examples (UCI adult.data), split 29,305 / 3,256 as the paper."""
    from dpnotes import data

    x, y = data.adult_features("train")
    n_test = int(claims.setting("gdp.table2.test_size"))
    if len(y) - n_test != int(claims.setting("gdp.table2.train_size")):
        raise ValueError(f"Adult: {len(y)} examples, expected {int(claims.setting('gdp.table2.train_size')) + n_test}")
    tr, te = prepare.random_split(len(y), n_test, ADULT_SPLIT_SEED)
    return (x[tr], y[tr]), (x[te], y[te])


@lru_cache(maxsize=1)
def _imdb_data():
    from dpnotes import data

    xtr, ytr, xte, yte = data.imdb_sequences(num_words=int(claims.setting("gdp.table3.num_words")),
                                             maxlen=int(claims.setting("gdp.table3.maxlen")))
    return (xtr, ytr), (xte, yte)


@lru_cache(maxsize=1)
def _movielens_data():
    """MovieLens-100k as (user, item) pairs from 0 and labels rating - 1 (5 classes, as the
    paper's code); a random 20% test split."""
    return prepare.movielens(claims.setting("gdp.table4.test_fraction"), MOVIELENS_SPLIT_SEED)


def movielens_split_sizes() -> tuple[int, int]:
    """(train, test) sizes of the MovieLens-100k split (no data needed)."""
    return prepare.movielens_split_sizes(claims.setting("gdp.table4.test_fraction"))


def load(dataset: str, subset: dict | None = None):
    """``(train, test)`` pairs of tensors of ``dataset``; ``subset`` sizes pick fixed random
    examples (the same for every seed)."""
    loaders = {"mnist": _mnist_data, "adult": _adult_data, "imdb": _imdb_data,
               ML_SUBSTITUTE: _movielens_data}
    train, test = loaders[validate.choice("dataset", dataset, loaders)]()
    subset = subset or {}
    return prepare.fixed_subset(train, subset.get("train")), prepare.fixed_subset(test, subset.get("test"))


SURPRISE_BASELINES = {  # our name: (the paper's row, Surprise's algorithm)
    "svd": ("SVD", "SVD"), "nmf": ("NMF", "NMF"), "usercf": ("user-based CF", "KNNBasic"),
    "baseline_only": ("(beyond the paper) user and item biases", "BaselineOnly"),
}
BASELINES = ("global_average",) + tuple(SURPRISE_BASELINES)
SURPRISE_SEED = 0  # random_state of Surprise's SVD and NMF (initial factors, SGD order)


def surprise_version() -> str:
    """The installed scikit-surprise version; a clear error if the optional extra is missing."""
    try:
        from importlib.metadata import version

        return version("scikit-surprise")
    except Exception as exc:  # PackageNotFoundError
        raise ImportError("Table 4's library baselines need scikit-surprise: "
                          "pip install 'dpnotes[recsys]' (pinned in constraints.txt)") from exc


def baseline_rmse(name: str, train_data, test_data) -> float:
    """Test RMSE of a non-private baseline on rating data (Table 4's lower rows).

    ``global_average``: predict the mean training rating. The others are the Surprise library's
    algorithms in their default settings, as the paper used them (Bu et al., Sec. 4.1 "MovieLens":
    "baseline models in the Surprise library [31] in their default settings"): ``svd`` (SVD,
    100 factors, 20 epochs of SGD), ``nmf`` (NMF, 15 factors), ``usercf`` (KNNBasic, user-based,
    MSD similarity, k 40) and ``baseline_only`` (BaselineOnly, ALS biases; not in the paper).
    Surprise clips its predictions to the rating scale 1-5.
    """
    import torch

    validate.choice("name", name, BASELINES)
    (ptr, ytr), (pte, yte) = train_data, test_data
    rtr, rte = ytr.double() + 1, yte.double() + 1
    if name == "global_average":
        return float(torch.sqrt(((rte - rtr.mean()) ** 2).mean()))
    surprise_version()
    import numpy as np
    import pandas as pd
    import surprise

    algorithm = getattr(surprise, SURPRISE_BASELINES[name][1])
    kwargs = {"verbose": False}
    if name in ("svd", "nmf"):
        kwargs["random_state"] = SURPRISE_SEED
    if name == "usercf":
        kwargs["sim_options"] = {"user_based": True}
    frame = pd.DataFrame({"user": ptr[:, 0].numpy(), "item": ptr[:, 1].numpy(), "rating": rtr.numpy()})
    trainset = surprise.Dataset.load_from_df(frame, surprise.Reader(rating_scale=(1, 5))).build_full_trainset()
    algo = algorithm(**kwargs)
    algo.fit(trainset)
    pred = np.array([algo.predict(int(u), int(i)).est for u, i in pte.tolist()])
    return float(np.sqrt(np.mean((pred - rte.numpy()) ** 2)))
