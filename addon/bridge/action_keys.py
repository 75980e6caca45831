"""The source's own keys instead of one key per frame, where they say the same.

A baked channel has one key per frame. Where the property is a plain keyed
F-curve, the F-curve's key frames (with its LINEAR, CONSTANT or Bezier
interpolation and handles) are kept instead, but only when codec.animation
replays them into the very values that were baked: anything else that moves
the property (constraints, drivers, NLA, parents, the export axes, Euler
rotations played as quaternions) makes them differ, and the baked keys stay.
"""
from __future__ import annotations

import numpy as np

from ..codec import animation
from ..codec.scene import Channel
from . import action_api, action_sample
from .action_api import KEY_ENUM

_KIND = {0: "CONSTANT", 1: "LINEAR", 2: "BEZIER"}
_TOLERANCE = 1e-4


def curves_by_path(owner) -> dict[str, list]:
    """The F-curves of the owner's active action, by data path, index order."""
    anim = getattr(owner, "animation_data", None)
    if anim is None or anim.action is None:
        return {}
    out: dict[str, dict[int, object]] = {}
    for fc in action_api.existing_channels(anim.action, owner):
        if not fc.mute:
            out.setdefault(fc.data_path, {})[fc.array_index] = fc
    return {p: [c[i] for i in sorted(c)] for p, c in out.items()}


def _handles(fc) -> np.ndarray:
    """(N, 2, 2) left and right handles (frame, value) of each key."""
    n = len(fc.keyframe_points)
    left, right = np.empty(n * 2, np.float32), np.empty(n * 2, np.float32)
    fc.keyframe_points.foreach_get("handle_left", left)
    fc.keyframe_points.foreach_get("handle_right", right)
    return np.stack([left.reshape(-1, 2), right.reshape(-1, 2)], 1)


def _dense(fc, frames: np.ndarray) -> bool:
    """Are all of the curve's keys inside the frames, and at least as many?"""
    points = fc.keyframe_points
    if len(points) < len(frames):
        return False
    co = action_sample.read_already(fc)
    if co is None:
        return points[0].co[0] >= frames[0] and points[-1].co[0] <= frames[-1]
    return co[0, 0] >= frames[0] and co[-1, 0] <= frames[-1]


def keyed(baked: Channel, curves: list) -> Channel:
    """`baked` (one key per frame) with the curves' key frames instead, when they replay it."""
    frames = np.asarray(baked.frames, np.float64)
    if len(frames) < 3 or not curves or any(fc is None or fc.modifiers or not len(fc.keyframe_points)
                                            for fc in curves):
        return baked
    if any(_dense(fc, frames) for fc in curves):
        return baked            # no fewer keys than frames: nothing to gain, and nothing to read
    keys = [action_sample.read_keys(fc) for fc in curves]
    lo, hi = frames[0], frames[-1]
    kinds = np.concatenate([kind[(co[:, 0] >= lo) & (co[:, 0] < hi)] for co, kind in keys]
                           + [kind[np.searchsorted(co[:, 0], lo, side="right") - 1:][:1] for co, kind in keys
                              if co[0, 0] < lo])
    if len(kinds) and ((kinds != kinds[0]).any() or int(kinds[0]) not in _KIND):
        return baked        # one interpolation for all the pieces inside the range
    interp = _KIND[int(kinds[0])] if len(kinds) else "LINEAR"
    inside = [co[(co[:, 0] >= lo) & (co[:, 0] <= hi), 0] for co, _ in keys]
    # a straight or held piece cut at the range's ends is still one; a Bezier piece is not
    at = np.unique(np.concatenate(inside + ([[lo, hi]] if interp != "BEZIER" else [])))
    if not len(at) or np.any(at != np.round(at)) or len(at) >= len(frames):
        return baked
    values = np.asarray(baked.values)[(at - lo).astype(np.int64)]
    handles = None
    if interp == "BEZIER":
        # handles only where every component has all its keys at the same frames, inside the range
        if any(len(co) != len(at) or np.any(co[:, 0] != at) for co, _ in keys):
            return baked
        handles = np.stack([_handles(fc) for fc in curves], 1)   # (N, D, 2, 2)
    out = Channel(baked.target, baked.path, at.astype(np.float32), values, baked.bone, interp, handles)
    replay = animation.evaluate(out, frames)
    want = np.asarray(baked.values, np.float64).reshape(len(frames), -1)
    if baked.path == "rotation_quaternion":
        replay = animation.unit(replay)
        replay *= np.where(np.sum(replay * want, 1, keepdims=True) < 0, -1.0, 1.0)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    with np.errstate(invalid="ignore"):     # np.allclose, without its overhead
        close = (np.abs(replay - want) <= _TOLERANCE * scale + 1e-5 * np.abs(want)) | (replay == want)
    return out if close.all() else baked


_POSE = (("location", 3), ("rotation_quaternion", 4), ("scale", 3))


