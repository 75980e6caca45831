"""Welding: one vertex per point, for formats that store a vertex per (point, UV, normal).

A format such as .3ds stores one vertex per (point, UV, normal), so a mesh read as stored is cut
open at every UV seam. `weld` joins the vertices at exactly the same point (UVs stay per corner,
so seams become UV seams); `weld_by_normals` does the same and keeps a file's corner normals as
custom normals or sharp edges. The points are grouped by the kernel's one row grouping
(meshops_rows): a hash table, no sort.
"""
from __future__ import annotations

import numpy as np

from .edges import (edge_pairs, face_of_corner, fan_labels, next_corner, several_fans, split_fans,
                    triangle_starts)
from .normals import COS_OFF, COS_SAME, sharp_edge_normals, unit
from .rows import representatives
from ..parallel import map_two


def weld_ids(positions: np.ndarray) -> np.ndarray:
    """(V,) id per vertex, 0..P-1, equal for vertices at exactly the same point."""
    return weld_points(positions)[0]


def weld_points(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(id per vertex 0..P-1, the lowest vertex at each point), ids in the order of those lowest
    vertices: vertices at exactly the same point share an id (-0.0 is 0.0; rows of any width:
    positions with more per-vertex values after them)."""
    return _weld_batch([positions])[0]


def weld_points_many(positions: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """[weld_points(p) for p in positions] (arrays of one width), in batches of about BATCH_ROWS
    rows shared by two threads (parallel.map_two): each batch is one table of its rows with the
    array's number as one more column, so that numpy works in long loops (many short ones keep the
    two threads waiting for Python's lock, which numpy lets go of only inside a loop), while each
    batch's hash table still fits in the cache (larger ones made welding slower)."""
    if len({np.shape(p)[1:] for p in positions}) > 1:
        raise ValueError("weld_points_many: the arrays differ in width")
    batches, rows = [], 0
    for p in positions:
        if not batches or rows >= BATCH_ROWS:
            batches.append([])
            rows = 0
        batches[-1].append(p)
        rows += len(p)
    return [out for batch in map_two(_weld_batch, batches) for out in batch]


BATCH_ROWS = 1 << 16


def _weld_batch(positions: list[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    flat = [np.asarray(p, np.float32) for p in positions]
    flat = [p if p.ndim == 2 else p.reshape(len(p), -1) for p in flat]
    width = flat[0].shape[1] if flat else 0
    starts = np.cumsum([0] + [len(p) for p in flat])
    many = len(flat) > 1
    rows = np.empty((int(starts[-1]), width + many), np.float32)
    for k, p in enumerate(flat):
        part = rows[starts[k]:starts[k + 1]]
        for j in range(width):              # a column at a time: one long loop each, not one per row
            np.add(p[:, j], np.float32(0.0), out=part[:, j])                       # -0.0 -> 0.0
        if many:
            part[:, width].view(np.uint32)[:] = k           # rows of two arrays never match
    root = representatives(rows.view(np.uint32))
    first = np.flatnonzero(root == np.arange(len(rows), dtype=root.dtype))
    rank = np.empty(len(rows), root.dtype)
    rank[first] = np.arange(len(first), dtype=root.dtype)
    ids = np.take(rank, root)
    before = np.searchsorted(first, starts)           # points of the arrays before each one
    return [(ids[starts[k]:starts[k + 1]] - rank.dtype.type(before[k]), first[before[k]:before[k + 1]] - starts[k])
            for k in range(len(flat))]


def weld(positions: np.ndarray, corners: np.ndarray, faces: np.ndarray,
         points: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(corners (C,) uint32, stored vertex per welded vertex): one vertex per point, numbered in
    the stored order. A face whose corners would meet at one vertex (zero area) keeps its own.
    points: weld_points(positions), when already found (weld_points_many)."""
    corners = np.asarray(corners)
    nv = len(positions)
    if nv == 0 or len(corners) == 0:
        return corners.astype(np.uint32), np.arange(nv)
    ids, first = weld_points(positions) if points is None else points    # numbered in the stored order already
    welded = np.take(ids, corners)
    if triangle_starts(faces, len(corners)):
        w3 = welded.reshape(-1, 3)
        bad_face = (w3[:, 0] == w3[:, 1]) | (w3[:, 1] == w3[:, 2]) | (w3[:, 2] == w3[:, 0])
        bad_corner = np.repeat(bad_face, 3) if bad_face.any() else None
    else:                                     # polygons: also corners further apart
        bad_corner = welded == welded[next_corner(faces, len(corners))]
        face_of = face_of_corner(faces, len(corners))
        order = np.argsort(face_of * (len(first) + 1) + welded, kind="stable")
        fs, ws = face_of[order], welded[order]
        bad_corner[order[1:]] |= (fs[1:] == fs[:-1]) & (ws[1:] == ws[:-1])
        if not bad_corner.any():
            bad_corner = None
    if bad_corner is not None:
        face_of = face_of_corner(faces, len(corners))
        bad = np.zeros(len(faces), bool)
        bad[face_of[bad_corner]] = True
        welded = np.where(bad[face_of], len(first) + corners.astype(np.int64), welded)
    else:
        used = np.zeros(nv, bool)             # by the stored vertices: corners index those in intp
        used[corners] = True
        if not used.all():                    # a point is in use when one of its vertices is
            used_points = np.zeros(len(first), bool)
            used_points[ids[used]] = True
            used = used_points
        if used.all():
            # the usual case: every point in use, nothing to renumber
            return (welded.view(np.uint32) if welded.dtype == np.int32 else welded.astype(np.uint32)), first
    # renumber: used points first, then the stored vertices kept for zero-area faces
    source_all = np.r_[first, np.arange(nv)]
    used = np.zeros(len(source_all), bool)
    used[welded] = True
    new_of = np.cumsum(used) - 1
    return new_of[welded].astype(np.uint32), source_all[used]


def weld_by_normals(mesh, exact: bool, warnings=None) -> int:
    """For formats that store a vertex per (point, normal, UV): one vertex per point (equal in
    every shape key and skin weight too), the file's corner normals kept as custom normals
    (exact) or as sharp edges where they differ across an edge, which Blender shades itself; then
    a vertex per fan where faces meet at a point without an edge (split_fan_points).
    Returns how many corners' file normals the sharp edges cannot give (off by more than
    COS_OFF: the file's normals are not its faces' own, e.g. bent by hand), which `warnings` hears."""
    if not len(mesh.positions):
        return 0                             # nothing to weld (a mesh without vertices)
    cols = [np.asarray(mesh.positions, np.float32).reshape(len(mesh.positions), -1)]
    cols += [np.asarray(k.positions, np.float32).reshape(len(mesh.positions), -1) for k in mesh.shape_keys]
    if mesh.skin is not None:
        cols += [np.asarray(mesh.skin.joints).astype(np.int32).view(np.float32),
                 np.asarray(mesh.skin.weights, np.float32)]
    for v in mesh.vertex_attributes.values():
        cols.append(np.asarray(v).reshape(len(mesh.positions), -1).astype(np.float32))
    corners, source = weld(np.hstack(cols), mesh.corners, mesh.faces)
    split_vertices(mesh, corners, source)
    e, off = None, 0
    if not exact and mesh.normals is not None and len(mesh.normals) == len(mesh.corners):
        e = edge_pairs(mesh.corners, next_corner(mesh.faces, len(mesh.corners)))
        off = _sharp_from_normals(mesh, e, warnings)
    split_fan_points(mesh, e)
    return off


def _sharp_from_normals(mesh, e, warnings) -> int:
    """Sharp edges where the corner normals differ across an edge (`e`: edge_pairs); -> the corners
    those cannot give their normal to, which `warnings` hears."""
    n = np.asarray(mesh.normals, np.float32)
    # opposite windings: a meets b_next, a_next meets b
    other_a = np.where(e.flipped, e.b, e.b_next)
    other_an = np.where(e.flipped, e.b_next, e.b)
    same = (np.einsum("ij,ij->i", n[e.a], n[other_a]) >= COS_SAME) & \
        (np.einsum("ij,ij->i", n[e.a_next], n[other_an]) >= COS_SAME)
    sharp = np.zeros(len(mesh.corners), bool)
    sharp[e.a[~same]] = sharp[e.b[~same]] = True
    mesh.sharp_edges = sharp
    if len(mesh.corners) != 3 * len(mesh.faces):
        return 0
    tris = np.asarray(mesh.corners, np.int64).reshape(-1, 3)
    native = sharp_edge_normals(mesh.positions, tris, sharp, np.zeros(len(tris), bool), e, by_angle=True)
    off = int((np.einsum("ij,ij->i", native, unit(n)) < COS_OFF).sum())
    if off and warnings is not None:
        warnings.warn(f"{mesh.name!r}: {off} of the file's corner normals are not what sharp edges can give "
                      f"(more than 10 degrees off); import with Normals: Exact to keep them")
    return off


def split_fan_points(mesh, edges=None) -> int:
    """Where faces meet at a welded point without sharing an edge, Cycles smooths across them (dark
    smears) though Blender's corner normals do not: give such a point a vertex per fan of faces, as
    the 3DS import does. Corners keep their normals and sharp edges. edges: edge_pairs of the mesh,
    when known. Returns the vertices added."""
    corners = np.asarray(mesh.corners)
    if not len(corners):
        return 0
    e = edges if edges is not None else edge_pairs(corners, next_corner(mesh.faces, len(corners)))
    if not several_fans(corners, e, len(mesh.positions)):
        return 0
    new_corners, source = split_fans(corners, fan_labels(len(corners), e), len(mesh.positions))
    added = len(source) - len(mesh.positions)
    if added:
        split_vertices(mesh, new_corners, source)
    return added


def split_vertices(mesh, corners: np.ndarray, source: np.ndarray) -> None:
    """Give a Scene Mesh new corners over the vertices `source` picks: every per-vertex array
    (positions, attributes, shape keys, skin) follows."""
    mesh.corners = np.asarray(corners, np.uint32)
    mesh.positions = np.take(mesh.positions, source, axis=0)
    mesh.vertex_attributes = {k: np.take(v, source, axis=0) for k, v in mesh.vertex_attributes.items()}
    for key in mesh.shape_keys:
        key.positions = np.take(key.positions, source, axis=0)
    if mesh.skin is not None:
        mesh.skin.joints, mesh.skin.weights = mesh.skin.joints[source], mesh.skin.weights[source]


