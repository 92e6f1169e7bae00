"""Test accuracy at a step cadence (``eval_every``, SA-DPSGD's Table 3) and AUTO-S clipping."""

import math

import pytest
import torch
from toy_runs import run as _run
from toy_runs import strip as _strip

from dpnotes.methods import sadpsgd
from dpnotes.train import TrainConfig
from dpnotes.train.privatize import AUTO_S_GAMMA, clip_factors, clipped_sum

CFG = TrainConfig(epochs=2, batch_size=16, lr=0.5, clip=1.0, noise_multiplier=1.0, delta=1e-3,
                  steps_per_epoch=6, accountants=("rdp",), seed=1)


def test_curve_points_are_the_model_at_that_step():
    """Every 3rd step; with 6 steps an epoch, each epoch's last point is the epoch-end evaluation."""
    record, _ = _run(CFG.replace(eval_every=3))
    for epoch in record["epochs"]:
        assert [p["step"] for p in epoch["curve"]] == [epoch["steps"] - 3, epoch["steps"]]
        assert epoch["curve"][-1]["test_acc"] == epoch["test_acc"]
        assert epoch["curve"][-1]["test_loss"] == epoch["test_loss"]
    # a run stopped at step 3 ends with the model the first point describes
    short, _ = _run(CFG.replace(epochs=1, steps_per_epoch=3))
    assert record["epochs"][0]["curve"][0]["test_loss"] == short["final"]["test_loss"]


def test_eval_every_changes_nothing_else_and_is_left_out_of_the_spec_by_default():
    plain, _ = _run(CFG)
    curved, _ = _run(CFG.replace(eval_every=2))
    for epoch in curved["epochs"]:
        epoch.pop("curve")
    assert _strip(curved) == _strip(plain)
    assert "eval_every" not in CFG.to_dict() and CFG.replace(eval_every=2).to_dict()["eval_every"] == 2
    with pytest.raises(ValueError, match="eval_every"):
        CFG.replace(eval_every=0)


def test_stop_accuracy_stops_right_after_the_first_point_at_the_level():
    full, _ = _run(CFG.replace(eval_every=1))
    points = [p for e in full["epochs"] for p in e["curve"]]
    level = sorted({p["test_acc"] for p in points})[-2]  # reached, not at the first point
    first = next(p for p in points if p["test_acc"] >= level)
    stopped, _ = _run(CFG.replace(eval_every=1, stop_accuracy=level))
    got = [p for e in stopped["epochs"] for p in e["curve"]]
    assert got == points[:points.index(first) + 1]
    assert stopped["final"]["stopped_by"] == "stop_accuracy" and stopped["final"]["steps"] == first["step"]
    assert full["final"]["stopped_by"] == "epochs"


@pytest.mark.parametrize("changes, message", [
    ({"eval_every": 2, "stop_accuracy": 0.0}, r"stop_accuracy must be in \(0, 1\]"),
    ({"eval_every": 2, "stop_accuracy": 1.5}, r"stop_accuracy must be in \(0, 1\]"),
    ({"stop_accuracy": 0.9}, "stop_accuracy needs eval_every"),
])
def test_stop_accuracy_bad_input(changes, message):
    with pytest.raises(ValueError, match=message):
        CFG.replace(**changes)


class CountingSA(sadpsgd.SADPSGD):
    """SA-DPSGD counting the test passes of the whole run (its own and the loop's)."""

    passes = 0

    def on_train_start(self, ctx):
        super().on_train_start(ctx)
        original = ctx.evaluate

        def counted(*args, **kwargs):
            CountingSA.passes += 1
            return original(*args, **kwargs)

        ctx.evaluate = counted


def test_sadpsgd_curve_at_every_step_costs_no_extra_test_pass():
    """J(w_0) once, then one pass per candidate; the curve and the epoch ends reuse them, except
    after a rejected first step (the model is w_0 again, whose accuracy was never computed)."""
    CountingSA.passes = 0
    cfg = CFG.replace(eval_every=1, accountants=("rdp", "sadpsgd-accepted-only"))
    record, _ = _run(cfg, plugins=(CountingSA(sadpsgd.Config(Q0=5.0, mu0=3)),))
    steps = record["final"]["steps"]
    points = [p for e in record["epochs"] for p in e["curve"]]
    assert [p["step"] for p in points] == list(range(1, steps + 1))
    assert CountingSA.passes <= 1 + steps + 1
    accepted = [p["accepted_steps"] for p in points]
    assert accepted == sorted(accepted) and accepted[-1] == record["final"]["accepted_steps"]


def test_auto_s_scales_every_gradient_to_just_below_c():
    g = {"w": torch.tensor([[3.0, 4.0], [0.0, 0.0], [0.3, 0.4]])}  # norms 5, 0, 0.5
    f = clip_factors(g, 2.0, "auto-s")["w"]
    assert torch.allclose(f, 2.0 / (torch.tensor([5.0, 0.0, 0.5]) + AUTO_S_GAMMA))
    norms = (f[:, None] * g["w"]).norm(dim=1)
    assert (norms < 2.0).all() and norms[0] == pytest.approx(2 * 5 / 5.01)
    total = clipped_sum(g, clip_factors(g, 2.0, "auto-s"))["w"]
    assert torch.allclose(total, (f[:, None] * g["w"]).sum(0))


def test_auto_s_ghost_equals_func_and_needs_clip():
    a, _ = _run(CFG.replace(clip_mode="auto-s", grad_backend="func"))
    b, _ = _run(CFG.replace(clip_mode="auto-s", grad_backend="ghost"))
    assert b["final"]["test_loss"] == pytest.approx(a["final"]["test_loss"], rel=1e-5)
    with pytest.raises(ValueError, match="auto-s"):
        TrainConfig(clip=None, noise_multiplier=0.0, clip_mode="auto-s")
    assert math.isfinite(a["final"]["test_loss"])
