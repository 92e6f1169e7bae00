"""Tiny synthetic dataset files in the official formats, and registries with their checksums.

Used by tests/test_data_*.py: each builder writes files under a mirror directory laid out like
the real mirror (one folder per dataset) and returns a registry entry whose checksums are
computed from the bytes it wrote.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import tarfile
import zipfile
from pathlib import Path

import numpy as np

from dpnotes.data.registry import FileSpec, Source, dataset

COMPRESS = {"": lambda b: b, ".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress}


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def md5(b: bytes) -> str:
    return hashlib.md5(b).hexdigest()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def plain_spec(name: str, content: bytes, path: str, urls=(), container_md5=None) -> FileSpec:
    return FileSpec(name, (Source(path, tuple(urls), container_md5),), sha256=sha256(content), md5=md5(content))


def idx_bytes(arr: np.ndarray) -> bytes:
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    head = bytes([0, 0, 8, arr.ndim]) + b"".join(d.to_bytes(4, "big") for d in arr.shape)
    return head + arr.tobytes()


def tar_bytes(members: dict[str, bytes], mode: str = "w:gz") -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def make_idx(mirror: Path, name: str = "mnist", n=(7, 4), seed=0, suffix=".gz"):
    """IDX gz files of an MNIST-like dataset; returns (Dataset, {split: (images, labels)})."""
    rng = np.random.default_rng(seed)
    specs, arrays = [], {}
    for split, prefix, count in (("train", "train", n[0]), ("test", "t10k", n[1])):
        images = rng.integers(0, 256, (count, 28, 28), dtype=np.uint8)
        labels = rng.integers(0, 10, count, dtype=np.uint8)
        arrays[split] = (images, labels)
        for kind, arr in (("images-idx3", images), ("labels-idx1", labels)):
            fname = f"{prefix}-{kind}-ubyte"
            content = idx_bytes(arr)
            write(mirror / name / (fname + suffix), COMPRESS[suffix](content))
            specs.append(plain_spec(fname, content, f"{name}/{fname}.gz"))
    return dataset(name, "synthetic", *specs), arrays


def make_cifar(mirror: Path, per_batch=3, seed=0, mode="w:gz", archive="cifar-10/cifar-10-binary.tar.gz"):
    """A cifar-10-binary tar with 5 train batches + 1 test batch of ``per_batch`` records."""
    rng = np.random.default_rng(seed)
    members, specs, records = {}, [], {}
    for name in [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]:
        rec = rng.integers(0, 256, (per_batch, 3073), dtype=np.uint8)
        rec[:, 0] = rng.integers(0, 10, per_batch)
        records[name] = rec
        data = rec.tobytes()
        members[f"cifar-10-batches-bin/{name}"] = data
        specs.append(FileSpec(name, (Source("cifar-10/cifar-10-binary.tar.gz",
                                            member=f"cifar-10-batches-bin/{name}"),), md5=md5(data),
                              label_sha256=sha256(rec[:, 0].tobytes())))
    members["cifar-10-batches-bin/batches.meta.txt"] = b"airplane\n"
    write(mirror / archive, tar_bytes(members, mode))
    return dataset("cifar-10", "synthetic", *specs), records


IMDB_REVIEWS = [
    ("train", 0, "Bad bad film.<br />Really BAD, awful!"),
    ("train", 1, "A good film; good acting, good story."),
    ("train", 1, "good"),
    ("test", 0, "Awful film, unseen words here."),
    ("test", 1, "Good good good film"),
]


def make_imdb_jsonl(mirror: Path, reviews=IMDB_REVIEWS):
    content = "".join(json.dumps({"split": s, "label": y, "text": t}) + "\n" for s, y, t in reviews).encode()
    write(mirror / "imdb" / "imdb_reviews.jsonl.xz", lzma.compress(content))
    return plain_spec("imdb_reviews.jsonl", content, "imdb/imdb_reviews.jsonl.xz")


def make_imdb_tarball(directory: Path):
    """An aclImdb_v1.tar.gz holding IMDB_REVIEWS (ids out of order) plus an unsup review."""
    members = {"aclImdb/README": b"readme", "aclImdb/train/unsup/0_0.txt": b"unlabelled"}
    ids: dict[tuple, int] = {}
    for split, label, text in reversed(IMDB_REVIEWS):
        key = (split, label)
        ids[key] = ids.get(key, 8) + 2  # 10, 12, ... so that numeric and string order differ
        members[f"aclImdb/{split}/{'pos' if label else 'neg'}/{ids[key]}_{7 if label else 2}.txt"] = text.encode()
    data = tar_bytes(members)
    write(directory / "imdb" / "aclImdb_v1.tar.gz", data)
    return FileSpec("aclImdb_v1.tar.gz", (Source("imdb/aclImdb_v1.tar.gz",
                                                 ((directory / "imdb" / "aclImdb_v1.tar.gz").as_uri(),)),),
                    md5=md5(data), keep_compressed=True)


ADULT_TRAIN = """\
39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K
50, Self-emp-not-inc, 83311, Bachelors, 13, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 13, United-States, <=50K
38, Private, 215646, HS-grad, 9, Divorced, Handlers-cleaners, Not-in-family, White, Male, 0, 0, 40, United-States, <=50K
53, Private, 234721, 11th, 7, Married-civ-spouse, Handlers-cleaners, Husband, Black, Male, 0, 0, 40, United-States, <=50K
28, Private, 338409, Bachelors, 13, Married-civ-spouse, Prof-specialty, Wife, Black, Female, 0, 0, 40, Cuba, <=50K
37, Private, 284582, Masters, 14, Married-civ-spouse, Exec-managerial, Wife, White, Female, 0, 0, 40, United-States, <=50K
49, Private, 160187, 9th, 5, Married-spouse-absent, Other-service, Not-in-family, Black, Female, 0, 0, 16, Jamaica, <=50K
52, Self-emp-not-inc, 209642, HS-grad, 9, Married-civ-spouse, Exec-managerial, Husband, White, Male, 0, 0, 45, United-States, >50K
31, Private, 45781, Masters, 14, Never-married, Prof-specialty, Not-in-family, White, Female, 14084, 0, 50, United-States, >50K
42, ?, 159449, Bachelors, 13, Married-civ-spouse, ?, Husband, White, Male, 5178, 0, 40, ?, >50K

