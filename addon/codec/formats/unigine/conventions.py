"""UNIGINE's conventions in the Scene: the one place for its axes, UVs and the names it keeps there.

UNIGINE is right-handed, Z up, metres, counter-clockwise front faces, like
Blender, so the basis is the identity; only UV V runs top-down (v' = 1 - v).
"""
from __future__ import annotations

import numpy as np

BASIS = np.eye(3)                  # file axes -> Blender axes
UV_NAMES = ("UVMap", "UVMap2")
COLOR_NAME = "Color"
TANGENT_ATTR = "unigine_tangent"          # (C, 3) kept so that export rebuilds the same quaternions
SIGN_ATTR = "unigine_binormal_sign"       # (C,) +1 / -1
ORDER_PROP = "unigine_index"              # Bone.extras: the bone's index in the file


def uv_to_blender(uv: np.ndarray) -> np.ndarray:
    out = np.array(uv, np.float32, copy=True).reshape(-1, 2)
    out[:, 1] = 1.0 - out[:, 1]
    return out


uv_from_blender = uv_to_blender    # the flip is its own inverse
