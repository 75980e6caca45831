"""Ultimate 3D's conventions in the Scene: the one place for its axes, matrices and quaternions.

U3D is left-handed, X right, Y up, Z into the screen, with Direct3D row
vectors; Blender (x, y, z) = U3D (X, Z, Y), which also reverses the winding.
- a Matrix is row-major for row vectors: the column-vector form is its
  transpose, then conjugated by the Y/Z swap P;
- a quaternion (x, y, z, w) becomes Blender (w, -x, -z, -y).
A bone that import had to rename keeps the file's name in its extras (FILE_NAME).
"""
from __future__ import annotations

import re

import numpy as np

SWAP = np.array([0, 2, 1])                       # Blender axis i = U3D axis SWAP[i]
P4 = np.eye(4)[[0, 2, 1, 3]]                     # the Y/Z swap as a 4x4 matrix (its own inverse)
FILE_NAME = "u3d_name"     # bone extras: the file's name of a bone renamed on import


def matrix_to_blender(m_row: np.ndarray) -> np.ndarray:
    """(..., 4, 4) U3D row-vector matrices -> Blender column-vector matrices."""
    m = np.asarray(m_row, np.float64)
    return P4 @ np.swapaxes(m, -1, -2) @ P4


def matrix_from_blender(m: np.ndarray) -> np.ndarray:
    return np.swapaxes(P4 @ np.asarray(m, np.float64) @ P4, -1, -2)


def quat_to_blender(q_xyzw: np.ndarray) -> np.ndarray:
    q = np.asarray(q_xyzw, np.float64)
    return np.stack([q[..., 3], -q[..., 0], -q[..., 2], -q[..., 1]], -1)


def quat_from_blender(q_wxyz: np.ndarray) -> np.ndarray:
    q = np.asarray(q_wxyz, np.float64)
    return np.stack([-q[..., 1], -q[..., 3], -q[..., 2], q[..., 0]], -1)


def file_bone_name(name: str, extras: dict) -> str:
    """The name to write: the file's own name of a bone that import renamed, unless renamed since."""
    original = extras.get(FILE_NAME)
    if original is None:
        return name
    original = str(original)
    stem = re.escape(original) if original else "bone"
    return original if re.fullmatch(rf"{stem}\d*(\.\d+)*", name) else name
