"""Exact audits of the library's mechanisms, where the output law is known in closed form.

* Randomized response and RRWithPrior (Ghazi et al., NeurIPS 2021, Eq. 1 and Algorithm 2): the
  privacy loss of a label randomizer is the largest log-ratio ``log P[o | y] / P[o | y']`` over
  label pairs and outputs, read from the mechanism's exact table
  (:func:`dpnotes.mechanisms.rr_with_prior_probabilities`). It must equal eps when k* >= 2
  (randomized response on the top-k* labels), and 0 when k* = 1 (the output ignores the label).
* The Gaussian mechanism (Balle and Wang, ICML 2018, Theorem 8): its exact privacy profile
  ``delta(eps) = Phi(1/(2s) - eps s) - e^eps Phi(-1/(2s) - eps s)`` (s = sigma, sensitivity 1)
  gives the exact eps at delta; every accountant's eps for one ``GaussianDpEvent(sigma)`` must be
  at least that (a smaller one would be a wrong epsilon) and the tight ones close to it.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats

from dpnotes import validate


def max_log_ratio(table: np.ndarray) -> float:
    """max over rows y, y' and columns o of log(table[y, o] / table[y', o]) (inf if some output
    is possible under y and impossible under y'; 0/0 outputs are skipped)."""
    t = np.asarray(table, dtype=float)
    if t.ndim != 2 or not np.allclose(t.sum(axis=1), 1.0):
        raise ValueError("table must be a 2-D array whose rows are output distributions")
    worst = 0.0
    for o in range(t.shape[1]):
        col = t[:, o]
        hi, lo = col.max(), col.min()
        if hi == 0:
            continue
        worst = max(worst, math.inf if lo == 0 else math.log(hi / lo))
    return worst


def label_randomizer_audit(prior, epsilon: float) -> dict:
    """k* and the exact max log-ratio of RRWithPrior with ``prior`` at ``epsilon``."""
    import torch

    from dpnotes.mechanisms import optimal_k, rr_with_prior_probabilities

    p = torch.as_tensor(np.asarray(prior, dtype=float))
    k = int(optimal_k(p.unsqueeze(0), epsilon)[0])
    return {"k_star": k, "max_log_ratio": max_log_ratio(rr_with_prior_probabilities(p, epsilon)),
            "epsilon": epsilon}


def gaussian_delta(eps: float, sigma: float) -> float:
    """Exact delta(eps) of the Gaussian mechanism with noise multiplier sigma (module docstring)."""
    sigma = validate.positive("sigma", sigma)
    eps = validate.nonnegative("eps", eps)
    a, b = 0.5 / sigma - eps * sigma, -0.5 / sigma - eps * sigma
    return float(stats.norm.cdf(a) - math.exp(eps + stats.norm.logcdf(b)))


def gaussian_epsilon(sigma: float, delta: float) -> float:
    """The exact eps at ``delta`` of the Gaussian mechanism (root of :func:`gaussian_delta`)."""
    delta = validate.probability("delta", delta, high_open=True)
    if gaussian_delta(0.0, sigma) <= delta:
        return 0.0
    hi = 1.0
    while gaussian_delta(hi, sigma) > delta:
        hi *= 2
    return float(optimize.brentq(lambda e: gaussian_delta(e, sigma) - delta, 0.0, hi, xtol=1e-12))


def gaussian_audit(sigma: float, delta: float, accountants=("rdp", "pld", "clt")) -> dict:
    """The exact eps of one Gaussian release beside each accountant's eps for it."""
    from dpnotes.accounting.registry import price
    from dpnotes.ledger import GaussianDpEvent

    priced = price(GaussianDpEvent(validate.positive("sigma", sigma)), delta, accountants)
    return {"sigma": sigma, "delta": delta, "exact": gaussian_epsilon(sigma, delta),
            **{name: v["epsilon"] for name, v in priced.items()}}
