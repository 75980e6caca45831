"""The .3ds file as it is: a tree of chunks with typed payloads.

Every chunk keeps its id, its parsed data (or the raw bytes when the chunk is
not understood), its sub-chunks and any bytes after them that we could not
place (`tail`), so that writing the tree gives back the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

import numpy as np

# key header flag bits: which of tension, continuity, bias, ease to, ease from follow
TCB_BITS = 5
DEFAULT_FACE_FLAGS = 0x7          # all three edges visible: what export writes for a face without flags


@dataclass
class Track:
    """A keyframer track (0xB020..0xB029).

    flags: the first word (loop mode, lock/unlink bits, and 0x40 as found).
    reserved: the 8 bytes after it that no reader interprets.
    frames (N,) int64; key_flags (N,) uint16; tcb (N, 5) float32, NaN when
    absent; values (N, D) float32 (D = 0 for hide tracks) or a list of names
    for morph tracks.
    """

    flags: int = 0
    reserved: bytes = bytes(8)
    frames: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    key_flags: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint16))
    tcb: np.ndarray = field(default_factory=lambda: np.zeros((0, TCB_BITS), np.float32))
    values: Any = None

    def __len__(self) -> int:
        return len(self.frames)


@dataclass
class MaterialGroup:
    """0x4130: the faces of one mesh that use one material."""

    name: str
    faces: np.ndarray              # (N,) uint16 face indices


@dataclass
class VertexFlags:
    """0x4111: one flag word per vertex; `counted` says whether a count precedes them."""

    flags: np.ndarray              # (V,) uint16
    counted: bool = True


@dataclass
class Chunk:
    cid: int
    data: Any = None               # parsed payload, or raw bytes for chunks we do not know
    children: list["Chunk"] = field(default_factory=list)
    tail: bytes = b""              # unexplained bytes after data and children, kept as found
    offset: int = -1               # where it was read (-1 when built), for messages only

    # -- navigation --------------------------------------------------------
    def find(self, cid: int) -> "Chunk | None":
        for c in self.children:
            if c.cid == cid:
                return c
        return None

    def find_all(self, cid: int) -> list["Chunk"]:
        return [c for c in self.children if c.cid == cid]

    def value(self, cid: int, default: Any = None) -> Any:
        c = self.find(cid)
        return default if c is None else c.data

    def has(self, cid: int) -> bool:
        return self.find(cid) is not None

    def walk(self) -> Iterator["Chunk"]:
        yield self
        for c in self.children:
            yield from c.walk()

    def add(self, cid: int, data: Any = None, children: list["Chunk"] | None = None) -> "Chunk":
        c = Chunk(cid, data, children or [])
        self.children.append(c)
        return c


@dataclass
class Model:
    """A whole file: the MAIN chunk, plus bytes after it (some exporters pad)."""

    root: Chunk
    trailing: bytes = b""
    source: str = ""               # the file it was read from, for texture search

    def editor(self) -> Chunk | None:
        from .ids import EDITOR
        return self.root.find(EDITOR)

    def keyframer(self) -> Chunk | None:
        from .ids import KFDATA
        return self.root.find(KFDATA)

    def version(self) -> int | None:
        from .ids import VERSION
        return self.root.value(VERSION)
