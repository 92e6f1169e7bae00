"""dpnotes.data store and registry: cache -> mirrors -> URLs, checksums, atomic caching, verify()."""

import gzip
import os

import pytest
from datafiles import COMPRESS, make_cifar, make_idx, make_imdb_tarball, make_movielens, md5, plain_spec, sha256, write

from dpnotes.data import ChecksumError, fetch, verify
from dpnotes.data.registry import REGISTRY, FileSpec, Source, dataset, get_dataset
from dpnotes.data.store import MIRROR_ENV, atomic_write, cache_root, fetch_any, mirror_roots


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch, tmp_path):
    monkeypatch.delenv(MIRROR_ENV, raising=False)
    monkeypatch.setenv("DPNOTES_CACHE", str(tmp_path / "default-cache"))


def leftovers(cache):
    return sorted(p.name for p in cache.rglob("*") if p.is_file() and p.name.endswith(".part"))


def test_fetch_from_mirror_caches_decompressed_content_and_then_needs_no_mirror(tmp_path):
    ds, arrays = make_idx(tmp_path / "m")
    reg, cache = {"mnist": ds}, tmp_path / "c"
    paths = fetch("mnist", mirror=tmp_path / "m", cache_dir=cache, registry=reg)
    assert set(paths) == set(ds.files)
    for name, path in paths.items():
        assert path == cache / "mnist" / name
        assert sha256(path.read_bytes()) == ds.files[name].sha256
    again = fetch("mnist", mirror=tmp_path / "nowhere", cache_dir=cache, registry=reg)
    assert again == paths


@pytest.mark.parametrize("suffix", ["", ".xz", ".bz2"])
def test_recompressed_mirror_copy_verifies_by_content(tmp_path, suffix):
    ds, _ = make_idx(tmp_path / "m", suffix=suffix)
    paths = fetch("mnist", mirror=str(tmp_path / "m"), cache_dir=tmp_path / "c", registry={"mnist": ds})
    assert all(sha256(p.read_bytes()) == ds.files[n].sha256 for n, p in paths.items())


def test_corrupt_mirror_file_names_it_and_leaves_nothing_in_cache(tmp_path):
    ds, _ = make_idx(tmp_path / "m")
    bad = tmp_path / "m" / "mnist" / "train-labels-idx1-ubyte.gz"
    bad.write_bytes(gzip.compress(gzip.decompress(bad.read_bytes()) + b"\x00"))
    cache = tmp_path / "c"
    with pytest.raises(ChecksumError, match="train-labels-idx1-ubyte.gz") as exc:
        fetch("mnist", ["train-labels-idx1-ubyte"], mirror=tmp_path / "m", cache_dir=cache,
              registry={"mnist": ds})
    assert isinstance(exc.value, ValueError) and "mirror" in str(exc.value)
    assert not (cache / "mnist" / "train-labels-idx1-ubyte").exists()
    assert leftovers(cache) == []


def test_truncated_compressed_mirror_file_leaves_nothing_in_cache(tmp_path):
    ds, _ = make_idx(tmp_path / "m")
    bad = tmp_path / "m" / "mnist" / "train-images-idx3-ubyte.gz"
    bad.write_bytes(bad.read_bytes()[:500])
    cache = tmp_path / "c"
    with pytest.raises(ChecksumError, match="train-images-idx3-ubyte.gz: cannot be read"):
        fetch("mnist", ["train-images-idx3-ubyte"], mirror=tmp_path / "m", cache_dir=cache,
              registry={"mnist": ds})
    assert [p for p in (cache / "mnist").iterdir()] == []


def test_corrupt_cached_file_is_an_error_naming_it(tmp_path):
    ds, _ = make_idx(tmp_path / "m")
    reg, cache = {"mnist": ds}, tmp_path / "c"
    path = fetch("mnist", ["t10k-labels-idx1-ubyte"], mirror=tmp_path / "m", cache_dir=cache, registry=reg)[
        "t10k-labels-idx1-ubyte"]
    path.write_bytes(path.read_bytes()[:-1] + b"\xff")
    with pytest.raises(ChecksumError, match="Delete the cached file") as exc:
        fetch("mnist", ["t10k-labels-idx1-ubyte"], mirror=tmp_path / "m", cache_dir=cache, registry=reg)
    assert str(path) in str(exc.value)


