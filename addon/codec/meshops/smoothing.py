"""Smoothing groups (Mesh.smoothing, as 3DS has them) -> corner normals, in bulk.

A face in group 0 is flat. Otherwise a corner's normal is the area-weighted
sum of the normals of the faces around the same point (same position, so UV
seams do not break smoothing) whose group mask shares a bit with its own.
"""
from __future__ import annotations

import numpy as np

from .normals import face_normal_rows, face_normals, unit as _unit
from .welding import weld_ids
from ..parallel import PARALLEL_CORNERS, map_two

# pair expansion per welded point is quadratic in the distinct masks there;
# beyond this many pairs we only smooth faces with identical masks
MAX_PAIRS = 20_000_000


def _sum_rows(index: np.ndarray, rows: np.ndarray, n: int) -> np.ndarray:
    out = np.empty((n, 3), np.float32)
    for k in range(3):
        out[:, k] = np.bincount(index, rows[:, k], minlength=n)
    return out


def one_group_normals(positions: np.ndarray, tris: np.ndarray, groups: np.ndarray, welded: bool = False
                      ) -> np.ndarray | None:
    """(3, V) float32 normal of each vertex, as x, y and z rows, when every face has the same nonzero mask
    (the usual smooth model): then a corner's normal is its point's, whichever face it is of, and
    smooth_normals gives these at the corners. None when some face is flat or the masks differ.
    welded: see smooth_normals."""
    groups = np.asarray(groups)
    if not len(tris) or not groups[0] or (groups != groups[0]).any():
        return None
    rows = np.ascontiguousarray(np.asarray(tris, np.intp).T)       # (3, F): each corner's vertex
    point = None if welded else weld_ids(positions).astype(np.intp)
    at = rows if point is None else np.take(point, rows)
    n = len(positions) if point is None else int(point.max()) + 1
    # each face's normal into its three corners' points, a corner row at a time (float64 sums of a few
    # float32 values: exact, in any order); x, y and z apart, as rows (numpy's arithmetic on a column of
    # (N, 3) is several times slower)
    fn = face_normal_rows(positions, rows).astype(np.float64)
    sums = np.empty((3, n), np.float32)
    for k in range(3):
        total = np.bincount(at[0], fn[k], n)
        total += np.bincount(at[1], fn[k], n)
        total += np.bincount(at[2], fn[k], n)
        sums[k] = total
    length = sums[0] * sums[0]                # unit(): the same sum, in the same order
    length += sums[1] * sums[1]
    length += sums[2] * sums[2]
    np.sqrt(length, out=length)
    sums /= np.where(length > 0, length, np.float32(1.0))
    return sums if point is None else np.take(sums, point, axis=1)


def smooth_normals(positions: np.ndarray, tris: np.ndarray, groups: np.ndarray, welded: bool = False
                   ) -> np.ndarray:
    """(F*3, 3) float32 corner normals for triangles `tris` with u32 group masks. welded: faces meet where
    they share a vertex (a Scene mesh, whose vertices are its points: as Blender shades it); otherwise
    vertices at the same position are one point (a file's own vertices, cut open at UV seams)."""
    by_vertex = one_group_normals(positions, tris, groups, welded)
    if by_vertex is not None:
        return np.take(np.ascontiguousarray(by_vertex.T), tris.ravel(), axis=0)
    f = len(tris)
    fn = face_normals(positions, tris)
    groups = np.asarray(groups, np.uint64)
    if f == 0 or not groups.any():
        return np.repeat(_unit(fn), 3, axis=0)
    smooth_face = groups != 0
    every = bool(smooth_face.all())
    sel = slice(None) if every else np.flatnonzero(smooth_face)
    point = np.asarray(tris[sel], np.int64).ravel() if welded else np.take(weld_ids(positions), tris[sel]).ravel()
    masks, mask_of_face = np.unique(groups[sel], return_inverse=True)
    corner_mask = np.repeat(mask_of_face.ravel(), 3)
    face_rows = np.repeat(fn[sel], 3, axis=0)
    n_masks, n_points = len(masks), int(point.max()) + 1
    if n_points * n_masks <= 4 * len(point) + 1024:
        # few distinct masks: sum into a dense (point, mask) table, no sort needed
        key = point * n_masks + corner_mask
        sums = _sum_rows(key, face_rows, n_points * n_masks).reshape(n_points, n_masks, 3)
        share = (masks[:, None] & masks[None, :]) != 0                 # mask a collects mask b
        acc = sums if n_masks == 1 else np.einsum("pbk,ab->pak", sums, share.astype(sums.dtype))
        normals = np.take(_unit(acc.reshape(-1, 3)), key, axis=0)
    else:
        normals = _sparse(point, masks[corner_mask], face_rows)
    if every:
        return normals.astype(np.float32, copy=False)
    out = np.repeat(_unit(fn), 3, axis=0)
    out[np.repeat(smooth_face, 3)] = normals
    return out


def _sparse(point: np.ndarray, mask: np.ndarray, face_rows: np.ndarray) -> np.ndarray:
    """Corner normals for many distinct masks: sort (point, mask) keys, then pair up keys per point."""
    keys = (point.astype(np.uint64) << np.uint64(32)) | mask
    uniq, inv = np.unique(keys, return_inverse=True)
    inv = inv.ravel()
    sums = _sum_rows(inv, face_rows, len(uniq))
    upoint, umask = uniq >> np.uint64(32), uniq & np.uint64(0xFFFFFFFF)
    # all pairs (a, b) of keys at the same point: a collects b when their masks share a bit
    starts = np.r_[0, np.flatnonzero(np.diff(upoint)) + 1]
    counts = np.diff(np.r_[starts, len(uniq)])
    per_key = np.repeat(counts, counts)
    if not (umask & (umask - np.uint64(1))).any() or int(per_key.sum()) > MAX_PAIRS:
        acc = sums                        # one bit per face: faces share exactly when their masks are equal
    else:
        a = np.repeat(np.arange(len(uniq)), per_key)
        first = np.repeat(np.repeat(starts, counts), per_key)
        within = np.arange(len(a)) - np.repeat(np.cumsum(per_key) - per_key, per_key)
        b = first + within
        ok = (umask[a] & umask[b]) != 0
        acc = _sum_rows(a[ok], sums[b[ok]], len(uniq))
    return np.take(_unit(acc), inv, axis=0)


def with_normals(scene):
    """The scene, with corner normals from the groups for each triangle mesh that has groups but
    no normals (a .3ds read for Blender's own smoothing), for formats that store normals."""
    from dataclasses import replace

    def one(m):
        if m.normals is None and m.smoothing is not None and len(m.corners) == 3 * len(m.faces):
            m = replace(m, normals=smooth_normals(m.positions, m.corners.reshape(-1, 3).astype(np.int64),
                                                  m.smoothing))
        return m

    corners = sum(len(m.corners) for m in scene.meshes)     # several meshes: two at a time
    return replace(scene, meshes=map_two(one, scene.meshes, threaded=corners >= PARALLEL_CORNERS))