"""
ADULT_TEST = """\
|1x3 Cross validator
25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.
38, Private, 89814, HS-grad, 9, Married-civ-spouse, Farming-fishing, Husband, White, Male, 0, 1902, 50, ?, >50K.
"""


def make_adult(mirror: Path, train: str = ADULT_TRAIN, test: str = ADULT_TEST):
    specs = []
    for name, text in (("adult.data", train), ("adult.test", test)):
        content = text.encode()
        write(mirror / "adult" / (name + ".gz"), gzip.compress(content))
        specs.append(plain_spec(name, content, f"adult/{name}"))
    return dataset("adult", "synthetic", *specs)


MOVIELENS = np.array([[196, 242, 3, 881250949], [186, 302, 3, 891717742], [22, 377, 1, 878887116]])


def make_movielens(mirror: Path, official: Path):
    """u.data.gz in the mirror (100k); ml-1m.zip with ratings.dat at a file:// 'official' URL."""
    u_data = "".join("\t".join(map(str, r)) + "\n" for r in MOVIELENS).encode()
    write(mirror / "movielens-100k" / "u.data.gz", gzip.compress(u_data))
    ratings = "".join("::".join(map(str, r)) + "\n" for r in MOVIELENS[::-1]).encode()
    zdata = zip_bytes({"ml-1m/ratings.dat": ratings, "ml-1m/README": b"x"})
    zpath = write(official / "ml-1m.zip", zdata)
    ml100 = dataset("movielens-100k", "synthetic", plain_spec("u.data", u_data, "movielens-100k/u.data"))
    ml1m = dataset("movielens-1m", "synthetic", FileSpec("ratings.dat", (
        Source("movielens-1m/ml-1m.zip", (zpath.as_uri(),), md5(zdata), member="ml-1m/ratings.dat"),)))
    return ml100, ml1m