def test_a_cached_file_is_verified_by_its_strongest_checksum_alone(tmp_path, monkeypatch):
    """A file with a sha256 is checked by it (an md5 adds nothing); an md5-only file (CIFAR-10's
    members) by its md5: one digest per load, and corruption is caught either way."""
    from dpnotes.data import store

    asked, hash_stream = [], store._hash_stream

    def counted(stream, out, algorithms):
        asked.append(tuple(algorithms))
        return hash_stream(stream, out, algorithms)

    monkeypatch.setattr(store, "_hash_stream", counted)
    idx, _ = make_idx(tmp_path / "m")
    cifar, _ = make_cifar(tmp_path / "m")
    reg, cache = {"mnist": idx, "cifar-10": cifar}, tmp_path / "c"
    for name, file in (("mnist", "t10k-labels-idx1-ubyte"), ("cifar-10", "test_batch.bin")):
        spec = reg[name].files[file]
        want = ("sha256",) if spec.sha256 else ("md5",)
        path = fetch(name, [file], mirror=tmp_path / "m", cache_dir=cache, registry=reg)[file]
        asked.clear()
        fetch(name, [file], mirror=tmp_path / "m", cache_dir=cache, registry=reg)
        assert asked == [want]
        path.write_bytes(path.read_bytes()[:-1] + bytes([path.read_bytes()[-1] ^ 1]))
        with pytest.raises(ChecksumError, match=f"{want[0]} of its content"):
            fetch(name, [file], mirror=tmp_path / "m", cache_dir=cache, registry=reg)
    assert idx.files["t10k-labels-idx1-ubyte"].md5 and idx.files["t10k-labels-idx1-ubyte"].sha256


def test_missing_everywhere_is_file_not_found_saying_what_to_do(tmp_path):
    ds, _ = make_idx(tmp_path / "m")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError) as exc:
        fetch("mnist", mirror=tmp_path / "empty", cache_dir=tmp_path / "c", registry={"mnist": ds})
    msg = str(exc.value)
    assert "train-images-idx3-ubyte" in msg and MIRROR_ENV in msg and "internet" in msg
    with pytest.raises(FileNotFoundError, match="none set"):
        fetch("mnist", cache_dir=tmp_path / "c", registry={"mnist": ds})


def test_env_var_with_several_mirrors_searches_each(tmp_path, monkeypatch):
    ds, _ = make_idx(tmp_path / "second")
    (tmp_path / "first" / "mnist").mkdir(parents=True)
    monkeypatch.setenv(MIRROR_ENV, os.pathsep.join(["", str(tmp_path / "first"), str(tmp_path / "second")]))
    assert mirror_roots() == [tmp_path / "first", tmp_path / "second"]
    paths = fetch("mnist", cache_dir=tmp_path / "c", registry={"mnist": ds})
    assert len(paths) == 4


def test_first_mirror_wins_and_option_replaces_env(tmp_path, monkeypatch):
    ds1, a1 = make_idx(tmp_path / "one", seed=1)
    _, a2 = make_idx(tmp_path / "two", seed=2)
    monkeypatch.setenv(MIRROR_ENV, str(tmp_path / "two"))
    assert mirror_roots([tmp_path / "one", str(tmp_path / "x")]) == [tmp_path / "one", tmp_path / "x"]
    # seed-2 files do not match the seed-1 registry: the option must keep the env mirror out
    paths = fetch("mnist", mirror=[tmp_path / "one"], cache_dir=tmp_path / "c", registry={"mnist": ds1})
    assert len(paths) == 4
    with pytest.raises(ChecksumError, match=str(tmp_path / "two")):
        fetch("mnist", cache_dir=tmp_path / "c2", registry={"mnist": ds1})


def test_cache_root_default_and_env(tmp_path, monkeypatch):
    assert cache_root(tmp_path) == tmp_path
    monkeypatch.setenv("DPNOTES_CACHE", str(tmp_path / "e"))
    assert cache_root() == tmp_path / "e"
    monkeypatch.delenv("DPNOTES_CACHE")
    assert cache_root() == cache_root("~/.cache/dpnotes")


