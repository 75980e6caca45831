"""Corner normals from a mesh's shape: face normals, the normals sharp edges and flat faces give
(Blender's own shading, to compare a file's normals with), corner angles."""
from __future__ import annotations

import numpy as np

from .edges import Edges, fan_labels

COS_SAME = 0.999          # corner normals closer than this count as the same
COS_OFF = float(np.cos(np.radians(10)))    # a file normal further than this from the shading is reported


def face_normals(positions: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(F, 3) float32, length = twice the area (area weighting); the cross product spelled
    out per component, which is several times faster than np.cross on large arrays."""
    p = np.asarray(positions, np.float32)
    a = np.take(p, tris[:, 0], axis=0)
    u = np.take(p, tris[:, 1], axis=0) - a
    v = np.take(p, tris[:, 2], axis=0) - a
    return cross(u, v)


def face_normal_rows(positions: np.ndarray, corner_rows: np.ndarray) -> np.ndarray:
    """face_normals as (3, F) x, y and z rows, of triangles given as their corners' vertices in three
    rows (3, F): single floats gathered and crossed as contiguous rows, about twice as fast as (F, 3)
    columns, and the same values."""
    p = np.ascontiguousarray(np.asarray(positions, np.float32).T)
    a = [np.take(p[k], corner_rows[0]) for k in range(3)]
    u = [np.take(p[k], corner_rows[1]) - a[k] for k in range(3)]
    v = [np.take(p[k], corner_rows[2]) - a[k] for k in range(3)]
    out = np.empty((3, corner_rows.shape[1]), np.float32)
    for k in range(3):
        i, j = (k + 1) % 3, (k + 2) % 3
        np.subtract(u[i] * v[j], u[j] * v[i], out=out[k])
    return out


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (N, 3) arrays (np.cross is slow on long arrays)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def unit(v: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    return v / np.where(n > 0, n, 1.0).astype(v.dtype)



def corner_angles(positions: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(C,) the angle of each triangle corner (Blender weights face normals by it)."""
    p = np.asarray(positions, np.float32)
    a, b, c = (np.take(p, tris[:, k], axis=0) for k in range(3))
    ab, bc, ca = unit(b - a), unit(c - b), unit(a - c)          # each side once, not twice per corner
    cos = np.empty((len(tris), 3), np.float32)
    cos[:, 0] = -np.einsum("ij,ij->i", ab, ca)                  # at a: towards b and towards c (-ca)
    cos[:, 1] = -np.einsum("ij,ij->i", bc, ab)
    cos[:, 2] = -np.einsum("ij,ij->i", ca, bc)
    return np.arccos(np.clip(cos.ravel(), -1.0, 1.0))


def sharp_edge_normals(positions: np.ndarray, tris: np.ndarray, sharp: np.ndarray, flat: np.ndarray,
                       edges: Edges, by_angle: bool = False) -> np.ndarray:
    """(C, 3) the corner normals that sharp edges and flat faces give: the sum over each smooth
    fan of edge-connected faces, area weighted (as the smoothing-group normals are, so that only
    the grouping differs), or by_angle as Blender weights them."""
    fn = face_normals(positions, tris)
    n = len(tris) * 3
    face_of = np.repeat(np.arange(len(tris)), 3)
    join = (~sharp[edges.a] & ~flat[face_of[edges.a]] & ~flat[face_of[edges.b]] & ~edges.flipped
            & edges.manifold)
    labels = fan_labels(n, edges, join)
    rows = np.repeat(unit(fn) if by_angle else fn, 3, axis=0)
    if by_angle:
        rows *= corner_angles(positions, tris)[:, None].astype(np.float32)
    acc = np.empty((n, 3), np.float32)
    for k in range(3):
        acc[:, k] = np.bincount(labels, rows[:, k], minlength=n)
    out = unit(acc[labels])
    fl = np.repeat(flat, 3)
    out[fl] = unit(rows[fl])
    return out


def differing_corners(a: np.ndarray, b: np.ndarray) -> int:
    """How many corner normals of two (C, 3) sets point differently."""
    return int((np.einsum("ij,ij->i", a, b) < COS_SAME).sum())


