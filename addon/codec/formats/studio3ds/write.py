"""Model -> bytes: each chunk's data, then its sub-chunks, then its tail.

Lengths are computed, never copied, so an edited tree always writes a valid
file; an unedited one writes the bytes it was read from.
"""
from __future__ import annotations

from ...binary import Writer
from .model import Chunk, Model
from .payloads import CODECS


def _chunk(w: Writer, c: Chunk) -> None:
    start = w.tell()
    w.pack("HI", c.cid, 0)
    codec = CODECS.get(c.cid)
    if codec is None:
        if c.data:
            w.bytes(c.data)
    else:
        codec.write(w, c.data)
    for child in c.children:
        _chunk(w, child)
    if c.tail:
        w.bytes(c.tail)
    w.patch(start + 2, "u32", w.tell() - start)


def encode_bytes(model: Model) -> bytes:
    w = Writer()
    _chunk(w, model.root)
    w.bytes(model.trailing)
    return w.getvalue()
