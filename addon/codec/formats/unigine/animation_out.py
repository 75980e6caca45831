"""Scene armature and actions -> bones, bind pose and tracks.

Each key goes back from the pose basis to a parent-local key
(rest_local * basis). A component is stored only when it changes; the first
frame stores every component the animation uses, which is every component
that ever leaves the bind pose.
"""
from __future__ import annotations

import numpy as np

from ... import animation
from ...errors import Warnings
from ...scene import Animation, Scene
from . import pose
from .conventions import BASIS, ORDER_PROP
from .model import BIND_DTYPE, QUAT_SCALE, R_BIT, S_BITS, T_BITS, BoneHeader, Track


def armature_bones(scene: Scene, warnings: Warnings):
    """(armature index, its node, bone headers, bind pose, scene bone -> file bone map)."""
    if not scene.armatures:
        rest = scene.rest_pose
        if rest is None or not rest.bones:
            return -1, -1, [], np.zeros(0, BIND_DTYPE), None
        bones = [BoneHeader(n, int(p)) for n, p in zip(rest.bones, rest.parents)]
        bind = np.zeros(len(rest.bones), BIND_DTYPE)
        bind["t"], bind["r"], bind["s"] = rest.translation, pose.wxyz_to_xyzw(rest.rotation), rest.scale
        return -1, -1, bones, bind, np.arange(len(rest.bones))
    if len(scene.armatures) > 1:
        warnings.warn(f"{len(scene.armatures)} armatures: only the first, {scene.armatures[0].name!r}, is written")
    arm = scene.armatures[0]
    node = next((i for i, n in enumerate(scene.nodes) if n.kind == "ARMATURE" and n.data == 0), -1)
    b4 = np.eye(4)
    b4[:3, :3] = BASIS
    world = np.stack([np.linalg.inv(b4) @ b.matrix @ b4 for b in arm.bones]) if arm.bones else np.zeros((0, 4, 4))
    parents = [b.parent for b in arm.bones]
    local = np.stack([world[i] if p < 0 else animation.axes.inverse_or_identity(world[p]) @ world[i] for i, p in enumerate(parents)]) \
        if arm.bones else world
    order = _file_order(arm)
    new_index = np.empty(len(order), np.int64)
    new_index[order] = np.arange(len(order))
    bones = [BoneHeader(arm.bones[i].name, int(new_index[parents[i]]) if parents[i] >= 0 else -1) for i in order]
    return 0, node, bones, pose.bind_from_local(local[order]), new_index


def _file_order(arm) -> np.ndarray:
    """Scene bone indices in file order: the imported file's own order when every bone kept it."""
    keys = [b.extras.get(ORDER_PROP) for b in arm.bones]
    if all(isinstance(k, (int, np.integer)) for k in keys) and len(set(keys)) == len(keys):
        return np.argsort(np.array(keys), kind="stable")
    return np.arange(len(arm.bones))


def _sample(anim: Animation, frames: np.ndarray, names: list[str]):
    """Pose basis location, rotation (wxyz), scale at integer frames, for the bones the action animates."""
    order = [n for n in names if any(c.bone == n and len(c.frames) for c in anim.channels)]
    f = len(frames)
    loc, rot, scale = np.zeros((f, len(order), 3)), np.zeros((f, len(order), 4)), np.ones((f, len(order), 3))
    for j, n in enumerate(order):
        chans = {c.path: c for c in anim.channels if c.bone == n and len(c.frames)}
        loc[:, j], rot[:, j], scale[:, j] = animation.trs(chans, frames)
    return order, loc, rot, scale


def _quantize(v: np.ndarray, box_min: np.ndarray, size: np.ndarray) -> np.ndarray:
    u = (v - box_min) / np.where(size > 0, size, 1.0) * 65535.0
    return np.clip(np.round(np.where(size > 0, u, 0.0)), 0, 65535).astype(np.uint16)


