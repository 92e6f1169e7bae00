"""Per-example gradients: torch.func and opacus backends against one-at-a-time autograd."""

import pytest
import torch
from torch import nn

from dpnotes import models
from dpnotes.train.grads import FuncGrads, OpacusGrads, grad_norms, make_backend, per_example_loss, trainable


class TwoTower(nn.Module):
    """A tiny NeuMF-like model with two index inputs."""

    def __init__(self):
        super().__init__()
        self.u, self.i = nn.Embedding(7, 4), nn.Embedding(5, 4)
        self.out = nn.Linear(8, 1)

    def forward(self, users, items):
        return self.out(torch.cat([self.u(users), self.i(items)], 1))


def _tiny():
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 4))


def _reference(model, inputs, targets, loss_fn):
    """Per-example gradients one example at a time with plain autograd."""
    names = [k for k, p in model.named_parameters() if p.requires_grad]
    rows = []
    for i in range(len(targets)):
        model.zero_grad()
        out = model(*(x[i:i + 1] for x in inputs))
        loss_fn(out, targets[i:i + 1]).sum().backward()
        rows.append({k: p.grad.detach().clone() for k, p in model.named_parameters() if k in names})
    return {k: torch.stack([r[k] for r in rows]) for k in names}


def _check(model, inputs, targets, backend, loss="cross_entropy"):
    model = model.double()
    inputs = tuple(x.double() if x.is_floating_point() else x for x in inputs)
    if targets.is_floating_point():
        targets = targets.double()
    loss_fn = per_example_loss(loss)
    ref = _reference(model, inputs, targets, loss_fn)
    be = make_backend(backend, model, loss_fn)
    try:
        grads, losses, outputs = be(trainable(model), inputs, targets)
    finally:
        be.close()
    assert set(grads) == set(ref)
    for k in ref:
        scale = ref[k].abs().max().clamp(min=1e-30)
        assert torch.allclose(grads[k], ref[k], rtol=1e-5, atol=1e-5 * scale), k
    with torch.no_grad():
        out = model(*inputs)
    assert torch.allclose(outputs, out, rtol=1e-6, atol=1e-9)
    assert torch.allclose(losses, loss_fn(out, targets), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", ["func", "opacus"])
def test_tiny_models_match_one_at_a_time(backend):
    g = torch.Generator().manual_seed(0)
    _check(_tiny(), (torch.randn(5, 1, 6, 6, generator=g),), torch.randint(0, 4, (5,), generator=g), backend)
    users, items = torch.randint(0, 7, (6,), generator=g), torch.randint(0, 5, (6,), generator=g)
    _check(TwoTower(), (users, items), torch.rand(6, 1, generator=g), backend, loss="mse")


HEAVY = {"resnet18v2"}  # seconds per example in float64 on 2 cores
CASES = [pytest.param(name, backend, marks=[pytest.mark.slow] if name in HEAVY or (
    backend == "opacus" and name != "tf-mnist-cnn") else [])
    for name in models.names(per_example=True) for backend in ("func", "opacus")]


@pytest.mark.parametrize("name, backend", CASES)
def test_registered_models_match_one_at_a_time(name, backend):
    g = torch.Generator().manual_seed(1)
    torch.manual_seed(1)
    x, y = models.example_batch(name, 3, generator=g)
    model = models.create(name)
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.eval()  # BatchNorm mixes a batch's examples in train mode (private training rejects it)
    if backend == "opacus":
        from opacus.validators import ModuleValidator
        if ModuleValidator.validate(model, strict=False):
            pytest.skip(f"opacus does not support {name}")
    _check(model, (x,), y, backend)


def test_func_backend_evaluates_at_other_parameters():
    model = nn.Linear(3, 2).double()
    x, y = torch.randn(4, 3, dtype=torch.float64), torch.tensor([0, 1, 1, 0])
    be = FuncGrads(model, per_example_loss("cross_entropy"))
    other = {k: v + 1.0 for k, v in trainable(model).items()}
    shifted = nn.Linear(3, 2).double()
    with torch.no_grad():
        shifted.weight.copy_(other["weight"]), shifted.bias.copy_(other["bias"])
    ref = _reference(shifted, (x,), y, per_example_loss("cross_entropy"))
    assert torch.allclose(be(other, (x,), y)[0]["weight"], ref["weight"])
    ob = OpacusGrads(model, per_example_loss("cross_entropy"))
    before = model.weight.detach().clone()
    assert torch.allclose(ob(other, (x,), y)[0]["weight"], ref["weight"])
    assert torch.equal(model.weight, before)  # restored after the call
    ob.close()


def test_losses_and_norms():
    out = torch.tensor([[2.0, 0.0], [0.0, 1.0]])
    ce = per_example_loss("cross_entropy")(out, torch.tensor([0, 0]))
    assert torch.allclose(ce, torch.nn.functional.cross_entropy(out, torch.tensor([0, 0]), reduction="none"))
    soft = per_example_loss("cross_entropy")(out, torch.tensor([[1.0, 0.0], [1.0, 0.0]]))
    assert torch.allclose(soft, ce)
    mse = per_example_loss("mse")(torch.tensor([[1.0], [3.0]]), torch.tensor([0.0, 1.0]))
    assert torch.equal(mse, torch.tensor([1.0, 4.0]))
    fn = lambda o, t: o.sum(1)  # noqa: E731
    assert per_example_loss(fn) is fn
    n = grad_norms({"a": torch.tensor([[3.0], [0.0]]), "b": torch.tensor([[4.0, 0.0], [0.0, 2.0]])})
    assert torch.equal(n, torch.tensor([5.0, 2.0]))


def test_invalid_backend_and_loss():
    with pytest.raises(ValueError, match="loss"):
        per_example_loss("hinge")
    with pytest.raises(ValueError, match="grad_backend"):
        make_backend("jax", nn.Linear(1, 1), per_example_loss("mse"))
