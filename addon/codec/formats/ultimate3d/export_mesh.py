"""One Scene mesh -> per-vertex U3D arrays, in bulk.

Blender keeps normals and UVs per corner; U3D per vertex. A vertex is split
only where its corners disagree (after normal compression), so a mesh read
from a .u3d file comes back with its vertices in the same order. Winding is
reversed and V flipped back (the inverse of import_scene).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...axes import apply_normals, apply_points
from ...scene import Mesh as SMesh
from . import normals as ncodec
from .transforms import SWAP

UV_SET = re.compile(r"^UVMap(?:_([1-7]))?$")
ATTR_SET = re.compile(r"^u3d_(?:texcoord|tangent_frame)([0-7])$")


def triangulate(sm: SMesh) -> tuple[np.ndarray, np.ndarray]:
    """-> (T, 3) corner indices (fan per polygon) and (T,) the face of each triangle."""
    sizes = sm.face_sizes
    if len(sizes) and np.all(sizes == 3):        # already triangles: nothing to fan
        return np.arange(len(sm.corners), dtype=np.int64).reshape(-1, 3), np.arange(len(sizes))
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


def _corner_table(sm: SMesh, layout, corner_normals, tris_c) -> tuple[np.ndarray, list]:
    """Per-corner values as raw 32-bit words (exact comparison) plus the per-set float arrays."""
    cols = [corner_normals.astype(np.int32)]
    sets = []
    n_c = len(sm.corners)
    for name, dim in layout:
        if not dim:
            sets.append(None)
            continue
        a = sm.uv_layers.get(name)
        if a is not None:
            a = np.asarray(a, np.float32).copy()
            a[:, 1] = 1.0 - a[:, 1]                     # back to Direct3D's top-left origin
        else:
            a = _attributes(sm).get(name)
            a = np.zeros((n_c, dim), np.float32) if a is None else np.asarray(a, np.float32).reshape(n_c, -1)
        a = np.ascontiguousarray(np.pad(a, ((0, 0), (0, max(dim - a.shape[1], 0))))[:, :dim])
        sets.append(a)
        cols.append(a.view(np.int32))
    return np.concatenate(cols, 1), sets


def _hash_rows(corners: np.ndarray, table: np.ndarray) -> np.ndarray:
    h = corners.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for col in table.T.view(np.uint32):
        h = (h ^ col.astype(np.uint64)) * np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(31)
    return h


def split_corners(corners: np.ndarray, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One new vertex per distinct (vertex, corner values). -> (first corner of each, new vertex per corner).

    A 64-bit hash of each row is uniqued (fast); the rows are then compared exactly, and on the
    (astronomically rare) collision the exact row-wise unique is used instead."""
    with np.errstate(over="ignore"):
        keys = _hash_rows(corners, table)
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    if not (np.array_equal(corners[first][inverse], corners) and np.array_equal(table[first][inverse], table)):
        rows = np.concatenate([corners[:, None].astype(np.int32), table], 1)
        rows = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
        _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def mesh_vertices(sm: SMesh, matrix: np.ndarray | None, normal_scalar: float, layout, v1: bool) -> VertexData:
    tris_c, face = triangulate(sm)
    corners = sm.corners.astype(np.int64)
    pos = np.asarray(sm.positions, np.float32)
    if matrix is not None and not np.array_equal(matrix, np.eye(4)):
        pos = apply_points(matrix, pos)
    if sm.normals is not None and len(sm.normals) == len(corners):
        cn = np.asarray(sm.normals, np.float32)
        if matrix is not None and not np.array_equal(matrix, np.eye(4)):
            cn = apply_normals(matrix, cn)
    else:
        cn = vertex_normals(pos, corners[tris_c])[corners]
    packed = ncodec.encode(cn[:, SWAP] if normal_scalar >= 0 else -cn[:, SWAP], v1=v1)
    table, sets = _corner_table(sm, layout, packed, tris_c)
    n_v = len(pos)
    rep = np.zeros(n_v, np.int64)
    rep[corners] = np.arange(len(corners))
    head = slice(0, 4096)     # a cheap look first: flat-shaded meshes fail at once
    if np.array_equal(table[rep[corners[head]]], table[head]) and np.array_equal(table[rep[corners]], table):
        # corners agree per vertex: keep the vertex order (unused vertices keep zero attributes)
        used = np.zeros(n_v, bool)
        used[corners] = True
        source, new_of_corner = np.arange(n_v), corners
        vals = np.where(used[:, None], table[rep], 0)
        pick = np.where(used, rep, -1)
    else:
        first, new_of_corner = split_corners(corners, table)
        source, pick = corners[first], first
        vals = table[first]
    valid = bool((pick >= 0).all())
    texcoords = [None if s is None else (s[pick] if valid else np.where((pick >= 0)[:, None], s[np.maximum(pick, 0)], 0))
                 .astype("<f4", copy=False) for s in sets]
    new_of_corner = np.asarray(new_of_corner).reshape(-1)
    tris = new_of_corner[tris_c][:, [0, 2, 1]]      # reverse the winding back
    return VertexData(positions=np.ascontiguousarray(pos[source][:, SWAP], "<f4"),
                      normals=np.ascontiguousarray(vals[:, :2]).astype("i1" if v1 else "<i2"),
                      texcoords=texcoords, source_vertex=source, triangles=tris, triangle_face=face)
