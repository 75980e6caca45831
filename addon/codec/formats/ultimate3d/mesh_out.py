"""One Scene mesh -> per-vertex U3D arrays, in bulk.

Blender keeps normals and UVs per corner; U3D per vertex. A vertex is split
only where its corners disagree (after normal compression, bit for bit): it
keeps its place with the values of its first corner, and each further distinct
value becomes a vertex after all of the mesh's own, in the order of its first
corner. So a mesh read from a .u3d file comes back with its vertices in the same
order, and an unused vertex keeps its place (with zero normal and UVs). Winding
is reversed and V flipped back (the inverse of import_scene).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...axes import apply_normals, apply_points
from ...scene import Mesh as SMesh
from . import normals as ncodec
from .conventions import SWAP

UV_SET = re.compile(r"^UVMap(?:_([1-7]))?$")
ATTR_SET = re.compile(r"^u3d_(?:texcoord|tangent_frame)([0-7])$")


def triangulate(sm: SMesh) -> tuple[np.ndarray, np.ndarray]:
    """-> (T, 3) corner indices (fan per polygon) and (T,) the face of each triangle."""
    tris_c, face = _fan(sm)
    return (np.arange(len(sm.corners), dtype=np.int64).reshape(-1, 3) if tris_c is None else tris_c), face


def _fan(sm: SMesh) -> tuple[np.ndarray | None, np.ndarray]:
    """triangulate(), with None for the corners when they already are triangles, in order."""
    sizes = sm.face_sizes
    if len(sizes) and np.all(sizes == 3):        # already triangles: nothing to fan
        return None, np.arange(len(sizes))
    n_tri = np.maximum(sizes - 2, 0)
    face = np.repeat(np.arange(len(sizes)), n_tri)
    start = sm.faces.astype(np.int64)[face]
    k = np.arange(len(face)) - np.repeat(np.cumsum(n_tri) - n_tri, n_tri) + 1
    return np.stack([start, start + k, start + k + 1], 1), face


def vertex_normals(positions: np.ndarray, tris_v: np.ndarray) -> np.ndarray:
    """Area-weighted smooth normals, for meshes that come without corner normals."""
    p = positions.astype(np.float64)
    fn = np.cross(p[tris_v[:, 1]] - p[tris_v[:, 0]], p[tris_v[:, 2]] - p[tris_v[:, 0]])
    out = np.zeros_like(p)
    for i in range(3):
        np.add.at(out, tris_v[:, i], fn)
    return out


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


def _keys(packed: np.ndarray, sets: list) -> list[np.ndarray]:
    """The corner values as raw integer words, a few (C,) columns: equal words = exactly equal values."""
    keys = [np.ascontiguousarray(packed).view(np.int16 if packed.dtype.itemsize == 1 else np.int32).reshape(-1)]
    for s in sets:
        if s is not None:
            words = s.view(np.int64 if s.shape[1] % 2 == 0 else np.int32)
            keys += [words[:, j] for j in range(words.shape[1])]
    return keys


def _same(keys: list[np.ndarray], a: np.ndarray | None, keys_b: list[np.ndarray], b: np.ndarray) -> np.ndarray:
    """Per pair: corner a[i] of `keys` and corner b[i] of `keys_b` hold the same values (a None: every
    corner of `keys`, in order)."""
    out = None
    for k, kb in zip(keys, keys_b):
        eq = (k if a is None else k[a]) == kb[b]
        out = eq if out is None else np.logical_and(out, eq, out=out)
    return out


BLOCK = 1 << 16       # corners per step of a pass over all of them: its temporaries stay in cache


def split_corners(corners: np.ndarray, keys: list[np.ndarray], n_vertex: int, rounds: int = 8
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Where a vertex's corners disagree: one more vertex per further distinct value.

    -> (first corner of each vertex, len(corners) if unused; the first corner of each added vertex,
    ascending; the corners that go to an added vertex; which one, as an index into the added).
    A vertex keeps the values of its first corner. Round r finds the r-th distinct value of every
    vertex still open in O(open corners): the first open corner, and the open corners equal to it.
    What is still open after `rounds` rounds is grouped by a sort."""
    n_c = len(corners)
    first = np.full(n_vertex, n_c, np.intp)
    for s in range(0, n_c, BLOCK):
        np.minimum.at(first, corners[s:s + BLOCK], np.arange(s, min(s + BLOCK, n_c)))
    open_ = [np.zeros(0, np.intp)]               # the corners that disagree with their vertex's first
    for s in range(0, n_c, BLOCK):
        same = _same([k[s:s + BLOCK] for k in keys], None, keys, np.take(first, corners[s:s + BLOCK]))
        open_.append(s + np.flatnonzero(~same))
    open_ = np.concatenate(open_)
    heads, moved, moved_head = [], [], []
    head = np.empty(n_vertex, np.intp)
    for _ in range(1, rounds):
        if not len(open_):
            break
        ov = corners[open_]
        head[ov] = n_c
        np.minimum.at(head, ov, open_)
        h = head[ov]
        same = _same(keys, open_, keys, h)
        heads.append(open_[h == open_])
        moved.append(open_[same])
        moved_head.append(h[same])
        open_ = open_[~same]
    if len(open_):      # sort by (vertex, values, corner): a group's first corner is its head
        cols = [k[open_] for k in keys]
        ov = corners[open_]
        order = np.lexsort([open_] + cols[::-1] + [ov])
        start = np.zeros(len(order), bool)
        start[0] = True
        for c in [ov] + cols:
            c = c[order]
            start[1:] |= c[1:] != c[:-1]
        group_head = open_[order][start]
        heads.append(np.sort(group_head))
        moved.append(open_[order])
        moved_head.append(group_head[np.cumsum(start) - 1])
    if not heads:
        return first, np.zeros(0, np.intp), np.zeros(0, np.intp), np.zeros(0, np.intp)
    heads = np.sort(np.concatenate(heads), kind="stable")   # sorted runs: a merge
    index_of_head = np.empty(n_c, np.intp)
    index_of_head[heads] = np.arange(len(heads))
    moved_head = np.concatenate(moved_head)
    return first, heads, np.concatenate(moved), index_of_head[moved_head]


