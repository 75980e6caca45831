"""The tangent quaternion of a triangle vertex: short[4] (x, y, z, w) / 32767.

Its rotation matrix holds tangent, binormal and normal as columns 0, 1, 2;
the sign of w is the binormal's sign (mirrored UVs). Writers keep
|w| >= 1/32767 so that the sign survives quantization.
"""
from __future__ import annotations

import numpy as np

from ...meshops import cross
from ...parallel import in_blocks
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


_BLOCK = 1 << 14        # rows per block: a block's columns stay in cache through the whole chain


def encode(normal: np.ndarray, tangent: np.ndarray, sign: np.ndarray, rows: np.ndarray | None = None,
           out: np.ndarray | None = None) -> np.ndarray:
    """Per-vertex frames -> (T, 4) int16 (x, y, z, w), w's sign = binormal sign.

    float32 throughout: the quaternion comes from its largest component (a
    well-conditioned square root) and the off-diagonal sums, so no small
    component is taken from a cancelling difference. `rows` picks the rows
    to encode (all by default); `out` receives them. Worked in blocks of contiguous columns, two
    blocks at a time (parallel.in_blocks); the arithmetic is the same, in the same order, as
    whole-array numpy.
    """
    normal, tangent, sign = np.asarray(normal), np.asarray(tangent), np.asarray(sign)
    count = len(normal) if rows is None else len(rows)
    out = np.empty((count, 4), np.int16) if out is None else out     # (count, 4) int16, e.g. a view of a record

    def block(s: int) -> None:
        pick = slice(s, s + _BLOCK) if rows is None else rows[s:s + _BLOCK]
        out[s:s + _BLOCK] = _encode_block(normal[pick], tangent[pick], sign[pick])
    in_blocks(block, count, _BLOCK)
    return out


def _columns(v: np.ndarray) -> list[np.ndarray]:
    return [np.array(v[:, i], np.float32) for i in range(3)]


def _squares(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    out = x * x
    out += y * y
    out += z * z
    return out


def _unit_columns(x: np.ndarray, y: np.ndarray, z: np.ndarray, floor: float | None,
                  squares: np.ndarray | None = None) -> np.ndarray:
    """Divide the columns by their length in place (`squares`: their sum of squares, if known; used
    up); -> the rows divided by 1 instead: a length <= floor, or (floor None) a length not > 0."""
    length = _squares(x, y, z) if squares is None else squares
    np.sqrt(length, out=length)
    bad = ~(length > 0) if floor is None else length <= floor
    length[bad] = 1.0
    x /= length
    y /= length
    z /= length
    return bad


def _encode_block(normal: np.ndarray, tangent: np.ndarray, sign: np.ndarray) -> np.ndarray:
    nx, ny, nz = _columns(normal)
    squares = _squares(nx, ny, nz)
    zero = squares == 0
    if zero.any():
        nx[zero], ny[zero], nz[zero] = 0.0, 0.0, 1.0
        squares = None
    _unit_columns(nx, ny, nz, None, squares)
    # the tangent made orthonormal to the normal
    tx, ty, tz = _columns(tangent)
    along = tx * nx
    along += ty * ny
    along += tz * nz
    tx -= nx * along
    ty -= ny * along
    tz -= nz * along
    bad = _unit_columns(tx, ty, tz, 1e-6)
    if bad.any():
        # no usable tangent: any direction perpendicular to the normal
        n = np.stack([nx[bad], ny[bad], nz[bad]], 1)
        other = np.where(np.abs(n[:, :1]) < 0.9, [[1.0, 0, 0]], [[0, 1.0, 0]])
        t = _unit(cross(n, other))
        tx[bad], ty[bad], tz[bad] = t[:, 0], t[:, 1], t[:, 2]
    # binormal = cross(n, t); matrix columns (t, b, n): m[r][c]
    bx, by, bz = ny * tz - nz * ty, nz * tx - nx * tz, nx * ty - ny * tx
    m00, m11, m22 = tx, by, nz
    a = bz - ny          # m21 - m12 = 4wx
    c = nx - tz          # m02 - m20 = 4wy
    d = ty - bx          # m10 - m01 = 4wz
    e = bx + ty          # m01 + m10 = 4xy
    f = nx + tz          # m02 + m20 = 4xz
    g = ny + bz          # m12 + m21 = 4yz
    # which of w, x, y, z is largest (4 * its square is on the diagonal)
    big = 1 + m00 + m11 + m22
    k = np.zeros(len(nx), np.int8)
    for j, cand in enumerate((1 + m00 - m11 - m22, 1 - m00 + m11 - m22, 1 - m00 - m11 + m22), 1):
        more = cand > big
        k[more] = j
        np.maximum(big, cand, out=big)
    # each row times 4 * (its largest component): w-, x-, y- or z-led; kept as contiguous columns
    # (strided columns of one (N, 4) array, and masks broadcast over it, are several times slower)
    choices = ((big, a, c, d), (a, big, e, f), (c, e, big, g), (d, f, g, big))    # per column w, x, y, z
    cols = [np.array(pick[0]) for pick in choices]
    for j in range(1, 4):
        led = k == j
        if led.any():
            for col, pick in zip(cols, choices):
                np.copyto(col, pick[j], where=led)
    qw, qx, qy, qz = cols
    flip = qw < 0                                                       # w >= 0
    for col in cols:
        np.multiply(col, np.float32(-1.0), out=col, where=flip)
    norm = np.sqrt((qx * qx + qy * qy) + (qz * qz + qw * qw))
    negative = sign < 0
    q = np.empty((len(nx), 4), np.float32)           # x, y, z, w
    for i, col in enumerate((qx, qy, qz, qw)):
        col /= norm
        np.multiply(col, np.float32(-1.0), out=col, where=negative)
        q[:, i] = col
    q *= np.float32(QUAT_SCALE)
    out = np.rint(q, out=q).clip(-32767, 32767).astype(np.int16)
    w0 = out[:, 3] == 0
    out[w0, 3] = np.where(negative[w0], -1, 1)
    return out
