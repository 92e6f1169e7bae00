"""DPlis' fast K-draw step (dpnotes.methods.dplis, Alg. 2 / Eq. 6) against the formulation the
stored DPlis records were made with: the same draws bit for bit, the same per-example norms and
clipped sums (float64, rtol 1e-9), for each model family; the ghost rules it relies on (a first
layer's draws merged by their shared input, convolutions' per-example gradients from
channels-last patches) against torch.func on random convolution shapes."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dpnotes import models
from dpnotes.methods import dplis
from dpnotes.methods._rng import method_generator
from dpnotes.train import TrainConfig, build_context
from dpnotes.train.ghost import GhostGrads
from dpnotes.train.grads import FuncGrads, add_examples, grad_norms, per_example_loss, trainable
from dpnotes.train.privatize import clip_factors, clipped_sum

CE = per_example_loss("cross_entropy")
RTOL = 1e-9  # float64: the two formulations differ only in the order of their sums


def _old_draws(params, std, gen, K):
    """The draws as the stored records' code made them (dplis.py before the fast step)."""
    return [{k: v + std * torch.randn(v.shape, generator=gen, dtype=v.dtype, device=v.device)
             for k, v in params.items()} for _ in range(K)]


def _context(name, dtype, backend="ghost", batch=6):
    x, y = models.example_batch(name, batch, generator=torch.Generator().manual_seed(5))
    model = models.create(name).to(dtype)
    cfg = TrainConfig(batch_size=batch, lr=6e-4, normalize="none", accountants=(), grad_backend=backend, seed=7)
    plugin = dplis.DPlis(dplis.Config(K=4, R=10.0, combine="sum"))
    ctx = build_context(model, (x.to(dtype) if x.is_floating_point() else x, y), None, cfg, plugins=(plugin,))
    plugin.on_train_start(ctx)
    return ctx, plugin, ctx.train_inputs[0], ctx.train_targets


@pytest.mark.parametrize("name", ["tf-mnist-cnn", "dplis-mlp-mnist"])
def test_draws_are_bit_identical_to_the_stored_records_code(name):
    """Three steps (the buffers reused), channels-last conv weights included; the generator
    ends in the same state."""
    ctx, plugin, _, _ = _context(name, torch.float32)
    params = ctx.params()
    old_gen = method_generator(7, "dplis")
    assert torch.equal(old_gen.get_state(), plugin.generator.get_state())
    for _ in range(3):
        for want in _old_draws(params, plugin.std, old_gen, 2):
            got = plugin._draw(params)
            for k in want:
                assert torch.equal(got[k], want[k]), k
                assert got[k].stride() == params[k].stride(), k  # the parameter's memory format
    assert torch.equal(old_gen.get_state(), plugin.generator.get_state())


@pytest.mark.parametrize("name", ["dplis-mlp-mnist", "tf-mnist-cnn", "dplis-cifar-cnn"])
def test_step_equals_the_old_formulation(name):
    """The per-example gradient summed over the K draws: its norms and clipped sum (C = 0.5,
    some examples clipped) equal torch.func's at the old code's draws (float64)."""
    ctx, plugin, x, y = _context(name, torch.float64)
    params = ctx.params()
    old = _old_draws(params, plugin.std, method_generator(7, "dplis"), plugin.config.K)
    func = FuncGrads(ctx.model, CE)
    want = None
    for p in old:
        g = func(p, (x,), y)[0]
        want = g if want is None else add_examples(want, g)
    got = plugin.per_example_gradients(ctx, ctx.backend, params, (x,), y)[0]
    norms = grad_norms(want)
    assert torch.allclose(grad_norms(got), norms, rtol=RTOL, atol=0)
    clip = float(norms.median())
    a, b = clipped_sum(got, clip_factors(got, clip)), clipped_sum(want, clip_factors(want, clip))
    for k in b:
        assert torch.allclose(a[k], b[k], rtol=RTOL, atol=RTOL * b[k].abs().max()), k
    ctx.backend.close()


