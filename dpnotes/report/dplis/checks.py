"""The DPlis chapter's findings: each a pure function of the claims registry (the paper's
numbers and the authors' code facts stored beside them) or of a few real gradients; the
chapter prints what they return and types no number in.

* :func:`table10_sd_convention`: Table 10's SD is the population SD (ddof 0), read off the
  printed SD / range ratios of five runs.
* :func:`single_run_gains`: Table 2's single-run gains against Table 10's five-run ranges.
* :func:`theorem3_bound`: the size of Theorem 3's generalisation bound at the paper's MNIST run.
* :func:`code_vs_paper`: the authors' example script against Table 1 and Sec. 5.1.
* :func:`r_best_choices`: how R_best (Tables 6 and 11) was chosen, as far as the paper says.
* :func:`zero_sharpness`: Table 9 cells printed as exactly 0.
* :func:`combine_effect`: sum against mean of the K gradients (the code against Alg. 2), on real
  per-example gradients of a batch.
"""

from __future__ import annotations

import math

from dpnotes import claims

N_RUNS = int(claims.setting("dplis.table10.n_runs"))
TABLE10_ROWS = {"mnist_mlp": "mnist", "cifar10_cnn": "cifar10"}
TABLE10_ARMS = {"mnist_mlp": ("no", "r10", "r40"), "cifar10_cnn": ("no", "r10", "r30")}
TABLE10_COLUMNS = ("eps5_01", "eps10_00")


def sd_over_range_bounds(n: int, ddof: int) -> tuple[float, float]:
    """The least and largest SD / range of ``n`` values (SD with ``ddof``): the least puts one
    value at each end and the rest at the midpoint, the largest splits them between the ends."""
    least = math.sqrt(2 * 0.25 / (n - ddof))
    a, b = n // 2, n - n // 2
    largest = math.sqrt(a * b / n / (n - ddof))
    return least, largest


def table10_sd_convention() -> dict:
    """Per Table 10 cell: the printed SD / range, as an interval over the printing's rounding
    (SD to 3 decimals, range to 2), and which SD conventions (population, ddof 0; sample, ddof 1)
    can give it with five runs."""
    pop, sample = sd_over_range_bounds(N_RUNS, 0), sd_over_range_bounds(N_RUNS, 1)
    rows = []
    for row, arms in TABLE10_ARMS.items():
        for column in TABLE10_COLUMNS:
            for arm in arms:
                stem = f"dplis.table10.{row}.{column}.{arm}"
                sd, width = claims.get(f"{stem}.std").number, claims.get(f"{stem}.range_width").number
                lo, hi = (sd - 5e-4) / (width + 5e-3), (sd + 5e-4) / (width - 5e-3)
                rows.append({"cell": f"{row}.{column}.{arm}", "sd": sd, "range": width, "sd/range": sd / width,
                             "population fits": lo <= pop[1] and hi >= pop[0],
                             "sample fits": lo <= sample[1] and hi >= sample[0]})
    return {"rows": rows, "population": pop, "sample": sample, "runs": N_RUNS}


def single_run_gains() -> list[dict]:
    """Table 2's printed gains (single runs) of the two rows that Table 10 repeats five times,
    against the five-run range of the No arm and of the smoothed arm: at eps 5.01 and 10.00 the
    range of the same column, at eps 1.99 (not in Table 10) the range at eps 5.01, the nearest."""
    out = []
    for row in TABLE10_ROWS:
        large = TABLE10_ARMS[row][2]
        for column in ("eps1_99", *TABLE10_COLUMNS):
            t10 = column if column in TABLE10_COLUMNS else TABLE10_COLUMNS[0]
            for arm, t10_arm in (("r10", "r10"), ("rbest", large)):
                gain = claims.get(f"dplis.table2.{row}.{column}.gain_{arm}").number
                no = claims.get(f"dplis.table10.{row}.{t10}.no.range_width").number
                smooth = claims.get(f"dplis.table10.{row}.{t10}.{t10_arm}.range_width").number
                out.append({"cell": f"{row}.{column}.{arm}", "Table 2 gain": gain, "range read at": t10,
                            "No: 5-run range": no, "smoothed: 5-run range": smooth,
                            "gain within No's range": abs(gain) <= no})
    return out


