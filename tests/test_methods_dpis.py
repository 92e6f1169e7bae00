"""DPIS (Wei et al., CCS 2022) as a method module: Eq. 7 steps, Lemma 3.1 events, Sec. 4.2 budget."""

import math

import numpy as np
import pytest
import torch
from interrupt import Interrupted, die_at_epoch, without_wall
from scipy.stats import binom
from torch import nn

from dpnotes import methods
from dpnotes.accounting.dpis import DPISAccountant
from dpnotes.accounting.registry import price
from dpnotes.ledger import DpisIterationDpEvent, GaussianDpEvent, PoissonSampledDpEvent
from dpnotes.methods import dpis
from dpnotes.train import TrainConfig, build_context, private_step, train
from dpnotes.train.grads import grad_norms
from dpnotes.train.loop import _epoch_batches
from dpnotes.train.privatize import clip_factors
from dpnotes.train.sampling import poisson_batch

N, B, C = 64, 8, 0.1
SETTINGS = dict(epsilon=4.0, sigma_n=5.0, sigma_k=20.0, a_e=0.5)


def _data(n=N, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 5, generator=g)
    return x, (x[:, 0] > 0).long()


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))


def _config(**kw):
    return TrainConfig(**{"epochs": 3, "batch_size": B, "clip": C, "lr": 0.5, "accountants": ("dpis",), **kw})


def _plugins(**kw):
    return methods.module("dpis").hooks(dpis.Config(**{**SETTINGS, **kw}))


def _context(plugins, cfg=None):
    ctx = build_context(_model(), _data(), None, cfg or _config(), plugins=plugins)
    for p in plugins:
        p.on_train_start(ctx)
    return ctx


def test_resolve_fills_defaults_and_module_is_registered():
    assert "dpis" in methods.METHODS and dpis.VERSION == 1
    assert dpis.resolve(SETTINGS) == {**SETTINGS, "xi": 1e-6, "on_capped": "refuse", "k": None, "g_l": 0.01}


@pytest.mark.parametrize("bad, name", [({"a_e": 1.5}, "a_e"), ({"a_e": -0.1}, "a_e"), ({"sigma_k": 0.0}, "sigma_k"),
                                       ({"sigma_k": -1.0}, "sigma_k"), ({"sigma_n": 0.0}, "sigma_n"),
                                       ({"epsilon": 0.0}, "epsilon"), ({"xi": 0.0}, "xi"),
                                       ({"on_capped": "ignore"}, "on_capped"), ({"k": 0.5}, "k must be >= 1"),
                                       ({"k": -1.0}, "k"), ({"g_l": 0.0}, "g_l"), ({"g_l": 1.5}, "g_l")])
def test_bad_settings_name_the_parameter(bad, name):
    with pytest.raises(ValueError, match=name):
        dpis.Config(**{**SETTINGS, **bad})


def test_a_budget_below_the_fixed_releases_is_refused():
    with pytest.raises(ValueError, match="epsilon"):
        train(_model(), _data(), None, _config(), plugins=_plugins(epsilon=0.01), progress=False)


def test_engine_settings_that_break_eq7_are_refused():
    with pytest.raises(ValueError, match="normalize"):
        _context(_plugins(), _config(normalize="none"))


def test_run_meets_the_budget_and_its_ledger_is_the_papers_accounting():
    plugins = _plugins()
    out = train(_model(), _data(), None, _config(), plugins=plugins, progress=False)
    eps = out["privacy"]["epsilon"]["dpis"]["epsilon"]
    assert eps <= SETTINGS["epsilon"] + 1e-9
    assert eps > 0.99 * SETTINGS["epsilon"]  # the last epoch's sigma_G spends what is left
    recs = out["epochs"]
    n_tilde, steps = recs[0]["dpis_n_tilde"], N // B
    ratios, sigmas = [r["dpis_ratio"] for r in recs], [r["dpis_sigma_g"] for r in recs]
    acct = DPISAccountant(B, n_tilde, steps, 3, SETTINGS["sigma_n"], SETTINGS["sigma_k"])
    assert eps == pytest.approx(acct.epsilon(ratios, sigmas, 1e-5)[0], rel=1e-9)
    # one N~, then per epoch one K~ (Eq. 11 as the accountant charges it) and T Lemma-3.1 steps
    p_k = B / n_tilde
    expected = [(GaussianDpEvent(SETTINGS["sigma_n"]), 1)]
    for r, s in zip(ratios, sigmas):
        expected += [(PoissonSampledDpEvent(p_k, GaussianDpEvent(SETTINGS["sigma_k"] * p_k)), 1),
                     (DpisIterationDpEvent(batch_size=B, n_tilde=n_tilde, ratio=r, sigma_g=s), steps)]
    assert _ledger(out) == expected
    assert all(r["dpis_capped_draws"] == 0 and r["dpis_min_margin"] > 0 for r in recs)


