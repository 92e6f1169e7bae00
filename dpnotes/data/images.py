"""Image datasets as tensors: MNIST and Fashion-MNIST (IDX files), CIFAR-10 (binary version).

No torchvision: the official formats are parsed directly.
IDX (LeCun et al., http://yann.lecun.com/exdb/mnist/): big-endian magic ``0x0000 08 ndim``
(type 0x08 = unsigned byte), then ``ndim`` 32-bit big-endian dimensions, then the data.
CIFAR-10 binary (Krizhevsky 2009): records of 1 label byte + 3072 pixel bytes (1024 red, 1024
green, 1024 blue, each row-major 32x32); five training batches and one test batch of 10,000.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from dpnotes import validate
from dpnotes.data.registry import get_dataset
from dpnotes.data.store import ChecksumError, fetch, locate

_SPLITS = ("train", "test")


def read_idx(path: Path) -> np.ndarray:
    """The uint8 array stored in an (uncompressed) IDX file; ValueError naming the file if malformed."""
    with path.open("rb") as f:
        head = f.read(4)
        if len(head) != 4 or head[:3] != b"\x00\x00\x08" or not 1 <= head[3] <= 4:
            raise ValueError(f"{path}: not an unsigned-byte IDX file (magic {head.hex()})")
        ndim = head[3]
        dims = tuple(int.from_bytes(f.read(4), "big") for _ in range(ndim))
    data = np.fromfile(path, dtype=np.uint8, offset=4 + 4 * ndim)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: IDX header says {dims} ({int(np.prod(dims))} bytes), found {data.size}")
    return data.reshape(dims)


def _idx_paths(dataset: str, split: str, mirror, cache_dir, registry) -> tuple[Path, Path]:
    validate.choice("split", split, _SPLITS)
    prefix = "train" if split == "train" else "t10k"
    names = [f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"]
    paths = fetch(dataset, names, mirror=mirror, cache_dir=cache_dir, registry=registry)
    return paths[names[0]], paths[names[1]]


def _load_idx_pair(dataset: str, split: str, mirror, cache_dir, registry):
    import torch

    image_path, label_path = _idx_paths(dataset, split, mirror, cache_dir, registry)
    images, labels = read_idx(image_path), read_idx(label_path)
    if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
        raise ValueError(f"{dataset} {split}: images {images.shape} and labels {labels.shape} do not match")
    return torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))


def model_inputs(images, labels):
    """``(images, labels)`` as the models take them: float32 pixels in [0, 1] with a channel axis
    ([N, H, W] -> [N, 1, H, W]), int64 labels."""
    x = images.float().div_(255)
    return (x.unsqueeze(1) if x.dim() == 3 else x), labels.long()


def load_mnist(split: str = "train", *, mirror=None, cache_dir=None, registry=None, model_ready: bool = False):
    """MNIST ``split`` ("train": 60,000, "test": 10,000) as (uint8 [N, 28, 28], int64 [N]);
    ``model_ready=True``: (float32 [N, 1, 28, 28] in [0, 1], int64 [N]), what ``train`` takes."""
    return _ready(_load_idx_pair("mnist", split, mirror, cache_dir, registry), model_ready)


def load_fashion_mnist(split: str = "train", *, mirror=None, cache_dir=None, registry=None, model_ready: bool = False):
    """Fashion-MNIST ``split`` ("train": 60,000, "test": 10,000) as (uint8 [N, 28, 28], int64 [N]);
    ``model_ready=True``: (float32 [N, 1, 28, 28] in [0, 1], int64 [N])."""
    return _ready(_load_idx_pair("fashion-mnist", split, mirror, cache_dir, registry), model_ready)


def load_cifar10(split: str = "train", *, mirror=None, cache_dir=None, registry=None, model_ready: bool = False):
    """CIFAR-10 ``split`` ("train": batches 1-5 in order, 50,000; "test": 10,000) as
    (uint8 [N, 3, 32, 32] channels R, G, B; int64 [N] labels 0-9); ``model_ready=True``:
    float32 pixels in [0, 1] (no per-channel normalization)."""
    import torch

    data = np.concatenate(_cifar10_records(split, mirror, cache_dir, registry))
    labels = _cifar10_labels(data, split)
    images = np.ascontiguousarray(data[:, 1:]).reshape(-1, 3, 32, 32)
    return _ready((torch.from_numpy(images), torch.from_numpy(labels)), model_ready)


def _ready(pair, ready: bool):
    if not isinstance(ready, bool):
        raise ValueError(f"model_ready must be True or False, got {ready!r}")
    return model_inputs(*pair) if ready else pair


def _cifar10_records(split: str, mirror, cache_dir, registry) -> list[np.ndarray]:
    """The 3073-byte records of each (verified) file of ``split``."""
    validate.choice("split", split, _SPLITS)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if split == "train" else ["test_batch.bin"]
    paths = fetch("cifar-10", names, mirror=mirror, cache_dir=cache_dir, registry=registry)
    records = []
    for name in names:
        raw = np.fromfile(paths[name], dtype=np.uint8)
        if raw.size % 3073:
            raise ValueError(f"{paths[name]}: size {raw.size} is not a multiple of 3073-byte records")
        records.append(raw.reshape(-1, 3073))
    return records


def _cifar10_labels(records: np.ndarray, split: str) -> np.ndarray:
    labels = records[:, 0].astype(np.int64)
    if labels.size and labels.max() > 9:
        raise ValueError(f"cifar-10 {split}: label {labels.max()} out of range 0-9")
    return labels


def read_labels(dataset: str, split: str = "train", *, mirror=None, cache_dir=None, registry=None) -> np.ndarray:
    """The int64 labels of ``split`` of ``dataset`` ("mnist", "fashion-mnist" or "cifar-10"), in
    the order of the loaders above, as numpy: counting examples and classes needs no images and no
    torch (CIFAR-10's files are memory-mapped, only their label bytes are read)."""
    validate.choice("dataset", dataset, ("mnist", "fashion-mnist", "cifar-10"))
    if dataset == "cifar-10":
        return _cifar10_read_labels(split, mirror, cache_dir, registry)
    _, label_path = _idx_paths(dataset, split, mirror, cache_dir, registry)
    labels = read_idx(label_path)
    if labels.ndim != 1:
        raise ValueError(f"{label_path}: labels must be one-dimensional, got shape {labels.shape}")
    return labels.astype(np.int64)


def _cifar10_read_labels(split: str, mirror, cache_dir, registry) -> np.ndarray:
    """CIFAR-10's labels, each file's label bytes checked against its spec's ``label_sha256``
    (the images are neither read nor hashed: 50 kB verified instead of 150 MB); a spec without
    one is verified whole, as every loader does."""
    validate.choice("split", split, _SPLITS)
    names = [f"data_batch_{i}.bin" for i in range(1, 6)] if split == "train" else ["test_batch.bin"]
    specs = {n: get_dataset("cifar-10", registry).file(n) for n in names}
    whole = not all(s.label_sha256 for s in specs.values())
    paths = (fetch if whole else locate)("cifar-10", names, mirror=mirror, cache_dir=cache_dir, registry=registry)
    out = []
    for name in names:
        raw = np.memmap(paths[name], np.uint8, "r")
        if raw.size % 3073:
            raise ValueError(f"{paths[name]}: size {raw.size} is not a multiple of 3073-byte records")
        labels = np.ascontiguousarray(raw.reshape(-1, 3073)[:, 0])
        if not whole and (got := hashlib.sha256(labels.tobytes()).hexdigest()) != specs[name].label_sha256:
            raise ChecksumError(
                f"{paths[name]}: sha256 of its labels is {got}, expected {specs[name].label_sha256} for "
                f"{name!r}; the file is corrupt or is not the expected file. Delete the cached file and "
                "load again to re-fetch it.")
        out.append(_cifar10_labels(labels[:, None], split))
    return np.concatenate(out)