def theorem3_bound(beta: float = 1.0, lipschitz: float = 1.0) -> dict:
    """Theorem 3 (Eq. 8) at the paper's MNIST run to eps = 10.00: the prefactor 2 eta C L T / n,
    log10 of (1 + eta beta)^(T - 1) at ``beta``, and the largest smoothness beta at which the
    bound is at most 1 (``lipschitz``: the loss's Lipschitz constant L, ours)."""
    from dpnotes.experiments import dplis

    s = dplis.setting("mnist")
    epochs = dplis.column_epoch("mnist", "eps10_00")
    steps = epochs * s.steps_per_epoch
    eta, clip = claims.setting("dplis.table1.mnist.lr"), claims.setting("dplis.table1.mnist.clip")
    prefactor = 2 * eta * clip * lipschitz * steps / s.n
    beta_max = math.log(1 / prefactor) / ((steps - 1) * eta) if prefactor < 1 else 0.0
    return {"epochs": epochs, "steps": steps, "n": s.n, "eta": eta, "clip": clip, "lipschitz": lipschitz,
            "prefactor": prefactor, "beta": beta, "log10_growth": (steps - 1) * math.log10(1 + eta * beta),
            "beta_max_for_bound_1": beta_max}


def code_vs_paper() -> dict:
    """The authors' CIFAR-10 example run against Table 1's eta/L and Sec. 5.1's radii."""
    paper_lr = claims.setting("dplis.table1.cifar10.lr_over_batch")
    code_lr = claims.setting("dplis.code.cifar10_lr_over_batch")
    return {"paper_lr": paper_lr, "code_lr": code_lr, "ratio": paper_lr / code_lr,
            "code_r": claims.setting("dplis.code.cifar10_r"), "r_default": claims.setting("dplis.setup.r_default"),
            "r_best": claims.setting("dplis.table6.cifar10_cnn.eps1_99.r_best")}


def r_best_choices() -> list[dict]:
    """R_best per row and column (Tables 6 and 11): the values the paper picked."""
    from dpnotes.experiments import dplis

    rows = []
    for row in ("mnist_mlp", "mnist_cnn", "cifar10_mlp", "cifar10_cnn", "cifar10_cnn_tanh"):
        values = {c: dplis.radius(row, "rbest", c) for c in dplis.TABLE2_COLUMNS}
        rows.append({"row": row, **values})
    return rows


def zero_sharpness() -> list[str]:
    """Table 9 cells printed as exactly zero (no loss increase anywhere in the box)."""
    return [c.id for c in claims.load("dplis") if c.id.startswith("dplis.table9.") and c.number == 0]


def combine_effect(model: str = "dplis-mlp-mnist", dataset: str = "mnist", radii=(10.0, 40.0), batch: int = 256,
                   epochs=(0, 1), seed: int = 0) -> list[dict]:
    """Sum against mean of the K = 10 gradients (the code against Alg. 2) on ``batch`` training
    examples, at the initial model and after each of ``epochs`` epochs of DP-SGD at Table 1's
    settings (the No arm's run): per radius, the median per-example norm of each combination
    and the share of examples the engine clips at C. Clipping makes them equal on examples
    whose mean-gradient norm is at least C (clip(K g) = clip(g)); below C the sum weighs an
    example up to K times more. The smoothing draws and the batch are the same for both."""
    import torch

    from dpnotes import models
    from dpnotes.experiments import dplis
    from dpnotes.methods import dplis as method
    from dpnotes.train import TrainConfig, build_context, train
    from dpnotes.train.grads import grad_norms

    data, _ = dplis.load(dataset, {"train": None, "test": 1})
    x, y = data[0][:batch], data[1][:batch]
    cfg = TrainConfig(batch_size=int(claims.setting(f"dplis.table1.{dataset}.batch_size")),
                      lr=claims.setting(f"dplis.table1.{dataset}.lr_over_batch"), optimizer="sgd",
                      clip=claims.setting(f"dplis.table1.{dataset}.clip"),
                      noise_multiplier=claims.setting(f"dplis.table1.{dataset}.sigma"), normalize="none",
                      sampling="poisson", lr_schedule="constant", steps_per_epoch="floor", seed=seed,
                      grad_backend="ghost")
    torch.manual_seed(seed)
    net = models.create(model)
    out, done = [], 0
    for epoch in sorted(epochs):
        if epoch > done:
            train(net, data, None, cfg.replace(epochs=epoch - done), progress=False)
            done = epoch
        for r in radii:
            row = {"epochs of DP-SGD": epoch, "R": r}
            for combine in ("mean", "sum"):
                k = int(claims.setting("dplis.setup.k_image"))
                plugin = method.hooks(method.Config(K=k, R=r, combine=combine))[0]
                probe = cfg.replace(grad_backend="func", batch_size=min(len(y), cfg.batch_size))
                ctx = build_context(net, (x, y), None, probe, plugins=(plugin,))
                plugin.on_train_start(ctx)  # the same seed: the same K draws for both combinations
                norms = grad_norms(plugin.per_example_gradients(ctx, ctx.backend, ctx.params(), (x,), y)[0]).double()
                row[f"{combine}: median norm"] = float(norms.median())
                row[f"{combine}: share clipped"] = float((norms > cfg.clip).double().mean())
            out.append(row)
    return out
