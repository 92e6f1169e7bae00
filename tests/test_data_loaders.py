"""dpnotes.data loaders on tiny synthetic files in each official format."""

import sys

import numpy as np
import pandas as pd
import pytest
import torch
from datafiles import (
    IMDB_REVIEWS,
    MOVIELENS,
    idx_bytes,
    make_adult,
    make_cifar,
    make_idx,
    make_imdb_jsonl,
    make_imdb_tarball,
    make_movielens,
    write,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from dpnotes.data import (
    adult_features,
    imdb_sequences,
    load_adult,
    load_cifar10,
    load_fashion_mnist,
    load_imdb,
    load_mnist,
    load_movielens,
    read_labels,
    read_movielens,
)
from dpnotes.data.adult import GROUPS, NUM_FEATURES, _quintile_bins
from dpnotes.data.images import read_idx
from dpnotes.data.imdb import OOV, START, build_vocabulary, encode, tokenize
from dpnotes.data.registry import dataset


@pytest.fixture(autouse=True)
def _no_env_mirror(monkeypatch):
    monkeypatch.delenv("DPNOTES_DATA_MIRROR", raising=False)


@pytest.mark.parametrize("loader, name", [(load_mnist, "mnist"), (load_fashion_mnist, "fashion-mnist")])
def test_idx_loaders_return_the_arrays_written(tmp_path, loader, name):
    ds, arrays = make_idx(tmp_path / "m", name=name)
    for split in ("train", "test"):
        x, y = loader(split, mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={name: ds})
        assert x.dtype == torch.uint8 and y.dtype == torch.int64 and x.shape == (len(y), 28, 28)
        assert np.array_equal(x.numpy(), arrays[split][0]) and np.array_equal(y.numpy(), arrays[split][1])
    with pytest.raises(ValueError, match="split must be one of"):
        loader("validation", mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={name: ds})


@pytest.mark.parametrize("loader, name", [(load_mnist, "mnist"), (load_fashion_mnist, "fashion-mnist"),
                                          (load_cifar10, "cifar-10")])
def test_model_ready_images_are_floats_in_0_1_with_a_channel_axis_that_train_takes(tmp_path, loader, name):
    from dpnotes import models
    from dpnotes.train import TrainConfig, train

    ds, _ = make_cifar(tmp_path / "m") if name == "cifar-10" else make_idx(tmp_path / "m", name=name)
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={name: ds})
    raw_x, raw_y = loader("train", **kw)
    x, y = loader("train", model_ready=True, **kw)
    assert x.dtype == torch.float32 and y.dtype == torch.int64 and torch.equal(y, raw_y)
    assert x.shape == (len(y), *([1, 28, 28] if name != "cifar-10" else [3, 32, 32]))
    assert torch.equal(x.reshape(raw_x.shape) * 255, raw_x.float()) and 0 <= float(x.min()) <= float(x.max()) <= 1
    with pytest.raises(ValueError, match="model_ready must be True or False"):
        loader("train", model_ready="yes", **kw)
    model = models.create("tf-mnist-cnn" if name != "cifar-10" else "dplis-cifar-cnn")
    config = TrainConfig(epochs=1, batch_size=4, accountants=())
    train(model, (x, y), (x, y), config, progress=False)  # takes them as they are
    with pytest.raises(ValueError, match=r"raw pixels.*model_ready=True"):
        train(model, (raw_x, raw_y), None, config, progress=False)


def test_read_idx_rejects_malformed_files(tmp_path):
    assert read_idx(write(tmp_path / "ok", idx_bytes(np.arange(6).reshape(2, 3)))).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="not an unsigned-byte IDX"):
        read_idx(write(tmp_path / "f", b"\x00\x00\x0d\x01" + (2).to_bytes(4, "big") + b"\x00" * 8))
    with pytest.raises(ValueError, match="header says"):
        read_idx(write(tmp_path / "g", idx_bytes(np.zeros((2, 3)))[:-1]))


def test_cifar10_layout_and_batch_order(tmp_path):
    ds, records = make_cifar(tmp_path / "m")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"cifar-10": ds})
    x, y = load_cifar10("train", **kw)
    train = np.concatenate([records[f"data_batch_{i}.bin"] for i in range(1, 6)])
    assert x.shape == (15, 3, 32, 32) and x.dtype == torch.uint8 and y.dtype == torch.int64
    assert np.array_equal(y.numpy(), train[:, 0])
    # record = label, 1024 red, 1024 green, 1024 blue, each row-major
    r = train[4]
    assert x[4, 1, 2, 5] == r[1 + 1024 + 2 * 32 + 5] and x[4, 2, 31, 0] == r[1 + 2048 + 31 * 32]
    xt, yt = load_cifar10("test", **kw)
    assert np.array_equal(xt.reshape(3, -1).numpy(), records["test_batch.bin"][:, 1:])
    with pytest.raises(ValueError, match="split"):
        load_cifar10("all", **kw)


