"""Bind poses and animation keys as matrices, in bulk.

A bone's bind transform is local to its parent (world = parent_world * T * R
* S). Blender pose bones want each key relative to the rest pose:
basis = rest_local^-1 * key_local, and back: key_local = rest_local * basis.

Blender bones cannot rest scaled, so a scaled bind pose becomes a rigid rest
R (the bind world's rotation and translation) plus a "scale residue"
D = R^-1 * bind_world (linear, no translation). Blender then deforms with
P * R^-1 and the file with anim_world * bind_world^-1; they agree when
P = anim_world * bind_world^-1 * R, which works out per bone as
basis = rigid_local^-1 * D_parent * key_local * D^-1: exact when every bind
scale is uniform, a nearest fit (no shear in a basis) otherwise.
Quaternions here are (w, x, y, z) as in axes.py; the file's (x, y, z, w)
order is swapped at the edges.
"""
from __future__ import annotations

import numpy as np

from ... import animation, axes
from .model import BIND_DTYPE, QUAT_SCALE, R_BIT, S_BITS, T_BITS, Track


def xyzw_to_wxyz(q: np.ndarray) -> np.ndarray:
    return np.asarray(q)[..., [3, 0, 1, 2]]


def wxyz_to_xyzw(q: np.ndarray) -> np.ndarray:
    return np.asarray(q)[..., [1, 2, 3, 0]]


def safe_quat(q: np.ndarray) -> np.ndarray:
    """A zero quaternion (wxyz) holds no rotation: read it as the identity instead of dividing by 0."""
    q = np.asarray(q, np.float64)
    zero = np.linalg.norm(q, axis=-1) == 0
    return np.where(zero[..., None], np.array([1.0, 0.0, 0.0, 0.0]), q) if zero.any() else q


MIN_SCALE = 1e-12      # a smaller bind scale cannot be inverted: read as 1


def bad_bind(bind: np.ndarray) -> np.ndarray:
    """(B,) bool: bones whose bind pose holds a NaN, an infinity or a zero scale."""
    t, r, s = (np.asarray(bind[k], np.float64) for k in ("t", "r", "s"))
    with np.errstate(invalid="ignore"):
        return (~np.isfinite(t).all(-1) | ~np.isfinite(r).all(-1) | ~np.isfinite(s).all(-1)
                | (np.abs(s) < MIN_SCALE).any(-1))


def bind_local(bind: np.ndarray) -> np.ndarray:
    """(B,) BIND_DTYPE -> (B, 4, 4) parent-local matrices. What bad_bind flags reads as the
    identity part (no move, no turn, scale 1), so that no matrix maths meets a NaN or a 0 scale."""
    t, r, s = (np.asarray(bind[k], np.float64) for k in ("t", "r", "s"))
    with np.errstate(invalid="ignore"):
        t = np.where(np.isfinite(t), t, 0.0)
        r = np.where(np.isfinite(r).all(-1, keepdims=True), r, [0.0, 0.0, 0.0, 1.0])
        s = np.where(np.isfinite(s) & (np.abs(s) >= MIN_SCALE), s, 1.0)
    return axes.compose(t, safe_quat(xyzw_to_wxyz(r)), s)


def world_matrices(local: np.ndarray, parents: list[int]) -> np.ndarray:
    """Chain parent-local matrices; parents may come after their children (no cycles: the reader checked)."""
    world = np.empty_like(local)
    done = np.zeros(len(parents), bool)
    for i in range(len(parents)):          # per bone: fine
        chain = []
        j = i
        while j >= 0 and not done[j]:
            chain.append(j)
            j = parents[j]
            if len(chain) > len(parents):
                raise ValueError(f"bone {i}: its parents form a cycle")   # a bug: readers and break_cycles prevent it
        for k in reversed(chain):
            p = parents[k]
            world[k] = local[k] if p < 0 else world[p] @ local[k]
            done[k] = True
    return world


def break_cycles(parents) -> np.ndarray:
    """Parent indices with every bone that never reaches a root (a cycle, or a chain into one) made a root.

    Readers reject cycles; this guards parents matched by name across files.
    """
    par = np.asarray(parents, np.int64).reshape(-1)
    n = len(par)
    jump = np.append(np.where(par >= 0, par, n), n)
    for _ in range(n.bit_length() + 1):
        jump = jump[jump]
    return np.where(jump[:n] == n, par, -1)


