"""Tests of dpnotes.models: every registered model's shapes, spec, synthetic batches, and
per-sample gradients by torch.func against one-example-at-a-time autograd."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn
from torch.func import functional_call, grad, vmap

from dpnotes import models

# Variants whose per-sample gradients are tested instead of the default: ResNet with GroupNorm
# (BatchNorm mixes the examples of a batch in train mode; DP training uses GroupNorm) at a small
# width to keep the test fast; BatchNorm in eval mode (running statistics) is tested too.
# Short sequences and a small vocabulary keep the LSTM test fast (the model takes any length).
PER_SAMPLE_KWARGS: dict[str, dict] = {
    "resnet18v2": {"norm": "group", "width": 8, "num_groups": 4},
    "dpis-imdb-bilstm": {"seq_len": 10, "vocab_size": 300},
}
# Non-private baselines (models.names(per_example=False)) have no per-sample gradients.
PER_SAMPLE_CASES = [(n, PER_SAMPLE_KWARGS.get(n, {})) for n in models.names(per_example=True)] + [
    ("resnet18v2", {"norm": "batch", "width": 8})]


def _loss(model, params, constants, x, y):
    out = functional_call(model, (params, constants), (x,))
    return torch.nn.functional.cross_entropy(out, y)


@pytest.mark.parametrize("name, kwargs", PER_SAMPLE_CASES)
def test_per_sample_gradients_match_one_at_a_time(name, kwargs):
    torch.manual_seed(0)
    model = models.create(name, **kwargs).double().eval()
    x, y = models.example_batch(name, 4, torch.Generator().manual_seed(1), **kwargs)
    if x.is_floating_point():
        x = x.double()
    trainable = {k: p for k, p in model.named_parameters() if p.requires_grad}
    params = {k: p.detach() for k, p in trainable.items()}
    # Frozen parameters (a frozen embedding) and buffers enter as constants.
    constants = {k: v.detach() for k, v in model.named_parameters() if not v.requires_grad}
    constants.update({k: v.detach() for k, v in model.named_buffers()})

    def one(p, xi, yi):
        return _loss(model, p, constants, xi[None], yi[None])

    per_sample = vmap(grad(one), in_dims=(None, 0, 0))(params, x, y)
    for i in range(len(x)):
        model.zero_grad()
        _loss(model, trainable, constants, x[i:i + 1], y[i:i + 1]).backward()
        for k, p in trainable.items():
            assert p.grad.abs().sum() > 0, f"{k}: zero gradient makes the comparison vacuous"
            torch.testing.assert_close(per_sample[k][i], p.grad, rtol=1e-5, atol=1e-12)


@pytest.mark.parametrize("name", models.names())
def test_output_shape_and_spec(name):
    spec = models.spec(name)
    assert spec.name == name
    assert spec.input_kind in models.registry.INPUT_KINDS
    assert spec.source
    x, y = models.example_batch(name, 3, torch.Generator().manual_seed(0))
    assert x.shape == (3, *spec.input_shape) and x.dtype == spec.input_dtype
    for col, bound in enumerate(spec.index_bounds):
        column = x[..., col] if spec.input_kind == "pairs" else x
        assert 0 <= column.min() and column.max() < bound
    out = models.create(name).eval()(x)
    assert out.shape == (3, spec.num_outputs)
    assert y.shape == (3,) and y.dtype == torch.int64
    assert 0 <= y.min() and y.max() < spec.num_outputs


def test_example_batch_is_reproducible_and_validated():
    a = models.example_batch("tf-mnist-cnn", 4, torch.Generator().manual_seed(7))
    b = models.example_batch("tf-mnist-cnn", 4, torch.Generator().manual_seed(7))
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    with pytest.raises(ValueError, match="batch_size"):
        models.example_batch("tf-mnist-cnn", 0)


def test_spec_rejects_unknown_input_kind():
    with pytest.raises(ValueError, match="input_kind"):
        models.ModelSpec("m", "src", "audio", (3,), torch.float32, 2)


def test_unknown_name_lists_registered_names():
    with pytest.raises(ValueError, match="tf-mnist-cnn"):
        models.create("no-such-model")
    with pytest.raises(ValueError, match="tf-mnist-cnn"):
        models.spec("no-such-model")


def _layer_shapes(model):
    return [tuple(p.shape) for p in model.parameters()]


def test_tutorial_cnn_layers():
    """TF Privacy tutorial / DPlis MNIST CNN: conv 16@8x8, conv 32@4x4, Linear(512, 32), Linear(32, 10)."""
    assert _layer_shapes(models.create("tf-mnist-cnn")) == [
        (16, 1, 8, 8), (16,), (32, 16, 4, 4), (32,), (32, 512), (32,), (10, 32), (10,)]
    assert _layer_shapes(models.create("dplis-cifar-cnn"))[4] == (32, 800)
    acts = {type(m) for m in models.create("sadpsgd-cnn").modules()}
    assert torch.nn.Tanh in acts and torch.nn.ReLU not in acts
    acts = {type(m) for m in models.create("tf-mnist-cnn", activation="tanh").modules()}
    assert torch.nn.Tanh in acts and torch.nn.ReLU not in acts
    with pytest.raises(ValueError, match="activation"):
        models.create("tf-mnist-cnn", activation="sigmoid")


def test_tanh_cifar_cnn_layers():
    shapes = _layer_shapes(models.create("sadpsgd-cifar-cnn"))
    convs = [s for s in shapes if len(s) == 4]
    assert convs == [(32, 3, 3, 3), (32, 32, 3, 3), (64, 32, 3, 3), (64, 64, 3, 3),
                     (128, 64, 3, 3), (128, 128, 3, 3)]
    assert shapes[-4:] == [(128, 2048), (128,), (10, 128), (10,)]
    assert shapes == _layer_shapes(models.create("papernot-cifar-cnn"))


def test_mlp_layers():
    """DPlis Sec. 5.1: hidden 512-128 (MNIST), 1536-128 (CIFAR-10); GDP Adult: 123-16-2."""
    weights = lambda n: [s for s in _layer_shapes(models.create(n)) if len(s) == 2]
    assert weights("dplis-mlp-mnist") == [(512, 784), (128, 512), (10, 128)]
    assert weights("dplis-mlp-cifar") == [(1536, 3072), (128, 1536), (10, 128)]
    assert weights("gdp-adult") == [(16, 123), (2, 16)]


def test_keras_init():
    model = models.create("gdp-imdb")
    assert model.embedding.weight.abs().max() <= 0.05
    assert all((m.bias == 0).all() for m in model.modules() if isinstance(m, torch.nn.Linear))


def test_gdp_imdb_averages_over_padding_too():
    """Keras GlobalAveragePooling1D without a mask: padding id 0 counts in the mean."""
    model = models.create("gdp-imdb").double()
    tokens = torch.tensor([[5, 6, 0, 0], [5, 6, 6, 5]])
    pooled = model.embedding(tokens).mean(dim=1)
    torch.testing.assert_close(model(tokens), model.classifier(pooled))
    unmasked = model.embedding(tokens[:1, :2]).mean(dim=1)
    assert not torch.allclose(model.classifier(unmasked), model(tokens[:1]))


def test_lstm_layer_matches_torch_lstm():
    from dpnotes.models.lstm import BiLSTM, LSTMLayer

    torch.manual_seed(0)
    ours = BiLSTM(7, 5).double()
    ref = torch.nn.LSTM(7, 5, batch_first=True, bidirectional=True).double()
    with torch.no_grad():
        for layer, suffix in ((ours.forward_layer, ""), (ours.backward_layer, "_reverse")):
            getattr(ref, "weight_ih_l0" + suffix).copy_(layer.input_map.weight)
            getattr(ref, "bias_ih_l0" + suffix).copy_(layer.input_map.bias)
            getattr(ref, "weight_hh_l0" + suffix).copy_(layer.recurrent_map.weight)
            getattr(ref, "bias_hh_l0" + suffix).zero_()
    x = torch.randn(3, 6, 7, dtype=torch.float64)
    _, (h_n, _) = ref(x)
    torch.testing.assert_close(ours(x), torch.cat([h_n[0], h_n[1]], dim=-1))
    layer = LSTMLayer(4, 3)
    assert layer.input_map.bias.tolist() == [0.0] * 3 + [1.0] * 3 + [0.0] * 6  # Keras forget bias
    with pytest.raises(ValueError, match="hidden_size"):
        LSTMLayer(4, 0)


def test_dpis_bilstm_layers_and_frozen_embedding():
    """DPIS Table 1: Embedding 100, FC 32, BiLSTM 32, FC 16, FC 2; GloVe embedding frozen."""
    model = models.create("dpis-imdb-bilstm")
    assert model.embedding.weight.shape == (20000, 100)
    assert not model.embedding.weight.requires_grad
    assert models.create("dpis-imdb-bilstm", freeze_embedding=False).embedding.weight.requires_grad
    assert model.project[0].weight.shape == (32, 100)
    assert model.bilstm.forward_layer.recurrent_map.weight.shape == (128, 32)
    assert [m.weight.shape for m in model.classifier if isinstance(m, torch.nn.Linear)] == [
        (16, 64), (2, 16)]
    assert models.spec("dpis-imdb-bilstm").input_shape == (80,)
    tanh = models.create("dpis-imdb-bilstm", activation="tanh")
    assert isinstance(tanh.project[1], torch.nn.Tanh) and isinstance(tanh.classifier[1], torch.nn.Tanh)
    with pytest.raises(ValueError, match="freeze_embedding"):
        models.create("dpis-imdb-bilstm", freeze_embedding="yes")


def test_neumf_branches():
    """GDP Sec. 5 MovieLens: GMF with 5 factors, MLP branch with 10, one output layer."""
    model = models.create("neumf", num_users=4, num_items=3).double()
    assert model.mf_user.weight.shape == (4, 5) and model.mlp_item.weight.shape == (3, 10)
    assert model.output_layer.weight.shape == (5, 5 + 10 + 10)
    pairs = torch.tensor([[3, 2], [0, 1]])
    u, i = pairs[:, 0], pairs[:, 1]
    features = torch.cat([model.mf_user(u) * model.mf_item(i), model.mlp_user(u), model.mlp_item(i)], 1)
    torch.testing.assert_close(model(pairs), model.output_layer(features))
    assert models.spec("neumf", num_users=4, num_items=3).index_bounds == (4, 3)
    with pytest.raises(ValueError, match="num_users"):
        models.create("neumf", num_users=0)


def test_expected_rating():
    from dpnotes.models.recsys import expected_rating

    logits = torch.tensor([[0.0] * 5, [-50.0, -50.0, -50.0, -50.0, 50.0], [50.0, 0, 0, 0, 0]])
    torch.testing.assert_close(expected_rating(logits), torch.tensor([3.0, 5.0, 1.0]))
    with pytest.raises(ValueError, match="logits"):
        expected_rating(torch.zeros(5))


def test_resnet18v2_structure():
    """Pre-activation ResNet-18 for 32x32: 3x3 stride-1 stem, no max pooling, 4 stages x 2 blocks."""
    model = models.create("resnet18v2")
    assert model.stem.weight.shape == (64, 3, 3, 3) and model.stem.stride == (1, 1)
    assert not any(isinstance(m, torch.nn.MaxPool2d) for m in model.modules())
    blocks = list(model.blocks)
    assert [b.conv2.out_channels for b in blocks] == [64, 64, 128, 128, 256, 256, 512, 512]
    assert [b.projection is not None for b in blocks] == [False, False] + [True, False] * 3
    assert model.classifier.weight.shape == (10, 512)
    norms = {type(m) for m in models.create("resnet18v2", norm="group").modules()}
    assert torch.nn.GroupNorm in norms and torch.nn.BatchNorm2d not in norms
    with pytest.raises(ValueError, match="norm"):
        models.create("resnet18v2", norm="layer")
    with pytest.raises(ValueError, match="num_groups"):
        models.create("resnet18v2", norm="group", width=8, num_groups=3)


def test_resnet_block_is_preactivation():
    """Identity blocks add x itself (not its normalised version) to the residual branch."""
    from dpnotes.models.resnet import PreActBlock

    block = PreActBlock(4, 4, 1, "group", 2).double().eval()
    x = torch.randn(2, 4, 5, 5, dtype=torch.float64)
    relu = torch.nn.functional.relu
    residual = block.conv2(relu(block.norm2(block.conv1(relu(block.norm1(x))))))
    torch.testing.assert_close(block(x), x + residual)


def test_scatternet_heads_and_norms():
    """Tramer & Boneh heads on 81x7x7 (MNIST) and 243x8x8 (CIFAR-10) scattering features."""
    assert models.spec("scatternet-cnn").input_shape == (81, 7, 7)
    assert models.spec("scatternet-cifar-cnn").input_shape == (243, 8, 8)
    convs = lambda n, **kw: [tuple(m.weight.shape) for m in models.create(n, **kw).modules()
                             if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    assert convs("scatternet-cnn") == [(16, 81, 3, 3), (32, 16, 3, 3), (32, 512), (10, 32)]
    assert convs("scatternet-cifar-cnn") == [(64, 243, 3, 3), (64, 64, 3, 3), (10, 1024)]
    gn = models.create("scatternet-cnn")[0]
    assert isinstance(gn, torch.nn.GroupNorm) and gn.num_groups == 27 and not gn.affine
    mean, var = torch.rand(81), torch.rand(81)
    var[3] = 0.0
    std = models.create("scatternet-cnn", input_norm="standardize", stats=(mean, var))[0]
    x = torch.randn(2, 81, 7, 7)
    expected = (x - mean[:, None, None]) / torch.sqrt(var[:, None, None] + 1e-5)
    expected[:, 3] = 0.0
    torch.testing.assert_close(std(x), expected)
    assert isinstance(models.create("scatternet-cnn", input_norm="none")[0], torch.nn.Identity)
    with pytest.raises(ValueError, match="stats"):
        models.create("scatternet-cnn", input_norm="standardize")
    with pytest.raises(ValueError, match="stats"):
        models.create("scatternet-cnn", stats=(mean, var))
    with pytest.raises(ValueError, match="num_groups"):
        models.create("scatternet-cnn", num_groups=4)
    with pytest.raises(ValueError, match="input_norm"):
        models.create("scatternet-cnn", input_norm="batch")


def test_preprocessor_scattering_features():
    pytest.importorskip("kymatio")
    assert models.preprocessor("tf-mnist-cnn") is None
    for name, shape in (("scatternet-cnn", (1, 28, 28)), ("scatternet-cifar-cnn", (3, 32, 32))):
        features = models.preprocessor(name)
        assert not list(features.parameters())
        images = torch.rand(2, *shape)
        out = features(images)
        assert out.shape == (2, *models.spec(name).input_shape)
        # Order-0 map of each channel is a low-pass average: nonnegative for nonnegative images.
        assert (out[:, ::81] >= 0).all()
        assert torch.allclose(out[1:], features(images[1:]))  # per-example transform
        assert models.create(name)(out).shape == (2, 10)


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(["gdp-imdb", "neumf", "gdp-adult", "sadpsgd-cnn"]),
       batch_size=st.integers(1, 9), seed=st.integers(0, 2**31 - 1))
def test_example_batch_respects_spec(name, batch_size, seed):
    spec = models.spec(name)
    x, y = models.example_batch(name, batch_size, torch.Generator().manual_seed(seed))
    assert x.shape == (batch_size, *spec.input_shape) and x.dtype == spec.input_dtype
    if spec.index_bounds:
        assert (x >= 0).all() and (x < torch.tensor(spec.index_bounds)).all()
    if spec.input_kind == "tabular":
        assert set(x.unique().tolist()) <= {0.0, 1.0}
    assert ((0 <= y) & (y < spec.num_outputs)).all()


def test_feature_and_norm_inputs_are_validated():
    from dpnotes.models.scatternet import ScatteringFeatures, Standardize

    with pytest.raises(ValueError, match="stats"):
        Standardize(torch.zeros(3), torch.ones(4))
    with pytest.raises(ValueError, match="variance"):
        Standardize(torch.zeros(3), -torch.ones(3))
    with pytest.raises(ValueError, match="image_size"):
        ScatteringFeatures(2)
    with pytest.raises(ValueError, match="tf-mnist-cnn"):
        models.preprocessor("no-such-model")


def test_tf_text_rnn_skips_padding_and_has_the_tutorials_layers():
    torch.manual_seed(0)
    model = models.create("tf-text-rnn", vocab_size=50, seq_len=12).eval()
    assert (model.embedding.embedding_dim, model.lstm1.hidden_size, model.lstm2.hidden_size) == (64, 64, 32)
    text = torch.tensor([[5, 9, 3, 7], [11, 2, 8, 4]])
    pad = torch.zeros(2, 8, dtype=torch.long)
    pre, post = model(torch.cat([pad, text], 1)), model(torch.cat([text, pad], 1))
    torch.testing.assert_close(pre, post)
    torch.testing.assert_close(pre, model(text))
    # forget-gate bias 1 (Keras unit_forget_bias), other biases 0
    lstm, h = model.lstm1.forward_lstm, model.lstm1.hidden_size
    assert lstm.bias_ih_l0[h:2 * h].eq(1).all() and lstm.bias_ih_l0[:h].eq(0).all()


def test_tf_text_rnn_equals_packed_bidirectional_lstms_on_ragged_batches():
    """Independent reference: the same weights in two bidirectional nn.LSTMs fed packed sequences."""
    from torch.nn.utils.rnn import pack_padded_sequence

    torch.manual_seed(1)
    model = models.create("tf-text-rnn", vocab_size=30, seq_len=9).eval()
    refs = []
    for layer in (model.lstm1, model.lstm2):
        ref = nn.LSTM(layer.forward_lstm.input_size, layer.hidden_size, batch_first=True, bidirectional=True)
        with torch.no_grad():
            for name, w in layer.forward_lstm.named_parameters():
                getattr(ref, name).copy_(w)
                getattr(ref, name + "_reverse").copy_(getattr(layer.backward_lstm, name))
        refs.append(ref)
    lengths = torch.tensor([9, 1, 5, 3, 7])
    tokens = torch.randint(1, 30, (5, 9)) * (torch.arange(9) < lengths[:, None])
    packed = pack_padded_sequence(model.embedding(tokens), lengths, batch_first=True, enforce_sorted=False)
    out, _ = refs[0](packed)
    _, (h, _) = refs[1](out)
    expected = model.classifier(torch.cat([h[0], h[1]], dim=1))
    torch.testing.assert_close(model(tokens), expected, rtol=1e-5, atol=1e-6)


def test_labeldp_inception_is_app_b_simplified_inception():
    """LabelDP App. B's simplified Inception: the layer list's widths, the parameter count and
    forward MACs its docstring prints, 10 logits per 1x28x28 image (pixels / 255, as the MNIST
    path feeds it), BatchNorm's train and eval modes, and a backward pass reaching every weight."""
    from dpnotes.models import inception

    torch.manual_seed(0)
    model = models.create("labeldp-inception")
    assert not models.per_example("labeldp-inception")  # BatchNorm mixes a batch: no DP-SGD
    assert models.spec("labeldp-inception").input_shape == (1, 28, 28)
    assert model.stem[0].weight.shape == (96, 1, 3, 3)
    blocks = [m for m in model.modules() if isinstance(m, inception.Block)]
    assert [(b.branch1[0].out_channels, b.branch3[0].out_channels) for b in blocks] == [
        (32, 32), (32, 48), (112, 48), (96, 64), (80, 80), (48, 96), (176, 160), (176, 160)]
    assert [b.branch3[0].kernel_size for b in blocks] == [(3, 3)] * 8 and blocks[0].branch1[0].kernel_size == (1, 1)
    strided = [m for m in model.modules() if isinstance(m, nn.Conv2d) and m.stride == (2, 2)]
    assert [(m.in_channels, m.out_channels) for m in strided] == [(80, 160), (144, 240)]
    convs = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
    assert len(convs) == 1 + 2 * 8 + 2 and all(m.bias is None for m in convs)
    assert sum(isinstance(m, nn.BatchNorm2d) for m in model.modules()) == len(convs)
    assert model.classifier.weight.shape == (10, 336)
    assert sum(p.numel() for p in model.parameters()) == inception.PARAMETERS == 1_894_058
    assert inception.forward_macs(model) == inception.FORWARD_MACS == 223_299_104
    assert model.training  # forward_macs leaves the mode as it found it

    x = torch.rand(6, 1, 28, 28)  # pixels / 255
    y = torch.randint(0, 10, (6,))
    before = model.stem[1].running_mean.clone()
    out = model(x)
    assert out.shape == (6, 10)
    assert not torch.equal(model.stem[1].running_mean, before)  # train mode: batch statistics, updated
    torch.testing.assert_close(model(x[:3])[0], model(x[:3])[0])
    assert not torch.allclose(model(x[:3])[0], out[0])  # train mode: an example's logits depend on its batch
    nn.functional.cross_entropy(out, y).backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in model.parameters())
    model.eval()
    frozen = model.stem[1].running_mean.clone()
    torch.testing.assert_close(model(x[:3]), model(x)[:3])  # eval mode: running statistics, per example
    assert torch.equal(model.stem[1].running_mean, frozen)
