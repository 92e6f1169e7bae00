"""DPlis (dpnotes.methods.dplis): Alg. 2 / Eq. 6 of Wang et al. (PETS 2021)."""

import pytest
import torch
from interrupt import Interrupted, StopAtEpoch
from scipy import stats
from torch import nn
from toy_runs import data as _data
from toy_runs import model as _model
from toy_runs import run as _run
from toy_runs import strip as _strip

from dpnotes.methods import dplis
from dpnotes.train import Plugin, TrainConfig, build_context, private_step

ALPHA = 1e-3  # false-alarm rate of each statistical test below
CFG = TrainConfig(epochs=2, batch_size=16, lr=0.05, normalize="none", noise_multiplier=1.1,
                  clip=1.0, accountants=("rdp",), seed=3)



def _same_params(a, b):
    return all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))


def _plugin(**kw):
    return dplis.hooks(dplis.Config(**kw))[0]


@pytest.mark.parametrize("K", [1, 3])
def test_radius_zero_is_exactly_the_dpsgd_step(K):
    base, base_model = _run(CFG)
    zero, zero_model = _run(CFG, [_plugin(K=K, R=0.0)])
    assert _same_params(base_model, zero_model)
    assert _strip(zero) == _strip(base)
    _, smoothed_model = _run(CFG, [_plugin(K=K, R=20.0)])
    assert not _same_params(base_model, smoothed_model)


@pytest.mark.parametrize("R", [0.0, 3.0])
def test_sum_is_k_times_the_mean_before_clipping(R):
    x, y = _data()
    ctx = build_context(_model(), (x, y), None, CFG.replace(clip=1e6, grad_backend="func"))  # dense gradients
    K, seen = 4, []

    def spy(params, inputs, targets):
        out = ctx.backend(params, inputs, targets)
        seen.append(out[0])
        return out

    mean, total = _plugin(K=K, R=R, combine="mean"), _plugin(K=K, R=R, combine="sum")
    for p in (mean, total):
        p.on_train_start(ctx)  # same seed: the same K draws
    g_mean = mean.per_example_gradients(ctx, spy, ctx.params(), (x[:8],), y[:8])[0]
    by_hand = {k: sum(g[k] for g in seen) / K for k in g_mean} if R else seen[0]
    g_sum = total.per_example_gradients(ctx, ctx.backend, ctx.params(), (x[:8],), y[:8])[0]
    for k in g_mean:
        assert torch.allclose(g_mean[k], by_hand[k], rtol=1e-5, atol=1e-7)
        assert torch.allclose(g_sum[k], K * g_mean[k], rtol=1e-5, atol=1e-7)
    assert len(seen) == (K if R else 1)


def test_draws_are_combined_before_the_engine_clips():
    """All per-example gradients clipped (tiny C): sum and mean point the same way and are
    clipped to the same vector, so the steps agree; clipping each draw would differ by K."""
    x, y = _data()
    after = []
    for combine in ("sum", "mean"):
        ctx = build_context(_model(), (x, y), None, CFG.replace(clip=1e-4, noise_multiplier=2.0),
                            plugins=[_plugin(K=3, R=50.0, combine=combine)])
        ctx.plugins[0].on_train_start(ctx)
        private_step(ctx, torch.arange(16))
        after.append(ctx.params())
    start = _model().state_dict()
    for k in after[0]:
        assert torch.allclose(after[0][k], after[1][k], rtol=1e-4, atol=1e-9)
        assert not torch.equal(after[0][k], start[k])


