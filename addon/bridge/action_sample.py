"""Sample plain action F-curves in numpy, without stepping the scene frame by frame.

Valid only when nothing but the object's own action moves it: no constraints,
drivers or active NLA tracks. `can_sample` says whether that holds.
"""
from __future__ import annotations

import numpy as np

from ..codec import axes
from . import action_api
from .action_api import KEY_ENUM

_CONSTANT, _LINEAR = 0, 1
TRANSFORM_PATHS = ("location", "rotation_quaternion", "rotation_euler", "rotation_axis_angle", "scale", "delta_")


def _active_nla(anim) -> bool:
    return anim.use_nla and any(not t.mute for t in anim.nla_tracks) or anim.use_tweak_mode


def has_own_transform_motion(ob) -> bool:
    """Does anything move the object itself (not its bones)?"""
    if ob.constraints or (ob.parent is not None and has_own_transform_motion(ob.parent)):
        return True
    anim = ob.animation_data
    if anim is None:
        return False
    if anim.drivers or _active_nla(anim):
        return True
    return anim.action is not None and any(fc.data_path.startswith(TRANSFORM_PATHS)
                                           for fc in action_api.existing_channels(anim.action, ob))


def property_channels(owner, frames: np.ndarray) -> dict[str, np.ndarray]:
    """Every other animated property of `owner` (camera lens, light colour, visibility...):
    data path -> (F, width) samples. Transforms, bones and shape keys are read elsewhere."""
    anim = getattr(owner, "animation_data", None)
    if anim is None or anim.action is None:
        return {}
    by_path: dict[str, dict[int, object]] = {}
    for fc in action_api.existing_channels(anim.action, owner):
        if not fc.data_path.startswith(TRANSFORM_PATHS + ("pose.bones", "key_blocks")):
            by_path.setdefault(fc.data_path, {})[fc.array_index] = fc
    out = {}
    for path, curves in by_path.items():
        try:
            current = owner.path_resolve(path)
        except ValueError:          # a curve for a property that no longer exists
            continue
        now = np.atleast_1d(np.array(current, np.float64)) if not isinstance(current, str) else None
        if now is None:
            continue
        vals = np.repeat(now[None], len(frames), 0)
        for index, fc in curves.items():
            if index < vals.shape[1]:
                vals[:, index] = sample_curve(fc, frames)
        out[path] = vals
    return out


def pose_source(ob) -> str:
    """Where armature `ob`'s pose over time comes from: "STATIC" (nothing moves it),
    "ACTION" (its action alone: sample the curves) or "EVALUATE" (step the scene)."""
    if any(pb.constraints for pb in ob.pose.bones):
        return "EVALUATE"
    anim = ob.animation_data
    if anim is None or (anim.action is None and not anim.drivers and not _active_nla(anim)):
        return "STATIC"
    if anim.action is None or anim.drivers or _active_nla(anim):
        return "EVALUATE"
    return "EVALUATE" if any(pb.rotation_mode == "AXIS_ANGLE" for pb in ob.pose.bones) else "ACTION"


def pose_now(ob) -> np.ndarray:
    """(B, 4, 4) current pose-bone matrix_basis, read in bulk."""
    flat = np.empty(len(ob.pose.bones) * 16, np.float32)
    ob.pose.bones.foreach_get("matrix_basis", flat)
    return flat.reshape(-1, 4, 4).transpose(0, 2, 1).astype(np.float64)   # RNA matrices are column-major


_READ: dict[int, np.ndarray] = {}     # F-curve pointer -> its key (frame, value), during one take
_KINDS: dict[int, np.ndarray] = {}    # ... and its keys' interpolation


def forget_keys() -> None:
    """Drop the keys read_keys() kept: call before and after each take."""
    _READ.clear()
    _KINDS.clear()


def read_co(fc) -> np.ndarray:
    """(N, 2) float32 key (frame, value), read once per take."""
    got = _READ.get(fc.as_pointer())
    if got is None:
        co = np.empty(len(fc.keyframe_points) * 2, np.float32)
        fc.keyframe_points.foreach_get("co", co)
        got = _READ[fc.as_pointer()] = co.reshape(-1, 2)
    return got


