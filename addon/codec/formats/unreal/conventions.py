"""Unreal Engine 1's conventions in the Scene: the one place for its axes, units, winding and UVs.

The file's axes are the engine's left-handed X forward, Y right, Z up in raw
integer units, so Blender gets (X, -Y, Z) with every triangle's winding
reversed (weapon triangles keep the file's corner order), scaled by the notes'
default (X/8, Y/8, Z/4; Deus Ex 1/256). UVs are bytes with V down; rotators
have 256 units per turn.
"""
from __future__ import annotations

import numpy as np

from .model import DEUS_EX, STANDARD

BASIS = np.diag([1.0, -1.0, 1.0])                       # Unreal (X, Y, Z) -> Blender (X, -Y, Z)
DEFAULT_SCALE = {STANDARD: np.array([1 / 8, 1 / 8, 1 / 4]), DEUS_EX: np.full(3, 1 / 256)}
ROTATION_UNITS = 256.0                                  # MESH ORIGIN YAW/PITCH/ROLL units per turn


def corner_order(weapon: np.ndarray) -> np.ndarray:
    """(T, 3) column order per triangle: (0, 2, 1) reverses the winding (its own inverse);
    weapon triangles keep (0, 1, 2)."""
    return np.where(weapon[:, None], np.array([0, 1, 2]), np.array([0, 2, 1]))


def uv_to_blender(uv_bytes: np.ndarray) -> np.ndarray:
    """(..., 2) U, V bytes -> u = U/256, v = 1 - V/256."""
    b = uv_bytes.astype(np.float32) / 256.0
    return np.stack([b[..., 0], 1.0 - b[..., 1]], axis=-1).astype(np.float32)


def uv_from_blender(uv: np.ndarray) -> tuple[np.ndarray, int]:
    """(..., 2) Blender UVs -> bytes, rounded and clamped to 0..255; also the clamped count."""
    uv = np.asarray(uv, np.float64)
    raw = np.rint(np.stack([uv[..., 0] * 256.0, (1.0 - uv[..., 1]) * 256.0], axis=-1))
    clamped = int(np.count_nonzero((raw < 0) | (raw > 255)))
    return np.clip(raw, 0, 255).astype(np.uint8), clamped


def rotation_matrix(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Engine rotator (256 units per turn) -> 3x3 in Unreal axes, as the engine builds it.

    Applied roll, then pitch, then yaw. Positive yaw turns X toward Y,
    positive pitch X toward Z, positive roll Z toward Y.
    """
    y, p, r = (np.asarray([yaw, pitch, roll], np.float64) * (2 * np.pi / ROTATION_UNITS))
    cy, sy, cp, sp, cr, sr = np.cos(y), np.sin(y), np.cos(p), np.sin(p), np.cos(r), np.sin(r)
    rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    ry = np.array([[cp, 0, -sp], [0, 1, 0], [sp, 0, cp]])
    rx = np.array([[1, 0, 0], [0, cr, sr], [0, -sr, cr]])
    return rz @ ry @ rx


def rotation_angles(m: np.ndarray) -> tuple[float, float, float]:
    """The inverse of rotation_matrix: (yaw, pitch, roll) in 256-per-turn units.

    The matrix's bottom row is (sin p, -cos p sin r, cos p cos r) and its first
    column cos p (cos y, sin y); at pitch +-64 only yaw -+ roll is defined, so roll is 0.
    """
    m = np.asarray(m, np.float64)
    pitch = np.arcsin(np.clip(m[2, 0], -1.0, 1.0))
    if np.hypot(m[2, 1], m[2, 2]) < 1e-5:        # float32 matrices: noise near 1e-7
        yaw, roll = np.arctan2(-m[0, 1], m[1, 1]), 0.0
    else:
        yaw, roll = np.arctan2(m[1, 0], m[0, 0]), np.arctan2(-m[2, 1], m[2, 2])
    k = ROTATION_UNITS / (2 * np.pi)
    return tuple(tidy(a * k) for a in (yaw, pitch, roll))


def tidy(v: float) -> float:
    """Blender holds float32: snap 63.999997 to 64 and drop -0, so scripts read as written."""
    r = round(float(v))
    return float(r) + 0.0 if abs(v - r) < 1e-4 else round(float(v), 5) + 0.0
