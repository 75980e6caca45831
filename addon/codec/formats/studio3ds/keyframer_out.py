"""Scene nodes and animation -> keyframer (0xB000) nodes and tracks.

Node ids (0xB030) are the write order; parents (0xB010) refer to them.
Rotations are written as delta keys (angle inverted), as 3DS reads them.
"""
from __future__ import annotations

import numpy as np

from ... import animation, axes
from ...scene import Channel, Node
from . import ids
from .camlight import lens_3ds
from .ids import TRACK_KEYS
from .keyframer import deltas_from_rotations
from .model import TCB_BITS, Chunk, Track
from .tcb import CONTINUITY, evaluate, tangents

NO_PARENT = 0xFFFF
_TRACK_OF = {"location": ids.POS_TRACK, "rotation_quaternion": ids.ROT_TRACK, "rotation_euler": ids.ROT_TRACK,
             "scale": ids.SCL_TRACK, "data.lens": ids.FOV_TRACK, "data.color": ids.COL_TRACK,
             "data.spot_size": ids.FALL_TRACK}


MAX_FRAME = 0xFFFFFFFF          # key frames are u32


def on_whole_frames(frames, values) -> tuple[np.ndarray, np.ndarray]:
    """3DS keys sit on whole frames from 0 on (unsigned): round, and keep the last key of each frame
    (keys before frame 0 end at it; from_scene warns)."""
    f = np.asarray(frames, np.float64).round().clip(0, MAX_FRAME).astype(np.int64)
    v = np.asarray(values)
    last = np.r_[f[1:] != f[:-1], True]
    return f[last], v[last]


def rotation_deltas(frames, quats) -> tuple[np.ndarray, np.ndarray]:
    """Delta keys (inverted angle, axis) on whole frames. Keys between two whole frames are merged
    by adding their angles when they turn about one axis, so a spin of more than 180 degrees in
    one frame (as RotatingCube.3DS has) survives; otherwise their rotations are composed."""
    d = deltas_from_rotations(quats).astype(np.float64)
    # a delta ending at frame t is part of the turn up to the next whole frame
    f = np.ceil(np.asarray(frames, np.float64) - 1e-6).clip(0, MAX_FRAME).astype(np.int64)
    if len(f) < 2 or (np.diff(f) != 0).all():
        return f, d.astype(np.float32)
    out_f, out_d = [], []
    for k in range(len(f)):                       # one step per key: keys are few
        if out_f and out_f[-1] == f[k]:
            prev = out_d[-1]
            same_axis = float(np.dot(prev[1:], d[k, 1:]))
            if abs(same_axis) > 0.9999:
                prev[0] += d[k, 0] * np.sign(same_axis)
            else:
                q = axes.quat_multiply(axes.axis_angle_to_quat(d[k, 1:], -d[k, 0]),
                                       axes.axis_angle_to_quat(prev[1:], -prev[0]))
                out_d[-1] = deltas_from_rotations(np.vstack([[1.0, 0, 0, 0], q]))[1].astype(np.float64)
        else:
            out_f.append(int(f[k]))
            out_d.append(d[k].copy())
    return np.array(out_f, np.int64), np.array(out_d, np.float32)


def _stored_tcb(node: Node | None, cid: int, n: int) -> np.ndarray | None:
    """(n, 5) the TCB values this track's keys had in the file, None when the node keeps none for n keys;
    zeros for a track read with default keys."""
    if node is None or cid not in TRACK_KEYS:
        return None
    key = "3ds_track_" + TRACK_KEYS[cid]
    kf, tcb = node.extras.get(key + "_key_flags"), node.extras.get(key + "_tcb")
    if kf and tcb and len(kf) == n and len(tcb) == n * TCB_BITS:
        return np.asarray(tcb, np.float64).reshape(n, TCB_BITS)
    return np.zeros((n, TCB_BITS)) if key + "_flags" in node.extras and not kf else None


