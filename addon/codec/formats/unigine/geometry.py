"""Per-corner tangent frames for export, in bulk (triangulation and normals: codec.meshops)."""
from __future__ import annotations

import numpy as np

from ...axes import inverse_or_identity
from ...meshops import all_triangles, split_corners, vertex_normals
from ...scene import Mesh
from .conventions import SIGN_ATTR, TANGENT_ATTR
from ...meshops import cross as _cross
from ...parallel import in_blocks


_BLOCK = 1 << 15


def _normalize(v: np.ndarray) -> np.ndarray:
    """Rows of (N, 3) float32 made unit length (zero rows stay zero), a cache-sized block at a time,
    two blocks at a time (parallel.in_blocks)."""
    out = np.empty(v.shape, np.result_type(v, np.float32))

    def block(s: int) -> None:
        b = v[s:s + _BLOCK]
        x, y, z = b[:, 0], b[:, 1], b[:, 2]
        n = np.sqrt(x * x + y * y + z * z)
        np.divide(b, np.where(n > 0, n, out.dtype.type(1.0))[:, None], out=out[s:s + _BLOCK])
    in_blocks(block, len(v), _BLOCK)
    return out


def _transform(v: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Rows times a 3x3 matrix (row-vector convention); skipped for the identity."""
    return v if np.array_equal(m, np.eye(3)) else (v @ m.astype(v.dtype))


def corner_frames(mesh: Mesh, positions: np.ndarray, tri_corners: np.ndarray, xf: np.ndarray):
    """Normal, tangent and binormal sign for every triangle corner (T*3 rows), in the file's space.

    Normals: the mesh's custom normals, else smooth area-weighted vertex normals.
    Tangents: the corner attribute kept on import (or Blender's 'tangent' with
    'bitangent_sign'), else sums of the triangles' +U directions over the
    corners that share a vertex, its UV and handedness.
    The binormal sign is Blender's bitangent sign: +1 when the binormal
    cross(normal, tangent) follows +V of Blender's (bottom-up) UVs, so an
    unmirrored layout gets w > 0 (the notes leave the V direction open).
    float32 is ample here: the frames end as 1/32767 steps. Custom normals and kept tangents
    come as they are, not of unit length: tangent.encode normalizes (a second pass here moved
    a few quaternions by one step, as tests/codec/test_unigine_export.py shows, at a third of
    the frames' cost).
    """
    corner = tri_corners.reshape(-1)
    # all triangles already: corner k is triangle corner k, and gathers can be skipped
    in_order = all_triangles(mesh.faces, len(mesh.corners))

    def per_corner(a: np.ndarray) -> np.ndarray:
        return a if in_order else a[corner]

    vertex = per_corner(np.asarray(mesh.corners, np.int64))
    lin = np.asarray(xf, np.float64)[:3, :3]
    attrs = mesh.corner_attributes
    has_normals = mesh.normals is not None and len(mesh.normals) == len(mesh.corners)
    has_tangents = TANGENT_ATTR in attrs or "tangent" in attrs
    if not (has_normals and has_tangents):
        tri_v = vertex.reshape(-1, 3)
        p = np.asarray(positions, np.float32)[vertex].reshape(-1, 3, 3)
        e1, e2 = p[:, 1] - p[:, 0], p[:, 2] - p[:, 0]
        face_n = _cross(e1, e2)                 # what face_normals gives, with e1, e2 kept for the tangents
    if has_normals:
        # normals take the inverse transpose: rows times inv(lin)
        normal = _transform(per_corner(np.asarray(mesh.normals, np.float32)), inverse_or_identity(lin))
    else:
        normal = _normalize(vertex_normals(positions, tri_v, face_n))[vertex]
    if has_tangents:
        mine = TANGENT_ATTR in attrs
        tan = _transform(per_corner(np.asarray(attrs[TANGENT_ATTR if mine else "tangent"], np.float32).reshape(-1, 3)),
                         lin.T)
        sign_src = attrs.get(SIGN_ATTR if mine else "bitangent_sign")
        sign = np.ones(len(corner), np.float32) if sign_src is None else \
            per_corner(np.asarray(sign_src, np.float32).reshape(-1))
        return normal, tan, np.where(sign < 0, np.float32(-1.0), np.float32(1.0))
    uvs = list(mesh.uv_layers.values())
    if not uvs:
        return normal, np.zeros_like(normal), np.ones(len(corner), np.float32)
    uv = per_corner(np.asarray(uvs[0], np.float32).reshape(-1, 2)).reshape(-1, 3, 2)
    d1, d2 = uv[:, 1] - uv[:, 0], uv[:, 2] - uv[:, 0]
    det = d1[:, 0] * d2[:, 1] - d2[:, 0] * d1[:, 1]
    inv = np.where(det != 0, 1.0 / np.where(det == 0, 1.0, det), 0.0).astype(np.float32)[:, None]
    t_face = (e1 * d2[:, 1:2] - e2 * d1[:, 1:2]) * inv
    b_face = (e2 * d1[:, 0:1] - e1 * d2[:, 0:1]) * inv
    handed = np.einsum("ij,ij->i", _cross(face_n, t_face), b_face)
    sign = np.repeat(np.where(handed < 0, -1.0, 1.0).astype(np.float32), 3)
    # like MikkTSpace, tangents are shared only by corners of one vertex that also share
    # its UV and handedness, so UV seams and mirror lines keep their own tangents
    # (the kernel's split within each vertex: no hashing where a vertex's corners agree)
    _, split = split_corners([uv.reshape(-1, 2), (sign > 0).view(np.uint8)], vertex)
    # each column once in float64 (bincount's own type; the same sums), repeated per corner
    t_unit = _normalize(t_face).T.astype(np.float64)
    sums = np.stack([np.bincount(split, np.repeat(t_unit[c], 3)) for c in range(3)], 1).astype(np.float32)
    return normal, np.take(sums, split, axis=0), sign
