"""The tangent quaternion of a triangle vertex: short[4] (x, y, z, w) / 32767.

Its rotation matrix holds tangent, binormal and normal as columns 0, 1, 2;
the sign of w is the binormal's sign (mirrored UVs). Writers keep
|w| >= 1/32767 so that the sign survives quantization.
"""
from __future__ import annotations

import numpy as np

from .model import QUAT_SCALE


def decode(q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(T, 4) int16 -> normal (T, 3), tangent (T, 3) float32, binormal sign (T,) float32 (+1/-1)."""
    q = np.asarray(q, np.float64) / QUAT_SCALE
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    # an all-zero quaternion carries no frame: read it as the identity
    q = np.where(norm > 0, q / np.where(norm > 0, norm, 1.0), np.array([0.0, 0.0, 0.0, 1.0]))
    x, y, z, w = q.T
    normal = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], 1)
    tangent = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], 1)
    sign = np.where(w < 0, -1.0, 1.0)
    return normal.astype(np.float32), tangent.astype(np.float32), sign.astype(np.float32)


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cross product of (N, 3) arrays (np.cross is slow on long arrays)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    length = np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    return v / np.where(length > 0, length, 1.0)


def _orthonormal_tangent(normal: np.ndarray, tangent: np.ndarray) -> np.ndarray:
    t = tangent - normal * np.einsum("ij,ij->i", tangent, normal)[:, None]
    length = np.sqrt(np.einsum("ij,ij->i", t, t))
    bad = length <= 1e-6
    t /= np.where(bad, 1.0, length)[:, None]
    if bad.any():
        # no usable tangent: any direction perpendicular to the normal
        n = normal[bad]
        other = np.where(np.abs(n[:, :1]) < 0.9, [[1.0, 0, 0]], [[0, 1.0, 0]])
        t[bad] = _unit(cross(n, other))
    return t


def encode(normal: np.ndarray, tangent: np.ndarray, sign: np.ndarray) -> np.ndarray:
    """Per-vertex frames -> (T, 4) int16 (x, y, z, w), w's sign = binormal sign.

    float32 throughout: the quaternion comes from its largest component (a
    well-conditioned square root) and the off-diagonal sums, so no small
    component is taken from a cancelling difference.
    """
    n = np.array(normal, np.float32)
    zero = np.einsum("ij,ij->i", n, n) == 0
    n[zero] = (0.0, 0.0, 1.0)
    n = _unit(n)
    t = _orthonormal_tangent(n, np.asarray(tangent, np.float32))
    b = cross(n, t)
    # matrix columns (t, b, n): m[r][c]
    m00, m11, m22 = t[:, 0], b[:, 1], n[:, 2]
    a = b[:, 2] - n[:, 1]          # m21 - m12 = 4wx
    c = n[:, 0] - t[:, 2]          # m02 - m20 = 4wy
    d = t[:, 1] - b[:, 0]          # m10 - m01 = 4wz
    e = b[:, 0] + t[:, 1]          # m01 + m10 = 4xy
    f = n[:, 0] + t[:, 2]          # m02 + m20 = 4xz
    g = n[:, 1] + b[:, 2]          # m12 + m21 = 4yz
    # which of w, x, y, z is largest (4 * its square is on the diagonal)
    big = 1 + m00 + m11 + m22
    k = np.zeros(len(n), np.int8)
    for j, cand in enumerate((1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22), 1):
        more = cand > big
        k[more] = j
        np.maximum(big, cand, out=big)
    # each row times 4 * (its largest component): w-, x-, y- or z-led
    q = np.empty((len(n), 4), np.float32)           # x, y, z, w
    q[:, 3] = np.choose(k, (big, a, c, d))
    q[:, 0] = np.choose(k, (a, big, e, f))
    q[:, 1] = np.choose(k, (c, e, big, g))
    q[:, 2] = np.choose(k, (d, f, g, big))
    q *= np.where(q[:, 3] < 0, -1.0, 1.0).astype(np.float32)[:, None]     # w >= 0
    q /= np.sqrt(np.einsum("ij,ij->i", q, q))[:, None]
    q[np.asarray(sign) < 0] *= -1.0
    q *= QUAT_SCALE
    out = np.rint(q, out=q).clip(-32767, 32767).astype(np.int16)
    w0 = out[:, 3] == 0
    out[w0, 3] = np.where(np.asarray(sign)[w0] < 0, -1, 1)
    return out