class _Conv(nn.Module):
    def __init__(self, nd, cin, cout, k, stride, pad, dil):
        super().__init__()
        conv = nn.Conv1d if nd == 1 else nn.Conv2d
        self.first = conv(3, cin, 1)  # the draws' calls of ``conv`` read different inputs
        self.conv = conv(cin, cout, k, stride=stride, padding=pad, dilation=dil)
        self.head = nn.LazyLinear(3)

    def forward(self, x):
        return self.head(torch.tanh(self.conv(torch.tanh(self.first(x)))).flatten(1))


@settings(max_examples=25, deadline=None)
@given(nd=st.sampled_from([1, 2]), cin=st.integers(16, 18), cout=st.integers(1, 4), k=st.integers(1, 3),
       stride=st.integers(1, 2), pad=st.sampled_from([0, 1, "same"]), dil=st.integers(1, 2),
       draws=st.integers(2, 3), channels_last=st.booleans(), gram=st.booleans(), seed=st.integers(0, 50))
def test_patch_gradients_of_several_calls_match_func(nd, cin, cout, k, stride, pad, dil, draws,
                                                     channels_last, gram, seed):
    if pad == "same":
        stride = 1
    torch.manual_seed(seed)
    model = _Conv(nd, cin, cout, k, stride, pad, dil)
    x = torch.randn(3, 3, *((7,) if nd == 1 else (7, 6)))
    model(x)
    model, x = model.double(), x.double()
    if channels_last and nd == 2:
        model.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    y = torch.tensor([0, 2, 1])
    base = trainable(model)
    func, ghost = FuncGrads(model, CE), GhostGrads(model, CE)
    dense = factored = None
    for _ in range(draws):
        p = {k_: v + 0.1 * torch.randn_like(v) for k_, v in base.items()}
        d, f = func(p, (x,), y)[0], ghost(p, (x,), y)[0]
        dense = d if dense is None else add_examples(dense, d)
        factored = f if factored is None else add_examples(factored, f)
    rec = factored.records[model.conv]
    assert rec._patches() and len(rec.calls) == draws
    rec.ghost = lambda: gram  # both branches of mixed ghost clipping, whatever the cost says
    assert len(factored.records[model.first].calls) == 1  # the shared input: one merged call
    assert torch.allclose(grad_norms(factored), grad_norms(dense), rtol=RTOL, atol=0)
    mat = factored.materialize()
    a, b = clipped_sum(factored, clip_factors(factored, 0.2)), clipped_sum(dense, clip_factors(dense, 0.2))
    for k_ in b:
        assert torch.allclose(mat[k_], dense[k_], rtol=RTOL, atol=1e-12), k_
        assert torch.allclose(a[k_], b[k_], rtol=RTOL, atol=1e-12), k_
    ghost.close()


def test_patch_buffer_kept_across_calls_gives_the_fresh_buffers_numbers():
    """ghost_conv keeps one patch buffer per convolution across calls and steps (issue #36): a larger
    batch, a smaller one, another dtype, each equal bit for bit to a run with the buffer dropped."""
    from dpnotes.train import ghost_conv

    torch.manual_seed(3)
    conv = nn.Conv2d(16, 4, 3, stride=2, padding=1).to(memory_format=torch.channels_last)
    for b, dtype in ((5, torch.float32), (3, torch.float32), (4, torch.float64), (6, torch.float32)):
        m = conv.to(dtype)
        calls = [(torch.randn(b, 16, 7, 7, dtype=dtype).contiguous(memory_format=torch.channels_last),
                  torch.randn(b, 4, 4, 4, dtype=dtype)) for _ in range(2)]
        kept = ghost_conv.patch_weight_grads(m, calls, chunk=2 * 16 * 9 * 16)  # several chunks
        ghost_conv._PATCHES.pop(m, None)
        fresh = ghost_conv.patch_weight_grads(m, calls, chunk=2 * 16 * 9 * 16)
        assert torch.equal(kept, fresh)
        want = sum(torch.einsum("bdt,bpt->bdp", gy.flatten(2), torch.nn.functional.unfold(
            x.contiguous(), 3, padding=1, stride=2).view(b, 16, 9, -1).transpose(1, 2).reshape(b, 144, -1))
            for x, gy in calls)
        assert torch.allclose(kept, want, rtol=1e-4 if dtype == torch.float32 else 1e-10, atol=1e-5)