def read_already(fc) -> np.ndarray | None:
    """read_co(fc) when this take has read it, else None."""
    return _READ.get(fc.as_pointer())


def read_keys(fc) -> tuple[np.ndarray, np.ndarray]:
    """(N, 2) float32 key (frame, value) and (N,) uint8 interpolation, read once per take."""
    kind = _KINDS.get(fc.as_pointer())
    if kind is None:
        kind = _KINDS[fc.as_pointer()] = np.empty(len(fc.keyframe_points), KEY_ENUM)
        fc.keyframe_points.foreach_get("interpolation", kind)
    return read_co(fc), kind


def sample_curve(fc, frames: np.ndarray) -> np.ndarray:
    n = len(fc.keyframe_points)
    if n == 0:
        return np.zeros(len(frames))
    plain = not fc.modifiers and fc.extrapolation == "CONSTANT"
    co = read_co(fc)
    x, y = co[:, 0].astype(np.float64), co[:, 1].astype(np.float64)
    if plain and n == len(frames) and np.array_equal(x, frames):
        return y        # a key on every frame: its values, whatever the interpolation (not even read)
    kinds = read_keys(fc)[1][:-1]       # a segment's interpolation is its first key's
    linear, held = bool((kinds == _LINEAR).all()), bool((kinds == _CONSTANT).all())
    if not plain or not linear and not held:
        return np.array([fc.evaluate(float(f)) for f in frames])
    if held and n > 1:
        return y[np.clip(np.searchsorted(x, frames, side="right") - 1, 0, n - 1)]
    return np.interp(frames, x, y)


def pose_trs(ob, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(F, B, 3) location, (F, B, 4) rotation (w, x, y, z; Euler bones converted, not normalised)
    and (F, B, 3) scale of each pose bone at each frame, from the action's curves."""
    curves = {(fc.data_path, fc.array_index): fc for fc in action_api.existing_channels(ob.animation_data.action, ob)}
    F, bones = len(frames), list(ob.pose.bones)

    def channel(pb, prop: str, size: int) -> np.ndarray:
        default = np.array(getattr(pb, prop), np.float64)
        vals = np.repeat(default[None], F, 0)
        for i in range(size):
            fc = curves.get((f'pose.bones["{pb.name}"].{prop}', i))
            if fc is not None:
                vals[:, i] = sample_curve(fc, frames)
        return vals

    loc, q, scale = np.empty((F, len(bones), 3)), np.empty((F, len(bones), 4)), np.empty((F, len(bones), 3))
    for b, pb in enumerate(bones):
        loc[:, b], scale[:, b] = channel(pb, "location", 3), channel(pb, "scale", 3)
        if pb.rotation_mode == "QUATERNION":
            q[:, b] = channel(pb, "rotation_quaternion", 4)
        else:
            q[:, b] = axes.matrix_to_quat(axes.euler_to_matrix(channel(pb, "rotation_euler", 3), pb.rotation_mode))
    return loc, q, scale


def plain_keys(key) -> bool:
    """Are a shape-key ID's values its action's curves alone (no drivers, no NLA playing)?"""
    anim = key.animation_data
    return anim is None or not (anim.drivers or _active_nla(anim))


def key_values(key, frames: np.ndarray) -> np.ndarray:
    """(F, K) shape-key values at each frame, from the key's action curves."""
    blocks = list(key.key_blocks)
    out = np.tile(np.array([kb.value for kb in blocks], np.float32), (len(frames), 1))
    anim = key.animation_data
    if anim is None or anim.action is None:
        return out
    index = {f'key_blocks["{kb.name}"].value': i for i, kb in enumerate(blocks)}
    for fc in action_api.existing_channels(anim.action, key):
        if fc.data_path in index and not fc.mute:
            out[:, index[fc.data_path]] = sample_curve(fc, frames)
    lo = np.array([kb.slider_min for kb in blocks], np.float32)
    hi = np.array([kb.slider_max for kb in blocks], np.float32)
    return np.clip(out, lo, hi)
