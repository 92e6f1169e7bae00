"""RRTop-k and RRWithPrior (Ghazi et al. 2021, "Deep Learning with Label Differential Privacy").

* RRTop-k (Algorithm 1): let Y_k be the k labels of largest prior probability; if the
  true label is in Y_k, run randomized response on Y_k, else output a uniform member of Y_k.
* RRWithPrior (Algorithm 2): choose ``k* = argmax_k w_k`` with
  ``w_k = (prior mass of Y_k) / (1 + (k - 1) e^-eps)`` and run RRTop-k*. ``w_k`` is the
  probability that RRTop-k outputs the true label when it is drawn from the prior, and
  Theorem 3 says no eps-DP randomizer does better (see :mod:`dpnotes.mechanisms.label_dp_lp`).

Both are eps-DP in the label (Lemma 1, Corollary 2) because ``k*`` and ``Y_k`` depend
on the prior only. Ties in the prior are broken towards the smaller label index, and
ties in ``w_k`` towards the smaller ``k`` (the paper allows any rule).
"""

from __future__ import annotations

import numpy as np
import torch

from dpnotes import validate
from dpnotes.mechanisms.randomized_response import check_labels, respond_within, table_within

_PRIOR_TOL = 1e-6


def check_priors(priors, *, name: str = "priors") -> torch.Tensor:
    """A ``(n, K)`` (or ``(K,)``) array of probability distributions over ``K >= 2`` labels."""
    p = torch.as_tensor(priors)
    if not torch.is_floating_point(p) or p.dim() not in (1, 2) or p.shape[-1] < 2:
        raise ValueError(f"{name} must be a float array of shape (K,) or (n, K) with K >= 2, "
                         f"got shape {tuple(p.shape)}")
    if not torch.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"{name} must be finite and >= 0")
    sums = p.double().sum(dim=-1)
    if ((sums - 1).abs() > _PRIOR_TOL).any():
        raise ValueError(f"{name} rows must sum to 1 (within {_PRIOR_TOL}), got sums in "
                         f"[{float(sums.min())}, {float(sums.max())}]")
    return p


def top_k_mask(priors: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """``(n, K)`` mask of each row's ``k`` most probable labels (ties: smaller index first)."""
    order = torch.sort(priors, dim=-1, descending=True, stable=True).indices
    ranks = torch.empty_like(order)
    ranks.scatter_(-1, order, torch.arange(priors.shape[-1], device=priors.device).expand_as(order))
    return ranks < k.unsqueeze(-1)


def optimal_k(priors, epsilon: float) -> torch.Tensor:
    """``k* = argmax_k (top-k prior mass) / (1 + (k - 1) e^-eps)`` per row (Algorithm 2, steps 1-2)."""
    p = check_priors(priors).double()
    epsilon = validate.nonnegative("epsilon", epsilon)
    top_mass = torch.sort(p, dim=-1, descending=True).values.cumsum(dim=-1)
    ks = torch.arange(1, p.shape[-1] + 1, dtype=torch.float64, device=p.device)
    w = top_mass / (1.0 + (ks - 1.0) * np.exp(-epsilon))
    return w.argmax(dim=-1) + 1  # argmax returns the first maximum: the smallest such k


def jax_k(priors, epsilon: float) -> torch.Tensor:
    """k* as the authors' JAX code (google-research/label-dp, ``rr_with_prior``) computes it: the
    top-m prior mass over ``1 + (m - 2) e^-eps``, the denominator of m - 1 (Algorithm 2 has m),
    first maximum. It depends on the prior only, so RRTop-k with it is still eps-DP; it favours
    small k. eps > 0 (at eps = 0 the m = 1 score divides by zero)."""
    p = check_priors(priors).double()
    epsilon = validate.positive("epsilon", epsilon, allow_inf=True)
    top_mass = torch.sort(p, dim=-1, descending=True).values.cumsum(dim=-1)
    ms = torch.arange(1, p.shape[-1] + 1, dtype=torch.float64, device=p.device)
    return (top_mass / (1.0 + (ms - 2.0) * np.exp(-epsilon))).argmax(dim=-1) + 1


K_RULES = {"paper": optimal_k, "jax": jax_k}  # how k* is chosen: Algorithm 2, or the JAX code's


def _as_k(k, n: int, num_classes: int, device) -> torch.Tensor:
    if isinstance(k, torch.Tensor):
        if k.shape != (n,) or torch.is_floating_point(k) or (k < 1).any() or (k > num_classes).any():
            raise ValueError(f"k must be integers in [1, {num_classes}] with one per example")
        return k.long().to(device)
    k = validate.integer("k", k, minimum=1)
    if k > num_classes:
        raise ValueError(f"k must be an integer in [1, {num_classes}], got {k}")
    return torch.full((n,), k, dtype=torch.long, device=device)


def rr_top_k(
    labels: torch.Tensor, priors, k, epsilon: float, *, generator: torch.Generator | None = None
) -> torch.Tensor:
    """RRTop-k (Algorithm 1) on a batch: ``priors`` is ``(n, K)``, ``k`` an int or one per example."""
    epsilon = validate.nonnegative("epsilon", epsilon)
    p = check_priors(priors)
    if p.dim() != 2:
        raise ValueError("priors must have shape (n, K)")
    labels = check_labels(labels, p.shape[1])
    if labels.numel() != p.shape[0]:
        raise ValueError(f"labels ({labels.numel()}) and priors ({p.shape[0]}) must have one row per example")
    p = p.to(labels.device)
    in_set = top_k_mask(p, _as_k(k, p.shape[0], p.shape[1], p.device))
    return respond_within(labels, in_set, epsilon, generator)


def rr_with_prior(
    labels: torch.Tensor, priors, epsilon: float, *, generator: torch.Generator | None = None,
    k_rule: str = "paper",
) -> torch.Tensor:
    """RRWithPrior (Algorithm 2) on a batch: RRTop-k* with each example's own ``k*``
    (``k_rule="jax"``: the authors' JAX code's k*, :func:`jax_k`)."""
    choose = K_RULES[validate.choice("k_rule", k_rule, tuple(K_RULES))]
    return rr_top_k(labels, priors, choose(priors, epsilon), epsilon, generator=generator)


def rr_top_k_probabilities(prior, k: int, epsilon: float) -> np.ndarray:
    """Exact ``P[true, output]`` of RRTop-k for one prior of shape ``(K,)``."""
    epsilon = validate.nonnegative("epsilon", epsilon)
    p = check_priors(prior, name="prior")
    if p.dim() != 1:
        raise ValueError("prior must have shape (K,)")
    in_set = top_k_mask(p.unsqueeze(0), _as_k(k, 1, p.numel(), p.device))[0]
    return table_within(in_set, epsilon)


def rr_with_prior_probabilities(prior, epsilon: float) -> np.ndarray:
    """Exact ``P[true, output]`` of RRWithPrior for one prior of shape ``(K,)``."""
    p = check_priors(prior, name="prior")
    if p.dim() != 1:
        raise ValueError("prior must have shape (K,)")
    k = int(optimal_k(p.unsqueeze(0), epsilon)[0])
    return rr_top_k_probabilities(p, k, epsilon)
