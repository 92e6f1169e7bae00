"""grad_backend="ghost": per-example norms and clipped sums from layer factors equal torch.func's
(every registered model, DPlis' K-draw sums, DPIS' rescaled gradients, random layer shapes)."""

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

from dpnotes import models
from dpnotes.methods import dplis
from dpnotes.train import TrainConfig, build_context, private_step
from dpnotes.train.ghost import FactoredGrads, GhostGrads
from dpnotes.train.ghost_conv import as_2d, patch_gram
from dpnotes.train.ghost_layers import OuterRecord
from dpnotes.train.grads import (
    FuncGrads,
    add_examples,
    grad_norms,
    param_norms,
    per_example_loss,
    scale_examples,
    trainable,
)
from dpnotes.train.privatize import clip_factors, clipped_sum

RTOL = 1e-5
CE = per_example_loss("cross_entropy")


def _close(a, b, what, floor=0.0):
    """Equal to RTOL relative to the largest entry of ``b`` (or to ``floor``: a parameter whose
    gradient is 0 up to rounding is compared at the scale of the whole gradient)."""
    scale = b.abs().max().clamp(min=max(floor, 1e-30))
    assert torch.allclose(a, b, rtol=RTOL, atol=RTOL * scale), what


def _compare(model, inputs, targets, loss_fn=CE, params=None):
    """Ghost against torch.func: norms (whole and per parameter), materialised gradients, and
    clipped sums (flat and per-layer clipping, with and without per-example weights)."""
    params = trainable(model) if params is None else params
    dense, losses, outputs = FuncGrads(model, loss_fn)(params, inputs, targets)
    ghost = GhostGrads(model, loss_fn)
    try:
        factored, g_losses, g_outputs = ghost(params, inputs, targets)
    finally:
        ghost.close()
    assert isinstance(factored, FactoredGrads) and list(factored.like) == list(dense)
    _close(g_losses, losses, "losses")
    _close(g_outputs, outputs, "outputs")
    _close(grad_norms(factored), grad_norms(dense), "norms")
    floor = float(grad_norms(dense).max())
    for k, n in param_norms(dense).items():
        _close(param_norms(factored)[k], n, f"norm of {k}", floor)
    for k, g in factored.materialize().items():
        _close(g, dense[k], f"gradient of {k}", floor)
    b = len(targets)
    weights = torch.linspace(0.2, 3.0, b, dtype=torch.float64)
    clip = 0.5 * float(grad_norms(dense).median())
    for mode in ("flat", "per_layer"):
        for w in (None, weights):
            want = clipped_sum(dense, clip_factors(dense, clip, mode, w))
            got = clipped_sum(factored, clip_factors(factored, clip, mode, w))
            assert list(got) == list(want)
            for k in want:
                _close(got[k], want[k], f"clipped sum of {k} ({mode}, weights={w is not None})", clip)
    return dense, factored


def _double(model, x):
    model = model.double()
    return model, x.double() if x.is_floating_point() else x


CASES = [pytest.param(n, marks=[pytest.mark.slow] if n == "resnet18v2" else []) for n in models.names(per_example=True)]


@pytest.mark.parametrize("name", CASES)
def test_registered_models_match_func(name):
    torch.manual_seed(2)
    x, y = models.example_batch(name, 4, generator=torch.Generator().manual_seed(2))
    model, x = _double(models.create(name), x)
    if any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        model.eval()  # eval-mode BatchNorm is an affine map per channel
    _compare(model, (x,), y)


# The variants (non-default model_kwargs) that the papers' paper profiles train with DP; the
# registered defaults are compared above. test_paper_variants_cover_every_private_paper_config
# keeps this list complete.
PAPER_VARIANTS = [
    ("tf-mnist-cnn", {"activation": "relu"}), ("tf-mnist-cnn", {"activation": "tanh"}),
    ("dplis-cifar-cnn", {"activation": "tanh"}), ("sadpsgd-cifar-cnn", {"activation": "relu"}),
    ("gdp-imdb", {"seq_len": 256, "vocab_size": 10000}), ("neumf", {"num_users": 943, "num_items": 1682}),
    ("scatternet-cnn", {"input_norm": "group", "num_groups": 27}),
]


