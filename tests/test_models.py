"""Tests of dpnotes.models: every registered model's shapes, spec, synthetic batches, and
per-sample gradients by torch.func against one-example-at-a-time autograd."""

from __future__ import annotations

import pytest
import torch
from torch.func import functional_call, grad, vmap

from dpnotes import models

# Variants whose per-sample gradients are tested instead of the default (BatchNorm mixes the
# examples of a batch in train mode; the engine trains with GroupNorm).
PER_SAMPLE_KWARGS: dict[str, dict] = {}


def _loss(model, spec, params, buffers, x, y):
    out = functional_call(model, (params, buffers), (x,))
    if spec.target == "class":
        return torch.nn.functional.cross_entropy(out, y)
    return torch.nn.functional.mse_loss(out, y)


@pytest.mark.parametrize("name", models.names())
def test_per_sample_gradients_match_one_at_a_time(name):
    kwargs = PER_SAMPLE_KWARGS.get(name, {})
    torch.manual_seed(0)
    model = models.create(name, **kwargs).double().eval()
    spec = models.spec(name, **kwargs)
    x, y = models.example_batch(name, 5, torch.Generator().manual_seed(1), **kwargs)
    if x.is_floating_point():
        x = x.double()
    if y.is_floating_point():
        y = y.double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def one(p, xi, yi):
        return _loss(model, spec, p, buffers, xi[None], yi[None])

    per_sample = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    for i in range(len(x)):
        model.zero_grad()
        _loss(model, spec, dict(model.named_parameters()), buffers, x[i:i + 1], y[i:i + 1]).backward()
        for k, p in model.named_parameters():
            torch.testing.assert_close(per_sample[k][i], p.grad, rtol=1e-5, atol=1e-10)


@pytest.mark.parametrize("name", models.names())
def test_output_shape_and_spec(name):
    spec = models.spec(name)
    assert spec.name == name
    assert spec.input_kind in ("image", "tokens", "tabular", "pairs")
    assert spec.source
    x, y = models.example_batch(name, 3, torch.Generator().manual_seed(0))
    assert x.shape == (3, *spec.input_shape) and x.dtype == spec.input_dtype
    for col, bound in enumerate(spec.index_bounds):
        column = x[..., col] if spec.input_kind == "pairs" else x
        assert 0 <= column.min() and column.max() < bound
    out = models.create(name).eval()(x)
    assert out.shape == (3, spec.num_outputs)
    if spec.target == "class":
        assert y.shape == (3,) and 0 <= y.min() and y.max() < spec.num_outputs
    else:
        assert y.shape == (3, spec.num_outputs)


def test_example_batch_is_reproducible_and_validated():
    a = models.example_batch("tf-mnist-cnn", 4, torch.Generator().manual_seed(7))
    b = models.example_batch("tf-mnist-cnn", 4, torch.Generator().manual_seed(7))
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    with pytest.raises(ValueError, match="batch_size"):
        models.example_batch("tf-mnist-cnn", 0)


def test_unknown_name_lists_registered_names():
    with pytest.raises(ValueError, match="tf-mnist-cnn"):
        models.create("no-such-model")
    with pytest.raises(ValueError, match="tf-mnist-cnn"):
        models.spec("no-such-model")


def _layer_shapes(model):
    return [tuple(p.shape) for p in model.parameters()]


def test_tutorial_cnn_layers():
    """TF Privacy tutorial / DPlis MNIST CNN: conv 16@8x8, conv 32@4x4, Linear(512, 32), Linear(32, 10)."""
    assert _layer_shapes(models.create("tf-mnist-cnn")) == [
        (16, 1, 8, 8), (16,), (32, 16, 4, 4), (32,), (32, 512), (32,), (10, 32), (10,)]
    assert _layer_shapes(models.create("dplis-cifar-cnn"))[4] == (32, 800)
    acts = {type(m) for m in models.create("sadpsgd-cnn").modules()}
    assert torch.nn.Tanh in acts and torch.nn.ReLU not in acts
    acts = {type(m) for m in models.create("tf-mnist-cnn", activation="tanh").modules()}
    assert torch.nn.Tanh in acts and torch.nn.ReLU not in acts
    with pytest.raises(ValueError, match="activation"):
        models.create("tf-mnist-cnn", activation="sigmoid")


def test_tanh_cifar_cnn_layers():
    shapes = _layer_shapes(models.create("sadpsgd-cifar-cnn"))
    convs = [s for s in shapes if len(s) == 4]
    assert convs == [(32, 3, 3, 3), (32, 32, 3, 3), (64, 32, 3, 3), (64, 64, 3, 3),
                     (128, 64, 3, 3), (128, 128, 3, 3)]
    assert shapes[-4:] == [(128, 2048), (128,), (10, 128), (10,)]
    assert shapes == _layer_shapes(models.create("papernot-cifar-cnn"))
