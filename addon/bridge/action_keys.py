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
from . import action_api

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


def _keys(fc) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = len(fc.keyframe_points)
    co, left, right = (np.empty(n * 2, np.float32) for _ in range(3))
    kind = np.empty(n, np.int32)
    fc.keyframe_points.foreach_get("co", co)
    fc.keyframe_points.foreach_get("handle_left", left)
    fc.keyframe_points.foreach_get("handle_right", right)
    fc.keyframe_points.foreach_get("interpolation", kind)
    return co.reshape(-1, 2), left.reshape(-1, 2), right.reshape(-1, 2), kind


def keyed(baked: Channel, curves: list) -> Channel:
    """`baked` (one key per frame) with the curves' key frames instead, when they replay it."""
    frames = np.asarray(baked.frames, np.float64)
    if len(frames) < 3 or not curves or any(fc is None or fc.modifiers or not len(fc.keyframe_points)
                                            for fc in curves):
        return baked
    keys = [_keys(fc) for fc in curves]
    lo, hi = frames[0], frames[-1]
    kinds = {int(k) for co, _, _, kind in keys for k in kind[(co[:, 0] >= lo) & (co[:, 0] < hi)]}
    kinds |= {int(kind[np.searchsorted(co[:, 0], lo, side="right") - 1]) for co, _, _, kind in keys
              if co[0, 0] < lo}
    if len(kinds) > 1 or not kinds <= set(_KIND):
        return baked
    interp = _KIND[kinds.pop()] if kinds else "LINEAR"
    inside = [co[(co[:, 0] >= lo) & (co[:, 0] <= hi), 0] for co, *_ in keys]
    # a straight or held piece cut at the range's ends is still one; a Bezier piece is not
    at = np.unique(np.concatenate(inside + ([[lo, hi]] if interp != "BEZIER" else [])))
    if not len(at) or np.any(at != np.round(at)) or len(at) >= len(frames):
        return baked
    values = np.asarray(baked.values)[(at - lo).astype(np.int64)]
    handles = None
    if interp == "BEZIER":
        # handles only where every component has all its keys at the same frames, inside the range
        if any(len(co) != len(at) or np.any(co[:, 0] != at) for co, *_ in keys):
            return baked
        handles = np.stack([np.stack([left, right], 1) for _, left, right, _ in keys], 1)   # (N, D, 2, 2)
    out = Channel(baked.target, baked.path, at.astype(np.float32), values, baked.bone, interp, handles)
    replay = animation.evaluate(out, frames)
    want = np.asarray(baked.values, np.float64).reshape(len(frames), -1)
    if baked.path == "rotation_quaternion":
        replay = animation.unit(replay)
        replay *= np.where(np.sum(replay * want, 1, keepdims=True) < 0, -1.0, 1.0)
    scale = max(1.0, float(np.abs(want).max(initial=0.0)))
    return out if np.allclose(replay, want, atol=_TOLERANCE * scale) else baked