@pytest.mark.parametrize("name, kwargs", PAPER_VARIANTS,
                         ids=[f"{n}-" + "-".join(f"{k}={v}" for k, v in kw.items()) for n, kw in PAPER_VARIANTS])
def test_paper_variants_match_func(name, kwargs):
    torch.manual_seed(3)
    x, y = models.example_batch(name, 4, generator=torch.Generator().manual_seed(3), **kwargs)
    model, x = _double(models.create(name, **kwargs), x)
    _compare(model, (x,), y)


@pytest.mark.parametrize("paper", ["dplis", "dpis", "gdp", "sadpsgd"])  # LabelDP trains no model with DP-SGD
def test_paper_variants_cover_every_private_paper_config(paper):
    """Every (model, kwargs) a paper-profile config trains with DP is a default or in PAPER_VARIANTS."""
    import json

    from dpnotes import experiments

    def key(name, kwargs):
        return name, json.dumps(models.resolved_kwargs(name, **kwargs), sort_keys=True, default=str)

    tested = {key(n, {}) for n in models.names(per_example=True)} | {key(n, kw) for n, kw in PAPER_VARIANTS}
    try:
        configs = experiments.module(paper).configs("paper")
    except FileNotFoundError as err:  # gdp and labeldp size NeuMF from MovieLens-100k
        pytest.skip(f"needs the data mirror: {err}")
    private = {key(c["model"], c.get("model_kwargs") or {}) for c in configs
               if c.get("model") in models.names(per_example=True) and c["train"].get("private", True)}
    assert private, f"{paper}: no private paper-profile config found"
    assert private <= tested, f"{paper}: untested variants {sorted(private - tested)}"


@pytest.mark.parametrize("name, force", [("tf-mnist-cnn", None), ("tf-mnist-cnn", "patches"),
                                         ("tf-mnist-cnn", "positions"), ("scatternet-cnn", None)])
def test_k_draw_sums_and_dpis_rescaling_match_func(name, force, monkeypatch):
    """DPlis: the per-example gradient summed over K parameter draws (clipped after the sum);
    DPIS: each example's gradient rescaled by its own factor before clipping. The convolutions'
    Gram matrices then have blocks between draws (``force``: the convolutions' Gram form whatever
    the cost)."""
    if force is not None:
        monkeypatch.setattr(OuterRecord, "rule",
                            lambda self: "patches" if isinstance(self.module, nn.Linear) else force)
    torch.manual_seed(3)
    x, y = models.example_batch(name, 5, generator=torch.Generator().manual_seed(3))
    model, x = _double(models.create(name), x)
    base = trainable(model)
    draws = [{k: v + 0.05 * torch.randn_like(v) for k, v in base.items()} for _ in range(3)]
    func, ghost = FuncGrads(model, CE), GhostGrads(model, CE)
    dense = factored = None
    for p in draws:
        d, f = func(p, (x,), y)[0], ghost(p, (x,), y)[0]
        dense = d if dense is None else add_examples(dense, d)
        factored = f if factored is None else add_examples(factored, f)
    scale = torch.linspace(0.5, 2.0, 5, dtype=torch.float64)
    for d, f in ((dense, factored), (scale_examples(dense, scale), scale_examples(factored, scale)),
                 (scale_examples(dense, 1 / 3), scale_examples(factored, 1 / 3))):
        _close(grad_norms(f), grad_norms(d), "norms")
        want, got = clipped_sum(d, clip_factors(d, 0.3)), clipped_sum(f, clip_factors(f, 0.3))
        for k in want:
            _close(got[k], want[k], k)
    ghost.close()


