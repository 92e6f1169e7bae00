"""DPlis Figure 2: DP-SGD on the two-basin toy loss of Eq. 1, without and with smoothing.

Eq. 1 mixes a flat basin around ``u`` and a sharp one around ``v``:

    L(theta) = F_u(theta) E(theta, u) / (E(theta, u) + E(theta, v)) + F_v(theta) E(theta, v) / (...)
    F_u = S(|theta - u| / 5 - 5 / |theta - u|),   F_v = S(2 |theta - v| / 5 - 5 / (2 |theta - v|)),
    E(theta, x) = exp(-|theta - x| / 2),  S the sigmoid.

The paper prints no settings for the figure (centres, start, lr, sigma, C, steps, K, smoothing
scale). Ours: u = (-4, 0), v = (4, 0); starts uniform on [-8, 8] x [-4, 4]; each step clips the
gradient of L (the toy has no data: one "example", so no privacy is accounted) to C = 0.1,
adds N(0, (sigma C)^2 I) with sigma = 1 and moves by a constant lr (Alg. 2's); 500 steps;
smoothing combines the gradients at K = 10 points theta + N(0, sigma_smooth^2 I) (Eq. 6 with
sigma_smooth = R lr sigma C) by their mean (Eq. 6) or sum (the authors' code). Since the
settings are ours, the chapter shows a grid (:data:`LRS`, :data:`SMOOTHING`, :data:`COMBINES`;
one seed of 1,000 runs per cell) as a finding, not a verdict: which part of the claim holds
depends on settings the paper does not give. "Near the flat minimum" is read as nearer u than
v; the grid also gives the distance to u.
"""

from __future__ import annotations

from functools import lru_cache

U, V = (-4.0, 0.0), (4.0, 0.0)
BOX = (8.0, 4.0)
CLIP, SIGMA, STEPS, K, RUNS = 0.1, 1.0, 500, 10, 1000
LRS = (2.0, 5.0)
SMOOTHING = (0.0, 2.0, 3.0)  # sigma_smooth; 0 = DP-SGD without smoothing
COMBINES = ("mean", "sum")  # the K gradients: Eq. 6 averages them, the authors' code sums them
ALWAYS = 0.99  # "always converges near the flat minimum": at least this share of the runs
SEED = 0


def loss(theta, u=U, v=V):
    """Eq. 1 at ``theta`` (..., 2) -> (...)."""
    import torch

    du = (theta - torch.tensor(u)).norm(dim=-1).clamp(min=1e-6)
    dv = (theta - torch.tensor(v)).norm(dim=-1).clamp(min=1e-6)
    f_u = torch.sigmoid(du / 5 - 5 / du)
    f_v = torch.sigmoid(2 * dv / 5 - 5 / (2 * dv))
    e_u, e_v = torch.exp(-du / 2), torch.exp(-dv / 2)
    return (f_u * e_u + f_v * e_v) / (e_u + e_v)


def grad(theta, u=U, v=V):
    """The gradient of Eq. 1 at ``theta`` (..., 2), in closed form. With w = E_u / (E_u + E_v)
    = S((|theta - v| - |theta - u|) / 2), L = w F_u + (1 - w) F_v and
    grad L = w grad F_u + (1 - w) grad F_v + (F_u - F_v) w (1 - w) (grad d_v - grad d_u) / 2."""
    import torch

    ru, rv = theta - torch.tensor(u, dtype=theta.dtype), theta - torch.tensor(v, dtype=theta.dtype)
    du = ru.norm(dim=-1, keepdim=True).clamp(min=1e-6)
    dv = rv.norm(dim=-1, keepdim=True).clamp(min=1e-6)
    gu, gv = ru / du, rv / dv  # gradients of the distances
    f_u = torch.sigmoid(du / 5 - 5 / du)
    f_v = torch.sigmoid(2 * dv / 5 - 5 / (2 * dv))
    w = torch.sigmoid((dv - du) / 2)
    grad_fu = f_u * (1 - f_u) * (1 / 5 + 5 / du ** 2) * gu
    grad_fv = f_v * (1 - f_v) * (2 / 5 + 5 / (2 * dv ** 2)) * gv
    return w * grad_fu + (1 - w) * grad_fv + (f_u - f_v) * w * (1 - w) * (gv - gu) / 2