def test_download_from_url_checks_published_container_md5(tmp_path):
    content = b"1\t2\t3\t4\n"
    official = write(tmp_path / "web" / "u.data.gz", gzip.compress(content))
    good = plain_spec("u.data", content, "movielens-100k/u.data.gz", [official.as_uri()], md5(official.read_bytes()))
    path = fetch("movielens-100k", cache_dir=tmp_path / "c",
                 registry={"movielens-100k": dataset("movielens-100k", "", good)})["u.data"]
    assert path.read_bytes() == content
    bad = plain_spec("u.data", content, "movielens-100k/u.data.gz", [official.as_uri()], "0" * 32)
    cache = tmp_path / "c2"
    with pytest.raises(ChecksumError, match="published"):
        fetch("movielens-100k", cache_dir=cache, registry={"movielens-100k": dataset("movielens-100k", "", bad)})
    assert list((cache / "movielens-100k").iterdir()) == []


def test_offline_download_failure_is_a_clear_file_not_found(tmp_path):
    spec = plain_spec("u.data", b"x", "movielens-100k/u.data", ["http://127.0.0.1:9/u.data"])
    with pytest.raises(FileNotFoundError, match=r"127\.0\.0\.1:9.*connect to the internet"):
        fetch("movielens-100k", cache_dir=tmp_path / "c",
              registry={"movielens-100k": dataset("movielens-100k", "", spec)})


def test_archive_members_extracted_in_one_pass_from_recompressed_tar(tmp_path):
    ds, records = make_cifar(tmp_path / "m", mode="w:xz", archive="cifar-10/cifar-10-binary.tar.xz")
    paths = fetch("cifar-10", mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry={"cifar-10": ds})
    assert {n: p.read_bytes() for n, p in paths.items()} == {n: r.tobytes() for n, r in records.items()}


def test_one_member_request_caches_all_members_of_the_archive(tmp_path):
    ds, records = make_cifar(tmp_path / "m")
    reg, cache = {"cifar-10": ds}, tmp_path / "c"
    fetch("cifar-10", ["test_batch.bin"], mirror=tmp_path / "m", cache_dir=cache, registry=reg)
    assert sorted(p.name for p in (cache / "cifar-10").iterdir()) == sorted(records)
    paths = fetch("cifar-10", ["data_batch_3.bin"], mirror=tmp_path / "gone", cache_dir=cache, registry=reg)
    assert paths["data_batch_3.bin"].read_bytes() == records["data_batch_3.bin"].tobytes()


def test_archive_missing_member_is_an_error(tmp_path):
    ds, _ = make_cifar(tmp_path / "m")
    extra = FileSpec("data_batch_9.bin", (Source("cifar-10/cifar-10-binary.tar.gz",
                                                 member="cifar-10-batches-bin/data_batch_9.bin"),), md5="0" * 32)
    reg = {"cifar-10": dataset("cifar-10", "", *ds.files.values(), extra)}
    with pytest.raises(ChecksumError, match="no member cifar-10-batches-bin/data_batch_9.bin"):
        fetch("cifar-10", mirror=tmp_path / "m", cache_dir=tmp_path / "c", registry=reg)


def test_file_without_content_checksum_needs_matching_container(tmp_path):
    _, ml1m = make_movielens(tmp_path / "m", tmp_path / "web")
    reg = {"movielens-1m": ml1m}
    zipped = tmp_path / "web" / "ml-1m.zip"
    # a mirror copy of the official container is accepted only if its md5 matches
    write(tmp_path / "m2" / "movielens-1m" / "ml-1m.zip", zipped.read_bytes() + b"junk")
    with pytest.raises(ChecksumError, match="published"):
        fetch("movielens-1m", mirror=tmp_path / "m2", cache_dir=tmp_path / "c", registry=reg)
    path = fetch("movielens-1m", cache_dir=tmp_path / "c", registry=reg)["ratings.dat"]
    assert path.read_bytes().startswith(b"22::377::1")


