"""TrainConfig validation, learning-rate schedules and optimizer construction."""

import math

import pytest
import torch

from dpnotes.train import TrainConfig
from dpnotes.train.optim import learning_rate, make_optimizer


@pytest.mark.parametrize("field, value", [
    ("clip", 0.0), ("clip", -1.0), ("epochs", 0), ("batch_size", 0), ("lr", 0.0),
    ("optimizer", "rmsprop"), ("lr_schedule", "linear"), ("clip_mode", "per_sample"),
    ("noise_multiplier", -0.1), ("sampling", "uniform"), ("normalize", "batch"),
    ("grad_backend", "jax"), ("steps_per_epoch", "ceil"), ("steps_per_epoch", 0),
    ("delta", 0.0), ("delta", 1.0), ("accountants", ("moments",)), ("seed", -1),
    ("device", "tpu"), ("eval_batch_size", 0), ("lr_gamma", 1.5), ("momentum", 1.0),
])
def test_invalid_field_names_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        TrainConfig(**{field: value})


@pytest.mark.parametrize("kwargs, match", [
    ({"clip": None, "noise_multiplier": 1.0}, "needs clip"),
    ({"clip": None, "noise_multiplier": 0.0, "clip_mode": "per_layer"}, "needs clip"),
    ({"optimizer": "sgd", "momentum": 0.9}, "momentum"),
    ({"optimizer": "momentum"}, "momentum"),
    ({"private": False}, "private=False"),
])
def test_nonsensical_combinations(kwargs, match):
    with pytest.raises(ValueError, match=match):
        TrainConfig(**kwargs)


def test_non_private_constructor():
    cfg = TrainConfig.non_private(batch_size=32)
    assert not cfg.private and cfg.clip is None and cfg.noise_multiplier == 0
    assert cfg.sampling == "shuffle" and cfg.accountants == ()


def test_sample_rate_and_steps():
    cfg = TrainConfig(batch_size=256)
    assert cfg.sample_rate(60000) == 256 / 60000
    assert cfg.steps(60000) == 234  # N // B (DPlis)
    assert cfg.replace(steps_per_epoch="round").steps(60000) == 234  # round(234.375)
    assert cfg.replace(steps_per_epoch="round").steps(1000) == 4  # round(3.906)
    assert cfg.replace(steps_per_epoch=7).steps(60000) == 7
    with pytest.raises(ValueError, match="sample rate"):
        cfg.sample_rate(100)  # q > 1
    with pytest.raises(ValueError, match="examples"):
        cfg.replace(sampling="shuffle", steps_per_epoch=5).steps(1000)


def test_cuda_without_cuda_is_an_error():
    if torch.cuda.is_available():
        pytest.skip("CUDA present")
    with pytest.raises(ValueError, match="CUDA"):
        TrainConfig(device="cuda").torch_device()
    assert TrainConfig(device="auto").torch_device().type == "cpu"


def test_learning_rate_schedules():
    c = TrainConfig(lr=1.0, epochs=4)
    assert [learning_rate(c, s, 10) for s in (0, 17, 39)] == [1.0, 1.0, 1.0]
    cos = c.replace(lr_schedule="cosine")
    assert learning_rate(cos, 0, 10) == 1.0
    assert learning_rate(cos, 20, 10) == pytest.approx(0.5)
    assert learning_rate(cos, 40, 10) == pytest.approx(0.0, abs=1e-12)
    step = c.replace(lr_schedule="step", lr_step_epochs=2, lr_gamma=0.5)
    assert [learning_rate(step, s, 10) for s in (0, 19, 20, 39)] == [1.0, 1.0, 0.5, 0.5]
    with pytest.raises(ValueError, match="step"):
        learning_rate(c, -1, 10)
    with pytest.raises(ValueError, match="steps_per_epoch"):
        learning_rate(c, 0, 0)


def test_make_optimizer_kinds():
    p = [torch.nn.Parameter(torch.zeros(2))]
    assert isinstance(make_optimizer(p, TrainConfig(optimizer="adam")), torch.optim.Adam)
    sgd = make_optimizer(p, TrainConfig(optimizer="momentum", momentum=0.9, weight_decay=0.1))
    assert isinstance(sgd, torch.optim.SGD)
    assert sgd.param_groups[0]["momentum"] == 0.9 and sgd.param_groups[0]["weight_decay"] == 0.1


def test_to_dict_is_json_ready():
    import json
    d = TrainConfig().to_dict()
    assert json.loads(json.dumps(d)) == d
    assert math.isclose(d["delta"], 1e-5)


def test_warmup_linear_schedule_rises_then_falls_to_zero():
    from dpnotes.train.optim import learning_rate

    c = TrainConfig.non_private(epochs=4, batch_size=8, lr=0.2, lr_schedule="warmup_linear", lr_warmup=0.25)
    lrs = [learning_rate(c, s, 10) for s in range(41)]
    assert lrs[0] == 0 and lrs[10] == pytest.approx(0.2) and lrs[5] == pytest.approx(0.1)
    assert lrs[40] == 0 and lrs[25] == pytest.approx(0.1)
    assert max(lrs) == pytest.approx(0.2)


def test_fields_added_later_leave_stored_spec_ids_alone():
    assert "lr_warmup" not in TrainConfig().to_dict()
    assert TrainConfig(lr_warmup=0.3).to_dict()["lr_warmup"] == 0.3
    with pytest.raises(ValueError, match="lr_warmup"):
        TrainConfig(lr_warmup=1.0)