def test_smoothing_std_is_r_lr_sigma_c():
    cfg = CFG.replace(lr=0.01, noise_multiplier=1.3, clip=2.0, seed=0)
    R, K = 7.0, 20
    std = R * 0.01 * 1.3 * 2.0
    torch.manual_seed(0)
    x, y = torch.randn(32, 40), torch.randint(0, 25, (32,))
    ctx = build_context(nn.Linear(40, 25), (x, y), None, cfg)
    params, shifts = ctx.params(), []

    def spy(p, inputs, targets):
        assert len(targets) == 8  # one draw shared by the whole batch
        shifts.append(torch.cat([(p[k] - params[k]).flatten() for k in params]))
        return ctx.backend(p, inputs, targets)

    plugin = _plugin(K=K, R=R)
    plugin.on_train_start(ctx)
    assert plugin.std == pytest.approx(std)
    plugin.per_example_gradients(ctx, spy, params, (x[:8],), y[:8])
    assert len(shifts) == K and not torch.equal(shifts[0], shifts[1])
    v = torch.cat(shifts).double()  # K * 1025 entries, i.i.d. N(0, std^2) if right
    n = len(v)
    stat = n * v.pow(2).mean().item() / std ** 2  # chi^2 with n degrees of freedom
    assert 2 * min(stats.chi2.cdf(stat, n), stats.chi2.sf(stat, n)) > ALPHA
    assert 2 * stats.norm.sf(abs(v.mean().item()) * n ** 0.5 / std) > ALPHA
    assert abs(v.std().item() / std - 1) < 0.05  # a plain check of the scale, next to the test


class Recorder(Plugin):
    name = "recorder"

    def __init__(self):
        self.indices, self.ctx = [], None

    def on_train_start(self, ctx):
        self.ctx = ctx

    def transform_batch(self, ctx, inputs, targets, indices):
        self.indices.append(indices.tolist())
        return inputs, targets


def test_smoothed_run_and_its_baseline_are_paired():
    runs = []
    for R in (0.0, 20.0):
        rec = Recorder()
        out, model = _run(CFG, [_plugin(K=2, R=R), rec])
        runs.append((out, model, rec))
    (base, base_model, a), (smooth, smooth_model, b) = runs
    assert a.indices == b.indices and len(a.indices) == 10
    for gen in ("sample_gen", "noise_gen", "aux_gen", "release_gen"):
        assert torch.equal(getattr(a.ctx, gen).get_state(), getattr(b.ctx, gen).get_state())
    # no ledger event of its own: the same DP-SGD events, the same epsilon
    assert smooth["privacy"]["ledger"] == base["privacy"]["ledger"]
    assert smooth["privacy"]["epsilon"] == base["privacy"]["epsilon"]
    assert not _same_params(base_model, smooth_model)


def test_resume_from_checkpoint_equals_uninterrupted(tmp_path):
    cfg = CFG.replace(epochs=3)
    full, full_model = _run(cfg, [_plugin(K=2, R=20.0)])

    path = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        _run(cfg, [_plugin(K=2, R=20.0), StopAtEpoch(2)], checkpoint=path)
    saved = torch.load(path, weights_only=False)
    assert len(saved["history"]) == 2 and "generator" in saved["plugins"][0]
    assert saved["plugins"][0]["generator"].numel() == torch.Generator().get_state().numel()  # a CPU run's stream
    resumed, resumed_model = _run(cfg, [_plugin(K=2, R=20.0), Plugin()], checkpoint=path,
                                  model_seed=9)
    assert _strip(resumed) == _strip(full)
    assert _same_params(resumed_model, full_model)


@pytest.mark.parametrize("settings, name", [
    ({"K": 0}, "K"), ({"K": 2.0}, "K"), ({"R": -0.1}, "R"), ({"R": float("nan")}, "R"),
    ({"combine": "median"}, "combine")])
def test_bad_settings_are_refused(settings, name):
    with pytest.raises(ValueError, match=name):
        dplis.Config(**settings)
    with pytest.raises(ValueError, match=name):
        dplis.resolve(settings)


@pytest.mark.parametrize("change, name", [
    ({"optimizer": "momentum", "momentum": 0.9}, "optimizer"), ({"optimizer": "adam"}, "optimizer"),
    ({"normalize": "expected"}, "normalize"), ({"lr_schedule": "cosine"}, "lr_schedule")])
def test_a_step_other_than_sgd_on_the_noisy_sum_is_refused(change, name):
    with pytest.raises(ValueError, match=name):
        _run(CFG.replace(**change), [_plugin(K=2, R=1.0)])


def test_resolve_fills_defaults():
    assert dplis.resolve({}) == {"K": 10, "R": 10.0, "combine": "mean"}
    assert dplis.resolve({"R": 40, "combine": "sum"}) == {"K": 10, "R": 40.0, "combine": "sum"}
