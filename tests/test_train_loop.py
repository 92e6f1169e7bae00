"""The training loop: equivalences, determinism, resumption, privacy tracking, errors."""

import math
import warnings

import pytest
import torch
from interrupt import Interrupted, StopAtEpoch
from scipy import stats
from torch import nn

from dpnotes import models
from dpnotes.accounting import epsilon
from dpnotes.train import TrainConfig, build_context, private_step, train
from dpnotes.train.plugins import Plugin

ALPHA = 1e-3  # false-alarm rate of each statistical test below


def _data(n=120, d=6, k=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g)
    y = (x @ torch.randn(d, k, generator=g)).argmax(1)
    return x, y


def _model(seed=0, d=6, k=3):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(d, 8), nn.Tanh(), nn.Linear(8, k))


def _strip(record):
    """A record without wall times (the only field allowed to differ between equal runs)."""
    out = {k: v for k, v in record.items() if k != "epochs"}
    out["final"] = {k: v for k, v in record["final"].items() if k != "wall_s"}
    out["epochs"] = [{k: v for k, v in e.items() if k != "wall_s"} for e in record["epochs"]]
    return out


@pytest.mark.parametrize("optimizer, extra", [("sgd", {}), ("momentum", {"momentum": 0.9}),
                                              ("adam", {})])
def test_no_clip_no_noise_step_equals_plain_torch_step(optimizer, extra):
    x, y = _data()
    cfg = TrainConfig(batch_size=30, lr=0.1, clip=None, noise_multiplier=0.0, sampling="shuffle",
                      optimizer=optimizer, accountants=(), weight_decay=0.01, **extra)
    ours, ref = _model(), _model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ctx = build_context(ours, (x, y), None, cfg)
    opt = {"sgd": torch.optim.SGD(ref.parameters(), lr=0.1, weight_decay=0.01),
           "momentum": torch.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01),
           "adam": torch.optim.Adam(ref.parameters(), lr=0.1, weight_decay=0.01)}[optimizer]
    for idx in (torch.arange(30), torch.arange(30, 60)):  # two steps: momentum/Adam state too
        private_step(ctx, idx)
        opt.zero_grad()
        nn.functional.cross_entropy(ref(x[idx]), y[idx]).backward()
        opt.step()
    for a, b in zip(ours.parameters(), ref.parameters()):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6)


def test_normalize_none_uses_the_sum():
    x, y = _data()
    cfg = TrainConfig(batch_size=30, lr=0.01, clip=None, noise_multiplier=0.0, normalize="none",
                      accountants=())
    ours, ref = _model(), _model()
    ctx = build_context(ours, (x, y), None, cfg)
    idx = torch.tensor([3, 9, 40, 77])
    private_step(ctx, idx)
    nn.functional.cross_entropy(ref(x[idx]), y[idx], reduction="sum").backward()
    with torch.no_grad():
        for a, b in zip(ours.parameters(), ref.parameters()):
            assert torch.allclose(a, b - 0.01 * b.grad, rtol=1e-5, atol=1e-7)


@pytest.mark.statistical
def test_empty_batch_update_is_noise_with_std_sigma_c_over_qn():
    """An empty Poisson batch gives gradient N(0, (sigma C / qN)^2): chi-square test on the
    variance of all coordinates over 30 steps, two-sided, false alarm 1e-3."""
    x, y = _data(n=100)
    cfg = TrainConfig(batch_size=10, lr=1.0, clip=0.5, noise_multiplier=2.0, accountants=())
    model = nn.Linear(6, 50)
    ctx = build_context(model, (x, y), None, cfg)
    draws = []
    for _ in range(30):
        private_step(ctx, torch.empty(0, dtype=torch.long))
        draws.append(torch.cat([p.grad.flatten() for p in model.parameters()]))
    v = torch.cat(draws).double()
    std = 2.0 * 0.5 / (0.1 * 100)
    stat = (len(v) - 1) * v.var().item() / std ** 2
    assert 2 * min(stats.chi2.cdf(stat, len(v) - 1), stats.chi2.sf(stat, len(v) - 1)) > ALPHA


