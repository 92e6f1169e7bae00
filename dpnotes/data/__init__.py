"""Dataset loaders: offline-first, checksummed, returning tensors (never torchvision objects).

Files are looked up in the cache (``cache_dir``, ``$DPNOTES_CACHE`` or ``~/.cache/dpnotes``),
then in mirror directories (``mirror=`` or the ``os.pathsep``-separated ``$DPNOTES_DATA_MIRROR``),
then at the official URLs; see :mod:`dpnotes.data.store` and :mod:`dpnotes.data.registry`.
"""

from dpnotes.data.adult import adult_features, load_adult
from dpnotes.data.images import load_cifar10, load_fashion_mnist, load_mnist, read_labels
from dpnotes.data.imdb import imdb_sequences, load_imdb
from dpnotes.data.movielens import load_movielens, read_movielens
from dpnotes.data.registry import REGISTRY, Dataset, FileSpec, Source, get_dataset
from dpnotes.data.store import ChecksumError, cache_root, fetch, mirror_roots
from dpnotes.data.verify import VerifyResult, verify

__all__ = [
    "REGISTRY", "ChecksumError", "Dataset", "FileSpec", "Source", "VerifyResult",
    "adult_features", "cache_root", "fetch", "get_dataset", "imdb_sequences", "load_adult",
    "load_cifar10", "load_fashion_mnist", "load_imdb", "load_mnist", "load_movielens",
    "mirror_roots", "read_labels", "read_movielens", "verify",
]
