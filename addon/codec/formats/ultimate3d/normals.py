"""Compressed normals (latitude, longitude), with the notes' fix of the v2 typo.

The document's decoder uses the integer fields where it means the float
angles; the notes settle it as: lat = La / 20860.12008, lon = Lo / 10430.06004,
x = cos(lat) sin(lon), y = -sin(lat), z = cos(lat) cos(lon). v1 stores two
chars with lat = La * 0.0494739 and lon = Lo * 0.02473695. The encoder
truncates toward zero, as the C++ cast does. All in U3D's own axes.
"""
from __future__ import annotations

import numpy as np

from ...parallel import in_blocks

V2_LAT, V2_LON = 20860.12008, 10430.06004          # radians -> short
V1_LAT, V1_LON = 1.0 / 0.0494739, 1.0 / 0.02473695  # radians -> char


def decode(packed: np.ndarray) -> np.ndarray:
    """(V, 2) int16 (v2) or int8 (v1) -> (V, 3) float32 unit vectors."""
    p = np.asarray(packed)
    lat_k, lon_k = (V1_LAT, V1_LON) if p.dtype.itemsize == 1 else (V2_LAT, V2_LON)
    lat = p[:, 0].astype(np.float32) * np.float32(1.0 / lat_k)   # float32 trig: error far below one step
    lon = p[:, 1].astype(np.float32) * np.float32(1.0 / lon_k)
    c = np.cos(lat)
    out = np.empty((len(p), 3), np.float32)
    out[:, 0] = c * np.sin(lon)
    out[:, 1] = -np.sin(lat)
    out[:, 2] = c * np.cos(lon)
    return out


def encode(normals: np.ndarray, v1: bool = False) -> np.ndarray:
    """(V, 3) -> (V, 2) int16 (v2) or int8 (v1); zero vectors become +Y."""
    n = np.asarray(normals, np.float32)      # float32 trig: its error is far below one step
    return encode_xyz(n[:, 0], n[:, 1], n[:, 2], v1)


BLOCK = 1 << 15       # normals per step: a step's temporaries stay in the CPU cache


def encode_xyz(x: np.ndarray, y: np.ndarray, z: np.ndarray, v1: bool = False) -> np.ndarray:
    """encode() of the normals with these float32 components, as (V,) arrays (views are fine).

    encode()'s float32 operations, bit for bit, in cache-sized blocks (a mesh has millions), two
    blocks at a time (parallel.in_blocks)."""
    lat_k, lon_k, lim, dt = (V1_LAT, V1_LON, 127, np.int8) if v1 else (V2_LAT, V2_LON, 32767, np.int16)
    out = np.empty((len(x), 2), dt)
    in_blocks(lambda s: _encode_block(x[s:s + BLOCK], y[s:s + BLOCK], z[s:s + BLOCK], out[s:s + BLOCK],
                                      lat_k, lon_k, lim), len(x), BLOCK)
    return out


def _encode_block(x, y, z, out, lat_k, lon_k, lim) -> None:
    length = np.multiply(x, x)
    tmp = np.multiply(y, y)
    length += tmp
    length += np.multiply(z, z, out=tmp)
    np.sqrt(length, out=length)                   # np.linalg.norm's sum, in its order
    ok = length > 0
    if not ok.all():                              # zero (or NaN) vectors become +Y
        length[~ok] = 1
        x, y, z = (np.where(ok, c, np.float32(k)) for c, k in ((x, 0), (y, 1), (z, 0)))
    lat = np.divide(y, length, out=tmp)
    np.minimum(lat, 1.0, out=lat)
    np.maximum(lat, -1.0, out=lat)
    np.arcsin(lat, out=lat)                       # (negated below: -asin * k == asin * -k exactly)
    lon = np.divide(x, length)
    np.divide(z, length, out=length)
    np.arctan2(lon, length, out=lon)
    # truncate toward zero like the C++ cast, but let values a float32 hair short of an integer
    # (a decoded normal coming back) keep that integer, so that re-exporting is stable
    nudge = 0.02
    for col, v, k in ((0, lat, -lat_k), (1, lon, lon_k)):
        np.multiply(v, k, out=v)
        v += np.copysign(nudge, v, out=length)   # the sign of v is the angle's times k's
        np.trunc(v, out=v)
        np.maximum(v, -lim, out=v)
        out[:, col] = np.minimum(v, lim, out=v)