def _run(cfg, checkpoint=None, model_seed=0, **kw):
    x, y = _data()
    tx, ty = _data(n=60, seed=1)
    return train(_model(model_seed), (x, y), (tx, ty), cfg, progress=False, checkpoint=checkpoint, **kw)


def test_same_seed_same_record_and_privacy_tracked_per_epoch():
    cfg = TrainConfig(epochs=3, batch_size=20, lr=0.5, noise_multiplier=1.1, seed=4)
    a, b = _run(cfg), _run(cfg)
    assert _strip(a) == _strip(b)
    assert _strip(a) != _strip(_run(cfg.replace(seed=5)))
    q, steps = 20 / 120, 6
    for e, rec in enumerate(a["epochs"], start=1):
        assert rec["steps"] == e * steps
        want = {}
        for name in ("rdp", "rdp-classic", "clt"):
            want.update(epsilon(q, 1.1, e * steps, 1e-5, accountant=name))
        assert rec["epsilon"] == want
    eps = [r["epsilon"]["rdp"]["epsilon"] for r in a["epochs"]]
    assert eps == sorted(eps) and eps[0] > 0
    assert a["privacy"]["q"] == q and a["privacy"]["steps"] == 3 * steps
    assert a["final"]["test_acc"] == a["epochs"][-1]["test_acc"]
    assert 0 <= a["final"]["test_acc"] <= 1


def test_no_noise_means_infinite_epsilon():
    rec = _run(TrainConfig(epochs=1, batch_size=20, noise_multiplier=0.0))
    assert all(math.isinf(v["epsilon"]) for v in rec["privacy"]["epsilon"].values())


def test_resume_from_checkpoint_equals_uninterrupted(tmp_path):
    cfg = TrainConfig(epochs=3, batch_size=20, lr=0.3, optimizer="adam", noise_multiplier=0.8,
                      lr_schedule="cosine", accountants=("rdp",), seed=2)
    full = _run(cfg)
    path = tmp_path / "run.pt"
    first = _run(cfg, checkpoint=path)  # writes after every epoch
    assert _strip(first) == _strip(full)
    state = torch.load(path, weights_only=False)
    assert len(state["history"]) == 3
    path2 = tmp_path / "partial.pt"  # a run interrupted during epoch 3

    with pytest.raises(Interrupted):
        _run(cfg, checkpoint=path2, plugins=[StopAtEpoch(2)])
    assert len(torch.load(path2, weights_only=False)["history"]) == 2
    resumed = _run(cfg, checkpoint=path2, model_seed=99, plugins=[Plugin()])  # other init: overwritten
    assert _strip(resumed) == _strip(full)
    with pytest.raises(ValueError, match="another config"):
        _run(cfg.replace(lr=0.1), checkpoint=path2)