def make_track(name: str, bone_index: np.ndarray, bind: np.ndarray, t, q_wxyz, s, quantized: bool) -> Track:
    """Keys (F, N, ...) in parent-local space -> a track with flags set as the notes say."""
    f = t.shape[0]
    q = animation.continuous(q_wxyz)
    b = bind[bone_index]
    bq = pose.xyzw_to_wxyz(b["r"].astype(np.float64))
    # keep each bone's keys in the bind rotation's hemisphere so an unchanged rotation compares equal
    q = q * np.where((q[:1] * bq[None]).sum(-1, keepdims=True) < 0, -1.0, 1.0)
    rot = np.round(pose.wxyz_to_xyzw(q) * QUAT_SCALE).clip(-32767, 32767).astype(np.int16)
    bind_rot = np.round(b["r"].astype(np.float64) * QUAT_SCALE).clip(-32767, 32767).astype(np.int16)
    track = Track(name, bone_index.astype(np.int16))
    if quantized:
        # boxes from float32 values, so that float64 noise (1 + 2e-16) cannot open an empty box
        t, s = t.astype(np.float32).astype(np.float64), s.astype(np.float32).astype(np.float64)
        lo_t, lo_s = t.min((0, 1)), s.min((0, 1))
        # "+ 0.0" turns -0.0 into 0.0, so equal values always give equal bytes
        track.translation_box = (np.stack([lo_t, t.max((0, 1)) - lo_t]) + 0.0).astype(np.float32)
        track.scale_box = (np.stack([lo_s, s.max((0, 1)) - lo_s]) + 0.0).astype(np.float32)
        tb, sb = track.translation_box.astype(np.float64), track.scale_box.astype(np.float64)
        tv, sv = _quantize(t, tb[0], tb[1]), _quantize(s, sb[0], sb[1])
        bind_t, bind_s = _quantize(b["t"], tb[0], tb[1]), _quantize(b["s"], sb[0], sb[1])
        # a bind value outside the box can never be matched exactly: count it as "used"
        out_t = (b["t"] < tb[0]) | (b["t"] > tb[0] + tb[1])
        out_s = (b["s"] < sb[0]) | (b["s"] > sb[0] + sb[1])
    else:
        tv, sv = (t + 0.0).astype(np.float32), (s + 0.0).astype(np.float32)
        bind_t, bind_s = b["t"], b["s"]
        out_t = out_s = np.zeros((len(bone_index), 3), bool)
    changed = np.zeros((f, len(bone_index)), np.uint8)
    flag = 0
    for i in range(3):
        for bit, v, bv, out in ((T_BITS[i], tv[..., i], bind_t[:, i], out_t[:, i]),
                                (S_BITS[i], sv[..., i], bind_s[:, i], out_s[:, i])):
            moves = np.zeros(v.shape, bool)
            moves[1:] = v[1:] != v[:-1]
            changed |= np.where(moves, bit, 0).astype(np.uint8)
            if moves.any() or (v[0] != bv).any() or out.any():
                flag |= bit
    moves = np.zeros(rot.shape[:2], bool)
    moves[1:] = (rot[1:] != rot[:-1]).any(-1)
    changed |= np.where(moves, R_BIT, 0).astype(np.uint8)
    if moves.any() or (rot[0] != bind_rot).any():
        flag |= R_BIT
    track.flag = flag
    track.flags = changed & flag
    if f:
        track.flags[0] = flag
    track.translation, track.rotation, track.scale = tv, rot, sv
    return track


def build_tracks(scene: Scene, bones: list[BoneHeader], bind: np.ndarray, quantized: bool,
                 warnings: Warnings) -> list[Track]:
    names = [b.name for b in bones]
    rest = pose.bind_local(bind)
    tracks = []
    for anim in scene.animations:
        name = anim.name
        missing = sorted({c.bone for c in anim.channels if c.bone and c.bone not in names})
        if missing:
            warnings.warn(f"action {name!r}: bones {', '.join(missing)} are not in the armature; skipped")
        if not any(c.bone in names and len(c.frames) for c in anim.channels):
            continue                  # nothing to sample: do not build a frame range that may be huge
        frames = animation.every_frame(anim, warnings)
        order, loc, rot, scale = _sample(anim, frames, names)
        if not order:
            continue
        idx = np.array([names.index(n) for n in order], np.int64)
        t, q, s = pose.basis_to_keys(rest[idx], loc, rot, scale)
        tracks.append(make_track(name, idx, bind, t, q, s, quantized))
    return tracks
