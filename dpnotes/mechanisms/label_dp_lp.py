"""The linear program behind Theorem 3 of Ghazi et al. 2021 (optimality of RRWithPrior).

For a prior ``p`` on ``K`` labels, a randomizer is a row-stochastic matrix
``M[y, o] = P(output o | true label y)``. Theorem 3 states that among all eps-DP
randomizers, RRWithPrior maximizes ``Obj(M) = sum_y p_y M[y, y]``, the probability
that the output equals a true label drawn from ``p`` (the LP "LP1" of its proof).
We solve that LP directly, over all ``K^2`` entries of ``M``, with
``scipy.optimize.linprog`` (HiGHS):

    maximize  sum_y p_y M[y, y]
    s.t.      sum_o M[y, o] = 1,  M >= 0,
              M[y, o] <= e^eps M[y', o]   for all y != y' and all o   (eps-DP).

The DP rows are written divided by ``e^eps`` (``e^-eps M[y, o] - M[y', o] <= 0``): with the
coefficient ``-e^eps`` itself (about -2981 at eps = 8) HiGHS stopped up to 4.4e-4 below the
optimum for some priors at eps = 8 and K = 8-10; scaled, the optimum matches RRWithPrior's
closed form to about 1e-15 there (checked in ``tests/test_labeldp.py``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from dpnotes import validate
from dpnotes.mechanisms.rr_prior import check_priors


def optimal_randomizer(prior, epsilon: float, *, scaled: bool = True) -> tuple[float, np.ndarray]:
    """``(max Obj, an optimal M)`` over all eps-DP label randomizers for ``prior`` (shape ``(K,)``).

    ``scaled=False`` writes the DP rows with the coefficient ``-e^eps`` (the module docstring
    says why that is inaccurate at large eps); kept to show the difference."""
    epsilon = validate.nonnegative("epsilon", epsilon)
    p = check_priors(prior, name="prior").double().numpy()
    if p.ndim != 1:
        raise ValueError("prior must have shape (K,)")
    k = p.size
    var = np.arange(k * k).reshape(k, k)  # var[y, o] indexes M[y, o]
    cost = np.zeros(k * k)
    cost[np.diag(var)] = -p  # linprog minimizes
    a_eq = np.zeros((k, k * k))
    a_eq[np.arange(k)[:, None], var] = 1.0
    y, y2, o = (g.ravel() for g in np.meshgrid(np.arange(k), np.arange(k), np.arange(k), indexing="ij"))
    y, y2, o = y[y != y2], y2[y != y2], o[y != y2]
    a_ub = np.zeros((y.size, k * k))
    rows = np.arange(y.size)
    if scaled:  # M[y, o] <= e^eps M[y', o], divided by e^eps
        a_ub[rows, var[y, o]], a_ub[rows, var[y2, o]] = np.exp(-epsilon), -1.0
    else:
        a_ub[rows, var[y, o]], a_ub[rows, var[y2, o]] = 1.0, -np.exp(epsilon)
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(y.size), A_eq=a_eq, b_eq=np.ones(k),
                  bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return float(-res.fun), res.x.reshape(k, k)