def _ledger(out):
    from dpnotes.ledger import Ledger
    return list(Ledger.from_json(out["privacy"]["ledger"]).entries)


def test_ratio_one_prices_as_dpsgd():
    event = DpisIterationDpEvent(batch_size=B, n_tilde=70.0, ratio=1.0, sigma_g=1.3)
    dpsgd = PoissonSampledDpEvent(B / 70.0, GaussianDpEvent(1.3))
    assert price(event, 1e-5, "dpis") == price(dpsgd, 1e-5, "dpis")


def _set_state(plugin, ctx, k_tilde, sigma_g, norms=None):
    norms = ctx.per_example_norms().double().clamp(max=C) if norms is None else norms
    plugin.epoch_state = dpis.EpochState(float(ctx.n), k_tilde, C, sigma_g, norms)


def test_ratio_one_step_is_the_dpsgd_step():
    """All clipped norms C and K~ = N~ C (with N~ = N): same batch, same terms, same noise as DP-SGD."""
    plugins = _plugins()
    ctx = _context(plugins, _config(clip=1e-3))  # every per-example norm exceeds C = 1e-3
    norms = ctx.per_example_norms()
    assert bool((norms > 1e-3).all())
    plugins[0].epoch_state = dpis.EpochState(float(N), N * 1e-3, 1e-3, 1.7, norms.double().clamp(max=1e-3))
    ref = build_context(_model(), _data(), None, _config(clip=1e-3, noise_multiplier=1.7))
    for c in (ctx, ref):
        private_step(c, next(_epoch_batches(c)))
    for (k, a), b in zip(ctx.params().items(), ref.params().values()):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-7), k
    assert ctx.ledger.entries[-1][0].as_subsampled_gaussian() == ref.ledger.entries[-1][0]


def test_every_drawn_term_has_norm_k_over_n_and_the_clip_keeps_it():
    plugins = _plugins()
    ctx = _context(plugins)
    plugins[0].on_epoch_start(ctx, 0)
    s = plugins[0].epoch_state
    x, y = _data()
    grads, _, _ = plugins[0].per_example_gradients(ctx, ctx.backend, ctx.params(), (x[:20],), y[:20])
    assert torch.allclose(grad_norms(grads).double(), torch.full((20,), s.k_tilde / s.n_tilde, dtype=torch.float64),
                          rtol=1e-5)
    factors = next(iter(clip_factors(grads, C).values()))
    assert bool((factors > 1 - 1e-4).all())


def test_inclusion_probabilities_are_b_norm_over_k():
    plugins = _plugins()
    ctx = _context(plugins)
    norms = torch.linspace(0.0, C, N, dtype=torch.float64)
    _set_state(plugins[0], ctx, k_tilde=B * C * 1.5, sigma_g=1.0, norms=norms)
    probs, weights = plugins[0].sampling_probabilities(ctx)
    assert weights is None
    assert torch.allclose(probs, B * norms / (B * C * 1.5))
    # the draws follow them: per-record counts over M batches, two-sided binomial test,
    # Bonferroni over the N records: overall false-alarm rate <= 1e-6
    m, gen = 4000, torch.Generator().manual_seed(1)
    counts = torch.zeros(N)
    for _ in range(m):
        counts[poisson_batch(probs, N, gen)] += 1
    p = probs.numpy()
    lo = binom.cdf(counts.numpy(), m, p)
    hi = binom.sf(counts.numpy() - 1, m, p)
    assert float(np.minimum(lo, hi).min()) * 2 * N > 1e-6


def test_a_capped_draw_is_refused_or_charged_as_dpsgd():
    """Not reachable with Eq. 12's floor; forced here by setting K~ below b max||g||."""
    norms = torch.full((N,), C, dtype=torch.float64)
    refusing = _plugins()
    ctx = _context(refusing)
    _set_state(refusing[0], ctx, k_tilde=0.5 * B * C, sigma_g=1.2, norms=norms)
    with pytest.raises(RuntimeError, match="Lemma 3.1"):
        refusing[0].sampling_probabilities(ctx)
    charging = _plugins(on_capped="dpsgd")
    ctx = _context(charging)
    _set_state(charging[0], ctx, k_tilde=0.5 * B * C, sigma_g=1.2, norms=norms)
    probs, _ = charging[0].sampling_probabilities(ctx)
    assert bool((probs == 1).all())
    ratio = 0.5 * B * C / (N * C)
    assert charging[0].step_event(ctx, 1.2) == PoissonSampledDpEvent(1.0, GaussianDpEvent(1.2 / ratio))
    assert charging[0].on_epoch_end(ctx, {})["dpis_capped_draws"] == N


