"""glTF 2.0's conventions in the Scene: the one place for its axes, units, winding and UVs.

glTF is right-handed, +Y up, +Z forward (the front of an asset faces +Z), metres,
counter-clockwise front faces, quaternions (x, y, z, w), UV origin at the top left.
Blender is right-handed and Z up, so a glTF point (x, y, z) is Blender (x, -z, y):
a rotation, no mirror, so the winding stays. V runs down: v' = 1 - v.
Cameras and lights look down their local -Z with +Y up in both: their own frame is not turned
with the axes (own_frame; added by the writer, for the reader too).
"""
from __future__ import annotations

import numpy as np

BASIS = np.array([[1.0, 0.0, 0.0],
                  [0.0, 0.0, -1.0],
                  [0.0, 1.0, 0.0]])          # glTF (x, y, z) -> Blender (x, -z, y)
TO_GLTF = BASIS.T                            # its inverse (a rotation)


def points_to_blender(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, np.float32).reshape(-1, 3)
    return np.stack([p[:, 0], -p[:, 2], p[:, 1]], axis=1)


def points_from_blender(p: np.ndarray) -> np.ndarray:
    p = np.asarray(p, np.float32).reshape(-1, 3)
    return np.stack([p[:, 0], p[:, 2], -p[:, 1]], axis=1)


def matrix_to_blender(m: np.ndarray) -> np.ndarray:
    """A glTF 4x4 node matrix (column-vector) in Blender's basis."""
    b = np.eye(4)
    b[:3, :3] = BASIS
    return b @ np.asarray(m, np.float64) @ b.T


def matrix_from_blender(m: np.ndarray) -> np.ndarray:
    b = np.eye(4)
    b[:3, :3] = TO_GLTF
    return b @ np.asarray(m, np.float64) @ b.T


def quat_to_blender(q_xyzw: np.ndarray) -> np.ndarray:
    """(..., 4) glTF (x, y, z, w) -> Blender (w, x, y, z) in Blender's basis."""
    q = np.asarray(q_xyzw, np.float64)
    return np.stack([q[..., 3], q[..., 0], -q[..., 2], q[..., 1]], axis=-1)


def quat_from_blender(q_wxyz: np.ndarray) -> np.ndarray:
    q = np.asarray(q_wxyz, np.float64)
    return np.stack([q[..., 1], q[..., 3], -q[..., 2], q[..., 0]], axis=-1)


def uv_to_blender(uv: np.ndarray) -> np.ndarray:
    out = np.array(uv, np.float32, copy=True).reshape(-1, 2)
    out[:, 1] = 1.0 - out[:, 1]
    return out


uv_from_blender = uv_to_blender    # the flip is its own inverse


def own_frame(kind: str) -> np.ndarray:
    """K, the 4x4 on the right of a node's conjugated matrix (TO_GLTF @ M @ BASIS) that keeps a camera's
    or light's own frame: its glTF matrix is TO_GLTF @ M @ BASIS @ K (K^-1 on its children's left).
    kind: the Scene Node.kind; identity for anything but cameras and lights."""
    k = np.eye(4)
    if kind in ("CAMERA", "LIGHT"):
        k[:3, :3] = TO_GLTF
    return k
