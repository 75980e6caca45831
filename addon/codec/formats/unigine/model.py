"""The file model of UNIGINE .mesh (ms11) and .anim (an10), field by field.

Numbers are the file's own: quaternions stay (x, y, z, w), rotations in
records stay short, .anim translations and scales stay quantized. Animation
records are kept dense (frame, bone, component) with each component carried
forward from the frame that last stored it, beside the per-record flag bytes
that say which values the file actually stores; the writer stores exactly
those, so write(read(b)) == b.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MESH_MAGIC = b"ms11"
ANIM_MAGIC = b"an10"
# Other layouts that share the family's magic shape; named in the error.
OTHER_VERSIONS = (b"ms10", b"ms12", b"ms13", b"ms14", b"ms15", b"an11", b"an12")

# Bind pose record of one bone: position, rotation (x, y, z, w), scale.
BIND_DTYPE = np.dtype([("t", "<f4", (3,)), ("r", "<f4", (4,)), ("s", "<f4", (3,))])

# Component flag bits (notes: "Animation component flags").
T_BITS = (0x01, 0x02, 0x04)
R_BIT = 0x08
S_BITS = (0x10, 0x20, 0x40)
ALL_BITS = 0x7F
QUAT_SCALE = 32767.0
WEIGHT_SCALE = 65535.0
MAX_WEIGHTS = 4


def index_dtype(vertex_count: int) -> np.dtype:
    """The width a list of indices into `vertex_count` vertices is stored with."""
    if vertex_count < 256:
        return np.dtype("u1")
    if vertex_count < 65536:
        return np.dtype("<u2")
    return np.dtype("<i4")


@dataclass
class Bounds:
    """Box min (3), box max (3), sphere centre (3), radius: float32[10]."""

    values: np.ndarray = field(default_factory=lambda: np.zeros(10, np.float32))

    @property
    def box_min(self) -> np.ndarray: return self.values[0:3]
    @property
    def box_max(self) -> np.ndarray: return self.values[3:6]
    @property
    def center(self) -> np.ndarray: return self.values[6:9]
    @property
    def radius(self) -> float: return float(self.values[9])


@dataclass
class BoneHeader:
    name: str
    parent: int                   # -1 for a root; may point at a later bone


@dataclass
class Track:
    """One animation: its bones and every frame's records.

    flags (F, N) uint8 are the records' flag bytes. translation/scale are
    float32 in a .mesh, uint16 in a .anim (decoded with the boxes);
    rotation is int16 (x, y, z, w). Values before a component's first stored
    frame are zero (see `stored_from`).
    """

    name: str
    bones: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))     # (N,) bone index
    flag: int = 0                                                                # union of record flags
    flags: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))
    translation: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3), np.float32))
    rotation: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 4), np.int16))
    scale: np.ndarray = field(default_factory=lambda: np.zeros((0, 0, 3), np.float32))
    translation_box: np.ndarray | None = None    # .anim only: (2, 3) float32 min, size
    scale_box: np.ndarray | None = None

    @property
    def frame_count(self) -> int:
        return int(self.flags.shape[0])

    def stored_from(self, bit: int) -> np.ndarray:
        """(F, N) bool: has the component with this flag bit been stored yet?"""
        return np.logical_or.accumulate((self.flags & bit) != 0, axis=0) if self.flags.size else \
            np.zeros(self.flags.shape, bool)


@dataclass
class MorphTarget:
    name: str
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), np.float32))   # coordinate vertices
    # triangle vertices: tangent quaternions (x, y, z, w)
    tangents: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.int16))


@dataclass
class Weights:
    """Per coordinate vertex: count (0..4), then that many (bone, weight) pairs; unused slots are 0."""

    counts: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint8))
    bones: np.ndarray = field(default_factory=lambda: np.zeros((0, MAX_WEIGHTS), np.int16))
    weights: np.ndarray = field(default_factory=lambda: np.zeros((0, MAX_WEIGHTS), np.uint16))

    def __len__(self) -> int:
        return len(self.counts)


@dataclass
class Surface:
    name: str
    bounds: Bounds = field(default_factory=Bounds)
    targets: list[MorphTarget] = field(default_factory=list)
    weights: Weights = field(default_factory=Weights)
    uv0: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    uv1: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), np.float32))
    colors: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), np.uint8))
    coord_indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))
    tri_indices: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))

    @property
    def coordinate_count(self) -> int:
        return len(self.targets[0].positions) if self.targets else 0

    @property
    def triangle_count(self) -> int:
        """Triangle *vertices* (split data), counted by target 0's tangents."""
        return len(self.targets[0].tangents) if self.targets else 0


@dataclass
class MeshFile:
    bounds: Bounds = field(default_factory=Bounds)
    bones: list[BoneHeader] = field(default_factory=list)
    bind: np.ndarray = field(default_factory=lambda: np.zeros(0, BIND_DTYPE))
    animations: list[Track] = field(default_factory=list)
    surfaces: list[Surface] = field(default_factory=list)
    trailing: bytes = b""          # bytes after the closing magic, kept for the round trip
    # not stored in the file: its stem (object names), and animations to write beside it as .anim
    name: str = ""
    companion: "AnimFile | None" = None


@dataclass
class AnimFile:
    bounds: Bounds = field(default_factory=Bounds)   # placeholders in practice; never validated
    bones: list[BoneHeader] = field(default_factory=list)
    bind: np.ndarray = field(default_factory=lambda: np.zeros(0, BIND_DTYPE))
    animations: list[Track] = field(default_factory=list)
    trailing: bytes = b""
    name: str = ""                 # not stored in the file: its stem