AC = {"adaptive_clipping": True, "initial_clip": C}
C_MAX = 4 * C  # the engine's clip with adaptive clipping: the largest C_e (c_star 4, lambda 1)


@pytest.mark.parametrize("n, settings", [
    (N, {}),  # one stage
    (256, {"k": 3.0, "epsilon": 10.0, "sigma_k": 60.0}),  # the sampler: K~ > k b C needs N >> k b
    (N, AC),  # adaptive clipping: C_e and the latest norms are part of the state
])
def test_resume_is_exact(tmp_path, n, settings):
    data = _data(n)
    cfg = _config(batch_size=B if n == N else 4, clip=C_MAX if settings.get("adaptive_clipping") else C)
    full = train(_model(), data, None, cfg, plugins=_plugins(**settings), progress=False)
    path = tmp_path / "ck.pt"

    first = _plugins(**settings)
    die_at_epoch(first[0], 2)
    with pytest.raises(Interrupted):
        train(_model(), data, None, cfg, plugins=first, progress=False, checkpoint=path)
    resumed = train(_model(), data, None, cfg, plugins=_plugins(**settings), progress=False, checkpoint=path)
    assert without_wall(resumed["epochs"]) == without_wall(full["epochs"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]
    assert math.isclose(resumed["privacy"]["epsilon"]["dpis"]["epsilon"], full["privacy"]["epsilon"]["dpis"]["epsilon"])

def test_adaptive_clipping_settings_name_the_parameter():
    with pytest.raises(ValueError, match="initial_clip"):
        dpis.Config(**SETTINGS, adaptive_clipping=True)
    for extra in ({"initial_clip": C}, {"c_star": 3.0}, {"lam": 0.9}):
        with pytest.raises(ValueError, match="adaptive_clipping=True"):
            dpis.Config(**SETTINGS, **extra)
    for bad, name in (({"initial_clip": 0.0}, "initial_clip"), ({"c_star": 0.0}, "c_star"), ({"lam": -1.0}, "lam")):
        with pytest.raises(ValueError, match=name):
            dpis.Config(**{**SETTINGS, **AC, **bad})
    with pytest.raises(ValueError, match="initial_clip"):
        _context(_plugins(**{**AC, "initial_clip": 2 * C}))  # above TrainConfig.clip
    assert set(dpis.resolve(SETTINGS)) & set(dpis.AC_DEFAULTS) == set()
    assert dpis.resolve({**SETTINGS, **AC})["c_star"] == 4.0


def test_adaptive_clipping_releases_every_norm_and_follows_eq17():
    out = train(_model(), _data(), None, _config(clip=C_MAX), plugins=_plugins(**AC), progress=False)
    recs, ledger = out["epochs"], _ledger(out)
    n_tilde = recs[0]["dpis_n_tilde"]
    # one N~, then per epoch one K~; before epochs 2 and 3 one K~* over all N (no amplification)
    gaussians = [(e, c) for e, c in ledger if isinstance(e, GaussianDpEvent)]
    assert gaussians == [(GaussianDpEvent(SETTINGS["sigma_n"]), 1)] + [(GaussianDpEvent(SETTINGS["sigma_k"]), 1)] * 2
    assert recs[0]["dpis_clip"] == C and recs[0]["dpis_k_star"] is None
    for r in recs[1:]:
        assert r["dpis_clip"] == pytest.approx(min(max(r["dpis_k_star"] / n_tilde, dpis.MIN_CLIP_FRACTION * C), C_MAX))
        assert r["dpis_ratio"] == pytest.approx(r["dpis_k_tilde"] / (n_tilde * r["dpis_clip"]))
    eps = out["privacy"]["epsilon"]["dpis"]["epsilon"]
    ratios, sigmas = [r["dpis_ratio"] for r in recs], [r["dpis_sigma_g"] for r in recs]
    acct = DPISAccountant(B, n_tilde, N // B, 3, SETTINGS["sigma_n"], SETTINGS["sigma_k"], adaptive_clipping=True)
    assert eps <= SETTINGS["epsilon"] + 1e-9  # the schedule charged E K~* releases, the run made E - 1
    assert eps < acct.epsilon(ratios, sigmas, 1e-5)[0]


def test_adaptive_clipping_noise_std_is_sigma_g_times_the_epoch_clip():
    plugins = _plugins(**AC)
    ctx = _context(plugins, _config(clip=C_MAX))
    plugin = plugins[0]
    plugin.on_epoch_start(ctx, 0)
    s = plugin.epoch_state
    assert s.clip == C and plugin.noise_multiplier(ctx) * C_MAX == pytest.approx(s.sigma_g * C)


def test_release_subsampled_sum_records_the_amplified_event_and_checks_rows():
    ctx = build_context(_model(), _data(), None, _config())
    values = torch.full((N,), C, dtype=torch.float64)
    out = ctx.release_subsampled_sum(values, 0.25, C, 3.0)
    assert ctx.ledger.entries == ((PoissonSampledDpEvent(0.25, GaussianDpEvent(3.0)), 1),)
    assert out.shape == ()
    with pytest.raises(ValueError, match="sensitivity"):
        ctx.release_subsampled_sum(values * 2, 0.25, C, 3.0)
    with pytest.raises(ValueError, match="one row per training example"):
        ctx.release_subsampled_sum(values[:3], 0.25, C, 3.0)


# --------------------------------------------------------------------------------------
# The two-stage rejection sampler (Section 3.4, k).

def test_two_stage_net_inclusion_probability_is_b_norm_over_k():
    """q_i = b g^_i / K~, then kept with ||g_i|| / g^_i (norm clipped at min(g^_i, C)): record i
    ends up in the batch with b min(||g_i||, g^_i, C) / K~ (Eq. 15). Bounds held fixed; some
    are below the record's norm (clipped there), one record has norm 0 (never kept)."""
    gen = torch.Generator().manual_seed(3)
    norms = torch.linspace(0.0, 1.3 * C, N, dtype=torch.float64)
    bounds = torch.rand(N, generator=gen, dtype=torch.float64) * 2 * C + 0.2 * C
    k_tilde = B * float(bounds.max()) * 1.2  # no q capped
    q, capped, _ = dpis.inclusion_probabilities(bounds, k_tilde, B)
    assert capped == 0
    want = (B * torch.minimum(norms, bounds.clamp(max=C)) / k_tilde).numpy()
    m, counts = 4000, torch.zeros(N)
    for _ in range(m):
        drawn = poisson_batch(q, N, gen)
        kept, clipped = dpis.accept_draws(norms[drawn], bounds[drawn], C, gen)
        assert bool((clipped <= C).all()) and bool((clipped <= bounds[drawn]).all())
        counts[drawn[kept]] += 1
    assert counts[0] == 0
    lo = binom.cdf(counts.numpy(), m, want)
    hi = binom.sf(counts.numpy() - 1, m, want)
    assert float(np.minimum(lo, hi).min()) * 2 * N > 1e-6


def test_sampler_run_keeps_about_b_of_k_b_draws_and_kept_terms_have_norm_k_over_n():
    plugins = _plugins(k=3.0, a_e=1.0, epsilon=10.0, sigma_k=60.0)  # K~ > k b C needs N >> k b: N 256, b 4
    record = train(_model(), _data(256), None, _config(batch_size=4), plugins=plugins, progress=False)
    for epoch in record["epochs"]:
        assert epoch["dpis_capped_draws"] == 0 and epoch["dpis_kept"] <= epoch["dpis_drawn"]
        assert epoch["dpis_drawn"] > 0
    # one step by hand: rejected terms are 0, kept ones have norm K~/N~ exactly
    plugins = _plugins(k=3.0)
    ctx = _context(plugins)
    plugins[0].on_epoch_start(ctx, 0)
    s, x, y = plugins[0].epoch_state, *_data()
    idx = torch.arange(30)
    plugins[0].transform_batch(ctx, (x[idx],), y[idx], idx)
    plugins[0].bounds = torch.full((N,), 2 * C, dtype=torch.float64)  # norms exceed C: kept with 1/2
    before = plugins[0].bounds.clone()
    grads, _, _ = plugins[0].per_example_gradients(ctx, ctx.backend, ctx.params(), (x[idx],), y[idx])
    got = grad_norms(grads).double()
    kept = got > 0
    assert 0 < int(kept.sum()) < 30
    assert torch.allclose(got[kept], torch.full((int(kept.sum()),), s.k_tilde / s.n_tilde, dtype=torch.float64))
    assert torch.allclose(plugins[0].bounds[idx], torch.full((30,), 3.0 * C, dtype=torch.float64))  # k ||g||
    assert torch.equal(plugins[0].bounds[30:], before[30:])


def test_sampler_capped_bound_is_refused():
    plugins = _plugins(k=5.0)
    ctx = _context(plugins)
    plugins[0].on_epoch_start(ctx, 0)
    plugins[0].epoch_state = dpis.EpochState(float(N), 0.5 * B * float(plugins[0].bounds.max()), C, 1.0,
                                             plugins[0].epoch_state.norms)
    with pytest.raises(RuntimeError, match="Lemma 3.1"):
        plugins[0].sampling_probabilities(ctx)
