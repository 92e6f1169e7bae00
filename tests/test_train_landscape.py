"""Loss-landscape measures (dpnotes.train.landscape): Keskar et al.'s sharpness and
filter-normalised slices (DPlis Sec. 5.4, Table 9, Figure 6)."""

import itertools

import numpy as np
import pytest
import torch
from torch import nn

from dpnotes.train import landscape


def _data(n=64, d=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    return x, (x[:, 0] - x[:, 1] > 0).long()


def _model(seed=0, bias=True):
    torch.manual_seed(seed)
    return nn.Linear(2, 2, bias=bias)


def _params(model):
    return [p.detach().clone() for p in model.parameters()]


def test_sharpness_is_keskars_ratio_and_restores_the_parameters():
    model, data = _model(), _data()
    before = _params(model)
    out = landscape.sharpness(model, data, 0.05, maxiter=20)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    base = float(nn.functional.cross_entropy(model(data[0]), data[1]))
    assert out["loss"] == pytest.approx(base, rel=1e-6)
    assert out["sharpness"] == pytest.approx((out["max_loss"] - base) / (1 + base) * 100)
    assert out["sharpness"] > 0 and out["evaluations"] >= 1


def test_sharpness_finds_the_box_maximum_of_a_small_model():
    # 4 weights, no bias: the loss is convex in the weights, so its maximum over the box is at a
    # corner; the corners give the exact value to compare with.
    model, data = _model(bias=False), _data()
    box = 0.2
    theta = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    radius = box * (theta.abs() + 1)
    base = float(nn.functional.cross_entropy(model(data[0]), data[1]))
    best = base
    for signs in itertools.product((-1.0, 1.0), repeat=theta.numel()):
        w = (theta + torch.tensor(signs) * radius).reshape(2, 2)
        best = max(best, float(nn.functional.cross_entropy(data[0] @ w.T, data[1])))
    out = landscape.sharpness(model, data, box, maxiter=50)
    assert out["max_loss"] == pytest.approx(best, rel=1e-6)


@pytest.mark.parametrize("bad, name", [({"box": 0.0}, "box"), ({"box": 0.1, "maxiter": 0}, "maxiter")])
def test_sharpness_bad_input_names_the_parameter(bad, name):
    with pytest.raises(ValueError, match=name):
        landscape.sharpness(_model(), _data(), **bad)


def test_filter_normalised_direction_matches_each_filter_norm():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.Flatten(), nn.Linear(12, 2))
    d = landscape.filter_normalized_direction(model, torch.Generator().manual_seed(1))
    for p, q in zip(model.parameters(), d):
        if p.dim() == 1:
            assert torch.equal(q, torch.zeros_like(p))
        else:
            assert torch.allclose(q.reshape(len(q), -1).norm(dim=1), p.reshape(len(p), -1).norm(dim=1))


def test_loss_slice_passes_through_theta_and_restores_it():
    model, data = _model(), _data()
    before = _params(model)
    out = landscape.loss_slice(model, data, np.linspace(-0.8, 0.8, 5), seed=3)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    base = float(nn.functional.cross_entropy(model(data[0]), data[1]))
    assert out["alpha"][2] == 0 and out["loss"][2] == pytest.approx(base, rel=1e-6)
    assert out == landscape.loss_slice(model, data, np.linspace(-0.8, 0.8, 5), seed=3)  # the seed fixes d
    with pytest.raises(ValueError, match="alphas"):
        landscape.loss_slice(model, data, [])


def test_the_gradient_sign_corner_is_a_lower_bound_of_the_maximum():
    model, data = _model(), _data()
    out = landscape.sharpness(model, data, 0.05, maxiter=1)
    theta = torch.nn.utils.parameters_to_vector(model.parameters()).detach()
    loss = nn.functional.cross_entropy(model(data[0]), data[1])
    g = torch.cat([t.reshape(-1) for t in torch.autograd.grad(loss, list(model.parameters()))])
    corner = theta + 0.05 * (theta.abs() + 1) * torch.sign(g)
    w, b = corner[:4].reshape(2, 2), corner[4:]
    want = float(nn.functional.cross_entropy(data[0] @ w.T + b, data[1]))
    assert out["corner_loss"] == pytest.approx(want, rel=1e-5)
    assert out["max_loss"] >= out["corner_loss"] and out["sharpness"] >= out["corner_sharpness"] > 0