def _polar(m: np.ndarray) -> np.ndarray:
    """The rotation nearest each 3x3 (polar decomposition), with a mirror left to the residue.
    A matrix that overflowed to infinity (a chain of huge binds) gives the identity."""
    ok = np.isfinite(m).all(axis=(-2, -1))
    out = np.tile(np.eye(3), (len(m), 1, 1))
    if ok.any():
        u, _, vt = np.linalg.svd(m[ok])
        flip = np.linalg.det(u @ vt) < 0
        u[flip, :, 2] *= -1.0
        out[ok] = u @ vt
    return out


def split_rest(local: np.ndarray, parents: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Parent-local bind matrices -> (rigid world, rigid parent-local, parent's residue, own residue).

    A residue within 1e-6 of the identity (float noise of an unscaled bind)
    is taken as exactly the identity, so an unscaled bind keeps its own
    matrices bit for bit.
    """
    n = len(local)
    world = world_matrices(local, parents)
    rot = _polar(world[:, :3, :3]) if n else np.zeros((0, 3, 3))
    resid = np.tile(np.eye(4), (n, 1, 1))
    resid[:, :3, :3] = np.swapaxes(rot, -1, -2) @ world[:, :3, :3]
    unit = np.abs(resid - np.eye(4)).max(axis=(-2, -1)) < 1e-6 if n else np.zeros(0, bool)
    resid[unit] = np.eye(4)
    rigid_world = world @ axes.inverse_or_identity(resid)
    rigid_world[unit] = world[unit]
    par = np.asarray(parents, np.int64).reshape(-1)
    root = par < 0
    d_parent = resid[np.where(root, 0, par)] if n else resid.copy()
    d_parent[root] = np.eye(4)
    rigid_local = d_parent @ local @ axes.inverse_or_identity(resid)
    plain = unit & (root | unit[np.where(root, 0, par)]) if n else unit
    rigid_local[plain] = local[plain]
    return rigid_world, rigid_local, d_parent, resid


def uniform(resid: np.ndarray) -> bool:
    """Is every residue a positive multiple of the identity (so that split_rest's bases are exact)?"""
    if not len(resid):
        return True
    lin = resid[:, :3, :3]
    c = np.trace(lin, axis1=-2, axis2=-1) / 3.0
    return bool(np.all(c > 0) and np.all(np.abs(lin - c[:, None, None] * np.eye(3)).max(axis=(-2, -1))
                                         <= 1e-5 * c))


def bind_from_local(local: np.ndarray) -> np.ndarray:
    """(B, 4, 4) parent-local matrices -> (B,) BIND_DTYPE."""
    t, q, s = axes.decompose(local)
    out = np.zeros(len(local), BIND_DTYPE)
    out["t"], out["r"], out["s"] = t, wxyz_to_xyzw(q), s
    return out


def decoded_keys(track: Track, bind: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The track's keys as floats: translation (F,N,3), rotation wxyz (F,N,4), scale (F,N,3).

    Components not stored yet take the bone's bind value; .anim values are
    decoded with the track's boxes.
    """
    t = track.translation.astype(np.float64)
    s = track.scale.astype(np.float64)
    if track.translation_box is not None:
        t = track.translation_box[0] + track.translation_box[1] * (t / 65535.0)
        s = track.scale_box[0] + track.scale_box[1] * (s / 65535.0)
    r = track.rotation.astype(np.float64) / QUAT_SCALE
    b = bind[track.bones.astype(np.int64)]
    for i, bit in enumerate(T_BITS):
        t[..., i] = np.where(track.stored_from(bit), t[..., i], b["t"][None, :, i])
    for i, bit in enumerate(S_BITS):
        s[..., i] = np.where(track.stored_from(bit), s[..., i], b["s"][None, :, i])
    r = np.where(track.stored_from(R_BIT)[..., None], r, b["r"][None].astype(np.float64))
    return t, safe_quat(xyzw_to_wxyz(r)), s


def keys_to_basis(rest_local: np.ndarray, t, q, s, d_parent=None, resid=None):
    """rest_local (N, 4, 4), keys (F, N, ...) -> pose basis location, rotation (wxyz), scale.

    With a scaled bind, rest_local is the rigid rest and d_parent / resid
    (N, 4, 4) the scale residues of split_rest.
    """
    key = axes.compose(t, q, s)
    if d_parent is not None:
        key = d_parent[None] @ key @ axes.inverse_or_identity(resid)[None]
    basis = axes.inverse_or_identity(rest_local)[None] @ key
    loc, rot, scale = axes.decompose(basis)
    return loc, animation.continuous(rot), scale


def basis_to_keys(rest_local: np.ndarray, loc, rot, scale):
    """The inverse of keys_to_basis: parent-local key translation, rotation (wxyz), scale."""
    key = rest_local[None] @ axes.compose(loc, rot, scale)
    t, q, s = axes.decompose(key)
    return t, animation.continuous(q), s
