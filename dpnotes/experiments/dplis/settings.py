"""DPlis (Wang et al., PETS 2022): the paper's identity, its settings read from the claims registry
(``dpnotes/claims/dplis.toml``) and ``SUBSTITUTES``.
"""

from __future__ import annotations

from dpnotes import claims
from dpnotes.experiments.differences import Difference

TITLE = (
    "W. Wang, T. Wang, L. Wang, N. Luo, P. Zhou, D. Song, R. Jia. "
    "DPlis: Boosting Utility of Differentially Private Deep Learning via Randomized Smoothing. PETS 2021."
)
PAPER = "dplis"
DATA_VERSION = 1  # MNIST / 255; CIFAR-10 / 255 then per-channel mean/std (REFERENCE.md)

ORDERS = "integer"  # RDP orders 2..64 (see the module docstring: not a registry accountant)
CONVERSION = "classic"
TF_TUTORIAL = "rdp-classic"  # the registry's TF-tutorial-orders accountant, for comparison only
DELTA = claims.setting("dplis.setup.delta")


def _s(name: str) -> float:
    return claims.setting(f"dplis.{name}")


# Each substitute, what it changes, how much of a verdict it explains and whether the paper's setting
# was run (dpnotes.experiments.differences; the chapter's "Where we differ from the paper").
DIFFERENCES = (
    Difference(
        "sharpness settings of our choosing", "the scale of Table 9's sharpness: the paper prints its box size only "
        "(not the optimiser, its iterations, the examples or the checkpoint)", ("dplis.table9.*",),
        "cannot be run: the paper's settings are not printed",
        unmeasured="the paper prints none of the settings that set the scale, so no run can be at its setting; "
                   "only the direction within a row (smoothed against not) is comparable"),
    Difference(
        "which checkpoint Sec. 5.4 measures", "the model whose landscape is measured: ours Table 2's eps-1.99 models",
        ("dplis.sec5_4.*",), "cannot be run: the paper does not say",
        unmeasured="the paper does not say which checkpoint it measures"),
    Difference(
        "Figure 3: image panels, our R grid", "Figure 3 without its Reddit panel, at R values of our choosing",
        ("dplis.sec5_3.unimodal_in_r",), "cannot be run: Reddit is not available offline, the R grid not printed",
        unmeasured="no record runs Reddit or the paper's (unprinted) R grid"),
)