def dpsgd_many(settings, runs: int = RUNS, steps: int = STEPS, seed: int = SEED):
    """Final parameters (cells, runs, 2): for each ``(lr, sigma_smooth, combine)`` of
    ``settings``, ``runs`` independent noisy clipped gradient descents on Eq. 1; with
    ``sigma_smooth > 0`` the gradient combines K draws at ``theta + N(0, sigma_smooth^2 I)``
    by their mean (Eq. 6) or sum (the authors' code) before clipping. Every cell uses the same
    starts, DP noise and (scaled) smoothing draws: paired comparisons."""
    import torch

    from dpnotes import validate

    for lr, smooth, combine in settings:
        validate.positive("lr", lr)
        validate.nonnegative("sigma_smooth", smooth)
        if smooth:
            validate.choice("combine", combine, COMBINES)
    noise = torch.Generator().manual_seed(seed)
    draws = torch.Generator().manual_seed(seed + 1)
    start = torch.Generator().manual_seed(seed + 2)
    lr = torch.tensor([c[0] for c in settings], dtype=torch.float64).view(-1, 1, 1)
    smooth = torch.tensor([c[1] for c in settings], dtype=torch.float64).view(-1, 1, 1, 1)
    scale = torch.tensor([K if c[2] == "sum" and c[1] else 1 for c in settings], dtype=torch.float64).view(-1, 1, 1)
    theta = (torch.rand(runs, 2, generator=start, dtype=torch.float64) * 2 - 1) * torch.tensor(BOX)
    theta = theta.expand(len(settings), runs, 2)
    for _ in range(steps):
        points = theta[:, :, None, :] + smooth * torch.randn(runs, K, 2, generator=draws, dtype=torch.float64)
        g = grad(points).mean(2) * scale
        g = g / (g.norm(dim=-1, keepdim=True) / CLIP).clamp(min=1.0)
        theta = theta - lr * (g + SIGMA * CLIP * torch.randn(runs, 2, generator=noise, dtype=torch.float64))
    return theta


def dpsgd(lr: float, sigma_smooth: float, combine: str = "mean", runs: int = RUNS, steps: int = STEPS,
          seed: int = SEED):
    """Final parameters (runs, 2) of one cell of :func:`dpsgd_many`."""
    return dpsgd_many([(lr, sigma_smooth, combine)], runs, steps, seed)[0]


def summary(theta) -> dict:
    """Share of runs ending nearer the flat centre u than the sharp v, their 90th-percentile
    distance to u, and quantiles of their (unsmoothed) loss; ``theta`` (..., 2)."""
    import torch

    theta = theta.reshape(-1, 2)
    final = loss(theta)
    q = torch.quantile(final, torch.tensor([0.5, 0.9, 0.99], dtype=torch.float64)).tolist()
    to_u = (theta - torch.tensor(U)).norm(dim=1)
    near_u = to_u < (theta - torch.tensor(V)).norm(dim=1)
    return {"flat share": near_u.double().mean().item(),
            "distance to u, q90 (flat runs)": torch.quantile(to_u[near_u], 0.9).item() if near_u.any() else None,
            "loss median": q[0], "loss q90": q[1], "loss q99": q[2], "loss max": final.max().item()}


@lru_cache(maxsize=1)
def grid() -> tuple[dict, ...]:
    """:func:`summary` of every cell (lr, sigma_smooth, combine) (about 15 s on one CPU thread)."""
    settings = [(lr, 0.0, "-") for lr in LRS] + [(lr, s, c) for lr in LRS for s in SMOOTHING if s for c in COMBINES]
    return tuple({"lr": lr, "sigma_smooth": s, "combine": c, **summary(theta)}
                 for (lr, s, c), theta in zip(settings, dpsgd_many(settings)))


def cells() -> list[dict]:
    """Per smoothed cell of the grid: does it always reach the flat basin, and is its loss tail
    (99th percentile) shorter than that of DP-SGD at the same lr?"""
    rows = grid()
    base = {r["lr"]: r for r in rows if r["sigma_smooth"] == 0}
    return [{**r, "always flat": r["flat share"] >= ALWAYS, "shorter tail": r["loss q99"] < base[r["lr"]]["loss q99"],
             "DP-SGD flat share": base[r["lr"]]["flat share"], "DP-SGD loss q99": base[r["lr"]]["loss q99"],
             "DP-SGD distance to u, q90": base[r["lr"]]["distance to u, q90 (flat runs)"]}
            for r in rows if r["sigma_smooth"] > 0]

