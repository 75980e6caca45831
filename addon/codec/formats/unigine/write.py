"""File model -> bytes for ms11 meshes and an10 animations, byte-exact.

Compact ints are written in their shortest form; each index list takes the
width its own vertex count calls for.
"""
from __future__ import annotations

import numpy as np

from ...binary import Writer
from .compact import write_int, write_string
from .model import ANIM_MAGIC, BIND_DTYPE, MESH_MAGIC, AnimFile, BoneHeader, MeshFile, Surface, Track, index_dtype
from .records import encode_frames, encode_weights


def _bone_headers(w: Writer, bones: list[BoneHeader]) -> None:
    write_int(w, len(bones))
    for b in bones:
        write_string(w, b.name)
        w.i16(b.parent)


def _names(w: Writer, names: list[str]) -> None:
    write_int(w, len(names))
    for n in names:
        write_string(w, n)


def _track(w: Writer, t: Track, quantized: bool) -> None:
    write_int(w, len(t.bones))
    w.array(t.bones, "<i2")
    if quantized:
        w.array(np.concatenate([t.translation_box, t.scale_box]), "<f4")
    w.u8(t.flag)
    write_int(w, t.frame_count)
    w.bytes(encode_frames(t.flags, t.translation, t.rotation, t.scale, "<u2" if quantized else "<f4"))


def _indices(w: Writer, idx: np.ndarray, vertex_count: int) -> None:
    write_int(w, len(idx))
    w.buffer(idx, index_dtype(vertex_count))


def _surface_geometry(w: Writer, s: Surface) -> None:
    for t in s.targets:
        write_int(w, len(t.positions))
        w.buffer(t.positions, "<f4")
        write_int(w, len(t.tangents))
        w.buffer(t.tangents, "<i2")
    write_int(w, len(s.weights))
    w.bytes(encode_weights(s.weights.counts, s.weights.bones, s.weights.weights))
    for arr, dt in ((s.uv0, "<f4"), (s.uv1, "<f4"), (s.colors, "u1")):
        write_int(w, len(arr))
        w.buffer(arr, dt)
    _indices(w, s.coord_indices, s.coordinate_count)
    _indices(w, s.tri_indices, s.triangle_count)


def _bind(w: Writer, bind: np.ndarray) -> None:
    w.array(np.asarray(bind).astype(BIND_DTYPE))


def write_mesh(m: MeshFile) -> bytes:
    w = Writer()
    w.bytes(MESH_MAGIC)
    w.array(m.bounds.values, "<f4")
    _bone_headers(w, m.bones)
    _names(w, [a.name for a in m.animations])
    write_int(w, len(m.surfaces))
    for s in m.surfaces:
        write_string(w, s.name)
        w.array(s.bounds.values, "<f4")
        _names(w, [t.name for t in s.targets])
    w.bytes(MESH_MAGIC)
    _bind(w, m.bind)
    for t in m.animations:
        _track(w, t, False)
    for s in m.surfaces:
        _surface_geometry(w, s)
    w.bytes(MESH_MAGIC)
    w.bytes(m.trailing)
    return w.getvalue()


def write_anim(a: AnimFile) -> bytes:
    w = Writer()
    w.bytes(ANIM_MAGIC)
    w.array(a.bounds.values, "<f4")
    _bone_headers(w, a.bones)
    _names(w, [t.name for t in a.animations])
    w.bytes(ANIM_MAGIC)
    _bind(w, a.bind)
    for t in a.animations:
        _track(w, t, True)
    w.bytes(ANIM_MAGIC)
    w.bytes(a.trailing)
    return w.getvalue()


def encode_bytes(model: MeshFile | AnimFile) -> bytes:
    """In memory, the one file (a .mesh's companion animations are encode's business)."""
    return write_anim(model) if isinstance(model, AnimFile) else write_mesh(model)
