"""DPlis (Wang et al., PETS 2022): the paper's identity, its settings read from the claims registry
(``dpnotes/claims/dplis.toml``) and ``SUBSTITUTES``.
"""

from __future__ import annotations

from dpnotes import claims

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