@pytest.mark.parametrize("combine", ["sum", "mean"])
def test_dplis_step_is_the_same_with_ghost_and_func(combine):
    x, y = models.example_batch("dplis-mlp-mnist", 16, generator=torch.Generator().manual_seed(4))
    out = {}
    for backend in ("func", "ghost"):
        torch.manual_seed(4)
        cfg = TrainConfig(batch_size=8, lr=6e-4, normalize="none", accountants=(), grad_backend=backend, seed=1)
        plugin = dplis.DPlis(dplis.Config(K=3, R=10.0, combine=combine))
        ctx = build_context(models.create("dplis-mlp-mnist"), (x, y), None, cfg, plugins=(plugin,))
        plugin.on_train_start(ctx)
        for _ in range(2):
            private_step(ctx, torch.arange(16))
        out[backend] = trainable(ctx.model)
        ctx.backend.close()
    for k, v in out["func"].items():
        assert torch.allclose(out["ghost"][k], v, rtol=1e-4, atol=1e-6), k


def test_training_steps_match_func():
    """Three DP-SGD steps of the engine give the same parameters with either backend."""
    x, y = models.example_batch("gdp-imdb", 32, generator=torch.Generator().manual_seed(5))
    out = {}
    for backend in ("func", "ghost"):
        torch.manual_seed(5)
        cfg = TrainConfig(batch_size=8, lr=0.5, accountants=(), grad_backend=backend, clip_mode="per_layer")
        ctx = build_context(models.create("gdp-imdb"), (x, y), None, cfg)
        for s in range(3):
            private_step(ctx, torch.arange(8 * s, 8 * s + 8))
        out[backend] = trainable(ctx.model)
    for k, v in out["func"].items():
        assert torch.allclose(out["ghost"][k], v, rtol=1e-4, atol=1e-6), k


class Layers(nn.Module):
    """One layer of each ghost rule, called as drawn."""

    def __init__(self, kind, cin, cout, k, stride, pad, seq, dil=1):
        super().__init__()
        self.kind = kind
        conv = dict(stride=stride, padding=pad, dilation=dil)
        if kind == "linear":
            self.layer, self.norm = nn.Linear(cin, cout), nn.LayerNorm(cout)
        elif kind == "conv1d":
            self.layer, self.norm = nn.Conv1d(cin, cout, k, **conv), nn.GroupNorm(1, cout)
        elif kind == "conv2d":
            self.layer, self.norm = nn.Conv2d(cin, cout, k, **conv), nn.GroupNorm(1, cout)
        else:
            self.layer, self.norm = nn.Embedding(7, cout, padding_idx=0), nn.LayerNorm(cout)
        self.head = nn.LazyLinear(3)
        self.seq = seq

    def forward(self, x):
        h = torch.tanh(self.norm(self.layer(x)))
        return self.head(h.flatten(1))


def _inputs(kind, b, cin, seq, g):
    if kind == "linear":
        return torch.randn(b, *((seq,) if seq else ()), cin, generator=g)
    if kind == "conv1d":
        return torch.randn(b, cin, 6, generator=g)
    if kind == "conv2d":
        return torch.randn(b, cin, 6, 5, generator=g)
    return torch.randint(0, 7, (b, seq or 1), generator=g)


@settings(max_examples=30, deadline=None)
@given(kind=st.sampled_from(["linear", "conv1d", "conv2d", "embedding"]), b=st.integers(1, 4),
       cin=st.integers(1, 5), cout=st.integers(1, 5), k=st.integers(1, 3), stride=st.integers(1, 2),
       pad=st.sampled_from([0, 1, "same"]), seq=st.integers(0, 4), seed=st.integers(0, 100),
       force=st.sampled_from([None, "materialise", "patches", "positions"]), dil=st.integers(1, 2))