def playable(ch: Channel, node: Node | None, cid: int) -> Channel:
    """Keys that 3DS plays as the channel plays: LINEAR keys as they are (written with continuity -1,
    a straight line), keys whose TCB curve (the file's own values, or the defaults) replays the
    channel; anything else (Blender's Bezier handles, steps) one key per frame from codec.animation (bake_frames)."""
    if ch.interpolation == "LINEAR":
        return ch
    f = np.asarray(ch.frames, np.float64)
    frames = animation.bake_frames(f)
    want = animation.evaluate(ch, frames)
    tcb = _stored_tcb(node, cid, len(f))
    if tcb is not None and cid != ids.ROT_TRACK and len(f) == len(np.unique(np.round(f))):
        ds, dd = tangents(f, ch.values, tcb)
        if np.allclose(evaluate(f, ch.values, ds, dd, frames), want, atol=1e-3 * max(1.0, np.abs(want).max())):
            return ch
    elif tcb is not None and cid == ids.ROT_TRACK:
        return ch                                  # quaternion splines: the file's keys, as read
    return Channel(ch.target, ch.path, frames, want, ch.bone, "LINEAR")


def make_track(cid: int, frames, values, node: Node | None = None) -> Track:
    frames, values = on_whole_frames(frames, values)
    n = len(frames)
    t = Track(frames=frames, key_flags=np.zeros(n, np.uint16), tcb=np.full((n, TCB_BITS), np.nan, np.float32),
              values=np.asarray(values, np.float32).reshape(n, -1))
    if n > 2 and _stored_tcb(node, cid, n) is None:
        t.key_flags[:] = 1 << CONTINUITY               # continuity -1: straight lines between the keys
        t.tcb[:, CONTINUITY] = -1.0
    if node is not None:
        key = "3ds_track_" + TRACK_KEYS[cid]
        t.flags = int(node.extras.get(key + "_flags", 0x40 if cid != ids.HIDE_TRACK else 0x40))
        reserved = node.extras.get(key + "_reserved")
        if reserved and len(reserved) == 8:
            t.reserved = bytes(int(x) & 0xFF for x in reserved)
        kf = node.extras.get(key + "_key_flags")
        tcb = node.extras.get(key + "_tcb")
        if kf and tcb and len(kf) == n and len(tcb) == n * TCB_BITS:
            t.key_flags = np.asarray(kf, np.uint16)
            t.tcb = np.asarray(tcb, np.float32).reshape(n, TCB_BITS)
    return t


def hide_keys(ch: Channel) -> np.ndarray:
    """Frames at which visibility toggles (3DS hide keys), starting visible."""
    state = np.asarray(ch.values).reshape(-1) > 0.5
    change = state != np.r_[False, state[:-1]]
    return np.asarray(ch.frames, np.float64)[change]


def hotspot_keys(node: Node, channels: dict[str, Channel], fall_static: float) -> np.ndarray | None:
    """(N, 2) frame, hotspot degrees: from the spot blend's channel (hotspot = falloff x (1 - blend),
    the falloff from its own channel or the light's), or the keys read from the file when the blend
    still gives them (an untouched import goes back key for key)."""
    kept = node.extras.get("3ds_track_hot_keys")
    kept = np.asarray(kept, np.float64).reshape(-1, 2) if kept else None
    ch = channels.get("data.spot_blend")
    if ch is None:
        return kept
    frames = np.asarray(ch.frames, np.float64)
    blend = np.asarray(ch.values, np.float64).reshape(len(frames), -1)[:, 0]
    fc = channels.get("data.spot_size")
    fall = (np.degrees(np.interp(frames, np.asarray(fc.frames, np.float64),
                                 np.asarray(fc.values, np.float64).reshape(len(fc.frames), -1)[:, 0]))
            if fc is not None else np.full(len(frames), fall_static))
    hot = np.column_stack([frames, fall * (1.0 - blend)])
    if kept is not None:
        again = np.interp(kept[:, 0], hot[:, 0], hot[:, 1])
        if np.allclose(again, kept[:, 1], atol=1e-3):
            return kept
    return hot


