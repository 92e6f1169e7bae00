"""Private label histograms by the discrete Laplace (two-sided geometric) mechanism.

Ghazi et al. 2021, Appendix B, Algorithm 4 ("priors from self-supervised learning"):
the training set is clustered on public features, each cluster's label histogram is
released with discrete Laplace noise (``scipy.stats.dlaplace``, Ghosh et al. 2012's
geometric mechanism) and normalized into the prior of the cluster's examples.

The extracted paper text lost the noise parameter and the normalization formula; our
choices, stated here and tested:

* LabelDP neighbours differ in ONE label (substitution; see REFERENCE.md), which moves
  one count between two bins of one cluster: L1 sensitivity 2. Add/remove of an
  example changes one bin by 1: sensitivity 1. Per-bin noise with pmf proportional
  to ``exp(-a |z|)``, ``a = eps / sensitivity``, is then eps-DP; clusters are disjoint,
  so all histograms together are eps-DP (parallel composition).
* Prior = the noisy counts clipped at 0 and normalized; a histogram with no positive
  count gives the uniform prior. Both are post-processing.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import dlaplace

from dpnotes import validate

NEIGHBOURING = {"substitution": 2, "add_remove": 1}


def _scale(epsilon: float, neighbouring: str) -> float:
    epsilon = validate.positive("epsilon", epsilon)
    return epsilon / NEIGHBOURING[validate.choice("neighbouring", neighbouring, NEIGHBOURING)]


def _check_counts(counts, name: str = "counts") -> np.ndarray:
    c = np.asarray(counts)
    if c.ndim not in (1, 2) or c.shape[-1] < 2 or not np.issubdtype(c.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array of shape (K,) or (clusters, K) with K >= 2")
    return c


def discrete_laplace_histogram(
    counts, epsilon: float, *, neighbouring: str = "substitution", rng: np.random.Generator
) -> np.ndarray:
    """``counts`` (``(K,)`` or ``(clusters, K)``, integers) plus i.i.d. discrete Laplace noise per bin."""
    a = _scale(epsilon, neighbouring)
    c = _check_counts(counts)
    if (c < 0).any():
        raise ValueError("counts must be >= 0")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy.random.Generator")
    return c + dlaplace.rvs(a, size=c.shape, random_state=rng)


def discrete_laplace_log_likelihood(
    output, counts, epsilon: float, *, neighbouring: str = "substitution"
) -> np.ndarray:
    """Exact ``log P(output | counts)`` of :func:`discrete_laplace_histogram`, summed over bins.

    ``output`` may carry extra leading axes (many outputs against one histogram).
    """
    a = _scale(epsilon, neighbouring)
    y = _check_counts(output, "output")
    return dlaplace.logpmf(y - _check_counts(counts), a).sum(axis=-1)


def histogram_prior(noisy_counts) -> np.ndarray:
    """Prior from a noisy histogram: counts clipped at 0, normalized; uniform if none is positive."""
    c = np.clip(_check_counts(noisy_counts, "noisy_counts"), 0, None).astype(float)
    total = c.sum(axis=-1, keepdims=True)
    uniform = np.full_like(c, 1.0 / c.shape[-1])
    return np.where(total > 0, c / np.where(total > 0, total, 1.0), uniform)
