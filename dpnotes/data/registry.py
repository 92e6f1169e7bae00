"""The dataset registry: every file the loaders read, where it may be found, and its checksums.

A :class:`FileSpec` is one file as the loaders read it from the cache (decompressed unless
``keep_compressed``).  Its ``sha256``/``md5`` are checksums of that content, so a mirror may
recompress a file (``.gz``, ``.xz``, ``.bz2``) and still verify.  Each spec lists the
:class:`Source` containers it can be taken from: a path relative to a mirror root, optional
official URLs, the published md5 of the official container where one exists, and the archive
member (tar or zip) holding the file.

Checksums come from the publishers (CIFAR-10 archive, Fashion-MNIST, GroupLens, the MNIST
files as distributed by LeCun) or, for content checksums, from the offline mirror's CHECKSUMS
and README (each verified there against the publishers' md5s).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

COMPRESSION_SUFFIXES = (".gz", ".xz", ".bz2")


@dataclass(frozen=True)
class Source:
    """A container a file can be taken from.

    ``path`` is relative to a mirror root (``/``-separated, first component = dataset folder);
    ``urls`` are tried in order; ``md5`` is the published checksum of the official container
    (checked on every download, and on mirror copies of files that have no content checksum);
    ``member`` is the file's path inside the container when it is a tar or zip archive.
    """

    path: str
    urls: tuple[str, ...] = ()
    md5: str | None = None
    member: str | None = None

    def mirror_candidates(self) -> tuple[str, ...]:
        """Relative paths to look for in a mirror: the official name first, then recompressions."""
        stem = self.path
        for suffix in COMPRESSION_SUFFIXES:
            if stem.endswith(suffix):
                stem = stem[: -len(suffix)]
                break
        names = [self.path] + [stem + s for s in ("",) + COMPRESSION_SUFFIXES]
        return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class FileSpec:
    """One file of a dataset, identified in the cache by ``name``."""

    name: str
    sources: tuple[Source, ...]
    sha256: str | None = None
    md5: str | None = None
    keep_compressed: bool = False
    # sha256 of the label bytes alone of a file of fixed-size records (CIFAR-10: byte 0 of each
    # 3073-byte record), so that counting labels verifies what it reads without hashing every
    # image (:func:`dpnotes.data.images.read_labels`); taken from the md5-verified files.
    label_sha256: str | None = None

    def __post_init__(self):
        if not self.sources:
            raise ValueError(f"file {self.name!r} has no source")
        if self.sha256 is None and self.md5 is None and not all(s.md5 for s in self.sources):
            raise ValueError(
                f"file {self.name!r} cannot be verified: it needs a content checksum, "
                "or a published container md5 on every source"
            )


@dataclass(frozen=True)
class Dataset:
    """A dataset's files, and ``sizes``: counts that configs need before any file is read
    (e.g. MovieLens-100k's numbers of users and items, which size the GDP model), checked
    against the files by tests/test_data_mirror.py when the mirror is present."""

    name: str
    description: str
    files: Mapping[str, FileSpec] = field(default_factory=dict)
    sizes: Mapping[str, int] = field(default_factory=dict)

    def file(self, name: str) -> FileSpec:
        try:
            return self.files[name]
        except KeyError:
            raise ValueError(
                f"dataset {self.name!r} has no file {name!r}; it has {', '.join(self.files)}"
            ) from None


def dataset(name: str, description: str, *files: FileSpec, sizes: Mapping[str, int] | None = None) -> Dataset:
    """Build a :class:`Dataset` from its file specs (keyed by their names) and its ``sizes``."""
    return Dataset(name, description, MappingProxyType({f.name: f for f in files}), MappingProxyType(dict(sizes or {})))


def _idx(folder: str, name: str, base_urls: tuple[str, ...], gz_md5: str, sha256: str, md5: str):
    return FileSpec(
        name,
        (Source(f"{folder}/{name}.gz", tuple(u + name + ".gz" for u in base_urls), gz_md5),),
        sha256=sha256,
        md5=md5,
    )


_MNIST_URLS = ("https://ossci-datasets.s3.amazonaws.com/mnist/", "http://yann.lecun.com/exdb/mnist/")
_FASHION_URLS = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
_CIFAR = Source(
    "cifar-10/cifar-10-binary.tar.gz",
    ("https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz",),
    "c32a1d4ab5d03f1284b67883e8d87530",
)
_UCI_ADULT = "https://archive.ics.uci.edu/ml/machine-learning-databases/adult/"
_GROUPLENS = "https://files.grouplens.org/datasets/movielens/"


def _cifar(name: str, md5: str, label_sha256: str) -> FileSpec:
    src = Source(_CIFAR.path, _CIFAR.urls, _CIFAR.md5, member=f"cifar-10-batches-bin/{name}")
    return FileSpec(name, (src,), md5=md5, label_sha256=label_sha256)


def _adult(name: str, sha256: str, md5: str) -> FileSpec:
    return FileSpec(name, (Source(f"adult/{name}", (_UCI_ADULT + name,)),), sha256=sha256, md5=md5)


_DATASETS = (
    dataset(
        "mnist",
        "MNIST handwritten digits, 60,000 train + 10,000 test, IDX format (LeCun et al.)",
        _idx("mnist", "train-images-idx3-ubyte", _MNIST_URLS, "f68b3c2dcbeaaa9fbdd348bbdeb94873",
             "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
             "6bbc9ace898e44ae57da46a324031adb"),
        _idx("mnist", "train-labels-idx1-ubyte", _MNIST_URLS, "d53e105ee54ea40749a09fcbcd1e9432",
             "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
             "a25bea736e30d166cdddb491f175f624"),
        _idx("mnist", "t10k-images-idx3-ubyte", _MNIST_URLS, "9fb629c4189551a2d022fa330f9573f3",
             "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
             "2646ac647ad5339dbf082846283269ea"),
        _idx("mnist", "t10k-labels-idx1-ubyte", _MNIST_URLS, "ec29112dd5afa0611ce80d1b7f02629c",
             "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
             "27ae3e4e09519cfbb04c329615203637"),
    ),
    dataset(
        "fashion-mnist",
        "Fashion-MNIST (Xiao et al. 2017), 60,000 train + 10,000 test, IDX format",
        _idx("fashion-mnist", "train-images-idx3-ubyte", _FASHION_URLS,
             "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
             "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
             "f4a8712d7a061bf5bd6d2ca38dc4d50a"),
        _idx("fashion-mnist", "train-labels-idx1-ubyte", _FASHION_URLS,
             "25c81989df183df01b3e8a0aad5dffbe",
             "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
             "9018921c3c673c538a1fc5bad174d6f9"),
        _idx("fashion-mnist", "t10k-images-idx3-ubyte", _FASHION_URLS,
             "bef4ecab320f06d8554ea6380940ec79",
             "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
             "8181f5470baa50b63fa0f6fddb340f0a"),
        _idx("fashion-mnist", "t10k-labels-idx1-ubyte", _FASHION_URLS,
             "bb300cfdad3c16e7a12a480ee83cd310",
             "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
             "15d484375f8d13e6eb1aabb0c3f46965"),
    ),
    dataset(
        "cifar-10",
        "CIFAR-10 (Krizhevsky 2009), binary version, 50,000 train + 10,000 test",
        _cifar("data_batch_1.bin", "5dd7e06a14cb22eb9f671a540d1b7c25",
               "d829dbdf32167c9d7b3687cee66d92d80d46c441308b5aca0d11e8b69e27dac9"),
        _cifar("data_batch_2.bin", "5ea93a67294ea407fff1d09f752e9692",
               "5d18f7371ed35ea9ade77952fe958b0660a45cd6c8b8a8970030f21612cfd7e3"),
        _cifar("data_batch_3.bin", "942cd6a4bcdd0dd3c604fbe906cb4421",
               "32cf77b0ee2e790b1c4384d2d82e42dc1571b87e67f6da8f444b2725b2973f65"),
        _cifar("data_batch_4.bin", "ae636b3ba5c66a11e91e8cb52e771fcb",
               "d2815e3f8f656272864920fc0edde56b04ec9cf81bf397c0dd3069f4aea51aeb"),
        _cifar("data_batch_5.bin", "53f37980c15c3d472c316c40844f3f0d",
               "2ddf3ab27d5d04409c94ce7b56849c243129c10de1058ae0bfe14c77e934800c"),
        _cifar("test_batch.bin", "803d5f7f4d78ea53de84dbe85f74fb6d",
               "cec8a24a1e92aa2ecaa0bbd3dbfa86bf6cd8759fbd209a832824c8cf0afca9d5"),
    ),
    dataset(
        "imdb",
        "IMDb large movie review set v1 (Maas et al. 2011), 25,000 train + 25,000 test; "
        "either the mirror's JSON-lines form or the official aclImdb_v1 tarball",
        FileSpec(
            "imdb_reviews.jsonl",
            (Source("imdb/imdb_reviews.jsonl.xz"),),
            sha256="53b15c05133e00eefca071b911960a6ca7a32af71e4760c819e0df5bc08c8a21",
            md5="a571c0150135bd8f0d6f711fd83be46b",
        ),
        FileSpec(
            "aclImdb_v1.tar.gz",
            (Source("imdb/aclImdb_v1.tar.gz",
                    ("https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",)),),
            md5="7c2ac02c03563afcf9b574c7e56c153a",
            keep_compressed=True,
        ),
    ),
    dataset(
        "adult",
        "UCI Adult / Census Income (Kohavi 1996), 32,561 train + 16,281 test rows",
        _adult("adult.data", "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
               "5d7c39d7b8804f071cdd1f2a7c460872"),
        _adult("adult.test", "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
               "35238206dfdf7f1fe215bbb874adecdc"),
        _adult("adult.names", "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
               "1a7cdb3ff7a1b709968b1c7a11def63e"),
    ),
    dataset(
        "movielens-100k",
        "MovieLens 100k (GroupLens), 100,000 ratings of 1,682 movies by 943 users",
        FileSpec(
            "u.data",
            (
                Source("movielens-100k/u.data"),
                Source("movielens-100k/ml-100k.zip", (_GROUPLENS + "ml-100k.zip",),
                       "0e33842e24a9c977be4e0107933c0723", member="ml-100k/u.data"),
            ),
            sha256="06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
            md5="6e47046882bad158b0efbb84cd5cb987",
        ),
        sizes={"ratings": 100_000, "users": 943, "items": 1_682},  # ids 1..943 and 1..1682 in u.data
    ),
    dataset(
        "movielens-1m",
        "MovieLens 1M (GroupLens), 1,000,209 ratings by 6,040 users; verified by the "
        "published md5 of ml-1m.zip (no content checksum is known)",
        FileSpec(
            "ratings.dat",
            (Source("movielens-1m/ml-1m.zip", (_GROUPLENS + "ml-1m.zip",),
                    "c4d9eecfca2ab87c1945afe126590906", member="ml-1m/ratings.dat"),),
        ),
    ),
)

REGISTRY: Mapping[str, Dataset] = MappingProxyType({d.name: d for d in _DATASETS})


def datasets(registry: Mapping[str, Dataset] | None = None) -> Mapping[str, Dataset]:
    """``registry``, or :data:`REGISTRY` when None."""
    return REGISTRY if registry is None else registry


def size(name: str, what: str) -> int:
    """The registered count ``what`` of dataset ``name`` (``ValueError`` naming both if absent)."""
    sizes = get_dataset(name).sizes
    if what not in sizes:
        raise ValueError(f"dataset {name!r} registers no size {what!r}; it has {', '.join(sizes) or 'none'}")
    return sizes[what]


def get_dataset(name: str, registry: Mapping[str, Dataset] | None = None) -> Dataset:
    """The registered dataset ``name`` (from ``registry``, default :data:`REGISTRY`)."""
    registry = datasets(registry)
    try:
        return registry[name]
    except KeyError:
        raise ValueError(f"dataset must be one of {', '.join(map(repr, registry))}; got {name!r}") from None
