"""Basis changes and handedness: the arithmetic every format's scene.py uses.

A basis is a 3x3 matrix B that maps file coordinates to Blender coordinates:
p_blender = B @ p_file. When det(B) < 0 the change mirrors, and triangle
winding must be reversed to keep front faces front.
"""
from __future__ import annotations

import numpy as np

_AXES = {"X": (0, 1.0), "Y": (1, 1.0), "Z": (2, 1.0), "-X": (0, -1.0), "-Y": (1, -1.0), "-Z": (2, -1.0)}


def _cross3(u, v) -> np.ndarray:
    """np.cross of 3-vectors (or of (..., 3) rows), written out: the same arithmetic, without np.cross's
    general axis handling (some 30 microseconds a call, per object of a scene)."""
    u, v = np.asarray(u), np.asarray(v)
    return np.stack([u[..., 1] * v[..., 2] - u[..., 2] * v[..., 1], u[..., 2] * v[..., 0] - u[..., 0] * v[..., 2],
                     u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]], -1)


def det3(a: np.ndarray) -> float:
    """Determinant of a 3x3 matrix, written out (LAPACK's call wakes OpenBLAS's threads: a few
    milliseconds each time between bulk numpy work, per object of a scene)."""
    a = np.asarray(a, np.float64)
    return float(a[:, 0] @ _cross3(a[:, 1], a[:, 2]))


def basis_from_axes(forward: str, up: str) -> np.ndarray:
    """The basis taking a file whose forward/up are the named axes to Blender's
    (+Y forward, +Z up), the same choice as bpy_extras.io_utils.axis_conversion."""
    fi, fs = _AXES[forward]
    ui, us = _AXES[up]
    if fi == ui:
        raise ValueError(f"forward {forward} and up {up} share an axis")
    src = np.zeros((3, 3))
    src[fi, 1] = fs        # file forward -> Blender +Y
    src[ui, 2] = us        # file up -> Blender +Z
    ri = 3 - fi - ui
    # the remaining axis keeps the basis right-handed
    src[ri, 0] = 1.0
    if np.linalg.det(src) < 0:
        src[ri, 0] = -1.0
    return src.T


def mirrors(basis: np.ndarray) -> bool:
    return float(np.linalg.det(np.asarray(basis)[:3, :3])) < 0.0


def to4(basis3: np.ndarray) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = basis3
    return m