@pytest.mark.parametrize("name", ["mnist", "fashion-mnist", "cifar-10"])
def test_read_labels_are_the_loaders_labels(tmp_path, name):
    ds, _ = (make_cifar if name == "cifar-10" else lambda d: make_idx(d, name=name))(tmp_path / "m")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={name: ds})
    load = {"mnist": load_mnist, "fashion-mnist": load_fashion_mnist, "cifar-10": load_cifar10}[name]
    for split in ("train", "test"):
        labels = read_labels(name, split, **kw)
        assert labels.dtype == np.int64 and np.array_equal(labels, load(split, **kw)[1].numpy())
    with pytest.raises(ValueError, match="dataset must be one of"):
        read_labels("cifar-100", **kw)


def test_cifar10_labels_are_verified_by_their_own_checksum_not_the_images(tmp_path):
    """read_labels checks CIFAR-10's label bytes (label_sha256) and hashes no image: a changed
    pixel leaves the labels readable (the loaders, which read the pixels, refuse the file); a
    changed label is refused with the file named; a spec without label_sha256 is verified whole."""
    from dataclasses import replace

    from dpnotes.data import ChecksumError

    ds, records = make_cifar(tmp_path / "m")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"cifar-10": ds})
    want = records["data_batch_2.bin"][:, 0]
    cached = tmp_path / "c" / "cifar-10" / "data_batch_2.bin"
    read_labels("cifar-10", **kw)
    raw = bytearray(cached.read_bytes())
    raw[3073 + 100] ^= 1  # a pixel of the second record
    cached.write_bytes(bytes(raw))
    assert np.array_equal(read_labels("cifar-10", **kw)[3:6], want)
    with pytest.raises(ChecksumError, match="md5 of its content"):
        load_cifar10(**kw)
    whole = {"cifar-10": replace(ds, files={n: replace(f, label_sha256=None) for n, f in ds.files.items()})}
    with pytest.raises(ChecksumError, match="md5 of its content"):
        read_labels("cifar-10", **{**kw, "registry": whole})
    raw[3073] = (raw[3073] + 1) % 10  # the second record's label
    cached.write_bytes(bytes(raw))
    with pytest.raises(ChecksumError, match="sha256 of its labels") as err:
        read_labels("cifar-10", **kw)
    assert str(cached) in str(err.value)


@pytest.mark.parametrize("form", ["jsonl", "tarball"])
def test_load_imdb_from_either_form(tmp_path, form):
    spec = make_imdb_jsonl(tmp_path / "m") if form == "jsonl" else make_imdb_tarball(tmp_path / "web")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"imdb": dataset("imdb", "", spec)})
    texts, y = load_imdb("train", **kw)
    expected = [r for r in IMDB_REVIEWS if r[0] == "train"]
    if form == "tarball":  # ordered negative first, then by numeric id (written in reverse)
        expected = sorted(expected, key=lambda r: r[1])
        expected = [r for r in expected if r[1] == 0] + [r for r in reversed(expected) if r[1] == 1]
        assert "unlabelled" not in texts
    assert texts == [t for _, _, t in expected] and y.tolist() == [l for _, l, _ in expected]
    assert load_imdb("test", **kw)[1].dtype == torch.int64
    with pytest.raises(ValueError, match="split"):
        load_imdb("unsup", **kw)


def test_tokenize_follows_keras_defaults():
    assert tokenize("Bad,film!<br />It's   GOOD\tx-y") == ["bad", "film", "it's", "good", "x", "y"]


def test_vocabulary_ranks_training_words_by_frequency_then_first_occurrence():
    vocab = build_vocabulary(["b a b", "c a b"], num_words=100)
    assert vocab == {"b": 4, "a": 5, "c": 6}
    assert build_vocabulary(["b a b", "c a b"], num_words=6) == {"b": 4, "a": 5}


def test_encode_pads_and_truncates_at_the_front():
    vocab = {"a": 4, "b": 5}
    out = encode(["a b z", "b a b a b"], vocab, maxlen=4)
    # [START, a, b, OOV] fits; [START, b, a, b, a, b] keeps its last 4 tokens
    assert out.tolist() == [[START, 4, 5, OOV], [4, 5, 4, 5]]
    assert encode(["a"], vocab, maxlen=4).tolist() == [[0, 0, START, 4]]


def _keras_reference(texts, vocab, maxlen):
    rows = []
    for t in texts:
        s = [START] + [vocab.get(w, OOV) for w in tokenize(t)]
        s = s[-maxlen:]
        rows.append([0] * (maxlen - len(s)) + s)
    return rows


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet="ab c.", max_size=30), min_size=1, max_size=6), st.integers(1, 12))
def test_encode_matches_a_plain_reference(texts, maxlen):
    vocab = build_vocabulary(texts, num_words=6)
    assert encode(texts, vocab, maxlen).tolist() == _keras_reference(texts, vocab, maxlen)