class _PoisonAtEpoch(Plugin):
    """Fault injection: sets one weight to NaN at the start of epoch ``epoch`` (0-based)."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_epoch_start(self, ctx, epoch):
        if epoch == self.epoch:
            with torch.no_grad():
                next(ctx.model.parameters())[0, 0] = float("nan")


def test_non_finite_parameters_stop_the_run_and_the_checkpoint_keeps_the_last_finite_epoch(tmp_path):
    cfg = TrainConfig(epochs=4, batch_size=20, lr=0.5, noise_multiplier=1.0, accountants=("rdp",), seed=3)
    path = tmp_path / "run.pt"
    with pytest.raises(FloatingPointError, match=r"epoch 3: parameters 0.weight, 0.bias, 2.weight, 2.bias are "
                                                 r"not finite at step 18 .*checkpoint keeps epoch 2"):
        _run(cfg, checkpoint=path, plugins=[_PoisonAtEpoch(2)])
    history = torch.load(path, weights_only=False)["history"]
    assert [r["epoch"] for r in history] == [1, 2]
    assert _strip(_run(cfg, checkpoint=path, plugins=[Plugin()])) == _strip(_run(cfg))  # from the finite epoch


def test_func_and_opacus_backends_train_alike():
    cfg = TrainConfig(epochs=2, batch_size=20, lr=0.5, noise_multiplier=1.0, clip=0.1,
                      accountants=(), seed=3)
    a, b = _run(cfg), _run(cfg.replace(grad_backend="opacus"))
    for ra, rb in zip(a["epochs"], b["epochs"]):
        assert ra["test_loss"] == pytest.approx(rb["test_loss"], rel=1e-4)
        assert ra["train_loss"] == pytest.approx(rb["train_loss"], rel=1e-4)


def test_shuffle_sampling_warns_and_says_so():
    with pytest.warns(UserWarning, match="shuffle"):
        rec = _run(TrainConfig(epochs=1, batch_size=20, sampling="shuffle", accountants=("rdp",)))
    assert "do NOT describe" in rec["privacy"]["accounting_note"]
    assert "accounting_note" not in _run(TrainConfig(epochs=1, batch_size=20, accountants=()))["privacy"]


def test_non_private_path_and_two_input_model():
    class TwoInputs(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(3, 1), nn.Linear(3, 1)

        def forward(self, u, v):
            return self.a(u) + self.b(v)

    g = torch.Generator().manual_seed(0)
    u, v = torch.randn(200, 3, generator=g), torch.randn(200, 3, generator=g)
    r = (u.sum(1, keepdim=True) - v[:, :1])
    rec = train(TwoInputs(), ((u, v), r), (u, v, r), TrainConfig.non_private(epochs=20, batch_size=20, lr=0.1),
                loss="mse", progress=False)
    assert rec["final"]["test_acc"] is None and rec["final"]["test_loss"] < 1e-3
    assert rec["privacy"] == {**rec["privacy"], "private": False, "epsilon": {}}
    dp = train(TwoInputs(), (u, v, r), None, TrainConfig(epochs=1, batch_size=20, accountants=()),
               loss="mse", progress=False)
    assert dp["final"]["test_loss"] is None and dp["final"]["train_loss"] > 0


def test_invalid_training_inputs():
    x, y = _data()
    cfg = TrainConfig(batch_size=20, accountants=())
    with pytest.raises(ValueError, match="BatchNorm"):
        train(nn.Sequential(nn.Linear(6, 3), nn.BatchNorm1d(3)), (x, y), None, cfg, progress=False)
    with pytest.raises(ValueError, match="different lengths"):
        train(_model(), (x, y[:5]), None, cfg, progress=False)
    with pytest.raises(ValueError, match="tuple"):
        train(_model(), x, None, cfg, progress=False)
    with pytest.raises(ValueError, match="sample rate"):
        train(_model(), (x[:10], y[:10]), None, cfg, progress=False)
    with pytest.raises(ValueError, match="TrainConfig"):
        train(_model(), (x, y), None, {"lr": 1}, progress=False)
    with pytest.raises(ValueError, match="loss"):
        train(_model(), (x, y), None, cfg, loss="hinge", progress=False)


SMOKE_HEAVY = {"resnet18v2", "sadpsgd-cifar-cnn", "papernot-cifar-cnn", "dpis-imdb-bilstm"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=[pytest.mark.slow] if n in SMOKE_HEAVY else [])
                                  for n in models.names(per_example=True)])
def test_every_registered_model_trains_one_epoch(name):
    g = torch.Generator().manual_seed(0)
    x, y = models.example_batch(name, 16, generator=g)
    torch.manual_seed(0)
    kwargs = {"norm": "group"} if name == "resnet18v2" else {}
    model = models.create(name, **kwargs)
    rec = train(model, (x, y), (x, y), TrainConfig(epochs=1, batch_size=8, accountants=("rdp",)),
                progress=False)
    assert rec["final"]["steps"] == 2 and math.isfinite(rec["final"]["test_loss"])
    assert rec["privacy"]["epsilon"]["rdp"]["epsilon"] > 0


@pytest.mark.parametrize("name", models.names(per_example=False))
def test_non_private_baselines_train_one_epoch_without_dp(name):
    x, y = models.example_batch(name, 16, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    rec = train(models.create(name), (x, y), (x, y), TrainConfig.non_private(epochs=1, batch_size=8), progress=False)
    assert rec["final"]["steps"] == 2 and math.isfinite(rec["final"]["test_loss"])
