"""DPIS's accounting, exact (Section 4.1): DP-SGD and the DPIS sigma_G schedule as the paper prices them.

* Section 3.3's statement that, at the same budget, DPIS's noise multiplier sigma_G is no
  larger than DP-SGD's (Lemma 3.1 at a ratio ``r = K~/(N~ C) <= 1`` against ``r = 1``),
  checked on a grid of settings (:func:`sigma_le_dpsgd`).
* Figure 1c's DP-SGD noise multiplier: its batch size and epochs are not printed, so the claim
  stays not run ("unpublished setting"); the chapter derives the batch size it implies
  (:func:`figure1_batch_sizes`: the epochs are read off the figure's x-axis, ours) and draws
  the sigma_G schedule of Section 4.2 under the ``a_E`` split (:func:`figure1_schedules`).
* The chapter's findings on Lemma 3.1's unenforced precondition, Eq. (11)'s noise placement and
  Algorithm 1's line 32 (:func:`precondition_frame`, :func:`eq11_cost`, :func:`line32_vs_eq7`).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from dpnotes import claims, validate
from dpnotes.accounting.calibrate import noise_multiplier
from dpnotes.accounting.dpis import DPISAccountant
from dpnotes.accounting.rdp import resolve_orders
from dpnotes.accounting.registry import price
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

from .settings import ACCOUNTANT, FIG1_BATCHES, FIG1C_EPOCHS, SCHEDULE_RATIOS, TRAMER_BONEH, _n_train, _s

if TYPE_CHECKING:  # torch only where a function computes with it: the run configs import this module
    import torch

# DP-SGD and the DPIS schedule as the paper accounts them (Section 4.1).
SIGMA_DIGITS = 4  # DP-SGD-HF's calibrated sigma in a run config: the smallest 4-digit one meeting eps


def dpsgd_ledger(sigma: float, batch_size: float, n: float, epochs: float) -> Ledger:
    """DP-SGD: ``epochs * n / b`` (fractional, T = |D|/b) Poisson-sampled Gaussian steps."""
    sigma, batch_size, n = (validate.positive(k, v) for k, v in
                            (("sigma", sigma), ("batch_size", batch_size), ("n", n)))
    epochs = validate.positive("epochs", epochs)
    if batch_size >= n:
        raise ValueError(f"batch_size must be < n, got {batch_size} >= {n}")
    return Ledger().append(PoissonSampledDpEvent(batch_size / n, GaussianDpEvent(sigma)), epochs * n / batch_size)


def dpsgd_epsilon(sigma: float, batch_size: float, n: float, epochs: float, delta: float) -> float:
    """eps of DP-SGD under the paper's accountant (the registry's ``dpis``)."""
    return price(dpsgd_ledger(sigma, batch_size, n, epochs), delta, ACCOUNTANT)[ACCOUNTANT]["epsilon"]


@lru_cache(maxsize=None)
def dpsgd_sigma(epsilon: float, batch_size: float, n: float, epochs: float, delta: float) -> float:
    """The smallest DP-SGD noise multiplier meeting ``epsilon`` (paper's accountant)."""
    return noise_multiplier(epsilon, batch_size / n, epochs * n / batch_size, delta, accountant=ACCOUNTANT)


def _figure1c() -> dict:
    """Figure 1c's published setting: Fashion-MNIST, eps 4, delta 1e-5, DP-SGD's sigma."""
    return {"n": _n_train("fmnist"), "epsilon": _s("setup.epsilon5"), "delta": _s("fig1.delta"),
            "sigma": claims.get("dpis.sec3_3.fig1c.dpsgd_sigma").number, "epochs": FIG1C_EPOCHS}


def figure1_batch_sizes() -> list[dict]:
    """For each candidate b: eps of DP-SGD at Figure 1c's printed sigma over ``FIG1C_EPOCHS``
    epochs, and the sigma that meets eps = 4 there (``prints_as_paper``: at the paper's digits)."""
    f = _figure1c()
    decimals = claims.get("dpis.sec3_3.fig1c.dpsgd_sigma").decimals
    out = []
    for b in FIG1_BATCHES:
        sigma = dpsgd_sigma(f["epsilon"], b, f["n"], f["epochs"], f["delta"])
        eps_printed = dpsgd_epsilon(f["sigma"], b, f["n"], f["epochs"], f["delta"])
        out.append({"batch_size": b, "eps_at_printed_sigma": eps_printed,
                    "sigma_for_eps": sigma, "prints_as_paper": round(sigma, decimals) == f["sigma"]})
    return out


def implied_batch_sizes() -> list[int]:
    """The candidate batch sizes at which DP-SGD's calibrated sigma prints as Figure 1c's."""
    return [row["batch_size"] for row in figure1_batch_sizes() if row["prints_as_paper"]]


def fig1c_accountant(batch_size: int) -> DPISAccountant:
    """DPIS's accountant in Figure 1c's setting at batch size ``batch_size`` (ours: N~ = N,
    T = round(N / b)); sigma_N and sigma_K are 0.02 N (Section 5.3, Table 2)."""
    f = _figure1c()
    n = f["n"]
    return DPISAccountant(batch_size, n, round(n / batch_size), f["epochs"], _s("setup.sigma_n_over_n") * n,
                          _s("table2.fmnist.sigma_k_over_n") * n, orders="integer")


@lru_cache(maxsize=None)
def schedule(ratio: float, a_e: float, batch_size: int = 256) -> tuple[float, ...]:
    """sigma_G of every epoch (Section 4.2) in Figure 1c's setting when every epoch's ratio is
    ``ratio`` (about 10 s: the integer-order RDP is evaluated in Python)."""
    f = _figure1c()
    acct = fig1c_accountant(batch_size)
    return tuple(acct.noise_schedule([ratio] * acct.epochs, f["epsilon"], f["delta"], a_e))


def figure1_schedules(batch_size: int = 256, ratios=SCHEDULE_RATIOS) -> dict:
    """Schedules at the ``a_E`` of Table 2 for MNIST (0.8) and Fashion-MNIST (1), each constant
    ratio of ``ratios``, and DP-SGD's constant sigma at the same eps, b and epochs."""
    f = _figure1c()
    a_es = sorted({_s("table2.mnist.a_e"), _s("table2.fmnist.a_e")})
    return {"dpsgd": dpsgd_sigma(f["epsilon"], batch_size, f["n"], f["epochs"], f["delta"]),
            "dpis": {(a_e, r): np.array(schedule(r, a_e, batch_size)) for a_e in a_es for r in ratios}}


# Section 3.3: sigma_DPIS <= sigma_DP-SGD at the same budget (Lemma 3.1).
SIGMA_GRID_RATIOS = (0.05, 0.1, 0.25, 0.5, 0.75, 1.0)


def sigma_at_ratio(ratio: float, epsilon: float, batch_size: float, n: float, epochs: float, delta: float) -> float:
    """sigma_G meeting ``epsilon`` when every DPIS iteration has ratio ``ratio``: Lemma 3.1 is
    SGM(q / r, sigma_G / r) with q = b/N~, so sigma_G = r * (DP-SGD's sigma at rate q / r)."""
    ratio = validate.probability("ratio", ratio)
    if ratio <= batch_size / n:
        raise ValueError(f"ratio must be in (b/N, 1], got {ratio}")
    return ratio * noise_multiplier(epsilon, batch_size / (n * ratio), epochs * n / batch_size, delta,
                                    accountant=ACCOUNTANT)


@lru_cache(maxsize=1)
def sigma_le_dpsgd() -> dict:
    """sigma_G(r) against sigma_G(1) = DP-SGD's on a grid: Fashion-MNIST N, b in {256, 2048},
    eps the smallest and largest of Section 5.3, 40 epochs (the grid is ours)."""
    n, delta = _n_train("fmnist"), _s("setup.delta")
    rows = []
    for b in (256, TRAMER_BONEH["fashion-mnist"]["batch_size"]):
        for eps in (_s("setup.epsilon1"), _s("setup.epsilon5")):
            base = sigma_at_ratio(1.0, eps, b, n, FIG1C_EPOCHS, delta)
            for r in SIGMA_GRID_RATIOS:
                rows.append({"batch_size": b, "epsilon": eps, "ratio": r, "dpsgd_sigma": base,
                             "dpis_sigma": sigma_at_ratio(r, eps, b, n, FIG1C_EPOCHS, delta)})
    worst = max(row["dpis_sigma"] - row["dpsgd_sigma"] for row in rows)
    return {"rows": rows, "worst": worst}


# Findings: Lemma 3.1's precondition, Eq. 11's noise, line 32.
def precondition_frame() -> list[dict]:
    """With the two-stage sampler, Lemma 3.1 needs ``q_t = k b g^/K~ < 1`` for every record,
    i.e. ``K~ > k b C``: the ratio must exceed ``k b / N`` (Eq. 12 only enforces ``b / N``).
    Per data set at Tramer & Boneh's b and Table 2's k."""
    out = []
    for data, name in (("mnist", "mnist"), ("fashion-mnist", "fmnist"), ("cifar10", "cifar10")):
        n, k, b = _n_train(name), _s(f"table2.{name}.k"), TRAMER_BONEH[data]["batch_size"]
        out.append({"dataset": name, "N": n, "b": b, "k": k, "eq12_floor_ratio": b / n,
                    "lemma31_needs_ratio_above": k * b / n})
    return out


def capped_draws(norms: torch.Tensor, k_tilde: float, batch_size: int, k: float = 1.0) -> int:
    """How many records' first-stage probability ``k b ||g|| / K~`` exceeds 1 (the method's
    :func:`~dpnotes.methods.dpis.inclusion_probabilities`, with the multiplier k)."""
    from dpnotes.methods import dpis as dpis_method

    return dpis_method.inclusion_probabilities(k * norms, k_tilde, batch_size)[1]


def eq11_cost(batch_size: int = 256) -> dict:
    """What charging Eq. (11) as printed costs, in Figure 1c's setting with every ratio 1: the
    per-epoch K~ release adds ``1/p_K``-scaled noise, so its sum has sensitivity C / p_K and we
    charge a b/N~-sampled Gaussian with multiplier sigma_K p_K; Eq. (19) charges sigma_K, valid
    only if the noise were added before the scaling. sigma_G of the first epoch under each charge,
    and DP-SGD's sigma at the same steps without the N~ and K~ releases."""
    f = _figure1c()
    acct = fig1c_accountant(batch_size)
    p_k = batch_size / acct.n_tilde
    eq19 = dataclasses.replace(acct, sigma_k=acct.sigma_k / p_k)  # its sigma_k * p_k is Eq. 19's sigma_K
    zero = np.zeros(len(resolve_orders("integer")))

    def first_sigma(a: DPISAccountant) -> float:
        return a.sigma_for_epoch(1, 1.0, zero, f["epsilon"], f["delta"], 1.0)

    return {"multiplier_ours": acct.sigma_k * p_k, "multiplier_eq19": acct.sigma_k,
            "sigma_g_ours": first_sigma(acct), "sigma_g_eq19": first_sigma(eq19),
            "sigma_dpsgd_same_steps": noise_multiplier(f["epsilon"], p_k, acct.steps_per_epoch * acct.epochs,
                                                       f["delta"], accountant=ACCOUNTANT)}


def line32_vs_eq7(n: int = 1000, batch_size: int = 64, seed: int = 0) -> dict:
    """Expected gradient estimate under Eq. (7) and under Algorithm 1's line 32 on synthetic
    clipped gradients (exact expectations over the Poisson draw, N~ = N, K~ = the norm sum):
    Eq. 7's weight 1/(N~ p), p = ||g||/K~, makes each term's norm K~/N~ and the estimate the mean
    gradient; line 32's weight 1/(N~ q p) (q p = b p, the draw probability) divides both by b."""
    import torch

    from dpnotes.methods import dpis as dpis_method

    g = torch.Generator().manual_seed(seed)
    grads = torch.randn(n, 5, generator=g, dtype=torch.float64)
    grads = grads / grads.norm(dim=1, keepdim=True).clamp(min=1.0)  # clipped at C = 1
    norms = grads.norm(dim=1)
    k_tilde = float(norms.sum())
    draw, capped, _ = dpis_method.inclusion_probabilities(norms, k_tilde, batch_size)
    p = norms / k_tilde
    eq7_terms, line32_terms = grads / (n * p)[:, None], grads / (n * draw)[:, None]
    mean = grads.mean(dim=0)
    eq7 = (draw[:, None] * eq7_terms).sum(0) / batch_size
    line32 = (draw[:, None] * line32_terms).sum(0) / batch_size
    return {"capped": capped, "term_norm_eq7": float(eq7_terms.norm(dim=1).max()), "k_over_n": k_tilde / n,
            "term_norm_line32": float(line32_terms.norm(dim=1).max()),
            "bias_eq7": float((eq7 - mean).norm()), "ratio_line32": float(line32.norm() / mean.norm())}
