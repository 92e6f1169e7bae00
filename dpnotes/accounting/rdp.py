"""Renyi DP of the Poisson-subsampled Gaussian mechanism and its conversion to (eps, delta).

The RDP curve itself is computed by opacus's analysis module
``opacus/accountants/analysis/rdp.py`` (Mironov, Talwar, Zhang 2019, "Renyi Differential
Privacy of the Sampled Gaussian Mechanism"), loaded from its file so that the ``opacus``
package (which imports torch) is never imported; that file needs only math, numpy and
scipy. This module adds the order lists the papers used and the two
RDP -> (eps, delta) conversions found in their code:

* ``classic``: Mironov 2017, Proposition 3,
  ``eps = min_a rdp(a) + log(1/delta) / (a - 1)`` (TF Privacy before Dec 2020; the
  "MA eps" column of the GDP paper, Table 1);
* ``improved``: Balle et al. 2020, "Hypothesis testing interpretations and Renyi
  differential privacy", Theorem 21,
  ``eps = min_a rdp(a) + log((a - 1)/a) - (log delta + log a) / (a - 1)`` (opacus).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dpnotes import validate


def _load_opacus_rdp_analysis():
    """``opacus.accountants.analysis.rdp`` executed from its file, without importing ``opacus``."""
    package = importlib.util.find_spec("opacus")  # locates the package; imports nothing
    if package is None or not package.submodule_search_locations:
        raise ImportError("opacus is not installed (dpnotes needs its RDP analysis module)")
    path = Path(package.submodule_search_locations[0]) / "accountants" / "analysis" / "rdp.py"
    spec = importlib.util.spec_from_file_location("dpnotes.accounting._opacus_rdp", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


compute_rdp = _load_opacus_rdp_analysis().compute_rdp

ORDERS: dict[str, tuple[float, ...]] = {
    # TF Privacy MNIST tutorial (the GDP paper's MA column).
    "tf-tutorial": tuple([1 + x / 10 for x in range(1, 100)] + [float(a) for a in range(12, 64)]),
    # TF Privacy compute_dp_sgd_privacy.
    "tf-compute": tuple(
        [1.25, 1.5, 1.75, 2.0, 2.25, 2.5, 3.0, 3.5, 4.0, 4.5]
        + [float(a) for a in range(5, 64)]
        + [128.0, 256.0, 512.0]
    ),
    # opacus RDPAccountant.DEFAULT_ALPHAS (opacus 1.x), written out here so that the
    # torch-importing opacus package is not needed: 1.1, 1.2, ..., 10.9, then 12..63.
    "opacus": tuple([1 + x / 10.0 for x in range(1, 100)] + [float(a) for a in range(12, 64)]),
    # Integer orders, as SA-DPSGD and DPlis use.
    "integer": tuple(float(a) for a in range(2, 65)),
}

CONVERSIONS = ("classic", "improved")


def resolve_orders(orders: str | Sequence[float]) -> np.ndarray:
    """The RDP orders named by ``orders`` (a key of :data:`ORDERS`) or given as numbers.

    Every order must be finite and > 1.
    """
    if isinstance(orders, str):
        return np.array(ORDERS[validate.choice("orders", orders, ORDERS)])
    values = [validate.positive("orders", a) for a in orders]
    if not values:
        raise ValueError("orders must not be empty")
    if min(values) <= 1:
        raise ValueError(f"orders must all be > 1, got {min(values)!r}")
    return np.array(values, dtype=float)


def _check_sgm(q, sigma, steps) -> tuple[float, float, float]:
    return (
        validate.probability("q", q),
        validate.positive("sigma", sigma),
        validate.positive("steps", steps),
    )


def subsampled_gaussian_rdp(q: float, sigma: float, steps: float, orders) -> np.ndarray:
    """RDP at each order of ``steps`` compositions of the Poisson-subsampled Gaussian.

    ``q`` is the sampling rate, ``sigma`` the noise multiplier (noise std / L2
    sensitivity). RDP composes additively, so ``steps`` may be fractional (e.g.
    ``epochs * n / B``, as the GDP paper's code does). Values may be ``inf``.
    """
    q, sigma, steps = _check_sgm(q, sigma, steps)
    a = resolve_orders(orders)
    return np.asarray(compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=list(a)), dtype=float)


def _epsilons(rdp: np.ndarray, a: np.ndarray, delta: float, conversion: str) -> np.ndarray:
    if conversion == "classic":
        return rdp + np.log(1 / delta) / (a - 1)
    return rdp + np.log((a - 1) / a) - (np.log(delta) + np.log(a)) / (a - 1)


def rdp_to_epsilon(rdp, orders, delta: float, conversion: str = "classic") -> tuple[float, float]:
    """Smallest eps over the orders for the given ``delta``; returns ``(eps, order)``.

    ``conversion`` is ``"classic"`` (Mironov 2017) or ``"improved"`` (Balle et al.
    2020, as opacus). If every order has infinite RDP, returns ``(inf, nan)``.
    """
    delta = validate.probability("delta", delta, high_open=True)
    validate.choice("conversion", conversion, CONVERSIONS)
    a = resolve_orders(orders)
    rdp = np.asarray(rdp, dtype=float)
    if rdp.shape != a.shape:
        raise ValueError(f"rdp must have one value per order ({a.size}), got shape {rdp.shape}")
    if np.isnan(rdp).any() or (rdp < 0).any():
        raise ValueError("rdp must be >= 0 (inf allowed), got a negative or NaN value")
    eps = _epsilons(rdp, a, delta, conversion)
    if not np.isfinite(eps).any():
        return float("inf"), float("nan")
    i = int(np.argmin(eps))
    return max(float(eps[i]), 0.0), float(a[i])  # (eps<0, delta)-DP implies (0, delta)-DP


def rdp_epsilon(
    q: float,
    sigma: float,
    steps: float,
    delta: float,
    *,
    orders: str | Sequence[float] = "tf-tutorial",
    conversion: str = "classic",
) -> tuple[float, float]:
    """(eps, best order) of ``steps`` Poisson-subsampled Gaussian steps under RDP accounting."""
    a = resolve_orders(orders)
    return rdp_to_epsilon(subsampled_gaussian_rdp(q, sigma, steps, a), a, delta, conversion)