def _per_vertex(a: np.ndarray, first: np.ndarray, heads: np.ndarray, used: np.ndarray | None) -> np.ndarray:
    """Per-corner rows -> per new vertex: each vertex's first corner's (zeros where `used` is False),
    then each added vertex's first corner's."""
    n_v = len(first)
    out = np.empty((n_v + len(heads),) + a.shape[1:], a.dtype)
    if used is None:
        np.take(a, first, axis=0, out=out[:n_v])
    elif not len(a):
        out[:n_v] = 0
    else:
        np.take(a, first, axis=0, out=out[:n_v], mode="clip")
        out[:n_v][~used] = 0
    np.take(a, heads, axis=0, out=out[n_v:])
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
        cn = vertex_normals(pos, tris_v)[corners].astype(np.float32)
    if normal_scalar < 0:
        cn = -cn
    packed = ncodec.encode_xyz(cn[:, SWAP[0]], cn[:, SWAP[1]], cn[:, SWAP[2]], v1=v1)
    sets = _corner_sets(sm, layout)
    n_v, n_c = len(pos), len(corners)
    first, heads, moved, moved_to = split_corners(corners, _keys(packed, sets), n_v)
    used = first < n_c
    used = None if n_c and used.all() else used
    n_new = n_v + len(heads)
    source = np.concatenate([np.arange(n_v), corners[heads]])
    positions = np.empty((n_new, 3), "<f4")
    for i, j in enumerate(SWAP):               # U3D axes
        positions[:n_v, i] = pos[:, j]
        positions[n_v:, i] = pos[source[n_v:], j]
    idx = np.uint32 if n_new <= 0xFFFFFFFF else np.int64
    if tris_c is None and not len(moved):
        t = corners.reshape(-1, 3)
    else:
        new_of_corner = corners.copy()
        new_of_corner[moved] = n_v + moved_to
        t = new_of_corner.reshape(-1, 3) if tris_c is None else new_of_corner[tris_c]
    tris = np.empty(t.shape, idx)
    tris[:, 0], tris[:, 1], tris[:, 2] = t[:, 0], t[:, 2], t[:, 1]     # reverse the winding back
    return VertexData(positions=positions,
                      normals=_per_vertex(packed, first, heads, used).astype("i1" if v1 else "<i2", copy=False),
                      texcoords=[None if s is None else _per_vertex(s, first, heads, used) for s in sets],
                      source_vertex=source, triangles=tris, triangle_face=face)