def node_tracks(kind: str, node: Node, local: np.ndarray, channels: dict[str, Channel],
                lens: float | None, roll: tuple | None = None, fall_static: float = 45.0) -> list[Chunk]:
    """Position/rotation/scale (+FOV, roll, colour, hotspot and falloff, hide) tracks for one node.
    kind: MESH, EMPTY, CAMERA, LIGHT, SPOT (a spot light: LIGHT tracks plus hotspot and falloff) or TARGET.
    roll: a camera's (frames, degrees), read back from its target by camroll.roll_keys."""
    loc, rot, scl = axes.decompose(local)
    channels = {p: playable(c, node, _TRACK_OF[p]) if p in _TRACK_OF else c for p, c in channels.items()}
    out = []
    ch = channels.get("location")
    t = make_track(ids.POS_TRACK, ch.frames, ch.values, node) if ch else make_track(ids.POS_TRACK, [0], [loc], node)
    out.append(Chunk(ids.POS_TRACK, t))
    if kind in ("MESH", "EMPTY"):
        ch = channels.get("rotation_quaternion")
        if ch is None and "rotation_euler" in channels:
            e = channels["rotation_euler"]
            vals = np.asarray(e.values, np.float64)
            qs = axes.matrix_to_quat(_euler_xyz(vals))
            ch = Channel(e.target, "rotation_quaternion", e.frames, qs)
        quats = np.asarray(ch.values, np.float64) if ch else rot[None]
        frames = ch.frames if ch else [0]
        out.append(Chunk(ids.ROT_TRACK, make_track(ids.ROT_TRACK, *rotation_deltas(frames, quats), node)))
        ch = channels.get("scale")
        t = make_track(ids.SCL_TRACK, ch.frames, ch.values, node) if ch else make_track(ids.SCL_TRACK, [0], [scl], node)
        out.append(Chunk(ids.SCL_TRACK, t))
    if kind == "CAMERA":
        ch = channels.get("data.lens")
        fov = (2400.0 / np.array([lens_3ds(float(x)) for x in np.asarray(ch.values).reshape(-1)]) if ch
               else [2400.0 / lens])
        out.append(Chunk(ids.FOV_TRACK, make_track(ids.FOV_TRACK, ch.frames if ch else [0], fov, node)))
        frames, rolls = roll if roll is not None else ([0], [0.0])
        out.append(Chunk(ids.ROLL_TRACK, make_track(ids.ROLL_TRACK, frames, np.asarray(rolls)[:, None], node)))
    if kind in ("LIGHT", "SPOT") and "data.color" in channels:
        ch = channels["data.color"]
        out.append(Chunk(ids.COL_TRACK, make_track(ids.COL_TRACK, ch.frames, np.asarray(ch.values)[:, :3], node)))
    if kind == "SPOT":
        hot = hotspot_keys(node, channels, fall_static)
        if hot is not None:
            out.append(Chunk(ids.HOT_TRACK, make_track(ids.HOT_TRACK, hot[:, 0], hot[:, 1:], node)))
        ch = channels.get("data.spot_size")
        if ch is not None:                    # Blender's full cone in radians; 3DS: degrees
            fall = np.degrees(np.asarray(ch.values, np.float64).reshape(len(ch.frames), -1)[:, :1])
            out.append(Chunk(ids.FALL_TRACK, make_track(ids.FALL_TRACK, ch.frames, fall, node)))
    if "hide_viewport" in channels:
        frames = hide_keys(channels["hide_viewport"])
        if len(frames):
            out.append(Chunk(ids.HIDE_TRACK, make_track(ids.HIDE_TRACK, frames, np.zeros((len(frames), 0)), node)))
    return out


def _euler_xyz(e: np.ndarray) -> np.ndarray:
    """(N, 3) XYZ Euler angles (Blender's default order) -> (N, 3, 3)."""
    cx, cy, cz = np.cos(e.T)
    sx, sy, sz = np.sin(e.T)
    m = np.empty((len(e), 3, 3))
    m[:, 0] = np.stack([cy * cz, sx * sy * cz - cx * sz, cx * sy * cz + sx * sz], 1)
    m[:, 1] = np.stack([cy * sz, sx * sy * sz + cx * cz, cx * sy * sz - sx * cz], 1)
    m[:, 2] = np.stack([-sy, sx * cy, cx * cy], 1)
    return m


def node_chunk(tag: int, node_id: int, name: str, parent_id: int, tracks: list[Chunk], instance: str = "",
               hidden: bool = False, flags: tuple[int, int] = (0, 0)) -> Chunk:
    c = Chunk(tag)
    c.add(ids.NODE_ID, node_id)
    f1 = (flags[0] & ~0x800) | (0x800 if hidden else 0)
    c.add(ids.NODE_HDR, (name, f1, flags[1], parent_id))
    if instance:
        c.add(ids.INSTANCE_NAME, instance)
    if tag == ids.OBJECT_NODE_TAG:
        c.add(ids.PIVOT, (0.0, 0.0, 0.0))
    c.children += tracks
    return c