def apply_points(basis: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Transform (N, 3) points by a 3x3 or 4x4 matrix, in bulk, keeping float32."""
    b = np.asarray(basis, np.float64)
    p = np.asarray(points, np.float64)
    out = p @ b[:3, :3].T
    if b.shape == (4, 4):
        out += b[:3, 3]
    return out.astype(np.float32)


def apply_normals(basis: np.ndarray, normals: np.ndarray) -> np.ndarray:
    """Normals use the inverse transpose (of a singular matrix: the identity's); the result is renormalised."""
    b = np.asarray(basis, np.float64)[:3, :3]
    n = np.asarray(normals, np.float64) @ inverse_or_identity(b)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    return (n / np.where(length > 0, length, 1.0)).astype(np.float32)


def conjugate(basis: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Express a 4x4 file-space transform in Blender space: B M B^-1."""
    b4 = to4(np.asarray(basis)[:3, :3]) if np.asarray(basis).shape != (4, 4) else np.asarray(basis)
    return b4 @ np.asarray(matrix, np.float64) @ inverse_or_identity(b4)


def reverse_winding(corners: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Reverse each face's corner order, keeping its first corner first.

    Works for any polygon sizes, in bulk: corner k of a face of size n moves
    to (n - k) % n.
    """
    corners = np.asarray(corners)
    starts = np.asarray(faces, np.int64)
    sizes = np.diff(np.append(starts, len(corners)))
    face_of = np.repeat(np.arange(len(starts)), sizes)
    k = np.arange(len(corners)) - starts[face_of]
    src = starts[face_of] + (sizes[face_of] - k) % sizes[face_of]
    return src


def flip_triangles(tris: np.ndarray) -> np.ndarray:
    """(F, 3) -> (F, 3) with corners 1 and 2 swapped."""
    t = np.asarray(tris)
    return t[:, [0, 2, 1]]


def quat_to_matrix(q) -> np.ndarray:
    """(w, x, y, z) -> 3x3 rotation (column vectors). Works on (..., 4) arrays."""
    q = np.asarray(q, np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q, -1, 0)
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (y * y + z * z); m[..., 0, 1] = 2 * (x * y - z * w); m[..., 0, 2] = 2 * (x * z + y * w)
    m[..., 1, 0] = 2 * (x * y + z * w); m[..., 1, 1] = 1 - 2 * (x * x + z * z); m[..., 1, 2] = 2 * (y * z - x * w)
    m[..., 2, 0] = 2 * (x * z - y * w); m[..., 2, 1] = 2 * (y * z + x * w); m[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return m


def matrix_to_quat(m) -> np.ndarray:
    """3x3 rotation (column vectors) -> (w, x, y, z), w >= 0. Works on (..., 3, 3)."""
    m = np.asarray(m, np.float64)[..., :3, :3]
    t = np.trace(m, axis1=-2, axis2=-1)
    q = np.empty(m.shape[:-2] + (4,))
    # four branches picked per element for numerical stability
    cand = np.stack([t, m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]], -1)
    pick = np.argmax(cand, -1)
    for b in range(4):
        sel = pick == b
        if not np.any(sel):
            continue
        a = m[sel]
        if b == 0:
            s = np.sqrt(1.0 + a[:, 0, 0] + a[:, 1, 1] + a[:, 2, 2]) * 2
            v = [0.25 * s, (a[:, 2, 1] - a[:, 1, 2]) / s, (a[:, 0, 2] - a[:, 2, 0]) / s, (a[:, 1, 0] - a[:, 0, 1]) / s]
        elif b == 1:
            s = np.sqrt(1.0 + a[:, 0, 0] - a[:, 1, 1] - a[:, 2, 2]) * 2
            v = [(a[:, 2, 1] - a[:, 1, 2]) / s, 0.25 * s, (a[:, 0, 1] + a[:, 1, 0]) / s, (a[:, 0, 2] + a[:, 2, 0]) / s]
        elif b == 2:
            s = np.sqrt(1.0 - a[:, 0, 0] + a[:, 1, 1] - a[:, 2, 2]) * 2
            v = [(a[:, 0, 2] - a[:, 2, 0]) / s, (a[:, 0, 1] + a[:, 1, 0]) / s, 0.25 * s, (a[:, 1, 2] + a[:, 2, 1]) / s]
        else:
            s = np.sqrt(1.0 - a[:, 0, 0] - a[:, 1, 1] + a[:, 2, 2]) * 2
            v = [(a[:, 1, 0] - a[:, 0, 1]) / s, (a[:, 0, 2] + a[:, 2, 0]) / s, (a[:, 1, 2] + a[:, 2, 1]) / s, 0.25 * s]
        q[sel] = np.stack(v, -1)
    q *= np.where(q[..., :1] < 0, -1.0, 1.0)
    return q


def euler_to_matrix(angles, order: str = "XYZ") -> np.ndarray:
    """(..., 3) angles in radians -> (..., 3, 3); order "XYZ" applies X first (Blender's meaning)."""
    a = np.asarray(angles, np.float64)
    out = np.broadcast_to(np.eye(3), a.shape[:-1] + (3, 3)).copy()
    for axis in order:
        k = "XYZ".index(axis)
        c, s = np.cos(a[..., k]), np.sin(a[..., k])
        r = np.zeros(a.shape[:-1] + (3, 3))
        i, j = [(1, 2), (2, 0), (0, 1)][k]
        r[..., k, k] = 1.0
        r[..., i, i] = c; r[..., j, j] = c
        r[..., i, j] = -s; r[..., j, i] = s
        out = r @ out
    return out


def axis_angle_to_quat(axis, angle) -> np.ndarray:
    """(..., 3) axes and (...) angles in radians -> (..., 4) (w, x, y, z)."""
    axis = np.asarray(axis, np.float64)
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    axis = axis / np.where(n > 0, n, 1.0)
    half = np.asarray(angle, np.float64)[..., None] / 2
    return np.concatenate([np.cos(half), axis * np.sin(half)], -1)


def quat_multiply(a, b) -> np.ndarray:
    """Hamilton product a*b of (..., 4) (w, x, y, z) quaternions."""
    a = np.asarray(a, np.float64); b = np.asarray(b, np.float64)
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], -1)


def compose(translation, rotation_wxyz, scale) -> np.ndarray:
    """T @ R @ S as a 4x4 column-vector matrix; batched over leading axes."""
    t = np.asarray(translation, np.float64)
    r = quat_to_matrix(rotation_wxyz)
    s = np.asarray(scale, np.float64)
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., :3, :3] = r * s[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def decompose(m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """4x4 -> (translation, quaternion wxyz, scale); a mirror goes into a negative scale x."""
    m = np.asarray(m, np.float64)
    t = m[..., :3, 3].copy()
    cols = m[..., :3, :3]
    x, y, z = cols[..., 0], cols[..., 1], cols[..., 2]      # the columns
    s = np.sqrt(np.stack([x[..., 0] * x[..., 0] + x[..., 1] * x[..., 1] + x[..., 2] * x[..., 2],
                          y[..., 0] * y[..., 0] + y[..., 1] * y[..., 1] + y[..., 2] * y[..., 2],
                          z[..., 0] * z[..., 0] + z[..., 1] * z[..., 1] + z[..., 2] * z[..., 2]], -1))
    det = np.sum(x * np.cross(y, z), -1)            # its sign only: a mirror
    s[..., 0] *= np.where(det < 0, -1.0, 1.0)
    r = cols / np.where(s == 0, 1.0, s)[..., None, :]
    return t, matrix_to_quat(r), s


def inverse_or_identity(m, warnings=None, what: str = "") -> np.ndarray:
    """Inverses of (..., N, N) matrices; one a file or a scene made singular or non-finite (a zero or
    NaN scale) gives the identity instead of a LinAlgError, with one warning about `what` when given.
    3x3 and affine 4x4 ones by the adjugate (LAPACK's calls wake OpenBLAS's threads: milliseconds
    each on a busy machine, for a handful of numbers)."""
    m = np.asarray(m, np.float64)
    n = m.shape[-1] if m.ndim >= 2 else 4
    flat = m.reshape(-1, n, n)
    out = np.tile(np.eye(n), (len(flat), 1, 1))
    with np.errstate(all="ignore"):
        ok = np.isfinite(flat).all(axis=(-2, -1))
        if n == 4:
            plain = ok & (flat[:, 3] == (0.0, 0.0, 0.0, 1.0)).all(-1)       # affine
        else:
            plain = ok.copy() if n == 3 else np.zeros_like(ok)
        a = flat[plain, :3, :3]
        adj = np.stack([_cross3(a[..., 1], a[..., 2]), _cross3(a[..., 2], a[..., 0]),
                        _cross3(a[..., 0], a[..., 1])], -2)           # rows: the adjugate
        det = np.einsum("ki,ki->k", a[..., 0], adj[..., 0, :])
        good = np.abs(det) > 1e-30
        inv = adj / np.where(good, det, 1.0)[:, None, None]
        block = out[plain]
        block[:, :3, :3] = np.where(good[:, None, None], inv, np.eye(3))
        if n == 4:
            block[:, :3, 3] = np.where(good[:, None], -np.einsum("kij,kj->ki", inv, flat[plain, :3, 3]), 0.0)
        out[plain] = block
        ok[plain] = good
        rest = ok & ~plain
        if rest.any():
            ok[rest] = np.abs(np.linalg.det(flat[rest])) > 1e-30
            rest &= ok
            out[rest] = np.linalg.inv(flat[rest])
    if warnings is not None and not ok.all():
        warnings.warn(f"{what} has a zero or non-finite scale: it is placed as if it had none")
    return out.reshape(m.shape)
