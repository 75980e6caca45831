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
