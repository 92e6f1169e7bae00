"""Files that carry the sha256 of their content: checkpoints and derived data caches.

A torch file (a zip) read back with one flipped byte may load without an error and hand over a
changed tensor. Files written through :func:`write` end with a fixed-length trailer,
``\\n#dpnotes-sha256:<64 hex digits>\\n``, holding the sha256 of every byte before it, and
:func:`read` returns those bytes only if they match: a flipped byte anywhere, a truncated file or
a file without the trailer is refused with :class:`DigestError` (a ``ValueError``) naming it.
``torch.load`` ignores bytes after the zip's end, so such a file still loads with plain torch.

The digest proves the file is what was written, not who wrote it: whoever can write the file can
write a matching trailer (loading stays ``weights_only``, so such a file still runs no code).
"""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

from dpnotes.atomic import atomic_write

MAGIC = b"\n#dpnotes-sha256:"
TRAILER_LEN = len(MAGIC) + 64 + 1


class DigestError(ValueError):
    """A file's content does not match the digest it carries, or it carries none."""


def trailer(data: bytes) -> bytes:
    """The trailer that seals ``data``."""
    return MAGIC + hashlib.sha256(data).hexdigest().encode() + b"\n"


def split(data: bytes, what: str) -> bytes:
    """The content of the file bytes ``data`` (``what`` names the file in errors), checked
    against its trailer; :class:`DigestError` if it has none or they differ."""
    tail = data[-TRAILER_LEN:]
    if len(data) < TRAILER_LEN or not tail.startswith(MAGIC) or not tail.endswith(b"\n"):
        raise DigestError(f"{what} carries no content digest at its end (truncated, or written before "
                          "dpnotes sealed such files)")
    content = data[:-TRAILER_LEN]
    if trailer(content) != tail:
        raise DigestError(f"{what} does not match the content digest it carries (corrupted: "
                          "a changed byte, or an edit)")
    return content


def write(path: str | os.PathLike, content: bytes) -> None:
    """Write ``content`` and its trailer to ``path`` atomically (:func:`dpnotes.atomic.atomic_write`):
    a process killed while writing leaves the previous file intact."""
    with atomic_write(Path(path)) as out:
        out.write(content)
        out.write(trailer(content))


def torch_bytes(obj) -> bytes:
    """``obj`` serialised by ``torch.save``."""
    import torch

    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def read(path: str | os.PathLike, what: str | None = None) -> bytes:
    """The checked content of the file ``path`` (:func:`split`); ``OSError`` if it cannot be read."""
    return split(Path(path).read_bytes(), what or str(path))
