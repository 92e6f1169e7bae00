"""Clipping and noise (Abadi et al. 2016, Algorithm 1)."""

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpnotes.train.privatize import add_noise, clip_factors, clipped_sum

ALPHA = 1e-3  # false-alarm rate of each statistical test below


def _grads(seed, b, scale):
    g = torch.Generator().manual_seed(seed)
    return {"w": scale * torch.randn(b, 3, 4, generator=g, dtype=torch.float64),
            "b": scale * torch.randn(b, 3, generator=g, dtype=torch.float64)}


def _norms(scaled):
    return torch.sqrt(sum(v.reshape(len(v), -1).pow(2).sum(1) for v in scaled.values()))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), b=st.integers(1, 20), clip=st.floats(1e-3, 1e3),
       scale=st.floats(1e-4, 1e4))
def test_flat_clipped_norms_at_most_c_and_sum_matches(seed, b, clip, scale):
    grads = _grads(seed, b, scale)
    f = clip_factors(grads, clip)
    scaled = {k: f[k].view(-1, *[1] * (v.ndim - 1)) * v for k, v in grads.items()}
    norms, raw = _norms(scaled), _norms(grads)
    assert bool((norms <= clip + 1e-6).all())
    small = raw < clip * 0.999  # untouched when already inside the ball
    assert torch.allclose(norms[small], raw[small], rtol=1e-5, atol=1e-6)
    # the 1e-6 in the denominator shrinks clipped norms by < 1e-6 (conservative)
    assert torch.allclose(norms[~small], torch.full_like(norms[~small], clip), rtol=1e-5, atol=1e-6)
    s = clipped_sum(grads, f)
    for k in grads:
        assert torch.allclose(s[k], scaled[k].sum(0), rtol=1e-10, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), clip=st.floats(1e-2, 1e2), scale=st.floats(1e-2, 1e3))
def test_per_layer_clipping_bounds_each_layer_and_total(seed, clip, scale):
    grads = _grads(seed, 7, scale)
    f = clip_factors(grads, clip, mode="per_layer")
    scaled = {k: f[k].view(-1, *[1] * (v.ndim - 1)) * v for k, v in grads.items()}
    for v in scaled.values():
        assert bool((_norms({"x": v}) <= clip / math.sqrt(2) + 1e-6).all())
    assert bool((_norms(scaled) <= clip + 1e-6).all())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), clip=st.floats(1e-2, 1e2),
       w=st.lists(st.floats(1e-3, 1e3), min_size=5, max_size=5))
def test_weights_are_applied_before_clipping(seed, clip, w):
    grads = _grads(seed, 5, 10.0)
    weights = torch.tensor(w, dtype=torch.float64)
    f = clip_factors(grads, clip, weights=weights)
    scaled = {k: f[k].view(-1, *[1] * (v.ndim - 1)) * v for k, v in grads.items()}
    assert bool((_norms(scaled) <= clip + 1e-6).all())  # sensitivity stays C
    expected = torch.minimum(weights * _norms(grads), torch.tensor(clip, dtype=torch.float64))
    assert torch.allclose(_norms(scaled), expected, rtol=1e-5, atol=1e-6)


def test_no_clipping_keeps_gradients():
    grads = _grads(0, 4, 100.0)
    f = clip_factors(grads, None)
    assert all(torch.equal(v, torch.ones(4, dtype=torch.float64)) for v in f.values())
    assert torch.allclose(clipped_sum(grads, f)["w"], grads["w"].sum(0))


def test_zero_gradient_is_safe():
    grads = {"w": torch.zeros(3, 5)}
    f = clip_factors(grads, 1.0)
    assert torch.isfinite(f["w"]).all() and torch.equal(clipped_sum(grads, f)["w"], torch.zeros(5))


def test_invalid_clipping_inputs():
    grads = _grads(0, 4, 1.0)
    with pytest.raises(ValueError, match="clip"):
        clip_factors(grads, 0.0)
    with pytest.raises(ValueError, match="mode"):
        clip_factors(grads, 1.0, mode="global")
    with pytest.raises(ValueError, match="weights"):
        clip_factors(grads, 1.0, weights=torch.ones(3))
    with pytest.raises(ValueError, match="std"):
        add_noise({"w": torch.zeros(2)}, -1.0, torch.Generator())


@pytest.mark.statistical
def test_noise_std_matches_sigma_c():
    """Sample variance of 200,000 noise entries: two-sided chi-square test, false alarm 1e-3."""
    sigma, clip, n = 1.3, 0.7, 200_000
    out = add_noise({"w": torch.zeros(n, dtype=torch.float64)}, sigma * clip,
                    torch.Generator().manual_seed(3))["w"]
    stat = (n - 1) * out.var().item() / (sigma * clip) ** 2
    p = 2 * min(stats.chi2.cdf(stat, n - 1), stats.chi2.sf(stat, n - 1))
    assert p > ALPHA
    assert abs(out.mean().item()) < 4 * sigma * clip / math.sqrt(n)


def test_zero_noise_is_identity_and_noise_is_reproducible():
    t = {"w": torch.arange(4.0)}
    assert torch.equal(add_noise(t, 0.0, torch.Generator())["w"], t["w"])
    a = add_noise(t, 1.0, torch.Generator().manual_seed(9))["w"]
    b = add_noise(t, 1.0, torch.Generator().manual_seed(9))["w"]
    assert torch.equal(a, b) and not torch.equal(a, t["w"])
