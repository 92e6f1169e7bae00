"""LabelDP's exact results, computed (no training): Lemma 1, Corollary 2, Theorem 3 and Section 4's
randomized-response laws, Observation 4 on toy LP-MST instances, the authors' JAX k*, Section 5.1's
margin on the paper's own Table 1 and the figure's P[correct] curves.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import torch

from dpnotes import claims
from dpnotes.mechanisms.label_dp_lp import optimal_randomizer
from dpnotes.mechanisms.randomized_response import keep_probability, randomized_response_probabilities
from dpnotes.mechanisms.rr_prior import jax_k, optimal_k, rr_top_k_probabilities, rr_with_prior_probabilities

from .settings import (
    CHECK_SEED,
    DIRICHLET,
    EPSILONS,
    KS,
    LP_TOL,
    LPMST_K,
    LPMST_MAPS,
    OFF_BY_ONE_PRIORS,
    PAPER,
    PRIORS_PER_CELL,
)


def _random_priors(rng: np.random.Generator, k: int, n: int) -> list[np.ndarray]:
    return [rng.dirichlet(np.full(k, DIRICHLET[i % len(DIRICHLET)])) for i in range(n)]


def p_correct(prior, table: np.ndarray) -> float:
    """``P_{y ~ prior}[R(y) = y] = sum_y p_y M[y, y]`` of a randomizer's table ``M``."""
    return float(np.asarray(prior, dtype=np.float64) @ np.diag(table))


