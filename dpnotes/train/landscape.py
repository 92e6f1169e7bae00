"""The loss landscape around a trained model: Keskar et al.'s (C_eps; A)-sharpness and
filter-normalised 1-D loss slices (Li et al. 2018), as DPlis Sec. 5.4 uses them (Table 9,
Figure 6). Both read the model's parameters and leave them as they were; neither touches
private data beyond evaluating a loss (an analysis of the released model, not a release).

* :func:`sharpness`: (max_{y in C_eps} L(theta + y) - L(theta)) / (1 + L(theta)) x 100 with
  A = I, C_eps = {y : |y_i| <= eps (|theta_i| + 1)} (Keskar et al. 2017, Metric 2.1; DPlis
  Definition 5), the maximum found by L-BFGS-B from y = 0 (Keskar et al.'s solver; the
  iteration cap is the caller's), never below the loss at the box's corner along the signs of
  the gradient at theta, which is reported too (a lower bound of the maximum with no solver).
* :func:`loss_slice`: loss and accuracy on theta + alpha d for a Gaussian direction d whose
  every filter (output unit) is rescaled to the norm of the same filter of theta (Li et al.
  2018; DPlis Sec. 5.4), biases and other 1-D parameters left at 0.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from dpnotes import validate


def _params(model: nn.Module) -> list[torch.Tensor]:
    return [p for p in model.parameters() if p.requires_grad]


def _loss_and_grad(model: nn.Module, data, batch_size: int, grad: bool) -> tuple[float, np.ndarray | None, float]:
    """Mean cross-entropy over ``data`` (and its gradient in the parameters), and accuracy."""
    x, y = data
    params = _params(model)
    total, correct = 0.0, 0
    grads = [torch.zeros_like(p) for p in params] if grad else None
    for i in range(0, len(y), batch_size):
        xb, yb = x[i:i + batch_size], y[i:i + batch_size]
        with torch.set_grad_enabled(grad):
            out = model(xb)
            loss = nn.functional.cross_entropy(out, yb, reduction="sum")
        if grad:
            for g, d in zip(grads, torch.autograd.grad(loss, params)):
                g += d
        total += float(loss.detach())
        correct += int((out.argmax(1) == yb).sum())
    n = len(y)
    flat = torch.cat([g.reshape(-1) for g in grads]).double().cpu().numpy() / n if grad else None
    return total / n, flat, correct / n


def _flat(model: nn.Module) -> np.ndarray:
    """The parameters as one float64 vector (reshape, not view: weights may be channels-last)."""
    return torch.cat([p.detach().reshape(-1) for p in _params(model)]).double().cpu().numpy()


def _set(model: nn.Module, vector: np.ndarray) -> None:
    """Copy ``vector`` into the parameters in place (keeping their memory format)."""
    i = 0
    with torch.no_grad():
        for p in _params(model):
            p.copy_(torch.as_tensor(vector[i:i + p.numel()], dtype=p.dtype).reshape(p.shape))
            i += p.numel()


def sharpness(model: nn.Module, data, box: float, *, maxiter: int = 10, batch_size: int = 2000) -> dict:
    """Keskar et al.'s (C_eps; I)-sharpness of the mean cross-entropy on ``data`` at the
    model's parameters, eps = ``box``; ``maxiter`` L-BFGS-B iterations from y = 0. Returns the
    sharpness, the loss at theta and at the maximiser, and the evaluations used."""
    from scipy import optimize

    box = validate.positive("box", box)
    maxiter = validate.integer("maxiter", maxiter, minimum=1)
    model.eval()
    theta = _flat(model)
    radius = box * (np.abs(theta) + 1)
    base, grad0, _ = _loss_and_grad(model, data, batch_size, grad=True)
    try:  # a solver-free lower bound of the maximum: the box's corner along the gradient's signs
        _set(model, theta + radius * np.sign(grad0))
        corner, _, _ = _loss_and_grad(model, data, batch_size, grad=False)
    finally:
        _set(model, theta)
    calls = [0]

    def negative(y):
        calls[0] += 1
        _set(model, theta + y)
        loss, g, _ = _loss_and_grad(model, data, batch_size, grad=True)
        return -loss, -g

    try:
        res = optimize.minimize(negative, np.zeros_like(theta), jac=True, method="L-BFGS-B",
                                bounds=optimize.Bounds(-radius, radius), options={"maxiter": maxiter})
    finally:
        _set(model, theta)
    worst = max(-float(res.fun), base, corner)
    return {"sharpness": (worst - base) / (1 + base) * 100, "loss": base, "max_loss": worst,
            "corner_sharpness": (corner - base) / (1 + base) * 100, "corner_loss": corner,
            "evaluations": calls[0], "box": box, "maxiter": maxiter, "examples": len(data[1])}


def filter_normalized_direction(model: nn.Module, generator: torch.Generator) -> list[torch.Tensor]:
    """A Gaussian direction with each filter (first-axis slice of a weight of 2 or more dims)
    rescaled to the norm of the model's filter; 1-D parameters (biases, norms) are 0."""
    out = []
    for p in _params(model):
        d = torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device)
        if p.dim() <= 1:
            out.append(torch.zeros_like(p))
            continue
        dn = d.reshape(len(d), -1).norm(dim=1).clamp(min=1e-12)
        pn = p.detach().reshape(len(p), -1).norm(dim=1)
        out.append(d * (pn / dn).reshape(-1, *([1] * (p.dim() - 1))))
    return out


def loss_slice(model: nn.Module, data, alphas, *, seed: int = 0, batch_size: int = 2000) -> dict:
    """Loss and accuracy on ``data`` at theta + alpha d for each alpha, d filter-normalised
    (``seed`` draws it); the parameters are restored afterwards."""
    alphas = [float(a) for a in alphas]
    if not alphas:
        raise ValueError("alphas must hold at least one value")
    model.eval()
    params = _params(model)
    theta = [p.detach().clone() for p in params]
    direction = filter_normalized_direction(model, torch.Generator().manual_seed(seed))
    losses, accs = [], []
    try:
        for a in alphas:
            with torch.no_grad():
                for p, t, d in zip(params, theta, direction):
                    p.copy_(t + a * d)
            loss, _, acc = _loss_and_grad(model, data, batch_size, grad=False)
            losses.append(loss)
            accs.append(acc)
    finally:
        with torch.no_grad():
            for p, t in zip(params, theta):
                p.copy_(t)
    return {"alpha": alphas, "loss": losses, "accuracy": accs, "seed": seed, "examples": len(data[1])}