def test_fetch_any_prefers_an_earlier_stage_over_an_earlier_alternative(tmp_path):
    tar_spec = make_imdb_tarball(tmp_path / "web")
    content = b'{"split": "train", "label": 1, "text": "x"}\n'
    write(tmp_path / "m" / "imdb" / "imdb_reviews.jsonl.xz", COMPRESS[".xz"](content))
    jsonl = plain_spec("imdb_reviews.jsonl", content, "imdb/imdb_reviews.jsonl.xz")
    reg = {"imdb": dataset("imdb", "", jsonl, tar_spec)}
    kw = dict(cache_dir=tmp_path / "c", registry=reg)
    # no mirror: the URL stage gives the second alternative
    i, paths = fetch_any("imdb", [["imdb_reviews.jsonl"], ["aclImdb_v1.tar.gz"]], **kw)
    assert i == 1 and list(paths) == ["aclImdb_v1.tar.gz"]
    assert paths["aclImdb_v1.tar.gz"].read_bytes() == (tmp_path / "web" / "imdb" / "aclImdb_v1.tar.gz").read_bytes()
    # now the second is cached: the cache stage wins over the mirror's first alternative
    i, _ = fetch_any("imdb", [["imdb_reviews.jsonl"], ["aclImdb_v1.tar.gz"]], mirror=tmp_path / "m", **kw)
    assert i == 1
    with pytest.raises(ValueError, match="alternatives"):
        fetch_any("imdb", [], **kw)


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    dest = tmp_path / "d" / "f"
    with pytest.raises(RuntimeError):
        with atomic_write(dest) as out:
            out.write(b"partial")
            raise RuntimeError("interrupted")
    assert list((tmp_path / "d").iterdir()) == []
    with atomic_write(dest) as out:
        out.write(b"whole")
    assert dest.read_bytes() == b"whole" and list((tmp_path / "d").iterdir()) == [dest]


def test_registry_is_consistent():
    assert set(REGISTRY) == {"mnist", "fashion-mnist", "cifar-10", "imdb", "adult", "movielens-100k",
                             "movielens-1m"}
    for ds in REGISTRY.values():
        assert ds.files
        for spec in ds.files.values():
            for s in spec.sources:
                assert s.path.split("/")[0] == ds.name
                assert all(u.startswith(("http://", "https://")) for u in s.urls)
            for algo, n in (("sha256", 64), ("md5", 32)):
                v = getattr(spec, algo)
                assert v is None or (len(v) == n and int(v, 16) >= 0)


def test_registry_rejects_unverifiable_files_and_bad_names():
    with pytest.raises(ValueError, match="cannot be verified"):
        FileSpec("x", (Source("d/x"),))
    with pytest.raises(ValueError, match="no source"):
        FileSpec("x", (), sha256="0" * 64)
    with pytest.raises(ValueError, match="dataset must be one of"):
        get_dataset("svhn")
    with pytest.raises(ValueError, match="has no file 'nope'"):
        fetch("mnist", ["nope"])
    assert Source("a/b.tar.gz").mirror_candidates() == ("a/b.tar.gz", "a/b.tar", "a/b.tar.xz", "a/b.tar.bz2")


def test_verify_reports_good_and_bad_files_without_writing(tmp_path):
    ds, _ = make_idx(tmp_path / "m")
    cifar, _ = make_cifar(tmp_path / "m")
    bad = tmp_path / "m" / "mnist" / "t10k-images-idx3-ubyte.gz"
    bad.write_bytes(gzip.compress(b"not an idx file"))
    results = verify(tmp_path / "m", registry={"mnist": ds, "cifar-10": cifar})
    by_path = {r.path.name: r for r in results}
    assert len(results) == 5
    assert not by_path["t10k-images-idx3-ubyte.gz"].ok and "sha256" in by_path["t10k-images-idx3-ubyte.gz"].detail
    assert by_path["cifar-10-binary.tar.gz"].ok and len(by_path["cifar-10-binary.tar.gz"].files) == 6
    assert sum(r.ok for r in results) == 4
    assert sorted(p.name for p in (tmp_path / "m").rglob("*") if p.is_file()) == sorted(
        ["cifar-10-binary.tar.gz"] + [n + ".gz" for n in ds.files])


def test_verify_needs_an_existing_mirror(tmp_path):
    with pytest.raises(ValueError, match="no mirror"):
        verify()
    with pytest.raises(FileNotFoundError, match="does not exist"):
        verify(tmp_path / "absent")