def test_random_layer_shapes_match_func(kind, b, cin, cout, k, stride, pad, seq, seed, force, dil):
    if pad == "same":
        stride = 1  # torch refuses padding="same" with stride > 1
    g = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = Layers(kind, cin, cout, k, stride, pad, seq, dil)
    x = _inputs(kind, b, cin, seq, g)
    model(x)  # materialise the lazy head
    model, x = _double(model, x)
    y = torch.randint(0, 3, (b,), generator=g)
    original = OuterRecord.rule
    if force is not None:  # every branch of mixed ghost clipping, whatever the cost says (Linear: no positions)
        OuterRecord.rule = lambda self: "patches" if force == "positions" and isinstance(self.module, nn.Linear) \
            else force
    try:
        _compare(model, (x,), y)
    finally:
        OuterRecord.rule = original


@settings(max_examples=40, deadline=None)
@given(conv1d=st.booleans(), b=st.integers(1, 3), c=st.integers(1, 4), h=st.integers(1, 6), w=st.integers(1, 6),
       k=st.integers(1, 3), stride=st.integers(1, 3), pad=st.sampled_from([0, 1, 2, "same"]), dil=st.integers(1, 2),
       channels_last=st.booleans())
def test_patch_gram_is_the_gram_matrix_of_the_unfolded_patches(conv1d, b, c, h, w, k, stride, pad, dil,
                                                                channels_last):
    """ghost_conv.patch_gram (input-position Gram matrix, shifted blocks summed) = A1 A2^T of
    F.unfold's patches, for two different inputs, any stride, padding, dilation and layout."""
    if pad == "same":
        stride = 1
    g = torch.Generator().manual_seed(b * 100 + h * 10 + w)
    if conv1d:
        m, shape = nn.Conv1d(c, 2, k, stride=stride, padding=pad, dilation=dil), (b, c, w)
    else:
        m, shape = nn.Conv2d(c, 2, k, stride=stride, padding=pad, dilation=dil), (b, c, h, w)
    x1, x2 = (torch.randn(*shape, generator=g, dtype=torch.float64) for _ in range(2))
    try:
        m.double()(x1)
    except RuntimeError:  # kernel larger than the padded input
        return
    if channels_last and not conv1d:
        x1 = x1.contiguous(memory_format=torch.channels_last)
    (p1, k2, s2, d2, pad2), p2 = as_2d(m, x1), as_2d(m, x2)[0]
    a1, a2 = (F.unfold(p, k2, dilation=d2, padding=pad2, stride=s2).transpose(1, 2) for p in (p1, p2))
    got = patch_gram(m, x1, x2)
    assert got.shape == (b, a1.shape[1], a1.shape[1])
    assert torch.allclose(got, a1 @ a2.transpose(1, 2), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["scatternet-cnn", "scatternet-cifar-cnn", "tf-mnist-cnn"])
def test_channels_last_convnets_match_func(name):
    """Convolutions as the loop runs them (channels-last weights and activations)."""
    torch.manual_seed(5)
    x, y = models.example_batch(name, 3, generator=torch.Generator().manual_seed(5))
    model, x = _double(models.create(name), x)
    _compare(model.to(memory_format=torch.channels_last), (x.contiguous(memory_format=torch.channels_last),), y)


def test_recurrent_calls_and_unused_layers():
    """A layer called several times (a recurrent cell) adds its calls; an unused layer gets
    zero gradients (and so the engine still adds noise to it)."""

    class Recurrent(nn.Module):
        def __init__(self):
            super().__init__()
            self.cell, self.unused, self.out = nn.Linear(3, 3), nn.Linear(2, 2), nn.Linear(3, 2)

        def forward(self, x):
            h = torch.zeros_like(x[:, 0])
            for t in range(x.shape[1]):
                h = torch.tanh(self.cell(h) + x[:, t])
            return self.out(h)

    model = Recurrent().double()
    x = torch.randn(4, 5, 3, dtype=torch.float64)
    dense, factored = _compare(model, (x,), torch.tensor([0, 1, 1, 0]))
    assert torch.equal(factored.materialize()["unused.weight"], torch.zeros(4, 2, 2, dtype=torch.float64))