def test_imdb_sequences_end_to_end_and_cached(tmp_path):
    spec = make_imdb_jsonl(tmp_path / "m")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"imdb": dataset("imdb", "", spec)})
    x_train, y_train, x_test, y_test = imdb_sequences(num_words=7, maxlen=6, **kw)
    # training counts: good 5, bad 3, film 2, ... -> good=4, bad=5, film=6; others OOV
    assert x_train.tolist()[2] == [0, 0, 0, 0, START, 4]
    assert x_test.tolist() == [[START, OOV, 6, OOV, OOV, OOV], [0, START, 4, 4, 4, 6]]
    assert y_train.tolist() == [0, 1, 1] and y_test.tolist() == [0, 1]
    derived = list((tmp_path / "c" / "imdb" / "derived").glob("sequences-*.pt"))
    assert len(derived) == 1
    again = imdb_sequences(num_words=7, maxlen=6, **kw)
    assert all(torch.equal(a, b) for a, b in zip(again, (x_train, y_train, x_test, y_test)))
    assert imdb_sequences(num_words=8, maxlen=6, **kw)[0].shape == (3, 6)
    assert len(list((tmp_path / "c" / "imdb" / "derived").glob("sequences-*.pt"))) == 2
    for bad in (dict(num_words=4), dict(maxlen=0), dict(maxlen=2.0)):
        with pytest.raises(ValueError):
            imdb_sequences(**bad, **kw)


def test_load_adult_parses_both_files(tmp_path):
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"adult": make_adult(tmp_path / "m")})
    train, test = load_adult("train", **kw), load_adult("test", **kw)
    assert len(train) == 10 and len(test) == 2
    assert test["income"].tolist() == ["<=50K", ">50K"]
    assert pd.isna(train.loc[9, "workclass"]) and train["age"].dtype == np.int64
    with pytest.raises(ValueError, match="split"):
        load_adult("valid", **kw)


def test_adult_features_are_a9a_shaped_one_hot_groups(tmp_path):
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"adult": make_adult(tmp_path / "m")})
    for split in ("train", "test"):
        x, y = adult_features(split, **kw)
        raw = load_adult(split, **kw)
        assert NUM_FEATURES == 123 and x.shape == (len(raw), 123) and x.dtype == torch.float32
        assert y.tolist() == (raw["income"] == ">50K").astype(int).tolist()
        start = 0
        for col, width in GROUPS:
            sums = x[:, start:start + width].sum(1).numpy()
            assert np.array_equal(sums, raw[col].notna().to_numpy().astype(np.float32)), col
            start += width
    x, _ = adult_features("train", **kw)
    # first record: State-gov is workclass 6 (column 11); capital-gain 2174 > 0 (column 75)
    assert x[0, 10] == 1 and x[0, 74] == 1 and x[1, 73] == 1
    with pytest.raises(ValueError, match="split"):
        adult_features("x", **kw)


def test_adult_unknown_category_is_an_error(tmp_path):
    from datafiles import ADULT_TRAIN
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c",
              registry={"adult": make_adult(tmp_path / "m", train=ADULT_TRAIN.replace("State-gov", "Space-gov"))})
    with pytest.raises(ValueError, match="Space-gov"):
        adult_features("train", **kw)


@given(st.lists(st.integers(0, 100), min_size=1, max_size=60), st.lists(st.integers(-10, 110), max_size=20))
def test_quintile_bins_are_monotone_and_balanced(train, values):
    train, values = np.array(train), np.array(sorted(values))
    bins = _quintile_bins(train, values)
    assert ((0 <= bins) & (bins <= 4)).all() and (np.diff(bins) >= 0).all()
    own = _quintile_bins(train, np.sort(train))
    if len(np.unique(train)) == len(train):  # no ties: each bin holds ~ a fifth
        counts = np.bincount(own, minlength=5)
        assert counts.max() - counts.min() <= 1


def test_quintile_bins_put_a_tied_block_in_one_bin():
    train = np.array([1] * 2 + [2] * 6 + [3] * 2)  # value 2 spans quintiles 1-3; mid-rank 0.5
    assert _quintile_bins(train, np.array([1, 2, 3])).tolist() == [0, 2, 4]


def test_load_movielens_both_formats(tmp_path):
    ml100, ml1m = make_movielens(tmp_path / "m", tmp_path / "web")
    kw = dict(mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"movielens-100k": ml100, "movielens-1m": ml1m})
    r = load_movielens("100k", **kw)
    assert r.dtype == torch.int64 and r.tolist() == MOVIELENS.tolist()
    assert load_movielens("1m", **kw).tolist() == MOVIELENS[::-1].tolist()
    numpy_ratings = read_movielens("100k", **kw)
    assert numpy_ratings.dtype == np.int64 and numpy_ratings.tolist() == MOVIELENS.tolist()
    with pytest.raises(ValueError, match="variant"):
        load_movielens("20m", **kw)


def test_torchvision_is_never_imported():
    assert "torchvision" not in sys.modules
