"""`train()` checks what it is given before anything trains: one line naming the data, the
problem and the fix (dpnotes.train.inputs); the check itself changes nothing."""

import re
import warnings

import pytest
import torch
from torch import nn

from dpnotes import models
from dpnotes.train import TrainConfig, train

CFG = TrainConfig(epochs=1, batch_size=8, accountants=(), seed=0)


def _mnist_like(n=16, seed=0):
    """What load_mnist returns: uint8 [N, 28, 28] pixels, int64 labels."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, 28, 28), generator=g, dtype=torch.uint8), torch.randint(0, 10, (n,), generator=g)


def _ready(x, y):
    return x.float().div(255).unsqueeze(1), y


def _train(data, test=None, model=None, **kw):
    model = model or models.create("tf-mnist-cnn")
    return train(model, data, test, CFG, progress=False, **kw)


def _one_line(excinfo) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("case, data, pattern", [
    ("uint8 pixels", _mnist_like(),
     r"train_data inputs are uint8 \[16, 28, 28\], raw pixels.*x\.float\(\)\.div\(255\)\.unsqueeze\(1\)"
     r".*model_ready=True"),
    ("no channel axis", (_mnist_like()[0].float() / 255, _mnist_like()[1]),
     r"train_data: the model cannot take inputs float32 \[16, 28, 28\] "
     r".*images need a channel axis: x\.unsqueeze\(1\)"),
    ("float64 inputs", (_ready(*_mnist_like())[0].double(), _mnist_like()[1]),
     r"train_data inputs are float64 .* parameters are torch\.float32: convert with x\.to\(torch\.float32\)"),
    ("uint8 labels", (_ready(*_mnist_like())[0], _mnist_like()[1].to(torch.uint8)),
     r"train_data targets are uint8 \[16\]: class indices must be int64; convert with y\.long\(\)"),
    ("label 10 of 10 classes", (_ready(*_mnist_like())[0], torch.full((16,), 10)),
     r"train_data targets have class 10 but the model has 10 outputs \(classes 0\.\.9\)"),
    ("negative label", (_ready(*_mnist_like())[0], torch.full((16,), -1)),
     r"train_data targets have a negative class index \(-1\)"),
    ("NaN pixel", (_ready(*_mnist_like())[0].index_put_((torch.tensor([5]),), torch.tensor(float("nan"))),
                   _mnist_like()[1]),
     r"train_data inputs have NaN or inf values \(first at example 5\)"),
    ("channels last", (_ready(*_mnist_like())[0].permute(0, 2, 3, 1).contiguous()[:, :, :, :1].expand(16, 28, 28, 1),
                       _mnist_like()[1]),
     r"train_data: the model cannot take inputs float32 \[16, 28, 28, 1\] "
     r".*channels come first.*x\.permute\(0, 3, 1, 2\)"),
], ids=lambda v: v if isinstance(v, str) and not v.startswith(("train", "r")) else "")
def test_bad_training_data_is_one_line_naming_the_fix(case, data, pattern):
    with pytest.raises(ValueError) as excinfo:
        _train(data)
    assert re.search(pattern, _one_line(excinfo)), (case, str(excinfo.value))


def test_test_data_is_checked_too():
    with pytest.raises(ValueError, match=r"^test_data inputs are uint8"):
        _train(_ready(*_mnist_like()), _mnist_like(seed=1))


def test_unscaled_float_pixels_are_warned_about():
    x, y = _mnist_like()
    pattern = r"train_data inputs hold integers in \[0, 25\d\], raw pixels\? .*x\.div\(255\)"
    with pytest.warns(UserWarning, match=pattern):
        _train((x.float().unsqueeze(1), y))


def test_model_ready_data_trains_without_a_warning_and_the_check_changes_nothing():
    """The same run with and without the check (its probe runs the model in eval mode on two
    examples, random state restored): identical records and parameters."""
    from dpnotes.train import inputs

    data = _ready(*_mnist_like())
    out = {}
    for checked in (True, False):
        torch.manual_seed(0)
        model = models.create("tf-mnist-cnn")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            if checked:
                record = _train(data, data, model=model)
            else:
                saved, inputs.check = inputs.check, lambda *a, **k: None
                try:
                    record = _train(data, data, model=model)
                finally:
                    inputs.check = saved
        out[checked] = (record["final"], [p.detach().clone() for p in model.parameters()])
    assert out[True][0]["train_loss"] == out[False][0]["train_loss"]
    assert out[True][0]["test_acc"] == out[False][0]["test_acc"]
    assert all(torch.equal(a, b) for a, b in zip(out[True][1], out[False][1]))


def test_token_ids_and_several_inputs_pass():
    """Integer inputs (token ids, user and item ids) are what embedding models take."""
    x, y = models.example_batch("gdp-imdb", 16, generator=torch.Generator().manual_seed(0))
    assert not x.is_floating_point()
    train(models.create("gdp-imdb"), (x, y), None, CFG, progress=False)
    with pytest.raises(ValueError, match=r"train_data inputs are uint8 \[16, \d+\]: the model takes floats"):
        train(models.create("gdp-imdb"), (x.to(torch.uint8), y), None, CFG, progress=False)


def test_a_model_that_refuses_the_shape_is_named():
    model = nn.Sequential(nn.Flatten(), nn.Linear(10, 2))
    x, y = torch.randn(16, 12), torch.randint(0, 2, (16,))
    with pytest.raises(ValueError) as excinfo:
        train(model, (x, y), None, CFG, progress=False)
    assert _one_line(excinfo).startswith("train_data: the model cannot take inputs float32 [16, 12] (")


def test_a_device_that_is_not_there_names_the_fix():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(ValueError, match=r"CUDA is not available: use device='cpu', or 'auto'"):
        train(models.create("tf-mnist-cnn"), _ready(*_mnist_like()), None, CFG.replace(device="cuda"), progress=False)
