"""Plug-in points: each hook is called at its place with the right data."""

import pytest
import torch
from torch import nn
from toy_plugins import AcceptIfLossDecreases, ImportanceSampling, Mixup, NoiseSchedule, ParameterSmoothing

from dpnotes.accounting.registry import price
from dpnotes.ledger import CandidateStepDpEvent, GaussianDpEvent, Ledger, PoissonSampledDpEvent, event_to_json
from dpnotes.train import Plugin, TrainConfig, build_context, train
from dpnotes.train.grads import trainable
from dpnotes.train.plugins import check_plugins


def _data(n=80, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return x, (x[:, 0] > 0).long()


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


class Recorder(Plugin):
    name = "recorder"

    def __init__(self):
        self.calls = []

    def on_train_start(self, ctx):
        self.calls.append("train_start")

    def on_epoch_start(self, ctx, epoch):
        self.calls.append(f"epoch_start{epoch}")

    def transform_batch(self, ctx, inputs, targets, indices):
        assert torch.equal(targets, ctx.train_targets[indices])
        self.calls.append("transform")
        return inputs, targets

    def on_step_end(self, ctx, info):
        self.calls.append(f"step{info['step']}")

    def on_epoch_end(self, ctx, record):
        self.calls.append("epoch_end")
        return {"recorded": len(self.calls)}


def test_hooks_are_called_in_order_and_extend_the_record():
    rec = Recorder()
    out = train(_model(), _data(), None, TrainConfig(epochs=2, batch_size=40, accountants=()),
                plugins=[rec], progress=False)
    assert rec.calls == ["train_start", "epoch_start0", "transform", "step0", "transform", "step1",
                         "epoch_end", "epoch_start1", "transform", "step2", "transform", "step3",
                         "epoch_end"]
    assert out["epochs"][0]["recorded"] == 7


def test_parameter_smoothing_sums_k_draws_before_clipping():
    x, y = _data()
    cfg = TrainConfig(batch_size=8, lr=0.5, clip=2.0, noise_multiplier=1.5, accountants=(),
                      grad_backend="func")  # dense per-example gradients, compared entry by entry
    ctx = build_context(_model(), (x, y), None, cfg)
    params = ctx.params()
    seen = []

    def spy(p, inputs, targets):
        seen.append(p)
        return ctx.backend(p, inputs, targets)

    plain = ctx.backend(params, (x[:8],), y[:8])[0]
    zero = ParameterSmoothing(draws=3, radius=0.0)
    summed = zero.per_example_gradients(ctx, spy, params, (x[:8],), y[:8])[0]
    for k in plain:
        assert torch.allclose(summed[k], 3 * plain[k], rtol=1e-5)
    seen.clear()
    ParameterSmoothing(draws=4, radius=10.0).per_example_gradients(ctx, spy, params, (x[:8],), y[:8])
    assert len(seen) == 4
    shifts = torch.cat([torch.cat([(s[k] - params[k]).flatten() for k in params]) for s in seen])
    assert shifts.std().item() == pytest.approx(10.0 * 0.5 * 1.5 * 2.0, rel=0.25)  # 136 draws
    assert not torch.equal(seen[0]["0.weight"], seen[1]["0.weight"])  # a new draw per k


def test_parameter_smoothing_inside_training_is_deterministic():
    cfg = TrainConfig(epochs=1, batch_size=16, lr=0.1, accountants=("rdp",))
    a = train(_model(), _data(), None, cfg, plugins=[ParameterSmoothing(2, 1.0)], progress=False)
    b = train(_model(), _data(), None, cfg, plugins=[ParameterSmoothing(2, 1.0)], progress=False)
    assert a["final"]["train_loss"] == b["final"]["train_loss"]
    assert "rdp" in a["privacy"]["epsilon"]  # sensitivity unchanged: engine accountant kept


def test_importance_sampling_hooks():
    x, y = _data()
    model = _model()
    plugin = ImportanceSampling()
    out = train(model, (x, y), None, TrainConfig(epochs=2, batch_size=16, accountants=()),
                plugins=[plugin], progress=False)
    assert plugin.probs.shape == (80,) and plugin.weights.shape == (80,)
    assert plugin.probs.mean().item() == pytest.approx(16 / 80, rel=0.2)
    assert out["privacy"]["ledger"] == [{"count": 10, "event": {"type": "UnsupportedDpEvent"}}]
    # An accountant refuses the toy's steps instead of skipping them.
    with pytest.raises(ValueError, match="UnsupportedDpEvent"):
        train(_model(), (x, y), None, TrainConfig(epochs=1, batch_size=16, accountants=("rdp",)),
              plugins=[ImportanceSampling()], progress=False)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_importance_sampling_on_cuda_draws_from_cpu_probabilities():
    x, y = _data()
    plugin = ImportanceSampling()
    cfg = TrainConfig(epochs=2, batch_size=16, accountants=(), device="cuda")
    train(_model(), (x, y), (x, y), cfg, plugins=[plugin], progress=False)
    assert plugin.probs.device.type == "cpu"  # no device->host copy per step
    assert plugin.weights.device.type == "cuda"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_mixup_on_cuda():
    x, y = _data()
    cfg = TrainConfig(epochs=1, batch_size=16, accountants=(), device="cuda")
    out = train(_model(), (x, y), (x, y), cfg, plugins=[Mixup(0.4, 2)], progress=False)
    assert out["final"]["train_loss"] > 0


def test_per_example_norms_match_direct_computation():
    x, y = _data()
    ctx = build_context(_model(), (x, y), None, TrainConfig(batch_size=16, eval_batch_size=7, accountants=(),
                                                            grad_backend="func"))  # dense gradients
    norms = ctx.per_example_norms()
    g = ctx.backend(ctx.params(), (x,), y)[0]
    direct = torch.sqrt(sum(v.reshape(80, -1).pow(2).sum(1) for v in g.values()))
    assert norms.shape == (80,) and torch.allclose(norms, direct, rtol=1e-5)


def test_noise_schedule_sets_each_steps_multiplier():
    sched = NoiseSchedule(lambda step: 1.0 + step)
    out = train(_model(), _data(), None, TrainConfig(epochs=2, batch_size=16, accountants=("rdp",)),
                plugins=[sched], progress=False)
    assert sched.used == [1.0 + s for s in range(10)]
    ledger = Ledger()
    for s in range(10):
        ledger.append(PoissonSampledDpEvent(16 / 80, GaussianDpEvent(1.0 + s)))
    assert Ledger.from_json(out["privacy"]["ledger"]) == ledger
    assert out["privacy"]["epsilon"] == price(ledger, 1e-5, ["rdp"])


def test_rejected_steps_restore_parameters_and_count():
    class RejectAll(Plugin):
        name = "reject"

        def accept_step(self, ctx, old_params, new_params, evaluate):
            assert evaluate(old_params) == ctx.evaluate(old_params)["loss"]
            assert not all(torch.equal(old_params[k], new_params[k]) for k in old_params)
            return False

    model = _model()
    before = {k: v.clone() for k, v in trainable(model).items()}
    out = train(model, _data(), _data(seed=1), TrainConfig(epochs=2, batch_size=16, optimizer="adam",
                                                           accountants=("rdp",)),
                plugins=[RejectAll()], progress=False)
    assert all(torch.equal(before[k], v) for k, v in trainable(model).items())
    assert out["final"]["accepted_steps"] == 0 and out["epochs"][0]["accepted_steps"] == 0
    assert out["privacy"]["steps"] == 10  # privacy charged for every generated step
    step = PoissonSampledDpEvent(16 / 80, GaussianDpEvent(1.0))
    assert out["privacy"]["ledger"] == [
        {"count": 10, "event": event_to_json(CandidateStepDpEvent(step, False))}]
    greedy = train(_model(), _data(), _data(seed=1), TrainConfig(epochs=2, batch_size=16,
                                                                 accountants=()),
                   plugins=[AcceptIfLossDecreases()], progress=False)
    accepted = [e["accepted_steps"] for e in greedy["epochs"]]
    assert 0 < sum(accepted) <= 10 and greedy["final"]["accepted_steps"] == sum(accepted)


def test_mixup_on_the_non_private_path():
    x, y = _data()
    cfg = TrainConfig.non_private(epochs=1, batch_size=16)
    ctx = build_context(_model(), (x, y), None, cfg, plugins=[Mixup(0.4, 2)])
    xs, t = ctx.plugins[0].transform_batch(ctx, (x[:16],), y[:16], torch.arange(16))
    assert t.shape == (16, 2) and torch.allclose(t.sum(1), torch.ones(16))
    out = train(_model(), (x, y), (x, y), cfg, plugins=[Mixup(0.4, 2)], progress=False)
    assert out["final"]["train_loss"] > 0 and out["privacy"]["epsilon"] == {}


def test_invalid_plugin_combinations():
    class Sampler(Plugin):
        name = "sampler"

        def sampling_probabilities(self, ctx):
            return None

    class SamplerWithAccountant(Sampler):
        def step_event(self, ctx, noise_multiplier):
            return None

    dp, nondp = TrainConfig(), TrainConfig.non_private()
    with pytest.raises(ValueError, match="step_event"):
        check_plugins([Sampler()], dp)
    with pytest.raises(ValueError, match="poisson"):
        check_plugins([SamplerWithAccountant()], dp.replace(sampling="shuffle"))
    check_plugins([SamplerWithAccountant()], dp)  # fine
    with pytest.raises(ValueError, match="several"):
        check_plugins([ParameterSmoothing(1, 1.0), ParameterSmoothing(2, 1.0)], dp)
    with pytest.raises(ValueError, match="private=False"):
        check_plugins([ParameterSmoothing(1, 1.0)], nondp)
    with pytest.raises(ValueError, match="Plugin"):
        check_plugins([object()], dp)
    with pytest.raises(ValueError, match="draws"):
        ParameterSmoothing(0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        Mixup(0.0, 10)
    check_plugins([Mixup(1.0, 10), AcceptIfLossDecreases()], nondp)  # fine
    with pytest.raises(ValueError, match="step_event"):
        train(_model(), _data(), None, dp, plugins=[Sampler()], progress=False)
