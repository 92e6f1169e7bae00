"""GDP (Bu, Dong, Long, Su: Deep learning with Gaussian differential privacy, Harvard Data Science Review
2020): the paper's identity and its settings read from the claims registry (``dpnotes/claims/gdp.toml``).
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims

from . import data as gdp_data

TITLE = ("Z. Bu, J. Dong, Q. Long, W. J. Su. Deep Learning with Gaussian Differential Privacy. "
         "Harvard Data Science Review, 2020.")
PAPER = "gdp"
MA_ORDERS = "tf-tutorial"  # TF Privacy's MNIST tutorial orders, classic conversion
MA_ACCOUNTANT = "rdp-classic"  # the registry's accountant with exactly those orders and conversion
# delta of Tables 3 and 4: not in the extracted text; registered from the authors' code
# (REFERENCE.md: 1e-5 for IMDb, 1e-6 for MovieLens), which reproduces the printed eps.
# Adult: not stated either ("delta < 1/n" only); 1e-5 is our choice, not a paper value.
ADULT_DELTA = 1e-5
DELTA = {"mnist": claims.setting("gdp.mnist.delta"), "adult": ADULT_DELTA,
         "imdb": claims.setting("gdp.table3.delta"), "movielens": claims.setting("gdp.table4.delta")}
ALPHA = np.linspace(0.0, 1.0, 2001)  # type I error grid of the trade-off curves (plots)
# min_alpha alpha + f(alpha) on a grid over-estimates by up to |f'| * spacing (e^eps * spacing
# for f_eps,delta): a fine grid keeps that below 1e-4 for the paper's eps.
ALPHA_FINE = np.linspace(0.0, 1.0, 400_001)
SEEDS = {"paper": (0, 1, 2), "quick": (0,), "smoke": (0,)}
DATA_VERSION = gdp_data.VERSION
METHOD_VERSIONS = {"baseline": gdp_data.BASELINE_VERSION}  # Table 4's non-DP recommenders


def _s(name: str) -> float:
    return claims.setting(f"gdp.{name}")
