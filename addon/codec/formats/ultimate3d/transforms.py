"""U3D bone keys and matrices in bulk (the axis swap itself: conventions.py).

- BoneToParent = Scaling * Rotation * Translation (row vectors), i.e. T R S
  for column vectors; keys are interpolated linearly, rotations by slerp.
"""
from __future__ import annotations

import numpy as np

from ... import animation
from ...axes import compose, decompose
from .conventions import SWAP, quat_to_blender


AFFINE_TOLERANCE = 1e-4


def not_affine(m_row: np.ndarray) -> np.ndarray:
    """Per (..., 4, 4) U3D matrix: elements 3, 7, 11 not about 0 or 15 not about 1 (the notes: a
    row-vector matrix keeps its translation in 12, 13, 14 and nothing projective)."""
    m = np.asarray(m_row, np.float64)
    ok = np.all(np.abs(m[..., :3, 3]) <= AFFINE_TOLERANCE, -1) & (np.abs(m[..., 3, 3] - 1.0) <= AFFINE_TOLERANCE)
    return ~ok


def affine(m_row: np.ndarray) -> np.ndarray:
    """The affine part of U3D matrices: elements 3, 7, 11 set to 0 and 15 to 1 (a copy)."""
    m = np.array(m_row, np.float64)
    m[..., :3, 3] = 0.0
    m[..., 3, 3] = 1.0
    return m


def warn_not_affine(bones, warnings, path: str = "$U3D_BONE", offsets: dict | None = None) -> None:
    """The notes' check, on read: one warning per bone whose MeshToBoneSpace matrices are not affine."""
    for i, b in enumerate(bones):
        if len(b.mesh_to_bone) and not_affine(b.mesh_to_bone).any():
            bad = [int(k) for k in np.flatnonzero(not_affine(b.mesh_to_bone))]
            m = np.asarray(b.mesh_to_bone[bad[0]], np.float64).reshape(-1)
            warnings.warn(f"bone {b.name!r}: MeshToBoneSpace matrix {bad[0]} is not affine (elements 3, 7, 11 = "
                          f"{m[3]:g}, {m[7]:g}, {m[11]:g}, should be 0; element 15 = {m[15]:g}, should be 1): "
                          "only its affine part is used (a file with column-vector matrices would look like this)",
                          (offsets or {}).get(id(b)), f'{path}[{i}] "{b.name}"')


def sample_vectors(frames_k: np.ndarray, values: np.ndarray, at: np.ndarray, default) -> np.ndarray:
    """Linear interpolation of (K, n) keys at `at` frames, held at the ends."""
    if len(frames_k) == 0:
        return np.tile(np.asarray(default, np.float64), (len(at), 1))
    order = np.argsort(frames_k, kind="stable")
    f, v = frames_k[order].astype(np.float64), values[order].astype(np.float64)
    return np.stack([np.interp(at, f, v[:, i]) for i in range(v.shape[1])], 1)


def sample_quats(frames_k: np.ndarray, values: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Slerp of (K, 4) quaternions (any component order) at `at` frames, held at the ends."""
    if len(frames_k) == 0:
        return np.tile([0.0, 0.0, 0.0, 1.0], (len(at), 1))
    order = np.argsort(frames_k, kind="stable")
    f, q = frames_k[order].astype(np.float64), values[order].astype(np.float64)
    norm = np.linalg.norm(q, axis=1, keepdims=True)
    q = np.where(norm > 1e-12, q / np.where(norm > 1e-12, norm, 1.0), [0.0, 0.0, 0.0, 1.0])   # zero: no rotation
    at = np.clip(np.asarray(at, np.float64), f[0], f[-1])
    i1 = np.clip(np.searchsorted(f, at, side="right"), 1, len(f) - 1) if len(f) > 1 else np.zeros(len(at), int)
    i0 = np.maximum(i1 - 1, 0)
    span = f[i1] - f[i0]
    t = np.where(span > 0, (at - f[i0]) / np.where(span > 0, span, 1.0), 0.0)[:, None]
    a, b = q[i0], q[i1]
    d = np.sum(a * b, 1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-6
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, s))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, s))
    out = wa * a + wb * b
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def key_frames(*key_arrays: np.ndarray) -> np.ndarray:
    frames = np.unique(np.concatenate([np.asarray(k["frame"], np.int64) for k in key_arrays]))
    return frames if len(frames) else np.zeros(1, np.int64)


def slerp_frames(rotation: np.ndarray, end: int, max_angle: float = 0.05) -> np.ndarray:
    """Whole frames before `end` between rotation keys that turn more than `max_angle` radians:
    there Blender's linear quaternion keys would leave the slerp the file plays, so they get keys
    of their own. (A key frame number can lie: the frames never run past the file's.)"""
    f = np.asarray(rotation["frame"], np.int64)
    if len(f) < 2:
        return np.zeros(0, np.int64)
    order = np.argsort(f, kind="stable")
    f, q = f[order], np.asarray(rotation["value"], np.float64)[order]
    q = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    turn = 2 * np.arccos(np.clip(np.abs(np.sum(q[1:] * q[:-1], 1)), 0.0, 1.0))
    spans = [np.arange(max(a + 1, 0), min(b, end)) for a, b, t in zip(f[:-1], f[1:], turn)
             if t > max_angle and b - a > 1 and a + 1 < end]
    return np.concatenate(spans) if spans else np.zeros(0, np.int64)


def local_matrices(scaling, translation, rotation, at: np.ndarray) -> np.ndarray:
    """(F, 4, 4) Blender-space BoneToParent at frames `at`, from U3D key arrays."""
    s = sample_vectors(scaling["frame"], scaling["value"], at, (1.0, 1.0, 1.0))[:, SWAP]
    t = sample_vectors(translation["frame"], translation["value"], at, (0.0, 0.0, 0.0))[:, SWAP]
    q = quat_to_blender(sample_quats(rotation["frame"], rotation["value"], at))
    return compose(t, q, s)


def invertible(m: np.ndarray) -> bool:
    """A finite matrix that can be inverted (files may hold zero scales or garbage)."""
    return safe_inverse(m) is not None


def safe_inverse(m: np.ndarray) -> np.ndarray | None:
    """The inverse, or None for a singular, ill-conditioned or non-finite matrix."""
    m = np.asarray(m, np.float64)
    if not np.all(np.isfinite(m)) or np.linalg.cond(m) > 1e12:
        return None
    out = np.linalg.inv(m)
    return out if np.all(np.isfinite(out)) else None


def pose_channels(rest_local: np.ndarray, local: np.ndarray):
    """Pose basis = rest_local^-1 @ key, decomposed -> (location, quaternion wxyz, scale)."""
    basis = safe_inverse(rest_local) @ local      # callers check invertible(rest_local)
    t, q, s = decompose(basis)
    return t, animation.continuous(q), s
