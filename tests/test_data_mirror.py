"""dpnotes.data on the real dataset mirror (run with DPNOTES_DATA_MIRROR set, e.g. /work/shared/data)."""

import contextlib
import os

import pytest
import torch

from dpnotes.data import (
    adult_features,
    imdb_sequences,
    load_adult,
    load_cifar10,
    load_fashion_mnist,
    load_imdb,
    load_mnist,
    load_movielens,
    store,
    verify,
)
from dpnotes.data.adult import CATEGORIES

pytestmark = [
    pytest.mark.mirror,
    pytest.mark.skipif(not os.environ.get("DPNOTES_DATA_MIRROR"), reason="DPNOTES_DATA_MIRROR is not set"),
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("dpnotes-cache")


def test_verify_every_mirror_file_but_cifar():
    from dpnotes.data.registry import REGISTRY
    results = verify(registry={k: v for k, v in REGISTRY.items() if k != "cifar-10"})
    assert results and all(r.ok for r in results), [r for r in results if not r.ok]
    assert {r.dataset for r in results} >= {"mnist", "fashion-mnist", "imdb", "adult", "movielens-100k"}



@contextlib.contextmanager
def _cache_only():
    """Inside: any read from a mirror or a download fails the test (the data must come from the cache)."""
    def refuse(*args, **kwargs):
        raise AssertionError("read from a mirror or the network, not from the cache")

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(store, "_from_mirrors", refuse)
        mp.setattr(store, "_from_urls", refuse)
        yield


@pytest.mark.parametrize("loader", [load_mnist, load_fashion_mnist])
def test_idx_datasets_and_cached_load_time(cache, loader):
    x, y = loader("train", cache_dir=cache)
    assert x.shape == (60000, 28, 28) and x.dtype == torch.uint8
    counts = y.bincount()
    assert counts.numel() == 10 and int(counts.min()) > 5000
    if loader is load_fashion_mnist:
        assert counts.tolist() == [6000] * 10
    with _cache_only():
        x2, y2 = loader("train", cache_dir=cache)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    xt, yt = loader("test", cache_dir=cache)
    assert xt.shape == (10000, 28, 28) and yt.shape == (10000,)


def test_adult_records_and_a9a_features(cache):
    train, test = load_adult("train", cache_dir=cache), load_adult("test", cache_dir=cache)
    assert len(train) == 32561 and len(test) == 16281
    x, y = adult_features("train", cache_dir=cache)
    assert x.shape == (32561, 123) and set(x.unique().tolist()) == {0.0, 1.0}
    # a9a's (and a1a's) first record has exactly these 1-based columns set (LIBSVM data file)
    a9a_first_row = [3, 11, 14, 19, 39, 42, 55, 64, 67, 73, 75, 76, 80, 83]
    assert (x[0].nonzero().flatten() + 1).tolist() == a9a_first_row
    # a row has one column per attribute, minus its missing values
    assert torch.equal(x.sum(1), torch.tensor(14.0 - train.isna().sum(axis=1).to_numpy(), dtype=torch.float32))
    xt, yt = adult_features("test", cache_dir=cache)
    assert xt.shape == (16281, 123) and 0.2 < yt.float().mean() < 0.3


def test_adult_category_lists_equal_adult_names(cache):
    from dpnotes.data import fetch
    names = fetch("adult", ["adult.names"], cache_dir=cache)["adult.names"].read_text()
    listed = {}
    for line in names.splitlines():
        key, sep, rest = line.partition(": ")
        if sep and key in CATEGORIES:
            listed[key] = tuple(v.strip() for v in rest.rstrip(".").split(","))
    assert listed == CATEGORIES


def test_movielens_100k(cache):
    r = load_movielens("100k", cache_dir=cache)
    assert r.shape == (100000, 4) and r[:, 0].unique().numel() == 943 and r[:, 1].unique().numel() == 1682
    assert r[0].tolist() == [196, 242, 3, 881250949]


def test_movielens_100k_sizes_in_the_registry_are_the_files(cache):
    # the GDP configs size their model from the registry, so listing runs needs no data
    from dpnotes.data.registry import get_dataset

    r = load_movielens("100k", cache_dir=cache)
    sizes = get_dataset("movielens-100k").sizes
    assert dict(sizes) == {"ratings": len(r), "users": int(r[:, 0].max()), "items": int(r[:, 1].max())}
    assert r[:, 0].unique().numel() == sizes["users"] and r[:, 1].unique().numel() == sizes["items"]


def test_movielens_1m_is_not_in_the_mirror(cache):
    # the official URL is unreachable here too; a registry without URLs keeps the test offline
    from dpnotes.data.registry import REGISTRY, FileSpec, Source, dataset
    spec = REGISTRY["movielens-1m"].files["ratings.dat"]
    offline = FileSpec(spec.name, tuple(Source(s.path, (), s.md5, s.member) for s in spec.sources))
    with pytest.raises(FileNotFoundError, match="ratings.dat"):
        load_movielens("1m", cache_dir=cache, registry={"movielens-1m": dataset("movielens-1m", "", offline)})


def test_imdb_texts(cache):
    texts, y = load_imdb("train", cache_dir=cache)
    assert len(texts) == 25000 and int(y.sum()) == 12500
    assert texts[0].startswith("Story of a man who has unnatural feelings for a pig.")
    texts, y = load_imdb("test", cache_dir=cache)
    assert len(texts) == 25000 and int(y.sum()) == 12500


@pytest.mark.slow
def test_imdb_sequences(cache):
    x_train, y_train, x_test, y_test = imdb_sequences(cache_dir=cache)
    assert x_train.shape == (25000, 256) and x_test.shape == (25000, 256)
    assert int(x_train.max()) == 9999 and int(x_train.min()) == 0
    # every row ends in a word or holds the start marker after its padding
    assert bool((x_train[:, -1] != 0).all())
    with _cache_only():
        again = imdb_sequences(cache_dir=cache)
    assert torch.equal(again[0], x_train)


@pytest.mark.slow
def test_cifar10_from_the_xz_mirror(cache):
    x, y = load_cifar10("train", cache_dir=cache)
    assert x.shape == (50000, 3, 32, 32) and y.bincount().tolist() == [5000] * 10
    with _cache_only():  # the test batch was unpacked with the train batches
        xt, yt = load_cifar10("test", cache_dir=cache)
    assert xt.shape == (10000, 3, 32, 32) and yt.bincount().tolist() == [1000] * 10


@pytest.mark.slow
def test_cifar10_label_checksums_are_those_of_the_md5_verified_files(cache):
    """The registry's label_sha256 (what read_labels verifies) against the labels of the files
    as the loaders verify them (md5 of the whole content)."""
    import hashlib

    import numpy as np

    from dpnotes.data import read_labels
    from dpnotes.data.registry import REGISTRY

    _, y = load_cifar10("train", cache_dir=cache)
    with _cache_only():
        _, yt = load_cifar10("test", cache_dir=cache)
    files = REGISTRY["cifar-10"].files
    for i, name in enumerate(f"data_batch_{k}.bin" for k in range(1, 6)):
        part = y[i * 10000:(i + 1) * 10000].numpy().astype(np.uint8)
        assert hashlib.sha256(part.tobytes()).hexdigest() == files[name].label_sha256
    assert hashlib.sha256(yt.numpy().astype(np.uint8).tobytes()).hexdigest() == files["test_batch.bin"].label_sha256
    with _cache_only():
        assert np.array_equal(read_labels("cifar-10", cache_dir=cache), y.numpy())

