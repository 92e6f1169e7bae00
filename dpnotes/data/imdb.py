"""IMDb large movie review set (Maas et al., ACL 2011) as texts, and as Keras-style sequences.

Two source forms: the mirror's JSON lines (``{"split", "label", "text"}`` per review) or the
official ``aclImdb_v1.tar.gz`` (``aclImdb/{train,test}/{neg,pos}/<id>_<stars>.txt``; the
unlabelled ``unsup`` reviews are ignored).  From the tarball, reviews are ordered by split, then
negative before positive, then numeric id.  Labels: 0 negative, 1 positive.

:func:`imdb_sequences` follows the convention of ``keras.datasets.imdb`` used by the GDP paper
(Bu et al.; TF Privacy ``research/GDP_2019/imdb_tutorial.py``: ``load_data(num_words=10000)``
then ``pad_sequences(maxlen=256)``):

* tokenization (Keras ``text_to_word_sequence`` defaults): ``<br />`` becomes a space, text is
  lower-cased, the characters ``!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~``, tab and newline become
  spaces, and the text is split on whitespace (apostrophes stay inside words);
* words are ranked by frequency in the TRAINING split (ties: first occurrence first); rank r
  (1-based) gets index r + 3; index 0 = padding, 1 = start marker (prepended to every review),
  2 = out-of-vocabulary (any index >= num_words), 3 is unused;
* ``pad_sequences`` defaults: sequences longer than maxlen keep their LAST maxlen tokens
  (truncating="pre"), shorter ones are left-padded with 0 (padding="pre").

The prebuilt ``imdb.npz`` of Keras used its own tokenizer and a word index built on the whole
data set, and shuffles the reviews (seed 113): its indices and order differ from these.

Both derived caches (the tarball's reviews as JSON lines, the sequences as a torch file) end with
the sha256 of their content (:mod:`dpnotes.digest_file`), checked on every read: a truncated or
changed cache is named in a warning on stderr and rebuilt from the verified source, never read.
"""

from __future__ import annotations

import io
import json
import re
import sys
import tarfile
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dpnotes import digest_file, validate
from dpnotes.data.registry import get_dataset
from dpnotes.data.store import derived_path, fetch_any

if TYPE_CHECKING:  # torch is imported where data is read (not by `import dpnotes.data`)
    import torch

_SPLITS = ("train", "test")
_JSONL, _TARBALL = "imdb_reviews.jsonl", "aclImdb_v1.tar.gz"
_ALTERNATIVES = [[_JSONL], [_TARBALL]]
_MEMBER = re.compile(r"aclImdb/(train|test)/(neg|pos)/(\d+)_(\d+)\.txt")
_FILTERS = '!"#$%&()*+,-./:;<=>?@[\\]^_`{|}~\t\n'
_TABLE = str.maketrans(_FILTERS, " " * len(_FILTERS))
START, OOV, INDEX_FROM = 1, 2, 3
_VERSION = "imdb-sequences-v1"
_SEALED = ":sealed"  # in the caches' keys: files that carry a digest are named apart from older ones


def _tarball_to_jsonl(tarball: Path, dest: Path) -> None:
    """Write the labelled reviews of the official tarball in the mirror's JSON-lines form."""
    found = []
    with tarfile.open(tarball, "r:*") as tf:
        for info in tf:
            m = _MEMBER.fullmatch(info.name.removeprefix("./"))
            if m and info.isfile():
                text = tf.extractfile(info).read().decode("utf-8")
                found.append((_SPLITS.index(m[1]), m[2] == "pos", int(m[3]), text))
    found.sort(key=lambda r: r[:3])
    lines = (json.dumps({"split": _SPLITS[split], "label": int(pos), "text": text}) + "\n"
             for split, pos, _, text in found)
    digest_file.write(dest, "".join(lines).encode("utf-8"))


def _checked_cache(path: Path, what: str) -> bytes | None:
    """The content of the derived cache ``path`` if it is there and matches its digest; else None
    (a cache that fails is named on stderr and removed, to be rebuilt)."""
    if not path.is_file():
        return None
    try:
        return digest_file.read(path, f"{what} {path}")
    except (ValueError, OSError) as exc:
        print(f"dpnotes: warning: {exc}; rebuilding it from the verified source", file=sys.stderr)
        path.unlink(missing_ok=True)
        return None


