"""Bytes -> Model: walk the chunk tree, bounds-checked, keeping every byte.

No axis or unit change here: the model holds the file's own numbers.
"""
from __future__ import annotations

from pathlib import Path

from ...binary import Reader
from ...errors import FormatError, Warnings
from . import ids
from .model import Chunk, Model
from .payloads import CHILDREN, CODECS

HEADER = 6
MAX_DEPTH = 64        # real files nest about 7 deep; this stops a crafted file from recursing forever


def sniff(head: bytes, filename: str = "") -> bool:
    return len(head) >= HEADER and head[:2] == b"\x4d\x4d"


def _label(r: Reader, cid: int, data_start: int) -> str:
    name = ids.name_of(cid)
    if cid in (ids.OBJECT, ids.MAT_ENTRY):
        # name the object/material in the path: the object name is its data,
        # a material's is in its first sub-chunk (0xA000)
        start = data_start if cid == ids.OBJECT else data_start + HEADER
        nul = r.buf.find(b"\0", start, min(r.end, start + 64))
        if nul > start:
            name += f' "{r.buf[start:nul].decode("latin-1")}"'
    return name


def _chunk(r: Reader, depth: int) -> Chunk:
    start = r.pos
    cid, length = r.unpack("HI")
    if length < HEADER:
        r.fail(f"chunk 0x{cid:04X} claims {length} bytes, less than its 6-byte header", start)
    end = start + length
    if end > r.end:
        r.fail(f"chunk 0x{cid:04X} claims {length} bytes, but only {r.end - start} are left in its parent", start)
    with r.chunk(_label(r, cid, r.pos), end):
        chunk = Chunk(cid, offset=start)
        codec = CODECS.get(cid)
        if codec is None and cid not in CHILDREN:
            chunk.data = r.rest()
            return chunk
        if codec is not None:
            chunk.data = codec.read(r)
        if cid in CHILDREN:
            if depth >= MAX_DEPTH:
                r.fail(f"chunks nested more than {MAX_DEPTH} deep")
            while r.remaining >= HEADER:
                chunk.children.append(_chunk(r, depth + 1))
        chunk.tail = r.rest()
    return chunk


def parse(data: bytes, warnings: Warnings | None = None) -> Model:
    if len(data) < HEADER:
        raise FormatError(f"file of {len(data)} bytes is too short for a 3DS header (6 bytes)", 0, "MAIN")
    if data[:2] != b"\x4d\x4d":
        raise FormatError(f"not a 3DS file: first chunk is 0x{int.from_bytes(data[:2], 'little'):04X}, "
                          "expected 0x4D4D", 0, "")
    r = Reader(data)
    root = _chunk(r, 0)
    trailing = r.rest()
    if trailing and warnings is not None:
        warnings.warn(f"{len(trailing)} bytes after the main chunk kept as they are", root.offset, "MAIN")
    return Model(root, trailing)


def read(path: Path, options=None, warnings: Warnings | None = None) -> Model:
    model = parse(Path(path).read_bytes(), warnings)
    model.source = str(path)
    return model