def max_log_ratio(table: np.ndarray) -> float:
    """``max_{y, y', o} log(M[y, o] / M[y', o])`` of a row-stochastic table (0/0 counts as equal,
    x/0 with x > 0 as inf): the table is eps-DP iff this is at most eps."""
    m = np.asarray(table, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise ValueError(f"table must be a square (K, K) array, got shape {m.shape}")
    num, den = m[:, None, :], m[None, :, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(num > 0, np.log(num) - np.log(den), -np.inf)
    return float(ratios.max())


def dp_violation(table: np.ndarray, epsilon: float) -> float:
    """``max_{y, y', o} (M[y, o] - e^eps M[y', o])``: additive slack of an LP solution (<= 0 when eps-DP)."""
    m = np.asarray(table, dtype=np.float64)
    return float((m[:, None, :] - math.exp(epsilon) * m[None, :, :]).max())


# Lemma 1, Corollary 2, Theorem 3, Section 4.
@lru_cache(maxsize=1)
def theorem3_check() -> tuple[dict, ...]:
    """One row per (K, eps, random prior): LP1's optimum, RRWithPrior's and RR's P[correct],
    k*, and the LP solution's DP slack (about 180 LPs, ~1.5 s)."""
    rng = np.random.default_rng(CHECK_SEED)
    rows = []
    for k in KS:
        for eps in EPSILONS:
            for i, prior in enumerate(_random_priors(rng, k, PRIORS_PER_CELL)):
                lp, m = optimal_randomizer(prior, eps)
                rows.append({"K": k, "epsilon": eps, "prior": i, "k_star": int(optimal_k(prior, eps)),
                             "lp": lp, "rr_with_prior": p_correct(prior, rr_with_prior_probabilities(prior, eps)),
                             "rr": float(keep_probability(eps, k)), "lp_dp_slack": dp_violation(m, eps)})
    for r in rows:
        r["lp_minus_closed_form"] = r["lp"] - r["rr_with_prior"]
    return tuple(rows)


@lru_cache(maxsize=1)
def ratio_check() -> dict:
    """The largest ``max_log_ratio - eps`` of RR's, every RRTop-k's (k = 1..K) and RRWithPrior's
    exact tables over ``KS`` x ``EPSILONS`` and random priors (<= 0: every table is eps-DP)."""
    rng = np.random.default_rng(CHECK_SEED + 1)
    worst = {"rr": -math.inf, "rr_top_k": -math.inf, "rr_with_prior": -math.inf}
    tables = 0
    for k in KS:
        for eps in EPSILONS:
            worst["rr"] = max(worst["rr"], max_log_ratio(randomized_response_probabilities(k, eps)) - eps)
            for prior in _random_priors(rng, k, PRIORS_PER_CELL):
                p = torch.as_tensor(prior)
                for kk in range(1, k + 1):
                    worst["rr_top_k"] = max(worst["rr_top_k"], max_log_ratio(rr_top_k_probabilities(p, kk, eps)) - eps)
                worst["rr_with_prior"] = max(worst["rr_with_prior"],
                                             max_log_ratio(rr_with_prior_probabilities(p, eps)) - eps)
                tables += k + 2
    return {"worst": worst, "tables": tables}


@lru_cache(maxsize=1)
def uniform_check() -> dict:
    """Uniform priors: k* per (K, eps), and the largest |RRWithPrior table - RR table|."""
    ks, diff = {}, 0.0
    for k in KS:
        for eps in EPSILONS:
            u = torch.full((k,), 1.0 / k, dtype=torch.float64)
            ks[(k, eps)] = int(optimal_k(u, eps))
            diff = max(diff, float(np.abs(rr_with_prior_probabilities(u, eps)
                                          - randomized_response_probabilities(k, eps)).max()))
    return {"k_star": ks, "all_k_star_is_K": all(v == k for (k, _), v in ks.items()), "max_table_diff": diff}


# Observation 4 on toy instances: the exact output law of a two-stage LP-MST.
def _lpmst_law(labels: tuple[int, int], epsilon: float, stage2_priors: np.ndarray) -> np.ndarray:
    """``P[(z1, z2)]`` of two-stage LP-MST on two examples: z1 = RRWithPrior(y1, uniform); the
    stage-1 "model" maps z1 to the stage-2 prior ``stage2_priors[z1]``; z2 = RRWithPrior(y2, it)."""
    k = stage2_priors.shape[1]
    t1 = rr_with_prior_probabilities(torch.full((k,), 1.0 / k, dtype=torch.float64), epsilon)
    law = np.zeros((k, k))
    for z1 in range(k):
        t2 = rr_with_prior_probabilities(torch.as_tensor(stage2_priors[z1]), epsilon)
        law[z1] = t1[labels[0], z1] * t2[labels[1]]
    return law


@lru_cache(maxsize=1)
def lpmst_check() -> dict:
    """Largest ``log P[out | labels] - log P[out | labels']`` - eps over neighbouring label pairs
    (one label substituted), every output, ``LPMST_MAPS`` random stage-2 prior maps and
    ``EPSILONS``: <= 0 means every instance is eps-label-DP."""
    rng = np.random.default_rng(CHECK_SEED + 2)
    k, worst, pairs = LPMST_K, -math.inf, 0
    vectors = [(a, b) for a in range(k) for b in range(k)]
    for eps in EPSILONS:
        for _ in range(LPMST_MAPS):
            priors = np.stack(_random_priors(rng, k, k))
            laws = {v: _lpmst_law(v, eps, priors) for v in vectors}
            for v in vectors:
                for w in vectors:
                    if sum(a != b for a, b in zip(v, w)) != 1:
                        continue
                    pv, pw = laws[v].ravel(), laws[w].ravel()
                    with np.errstate(divide="ignore", invalid="ignore"):
                        r = np.where(pv > 0, np.log(pv) - np.log(pw), -np.inf)
                    worst, pairs = max(worst, float(r.max()) - eps), pairs + 1
    return {"worst": worst, "pairs": pairs}


@lru_cache(maxsize=1)
def lp_scaling_check() -> dict:
    """LP1 with the DP rows as written (coefficient -e^eps) against scaled by e^-eps, on the
    Theorem-3 cells at eps = 8, K = 8..10 with 30 random priors each: the largest shortfall of
    each optimum below RRWithPrior's closed form, and how many priors fall short by > LP_TOL."""
    rng = np.random.default_rng(CHECK_SEED + 4)
    out = {"unscaled": [], "scaled": []}
    for k in (8, 9, 10):
        for prior in _random_priors(rng, k, 30):
            closed = p_correct(prior, rr_with_prior_probabilities(prior, 8.0))
            for name, scaled in (("unscaled", False), ("scaled", True)):
                out[name].append(closed - optimal_randomizer(prior, 8.0, scaled=scaled)[0])
    return {name: {"max_shortfall": max(v), "short": sum(x > LP_TOL for x in v), "n": len(v)}
            for name, v in out.items()}


# The authors' JAX k* (google-research/label-dp, label_dp/train.py, rr_with_prior).
def jax_k_star(prior, epsilon: float) -> int:
    """k* as the JAX code computes it for one prior (:func:`~dpnotes.mechanisms.rr_prior.jax_k`:
    the top-``m`` prior mass over ``1 + (m - 2) e^-eps``, Algorithm 2 has ``m - 1``). Its
    sampling step is the correct RRTop-k*, so only the choice of k differs."""
    return int(jax_k(torch.as_tensor(np.asarray(prior, dtype=np.float64))[None], epsilon)[0])


@lru_cache(maxsize=1)
def jax_off_by_one() -> dict:
    """On ``OFF_BY_ONE_PRIORS`` random priors (K uniform in 2..10, eps uniform in ``EPSILONS``,
    Dirichlet concentrations from ``DIRICHLET``): how often the JAX k* differs from Algorithm 2's,
    in which direction, and the largest loss in P[correct] (the RRTop-k tables' w_k)."""
    rng = np.random.default_rng(CHECK_SEED + 3)
    rows = []
    for i in range(OFF_BY_ONE_PRIORS):
        k, eps = int(rng.integers(2, 11)), float(rng.choice(EPSILONS))
        prior = rng.dirichlet(np.full(k, DIRICHLET[i % len(DIRICHLET)]))
        p = torch.as_tensor(prior)
        ours, jax = int(optimal_k(p, eps)), jax_k_star(prior, eps)
        loss = (p_correct(prior, rr_top_k_probabilities(p, ours, eps))
                - p_correct(prior, rr_top_k_probabilities(p, jax, eps)))
        rows.append({"K": k, "epsilon": eps, "k_star": ours, "jax_k_star": jax, "loss": loss})
    differ = [r for r in rows if r["k_star"] != r["jax_k_star"]]
    return {"rows": rows, "n": len(rows), "differ": len(differ),
            "smaller": sum(r["jax_k_star"] < r["k_star"] for r in differ),
            "max_loss": max((r["loss"] for r in rows), default=0.0),
            "min_loss": min((r["loss"] for r in rows), default=0.0)}


# Sec. 5.1's "a margin of 20% across all eps", on the paper's own Table 1.
def table1_margins() -> list[dict]:
    """Per Table 1 column with an inferred budget (settings ``table1.col<i>.epsilon_inferred``):
    the paper's LP-1ST and LP-2ST accuracy, the best baseline whose budget (printed, or inferred
    for the pre-trained DP-SGD row) is at most the column's, and the margins in points and in
    percent of that baseline (None where no baseline qualifies). Only the paper's numbers."""
    baselines = []
    for c in claims.load(PAPER):
        if c.id.startswith("labeldp.table1.") and ".lp_" not in c.id and c.number is not None:
            for suffix in ("budget", "budget_inferred"):
                try:
                    baselines.append((c.id, c.number, claims.setting(f"{c.id}.{suffix}")))
                except KeyError:
                    continue
    rows = []
    for col in (1, 2, 4, 6):
        eps = claims.setting(f"labeldp.table1.col{col}.epsilon_inferred")
        ok = [b for b in baselines if b[2] <= eps]
        best = max(ok, key=lambda b: b[1]) if ok else None
        row = {"column": col, "eps": eps, "best baseline": None if best is None else best[0].split(".")[2],
               "baseline acc": None if best is None else best[1], "baseline eps": None if best is None else best[2]}
        for stages in (1, 2):
            acc = claims.get(f"labeldp.table1.lp_{stages}st.col{col}").number
            row[f"LP-{stages}ST"] = acc
            row[f"LP-{stages}ST margin (points)"] = None if best is None else acc - best[1]
            row[f"LP-{stages}ST margin (%)"] = None if best is None else 100 * (acc - best[1]) / best[1]
        rows.append(row)
    return rows


# Figure: P[correct] of RR, RRWithPrior and the LP optimum over eps.
FIGURE_EPSILONS = tuple(np.round(np.linspace(0.25, 8.0, 32), 4))
FIGURE_PRIORS = {  # K = 10 (ours): how concentrated a prior the previous stage's model gives
    "uniform": np.full(10, 0.1),
    "top-2 holds 80%": np.r_[0.4, 0.4, np.full(8, 0.025)],
    "geometric (ratio 1/2)": 0.5 ** np.arange(10) / (0.5 ** np.arange(10)).sum(),
}


@lru_cache(maxsize=1)
def figure_curves() -> dict[str, dict[str, np.ndarray]]:
    """Per figure prior: P[correct] of RR, of RRWithPrior (closed form) and LP1's optimum, and k*."""
    out = {}
    for name, prior in FIGURE_PRIORS.items():
        p = torch.as_tensor(prior)
        out[name] = {
            "rr": np.array([float(keep_probability(e, prior.size)) for e in FIGURE_EPSILONS]),
            "rr_with_prior": np.array([p_correct(prior, rr_with_prior_probabilities(p, e)) for e in FIGURE_EPSILONS]),
            "lp": np.array([optimal_randomizer(prior, e)[0] for e in FIGURE_EPSILONS]),
            "k_star": np.array([int(optimal_k(p, e)) for e in FIGURE_EPSILONS]),
        }
    return out