def _reviews_file(mirror, cache_dir, registry) -> tuple[Path, str, bytes]:
    """(path to the reviews in JSON lines, identity of its verified source for cache keys, the
    file's content: the mirror's file, verified by its checksum, or the cache derived from the
    tarball, verified by its digest)."""
    files = get_dataset("imdb", registry).files
    alternatives = [a for a in _ALTERNATIVES if a[0] in files]
    _, paths = fetch_any("imdb", alternatives, mirror=mirror, cache_dir=cache_dir, registry=registry)
    (name, path), = paths.items()
    identity = f"{name}:{files[name].sha256 or files[name].md5}"
    if name == _JSONL:
        return path, identity, path.read_bytes()
    dest = derived_path("imdb", "aclImdb-reviews", identity + ":v1" + _SEALED, cache_dir).with_suffix(".jsonl")
    content = _checked_cache(dest, "IMDb reviews cache")
    if content is None:
        _tarball_to_jsonl(path, dest)
        content = digest_file.read(dest, f"IMDb reviews cache {dest}")
    return dest, identity, content


def _read(path: Path, content: bytes, split: str) -> tuple[list[str], torch.Tensor]:
    import torch

    texts, labels = [], []
    for line in content.splitlines():
        rec = json.loads(line)
        if rec["split"] == split:
            texts.append(rec["text"])
            labels.append(rec["label"])
    if not texts:
        raise ValueError(f"{path}: no reviews of split {split!r}")
    y = torch.tensor(labels, dtype=torch.int64)
    if not bool(((y == 0) | (y == 1)).all()):
        raise ValueError(f"{path}: labels must be 0 or 1")
    return texts, y


def load_imdb(split: str = "train", *, mirror=None, cache_dir=None, registry=None):
    """The reviews of ``split`` ("train" or "test") as (list of raw texts, int64 labels [N])."""
    validate.choice("split", split, _SPLITS)
    path, _, content = _reviews_file(mirror, cache_dir, registry)
    return _read(path, content, split)


def tokenize(text: str) -> list[str]:
    """Keras ``text_to_word_sequence`` defaults, after replacing ``<br />`` by a space."""
    return text.replace("<br />", " ").lower().translate(_TABLE).split()


def build_vocabulary(texts: list[str], num_words: int) -> dict[str, int]:
    """{word: index} for the words with index < ``num_words`` (rank r -> r + 3, module doc)."""
    counts = Counter()
    for t in texts:
        counts.update(tokenize(t))
    keep = max(0, num_words - INDEX_FROM - 1)
    return {w: r + INDEX_FROM for r, (w, _) in enumerate(counts.most_common(keep), start=1)}


def encode(texts: list[str], vocab: dict[str, int], maxlen: int) -> torch.Tensor:
    """int64 [len(texts), maxlen]: start marker + word indices (OOV = 2), Keras "pre" truncation
    and padding."""
    import torch

    seqs = [[START] + [vocab.get(w, OOV) for w in tokenize(t)] for t in texts]
    lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
    flat = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(lengths.sum()))
    ends = np.cumsum(lengths)
    keep = np.minimum(lengths, maxlen)
    # position j of row r holds token ends[r] - maxlen + j when that lies inside the row
    src = ends[:, None] - maxlen + np.arange(maxlen)[None, :]
    valid = np.arange(maxlen)[None, :] >= (maxlen - keep)[:, None]
    out = np.zeros((len(seqs), maxlen), dtype=np.int64)
    out[valid] = flat[src[valid]]
    return torch.from_numpy(out)


def imdb_sequences(num_words: int = 10000, maxlen: int = 256, *, mirror=None, cache_dir=None,
                   registry=None):
    """(x_train int64 [25000, maxlen], y_train, x_test int64 [25000, maxlen], y_test) in the
    Keras convention of the module doc; the result is cached per (source, num_words, maxlen)."""
    import torch

    validate.integer("num_words", num_words, minimum=INDEX_FROM + 2)
    validate.integer("maxlen", maxlen, minimum=1)
    path, source, content = _reviews_file(mirror, cache_dir, registry)
    key = f"{_VERSION}:{source}:{num_words}:{maxlen}{_SEALED}"
    cached = derived_path("imdb", "sequences", key, cache_dir).with_suffix(".pt")
    data = _checked_cache(cached, "IMDb sequences cache")
    if data is not None:
        d = torch.load(io.BytesIO(data), weights_only=True)
        return d["x_train"], d["y_train"], d["x_test"], d["y_test"]
    train_texts, y_train = _read(path, content, "train")
    test_texts, y_test = _read(path, content, "test")
    vocab = build_vocabulary(train_texts, num_words)
    x_train, x_test = encode(train_texts, vocab, maxlen), encode(test_texts, vocab, maxlen)
    digest_file.write(cached, digest_file.torch_bytes({"x_train": x_train, "y_train": y_train, "x_test": x_test,
                                                       "y_test": y_test}))
    return x_train, y_train, x_test, y_test
