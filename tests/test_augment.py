"""Batch augmentations of Ghazi et al. 2021 App. B (dpnotes.methods.augment)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.methods import augment


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 6), h=st.integers(2, 12), w=st.integers(2, 12), pad=st.integers(0, 4), seed=st.integers(0, 99))
def test_random_crop_is_a_shifted_window_of_the_zero_padded_image(b, h, w, pad, seed):
    x = torch.rand(b, 2, h, w) + 1  # > 0 everywhere, so padding zeros are recognisable
    out = augment.random_crop(x, torch.Generator().manual_seed(seed), pad=pad)
    assert out.shape == x.shape
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    for i in range(b):
        windows = [(dy, dx) for dy in range(2 * pad + 1) for dx in range(2 * pad + 1)
                   if torch.equal(padded[i, :, dy:dy + h, dx:dx + w], out[i])]
        assert windows


def _crop_before_issue_36(x, generator, pad):
    """The element-wise gather that random_crop was until issue #36 (the reference)."""
    b, _, h, w = x.shape
    padded = torch.nn.functional.pad(x, (pad, pad, pad, pad))
    dy = torch.randint(0, 2 * pad + 1, (b,), generator=generator)
    dx = torch.randint(0, 2 * pad + 1, (b,), generator=generator)
    rows = (dy[:, None] + torch.arange(h))[:, :, None]
    cols = (dx[:, None] + torch.arange(w))[:, None, :]
    batch = torch.arange(b)[:, None, None]
    return padded.permute(0, 2, 3, 1)[batch, rows, cols].permute(0, 3, 1, 2).contiguous()


@settings(max_examples=25, deadline=None)
@given(b=st.integers(1, 6), c=st.integers(1, 3), h=st.integers(2, 12), w=st.integers(2, 12),
       pad=st.integers(0, 4), seed=st.integers(0, 99))
def test_random_crop_is_bit_identical_to_the_element_wise_gather(b, c, h, w, pad, seed):
    x = torch.randn(b, c, h, w)
    gen, ref_gen = torch.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    out = augment.random_crop(x, gen, pad=pad)
    assert torch.equal(out, _crop_before_issue_36(x, ref_gen, pad)) and out.is_contiguous()
    assert torch.equal(gen.get_state(), ref_gen.get_state())  # the same draws: later batches unchanged


def test_random_crop_of_paper_batches_is_bit_identical():  # MNIST and CIFAR-10 batches of 256
    for shape in [(256, 1, 28, 28), (256, 3, 32, 32)]:
        x = torch.rand(*shape, generator=torch.Generator().manual_seed(1))
        assert torch.equal(augment.random_crop(x, torch.Generator().manual_seed(2)),
                           _crop_before_issue_36(x, torch.Generator().manual_seed(2), augment.CROP_PAD))


def test_crop_with_no_padding_is_the_identity():
    x = torch.rand(3, 1, 5, 5)
    assert torch.equal(augment.random_crop(x, torch.Generator(), pad=0), x)


def test_flip_mirrors_about_half_the_images():
    x = torch.rand(400, 1, 3, 4)
    out = augment.random_flip(x, torch.Generator().manual_seed(0))
    same = [bool(torch.equal(out[i], x[i])) for i in range(400)]
    flipped = [bool(torch.equal(out[i], x[i].flip(-1))) for i in range(400)]
    assert all(s or f for s, f in zip(same, flipped)) and 150 < sum(flipped) < 250


def test_cutout_zeroes_one_square_shared_by_the_batch():
    x = torch.ones(5, 1, 28, 28)
    out = augment.cutout(x, torch.Generator().manual_seed(1))
    zero = out == 0
    assert torch.equal(zero, zero[:1].expand_as(zero))  # the same square in every image
    assert 0 < zero[0].sum() <= augment.CUTOUT_SIZE ** 2


def test_mixup_mixes_with_the_reversed_batch():
    x, y = torch.rand(6, 3), torch.tensor([0, 1, 2, 0, 1, 2])
    mx, my = augment.mixup(x, y, 3, 2.0, torch.Generator().manual_seed(0))
    lam = my[0, y[0]]  # y[0] = 0, y[-1] = 2: row 0 puts lam on class 0 and 1 - lam on class 2
    assert torch.allclose(mx, lam * x + (1 - lam) * x.flip(0)) and torch.allclose(my.sum(1), torch.ones(6))


def test_bad_names_and_shapes_are_refused():
    with pytest.raises(ValueError, match="augment"):
        augment.augment(torch.rand(2, 1, 4, 4), ("rotate",), torch.Generator())
    with pytest.raises(ValueError, match=r"\[B, C, H, W\]"):
        augment.augment(torch.rand(2, 4), ("crop",), torch.Generator())
    with pytest.raises(ValueError, match="mixup_alpha"):
        augment.mixup(torch.rand(2, 4), torch.tensor([0, 1]), 2, 0.0, torch.Generator())
