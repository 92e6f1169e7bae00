"""UCI Adult: raw records, and the 123 binary features of LIBSVM's 'a9a' (Platt 1998).

LIBSVM's a9a (https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary.html#a9a, from
Platt, "Fast training of SVMs using SMO", 1998) has 123 binary features: each categorical
attribute with m values becomes m indicator columns, each continuous attribute is discretized
into quantile bins, each bin one indicator.  The layout reproduced here (1-based LIBSVM column
numbers; categories in the order of ``adult.names``):

====================  =======  ==========================================================
attribute             columns  encoding
====================  =======  ==========================================================
age                   1-5      5 quantile bins (below)
workclass             6-13     8 categories
fnlwgt                14-18    5 quantile bins
education             19-34    16 categories
education-num         35-39    5 quantile bins
marital-status        40-46    7 categories
occupation            47-60    14 categories
relationship          61-66    6 categories
race                  67-71    5 categories
sex                   72-73    2 categories
capital-gain          74-75    2 bins: = 0, > 0
capital-loss          76-77    2 bins: = 0, > 0
hours-per-week        78-82    5 quantile bins
native-country        83-123   41 categories
====================  =======  ==========================================================

Quantile bins (Platt does not publish his cut points; this rule is ours): with F the empirical
distribution function of the attribute on the TRAINING file ``adult.data`` (both splits use the
training bins), a value v goes to bin ``min(4, floor(5 * (F(v-) + F(v)) / 2))``, i.e. the
quintile of its mid-rank, so that a value tied across a quintile boundary (40 hours per week,
13 years of education) lands in one bin.  This rule reproduces the a9a columns of the first
training record (age 39 -> 3, fnlwgt 77516 -> 14, education-num 13 -> 39, hours 40 -> 80),
but other rows may differ from a9a where Platt's cut points differ.
A missing value ("?", in workclass, occupation and native-country) sets no column of its group,
as in a9a; every other group has exactly one column set.  Label: 1 for income ">50K".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from dpnotes import validate
from dpnotes.data.store import fetch

if TYPE_CHECKING:  # pandas and torch are imported where data is read (not by `import dpnotes.data`)
    import pandas as pd
    import torch

COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
)
CONTINUOUS = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
# Category orders as listed in adult.names.
CATEGORIES = {
    "workclass": ("Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov",
                  "State-gov", "Without-pay", "Never-worked"),
    "education": ("Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm",
                  "Assoc-voc", "9th", "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate",
                  "5th-6th", "Preschool"),
    "marital-status": ("Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"),
    "occupation": ("Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial",
                   "Prof-specialty", "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical",
                   "Farming-fishing", "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces"),
    "relationship": ("Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"),
    "race": ("White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"),
    "sex": ("Female", "Male"),
    "native-country": ("United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China",
                       "Cuba", "Iran", "Honduras", "Philippines", "Italy", "Poland", "Jamaica",
                       "Vietnam", "Mexico", "Portugal", "Ireland", "France", "Dominican-Republic",
                       "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia", "Hungary", "Guatemala",
                       "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands"),
}
# (attribute, number of columns) in a9a column order.
GROUPS = (
    ("age", 5), ("workclass", 8), ("fnlwgt", 5), ("education", 16), ("education-num", 5),
    ("marital-status", 7), ("occupation", 14), ("relationship", 6), ("race", 5), ("sex", 2),
    ("capital-gain", 2), ("capital-loss", 2), ("hours-per-week", 5), ("native-country", 41),
)
NUM_FEATURES = sum(n for _, n in GROUPS)
_FILES = {"train": "adult.data", "test": "adult.test"}


def load_adult(split: str = "train", *, mirror=None, cache_dir=None, registry=None) -> pd.DataFrame:
    """The raw records of ``split`` ("train" = adult.data, 32,561 rows; "test" = adult.test,
    16,281 rows) with the columns :data:`COLUMNS`; "?" becomes missing (NaN), the test file's
    header line and the trailing "." of its labels are removed."""
    import pandas as pd

    validate.choice("split", split, _FILES)
    name = _FILES[split]
    path = fetch("adult", [name], mirror=mirror, cache_dir=cache_dir, registry=registry)[name]
    df = pd.read_csv(path, header=None, names=list(COLUMNS), skipinitialspace=True,
                     na_values=["?"], comment="|", skip_blank_lines=True)
    df["income"] = df["income"].str.rstrip(".")
    bad = ~df["income"].isin([">50K", "<=50K"])
    if bad.any():
        raise ValueError(f"{path}: unexpected income label {df['income'][bad].iloc[0]!r}")
    for col in CONTINUOUS:
        df[col] = df[col].astype(np.int64)
    return df


def _quintile_bins(train: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Bin index 0-4 of ``values``: the quintile of their mid-rank in ``train`` (module doc)."""
    ref = np.sort(train)
    below = np.searchsorted(ref, values, side="left")
    upto = np.searchsorted(ref, values, side="right")
    return np.minimum(4, np.floor(5 * (below + upto) / (2 * len(ref)))).astype(np.int64)


def encode_a9a(records: pd.DataFrame, train: pd.DataFrame) -> tuple[torch.Tensor, torch.Tensor]:
    """The a9a encoding (module doc) of ``records``, with quantile bins taken from ``train``."""
    import pandas as pd
    import torch

    n = len(records)
    x = np.zeros((n, NUM_FEATURES), dtype=np.float32)
    rows, start = np.arange(n), 0
    for col, width in GROUPS:
        values = records[col]
        if col in CATEGORIES:
            unknown = values.notna() & ~values.isin(CATEGORIES[col])
            if unknown.any():
                raise ValueError(f"{col}: unknown category {values[unknown].iloc[0]!r}")
            idx = pd.Categorical(values, categories=CATEGORIES[col]).codes.astype(np.int64)
        elif width == 2:
            idx = (values.to_numpy() > 0).astype(np.int64)
        else:
            idx = _quintile_bins(train[col].to_numpy(), values.to_numpy())
        ok = idx >= 0
        x[rows[ok], start + idx[ok]] = 1.0
        start += width
    y = (records["income"] == ">50K").to_numpy().astype(np.int64)
    return torch.from_numpy(x), torch.from_numpy(y)


def adult_features(split: str = "train", *, mirror=None, cache_dir=None, registry=None):
    """``split`` of Adult as the 123 a9a binary features: (float32 [N, 123], int64 [N])."""
    validate.choice("split", split, _FILES)
    kw = dict(mirror=mirror, cache_dir=cache_dir, registry=registry)
    train = load_adult("train", **kw)
    records = train if split == "train" else load_adult("test", **kw)
    return encode_a9a(records, train)
