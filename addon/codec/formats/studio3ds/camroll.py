"""Camera roll, carried by the orientation of the camera's target.

A 3DS camera looks at its target node and is banked by its roll (0x4700 and the 0xB024 track,
degrees). Blender's Track To constraint leaves no room for a roll, but with its "Target Z"
option (Node.target_up) the camera's up direction is the target's Z axis. So the target gets
the axes of lib3ds' camera frame: X right, Y along the view (camera -> target), Z the camera's
up vector turned by the roll about the view direction, the way lib3ds_matrix_camera turns it
(camlight.camera_axes). When the roll or either position moves, that orientation is baked on
every frame of the motion as the target's rotation channel. A roll that is zero throughout
needs none of this: Track To's default up (world Z) gives the same view.

On export the roll is read back from the scene: the angle between the roll-free up vector and
the target's Z axis (projected across the view), at every key of whatever moves them.
"""
from __future__ import annotations

import numpy as np

from ... import animation, axes
from ...scene import Animation, Channel, Node, Scene
from . import ids
from .camlight import camera_axes
from .keyframer import KfNode, node_trs
from .tcb import track_curve

LINEAR_TOLERANCE = 2e-3       # degrees: a sampled roll this close to a straight line is written as two keys


def target_axes(pos, target, roll_deg) -> np.ndarray:
    """(..., 3, 3) the target's orientation that carries the roll: columns right, view, up."""
    c = camera_axes(pos, target, roll_deg)
    return np.stack([c[..., 0], -c[..., 2], c[..., 1]], axis=-1)


def roll_of(pos, target, up) -> np.ndarray:
    """Roll (degrees) that turns the roll-free up vector into `up` (projected across the view)."""
    c = camera_axes(pos, target, 0.0)
    up = np.asarray(up, np.float64)
    x, y = c[..., 0], c[..., 1]
    return np.degrees(np.arctan2(-np.sum(up * x, -1), np.sum(up * y, -1)))


# -- import ----------------------------------------------------------------------
def _chain(nodes: list[KfNode], i: int) -> list[int]:
    out = []
    while i >= 0:
        out.append(i)
        i = nodes[i].parent
    return out


def _world(nodes: list[KfNode], i: int, ts: np.ndarray) -> np.ndarray:
    m = np.broadcast_to(np.eye(4), (len(ts), 4, 4))
    for k in _chain(nodes, i):
        m = axes.compose(*node_trs(nodes[k], ts)) @ m
    return m


def orient_target(nodes: list[KfNode], i: int, j: int, cam: Node, target: Node, target_index: int,
                  chunk_roll: float, animate: bool) -> Channel | None:
    """Camera keyframer node i, its target node j: set cam.target_up and the target's orientation;
    returns the target's baked rotation channel when the view turns over time."""
    roll_track = nodes[i].tracks.get(ids.ROLL_TRACK)
    has_roll_keys = roll_track is not None and len(roll_track) > 0
    rolls = np.asarray(roll_track.values, np.float64) if has_roll_keys else np.array([chunk_roll])
    if not np.any(rolls) and nodes[j].parent < 0:
        return None
    cam.target_up = True
    moving = [t for k in set(_chain(nodes, i) + _chain(nodes, j)) for cid, t in nodes[k].tracks.items()
              if cid in (ids.POS_TRACK, ids.ROT_TRACK, ids.SCL_TRACK) and len(t) > 1]
    if has_roll_keys and len(roll_track) > 1:
        moving.append(roll_track)
    keys = np.concatenate([np.asarray(t.frames, np.float64) for t in moving]) if moving else np.zeros(1)
    lo, hi = np.floor(keys.min()), np.ceil(keys.max())
    if not (animate and moving and hi > lo):
        ts = np.zeros(1)
    elif hi - lo < animation.MAX_BAKED_SPAN:
        ts = np.arange(lo, hi + 1)
    else:
        ts = keys
    ts = np.unique(np.r_[0.0, ts])
    roll = np.nan_to_num(track_curve(roll_track, ts)[:, 0] if has_roll_keys else np.full(len(ts), chunk_roll))
    wc, wt = _world(nodes, i, ts), _world(nodes, j, ts)
    rot = target_axes(wc[:, :3, 3], wt[:, :3, 3], roll)
    if nodes[j].parent >= 0:
        _, pq, _ = axes.decompose(_world(nodes, nodes[j].parent, ts))
        rot = np.swapaxes(axes.quat_to_matrix(pq), -1, -2) @ rot
    q = animation.continuous(axes.matrix_to_quat(rot))
    loc, _, scl = axes.decompose(target.matrix)
    at0 = int(np.searchsorted(ts, 0.0))
    target.matrix = axes.compose(loc, q[at0], scl)
    if len(ts) < 2:
        return None
    return Channel(target_index, "rotation_quaternion", ts, q, interpolation="LINEAR")


# -- export ----------------------------------------------------------------------
def world_at(scene: Scene, i: int, channels: dict[int, dict[str, Channel]], ts: np.ndarray) -> np.ndarray:
    anim = Animation("", channels=[c for chans in channels.values() for c in chans.values()])
    return animation.world_matrices(scene, anim, i, ts)


def roll_keys(scene: Scene, i: int, worlds: list[np.ndarray], pos, tgt,
              channels: dict[int, dict[str, Channel]]) -> tuple[np.ndarray, np.ndarray, float]:
    """(frames, roll degrees) for camera node i's 0xB024 track, and its static roll.
    The up vector is the target's Z with target_up, the camera's own Y when it has no target,
    else world Z (no roll)."""
    node = scene.nodes[i]
    t = node.target if 0 <= node.target < len(scene.nodes) else -1
    if t < 0:
        r0 = float(roll_of(pos, tgt, worlds[i][:3, 1]))
        return np.zeros(1), np.array([r0]), r0
    if not node.target_up:
        return np.zeros(1), np.zeros(1), 0.0
    r0 = float(roll_of(pos, tgt, worlds[t][:3, 2]))
    frames = set()
    for k in (i, t):
        while k >= 0:
            frames.update(float(f) for p, ch in channels.get(k, {}).items()
                          if p in ("location", "rotation_quaternion", "rotation_euler", "scale") for f in ch.frames)
            k = scene.nodes[k].parent
    if not frames:
        return np.zeros(1), np.array([r0]), r0
    ts = np.array(sorted(frames))
    wc, wt = world_at(scene, i, channels, ts), world_at(scene, t, channels, ts)
    roll = np.degrees(np.unwrap(np.radians(roll_of(wc[:, :3, 3], wt[:, :3, 3], wt[:, :3, 2]))))
    if len(ts) > 1:
        line = roll[0] + (roll[-1] - roll[0]) * (ts - ts[0]) / (ts[-1] - ts[0])
        if np.abs(roll - line).max() < LINEAR_TOLERANCE:
            ts, roll = ts[[0, -1]], roll[[0, -1]]
            if abs(roll[1] - roll[0]) < LINEAR_TOLERANCE:
                ts, roll = ts[:1], roll[:1]
    return ts, roll, r0
