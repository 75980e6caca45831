"""One Scene mesh -> per-vertex U3D arrays, in bulk.

Blender keeps normals and UVs per corner; U3D per vertex. A vertex is split
only where its corners disagree (after normal compression, bit for bit), by
meshops.split_corners: a vertex's distinct values follow each other in the
order of their first corner, vertices in their order. So a mesh read from a
.u3d file comes back with its vertices in the same order, and an unused vertex
keeps its place (with zero normal and UVs). Winding is reversed and V flipped
back (the inverse of import_scene).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...axes import apply_normals, apply_points
from ...meshops import all_triangles, split_corners, triangulate, vertex_normals
from ...scene import Mesh as SMesh
from . import normals as ncodec
from .conventions import SWAP

UV_SET = re.compile(r"^UVMap(?:_([1-7]))?$")
ATTR_SET = re.compile(r"^u3d_(?:texcoord|tangent_frame)([0-7])$")


def _fan(sm: SMesh) -> tuple[np.ndarray | None, np.ndarray]:
    """meshops.triangulate, with None for the corners when they already are triangles, in order."""
    if all_triangles(sm.faces, len(sm.corners)):
        return None, np.arange(len(sm.faces))
    return triangulate(sm.faces, len(sm.corners))


def _attributes(sm: SMesh) -> dict:
    """Corner attributes, including 4D sets that Blender keeps as (float) colour attributes."""
    return {**sm.colors, **sm.corner_attributes}


def set_layout(meshes: list[SMesh]) -> list[tuple[str, int]]:
    """U3D texture coordinate set i <- (layer or attribute name, dimension); ("", 0) = unused."""
    layout: list[tuple[str, int]] = [("", 0)] * 8
    pending = []
    for sm in meshes:
        named = [(n, 2) for n in sm.uv_layers] + [(n, int(a.shape[1]) if a.ndim == 2 else 1)
                                                  for n, a in _attributes(sm).items() if ATTR_SET.match(n)]
        for name, dim in named:
            if any(name == n for n, _ in layout) or name in [p[0] for p in pending]:
                continue
            match = UV_SET.match(name) or ATTR_SET.match(name)
            slot = int(match.group(1) or 0) if match else -1
            if slot >= 0 and layout[slot][1] == 0:
                layout[slot] = (name, min(dim, 4))
            else:
                pending.append((name, min(dim, 4)))
    for name, dim in pending:
        free = [i for i, (_, d) in enumerate(layout) if d == 0]
        if free:
            layout[free[0]] = (name, dim)
    return layout


@dataclass
class VertexData:
    positions: np.ndarray          # (V', 3) U3D axes
    normals: np.ndarray            # (V', 2) compressed
    texcoords: list                # per set (V', dim) or None
    source_vertex: np.ndarray      # (V',) the Scene vertex each comes from
    triangles: np.ndarray          # (T, 3) new vertex indices, U3D winding
    triangle_face: np.ndarray      # (T,) Scene face of each triangle


def _corner_sets(sm: SMesh, layout) -> list:
    """Per-corner float32 (C, dim) arrays of each texture coordinate set (None where unused)."""
    sets = []
    n_c = len(sm.corners)
    for name, dim in layout:
        if not dim:
            sets.append(None)
            continue
        a = sm.uv_layers.get(name)
        if a is not None:
            a = np.array(a, np.float32)                 # a copy
            a[:, 1] = 1.0 - a[:, 1]                     # back to Direct3D's top-left origin
        else:
            a = _attributes(sm).get(name)
            a = np.zeros((n_c, dim), np.float32) if a is None or not n_c else np.asarray(a, np.float32).reshape(n_c, -1)
        if a.shape[1] != dim:
            a = np.pad(a, ((0, 0), (0, max(dim - a.shape[1], 0))))[:, :dim]
        sets.append(np.ascontiguousarray(a))
    return sets


def _corner_values(packed: np.ndarray, sets: list) -> list[np.ndarray]:
    """What a vertex's corners must agree on, bit for bit: the compressed normal and each set."""
    return [packed.astype(np.int16, copy=False)] + [s for s in sets if s is not None]   # v1: whole words


def _per_vertex(a: np.ndarray, rows: np.ndarray, unused_at: np.ndarray) -> np.ndarray:
    """Per-corner rows -> per new vertex: the given rows, zeros at the unused vertices' places."""
    out = np.zeros((len(rows) + len(unused_at),) + a.shape[1:], a.dtype)
    if len(unused_at):
        keep = np.ones(len(out), bool)
        keep[unused_at] = False
        out[keep] = a[rows]
    else:
        np.take(a, rows, axis=0, out=out)
    return out


def mesh_vertices(sm: SMesh, matrix: np.ndarray | None, normal_scalar: float, layout, v1: bool) -> VertexData:
    tris_c, face = _fan(sm)
    corners = np.asarray(sm.corners).astype(np.intp, copy=False)
    pos = np.asarray(sm.positions, np.float32)
    placed = matrix is not None and not np.array_equal(matrix, np.eye(4))
    if placed:
        pos = apply_points(matrix, pos)
    if sm.normals is not None and len(sm.normals) == len(corners):
        cn = np.asarray(sm.normals, np.float32)
        if placed:
            cn = apply_normals(matrix, cn)
    else:
        tris_v = corners.reshape(-1, 3) if tris_c is None else corners[tris_c]
        cn = vertex_normals(pos, tris_v)[corners]
    if normal_scalar < 0:
        cn = -cn
    packed = ncodec.encode_xyz(cn[:, SWAP[0]], cn[:, SWAP[1]], cn[:, SWAP[2]], v1=v1)
    sets = _corner_sets(sm, layout)
    n_v = len(pos)
    first, new_of_corner = split_corners(_corner_values(packed, sets), corners)
    source = corners[first]                      # ascending: the split keeps the vertex order
    # an unused vertex keeps a place: after the vertices split from those before it
    used = np.zeros(n_v, bool)
    used[corners] = True
    unused = np.flatnonzero(~used)
    unused_at = np.searchsorted(source, unused) + np.arange(len(unused))
    if len(unused):
        shifted = np.arange(len(first)) + np.searchsorted(unused, source)
        new_of_corner = shifted[new_of_corner]
        full = np.empty(len(first) + len(unused), np.int64)
        full[shifted], full[unused_at] = source, unused
        source = full
    n_new = len(source)
    positions = np.empty((n_new, 3), "<f4")
    for i, j in enumerate(SWAP):               # U3D axes
        positions[:, i] = pos[source, j]
    idx = np.uint32 if n_new <= 0xFFFFFFFF else np.int64
    t = new_of_corner.reshape(-1, 3) if tris_c is None else new_of_corner[tris_c]
    tris = np.empty(t.shape, idx)
    tris[:, 0], tris[:, 1], tris[:, 2] = t[:, 0], t[:, 2], t[:, 1]     # reverse the winding back
    return VertexData(positions=positions,
                      normals=_per_vertex(packed, first, unused_at).astype("i1" if v1 else "<i2", copy=False),
                      texcoords=[None if s is None else _per_vertex(s, first, unused_at) for s in sets],
                      source_vertex=source, triangles=tris, triangle_face=face)