def test_refusals_name_the_problem():
    with pytest.raises(ValueError, match="'1'.*PReLU.*grad_backend='func'"):
        GhostGrads(nn.Sequential(nn.Linear(2, 2), nn.PReLU()), CE)
    with pytest.raises(ValueError, match="groups=1"):
        GhostGrads(nn.Conv2d(2, 2, 1, groups=2), CE)
    with pytest.raises(ValueError, match="BatchNorm in training mode"):
        GhostGrads(nn.BatchNorm1d(2), CE)
    tied = nn.Sequential(nn.Linear(3, 3), nn.Linear(3, 3))
    tied[1].weight = tied[0].weight
    with pytest.raises(ValueError, match="'1' shares a parameter"):
        GhostGrads(tied, CE)

    class Tied(nn.Module):  # uses a layer's weight outside the layer's own call
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)

        def forward(self, x):
            return self.a(x) @ self.a.weight

    x, y = torch.randn(4, 3), torch.tensor([0, 1, 2, 0])
    with pytest.raises(ValueError, match="'a.weight' is used outside"):
        GhostGrads(Tied(), CE)(trainable(Tied()), (x,), y)

    inplace = nn.Sequential(nn.Linear(3, 3), nn.ReLU(inplace=True))
    with pytest.raises(ValueError, match="in place"):
        GhostGrads(inplace, CE)(trainable(inplace), (x,), y)


def test_ghost_is_a_config_choice():
    assert TrainConfig(grad_backend="ghost").grad_backend == "ghost"
    with pytest.raises(ValueError, match="grad_backend"):
        TrainConfig(grad_backend="ghosts")


def test_every_records_norm_matches_func():
    """DPIS' epoch start: the unclipped norm of every training record, in eval-size chunks."""
    x, y = models.example_batch("gdp-imdb", 40, generator=torch.Generator().manual_seed(6))
    norms = {}
    for backend in ("func", "ghost"):
        torch.manual_seed(6)
        cfg = TrainConfig(batch_size=8, accountants=(), grad_backend=backend, eval_batch_size=16)
        norms[backend] = build_context(models.create("gdp-imdb"), (x, y), None, cfg).per_example_norms()
    assert norms["ghost"].shape == (40,)
    assert torch.allclose(norms["ghost"], norms["func"], rtol=1e-4)


def _toy(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv1d(2, 3, 3), nn.Tanh(), nn.Flatten(), nn.Linear(9, 2)).double()


def _toy_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 2, 5, generator=g, dtype=torch.float64)
    return x, (x[:, 0, 0] + 0.5 * x[:, 1, 2] > 0).long()


@pytest.mark.parametrize("method, settings, cfg", [
    ("sadpsgd", {"Q0": 10.0, "mu0": 2},  # noisy, large steps: 4 of 10 candidates rejected
     {"accountants": ("rdp", "sadpsgd-accepted-only"), "noise_multiplier": 4.0, "lr": 2.0}),
    ("dpis", {"epsilon": 4.0, "sigma_n": 5.0, "sigma_k": 20.0, "a_e": 0.5}, {"accountants": ("dpis",), "clip": 0.1}),
    ("dpsgd_decay", {"decay_rate": 0.01}, {}),
], ids=["sadpsgd", "dpis", "dpsgd_decay"])
def test_method_runs_are_the_same_with_ghost_and_func(method, settings, cfg):
    """Whole runs of the methods whose paper-profile runs use func (SA-DPSGD's candidates and
    energy, DPIS' norms of every record and rescaled gradients, DP-SGD-Decay): equal parameters,
    metrics and ledgers with either backend (float64; the same seed draws the same noise)."""
    from dpnotes import methods
    from dpnotes.train import train

    out = {}
    for backend in ("func", "ghost"):
        m = _toy()
        base = {"epochs": 2, "batch_size": 16, "lr": 0.5, "noise_multiplier": 1.0, "clip": 1.0, "seed": 3}
        config = TrainConfig(**{**base, **cfg, "grad_backend": backend})
        plugins = methods.module(method).hooks(methods.module(method).Config(**settings))
        record = train(m, _toy_data(80, 0), _toy_data(40, 1), config, plugins=plugins, progress=False)
        out[backend] = (record, trainable(m))
    (rf, pf), (rg, pg) = out["func"], out["ghost"]
    assert rg["privacy"]["ledger"] == rf["privacy"]["ledger"] and rg["privacy"]["epsilon"] == rf["privacy"]["epsilon"]
    counts = ("steps", "accepted_steps")
    assert [rg["final"][k] for k in counts] == [rf["final"][k] for k in counts]
    if method == "sadpsgd":
        assert rf["final"]["accepted_steps"] < rf["final"]["steps"], "no candidate was rejected: a weaker test"
    for k, v in pf.items():
        assert torch.allclose(pg[k], v, rtol=1e-9, atol=1e-12), k