def pose_keys(ob, target: int, frames: np.ndarray) -> list[Channel] | None:
    """Every pose bone's location, rotation and scale channels straight from the action's keys: what
    sampling every frame (action_sample.pose_trs, animation_bake) and then keyed() give, without either,
    where that is plain to see: the curves LINEAR with whole key frames in the range and finite values,
    quaternion bones, each rotation keyed at one length and less than half a turn from one key to the
    next, positive scales, and a pose that moves. Sampled at those keys, the straight pieces are the
    frames' values, so keyed() keeps the keys; and the frames' quaternions, made unit and continuous,
    are the keys' with the first key's sign. None otherwise: sample every frame."""
    frames = np.asarray(frames, np.float64)
    if len(frames) < 3:
        return None
    curves = {}
    for fc in action_api.existing_channels(ob.animation_data.action, ob):
        if fc.mute or fc.modifiers or fc.extrapolation != "CONSTANT" or not len(fc.keyframe_points):
            return None
        curves[(fc.data_path, fc.array_index)] = fc
    bones = list(ob.pose.bones)
    if not bones or any(pb.rotation_mode != "QUATERNION" for pb in bones):
        return None
    props = [_pose_rows(ob, bones, curves, prop, size, frames) for prop, size in _POSE]
    if any(p is None for p in props):
        return None
    (_, loc), (_, q), (_, scale) = props
    moving = (np.abs(loc).max() > 1e-7 or np.abs(q - [1.0, 0.0, 0.0, 0.0]).max() > 1e-2
              or np.abs(scale - 1.0).max() > 1e-3)
    if not moving:
        return None             # at or near its rest: animation_bake's own test says whether it moves
    parts = [(np.split(at.astype(np.float32), cut), np.split(v.astype(np.float32), cut)) for (at, cut), v in props]
    out = []
    for b, pb in enumerate(bones):
        for (prop, _), (at, v) in zip(_POSE, parts):
            out.append(Channel(target, prop, at[b], v[b], pb.name))
    return out


def _pose_rows(ob, bones, curves: dict, prop: str, size: int, frames: np.ndarray):
    """One property of every bone, the bones' rows one after another: ((the rows' frames, where each
    bone's rows start), (rows, size) values); None where pose_keys does not apply."""
    lo, span = int(frames[0]), len(frames)
    found = [(b, i, fc) for b, pb in enumerate(bones) for i in range(size)
             if (fc := curves.get((f'pose.bones["{pb.name}"].{prop}', i))) is not None]
    flat = np.empty(len(bones) * size, np.float32)
    ob.pose.bones.foreach_get(prop, flat)
    rest = flat.reshape(len(bones), size).astype(np.float64)        # what has no curve keeps its value
    keys = [action_sample.read_keys(fc) for _, _, fc in found]
    n = np.array([len(co) for co, _ in keys], np.int64)
    co = np.concatenate([co for co, _ in keys]) if keys else np.zeros((0, 2), np.float32)
    kind = np.concatenate([k for _, k in keys]) if keys else np.zeros(0, KEY_ENUM)
    x = co[:, 0].astype(np.float64)
    rising = np.diff(x) > 0
    rising[np.cumsum(n)[:-1] - 1] = True        # one curve's last key, the next one's first
    if (kind != 1).any() or not np.isfinite(co).all() or not rising.all():
        return None                             # (1: LINEAR)
    bone = np.array([b for b, _, _ in found], np.int64)
    comp = np.array([i for _, i, _ in found], np.int64)
    inside = np.flatnonzero((x >= lo) & (x <= lo + span - 1))
    x_in, curve = x[inside], np.repeat(np.arange(len(found)), n)[inside]
    if np.any(x_in != np.round(x_in)):
        return None
    # each bone's rows: its curves' key frames in the range and the range's ends; every frame without curves
    key_code = bone[curve] * span + (x_in - lo).astype(np.int64)     # (bone, frame) as one number
    used = np.zeros((len(bones), span), bool)
    used.ravel()[key_code] = True
    used[bone, 0] = used[bone, -1] = True
    used[np.bincount(bone, minlength=len(bones)) == 0] = True
    code = np.flatnonzero(used)
    row_bone = code // span
    at = lo + (code % span).astype(np.float64)
    cut = np.searchsorted(row_bone, np.arange(1, len(bones)))
    rows = np.bincount(row_bone, minlength=len(bones))
    v = np.repeat(rest, rows, axis=0)
    row_of = np.cumsum(used.ravel()) - 1
    v.ravel()[row_of[key_code] * size + comp[curve]] = co[inside, 1]     # np.interp at a key: its value
    starts = np.r_[0, cut]
    first = np.cumsum(n) - n
    for c in np.flatnonzero(np.bincount(curve, minlength=len(found)) != rows[bone]):
        # a curve without a key on every row of its bone: sampled there (the rest)
        r = slice(starts[bone[c]], starts[bone[c]] + rows[bone[c]])
        k = slice(first[c], first[c] + n[c])
        v[r, comp[c]] = np.interp(at[r], x[k], co[k, 1].astype(np.float64))
    if not np.isfinite(v).all():
        return None
    if prop == "rotation_quaternion":
        norm = np.linalg.norm(v, axis=-1, keepdims=True)
        step = np.sum(v[1:] * v[:-1], -1) > 1e-9 * norm[1:, 0] * norm[:-1, 0]
        step[cut - 1] = True                    # one bone's last row, the next one's first
        longest, shortest = np.maximum.reduceat(norm[:, 0], starts), np.minimum.reduceat(norm[:, 0], starts)
        if norm.min() < 1e-6 or not step.all() or np.any(longest > shortest * (1 + 1e-6)):
            return None
        v = v / norm
        v *= np.repeat(np.where(v[starts, 0] < 0, -1.0, 1.0), rows)[:, None]
    elif prop == "scale" and not (v > 0).all():
        return None
    return (at, cut), v