@pytest.mark.parametrize("name, draws", [("tf-mnist-cnn", 1), ("dplis-cifar-cnn", 1), ("dplis-cifar-cnn", 10)])
def test_the_positions_form_leaves_the_stored_ghost_models_as_they_were(name, draws):
    """The stored ghost records (DPIS' and DPlis' CNNs, one call or DPlis' K = 10 draws) predate
    the input-position Gram form: none of their layers may take it, or re-running them would move
    their numbers without a version bump (tests/test_numerics_pinned.py checks one of them)."""
    model, seen = models.create(name), {}

    def keep(m, inputs, output):  # returns None: the output stays as it is
        seen[m] = inputs[0], output

    hooks = [m.register_forward_hook(keep) for m in model.modules() if isinstance(m, (nn.Linear, nn.Conv2d))]
    model(models.example_batch(name, 2)[0])
    for h in hooks:
        h.remove()
    rules = [OuterRecord(m, {"weight": "weight"}, [call] * draws).rule() for m, call in seen.items()]
    assert "positions" not in rules and "patches" in rules, rules


@pytest.mark.parametrize("form", ["patches", "positions"])
def test_gram_forms_never_round_below_zero(form, monkeypatch):
    """An example whose loss is ~0 (saturated softmax) has denormal output gradients: the Gram
    form's sum ``<A A^T, G G^T>`` then rounded to -5e-42 for one example of SA-DPSGD's Fashion-MNIST
    seed 1 (second convolution, step 1,087), its norm became NaN and so did the model. Inputs
    like those (positive, highly correlated patches; gradients of 1e-23) must give squared norms
    >= 0 and finite norms. Their values are float32 noise (off by up to 100 % from float64) but
    far below any clip norm: every clip factor is exactly 1, as it is for the float64 norms."""
    monkeypatch.setattr(OuterRecord, "rule", lambda self: form)
    conv = nn.Conv2d(16, 32, 4, stride=2)
    g = torch.Generator().manual_seed(0)
    x = 2 + 0.1 * torch.randn(256, 16, 12, 12, generator=g)
    gy = 1e-23 * torch.randn(256, 32, 5, 5, generator=g)
    grads = FactoredGrads({conv: OuterRecord(conv, {"weight": "weight"}, [(x, gy)])},
                          {"weight": conv.weight}, len(x))
    sq = grads.sq_norms()["weight"]
    a = F.unfold(x.double(), 4, stride=2)  # [B, p, T]
    exact = (gy.double().flatten(2) @ a.transpose(1, 2)).square().sum((1, 2))  # ||G_i^T A_i||^2
    assert (sq >= 0).all(), sq.min()
    assert torch.isfinite(grads.norms()).all()
    assert torch.allclose(grads.norms().double(), exact.sqrt(), rtol=0, atol=1e-19)
    assert all((f == 1).all() for f in clip_factors(grads, 0.1).values())
