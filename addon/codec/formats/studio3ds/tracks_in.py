"""Keyframer tracks -> neutral animation channels on node targets.

Position, scale, FOV (as lens), colour and falloff tracks become BEZIER
channels whose explicit handles carry the Kochanek-Bartels (TCB) curve that
3DS plays (see tcb.py; default keys give Catmull-Rom). Rotation keys stay
linear between keys (BEZIER with Blender's auto handles when they carry TCB
values): 3DS interpolates them as quaternion splines, which F-curves cannot
hold. Camera roll goes into the target's orientation (camroll.py). The raw
TCB values are kept in the node's extras for the round trip.
"""
from __future__ import annotations

import numpy as np

from ...errors import Warnings
from ...scene import Channel, Node, Scene
from . import ids
from .camlight import blender_lens
from .ids import TRACK_KEYS
from .keyframer import KfNode, rotation_path
from .model import Track
from .tcb import bezier_handles, tangents


def _interp(t: Track) -> str:
    return "BEZIER" if (t.key_flags & 0x1F).any() else "LINEAR"


def _curve(target: int, path: str, frames, values, tcb, convert=None) -> Channel:
    """A BEZIER channel through the keys with the TCB curve's handles. `convert` maps values to
    the Blender property (e.g. FOV -> lens); the tangents go through its derivative (chain rule),
    so keys are exact and the curve matches to first order between them."""
    values = np.asarray(values, np.float64)
    ds, dd = tangents(frames, values, tcb)
    if convert is not None:
        h = 1e-4 * np.maximum(np.abs(values), 1.0)
        slope = (convert(values + h) - convert(values - h)) / (2 * h)
        values, ds, dd = convert(values), ds * slope, dd * slope
    return Channel(target, path, frames, values, interpolation="BEZIER",
                   handles=bezier_handles(frames, values, ds, dd))


def keep_track_extras(node: Node, cid: int, t: Track) -> None:
    """Loop flags, the reserved bytes, key flags and TCB values, JSON-like."""
    key = "3ds_track_" + TRACK_KEYS[cid]
    node.extras[key + "_flags"] = int(t.flags)
    if any(t.reserved):
        node.extras[key + "_reserved"] = list(t.reserved)
    if (t.key_flags != 0).any():
        node.extras[key + "_key_flags"] = [int(x) for x in t.key_flags]
        node.extras[key + "_tcb"] = [float(x) for x in np.nan_to_num(t.tcb, nan=0.0).ravel()]


def falloff_at(n: KfNode, frames: np.ndarray, static: float) -> np.ndarray:
    """The falloff cone (degrees) at these frames: the falloff keys, linearly between them."""
    t = n.tracks.get(ids.FALL_TRACK)
    if t is None or len(t) == 0:
        return np.full(len(frames), static)
    order = np.argsort(t.frames, kind="stable")
    return np.interp(frames, t.frames[order].astype(np.float64), t.values[order, 0].astype(np.float64))


def _hotspot(n: KfNode, target: int, node: Node, sc: Scene, frames, hot) -> Channel:
    """Hotspot keys as Blender's spot blend: the soft edge is the part of the cone outside the hotspot."""
    light = sc.lights[node.data] if 0 <= node.data < len(sc.lights) else None
    static = float(light.extras.get("3ds_falloff", 45.0)) if light is not None else 45.0
    fall = falloff_at(n, frames, static)
    blend = np.clip(1.0 - np.asarray(hot, np.float64) / np.where(fall > 0, fall, 1.0), 0.0, 1.0)
    return Channel(target, "data.spot_blend", frames, blend[:, None], interpolation="LINEAR")


def node_channels(n: KfNode, target: int, node: Node, sc: Scene, warnings: Warnings) -> list[Channel]:
    out: list[Channel] = []
    for cid, t in n.tracks.items():
        keep_track_extras(node, cid, t)
        if len(t) == 0:
            continue
        frames = t.frames.astype(np.float64)
        if np.any(np.diff(frames) <= 0):
            warnings.warn(f"track 0x{cid:04X} of node {n.name!r} has frames out of order; keys sorted",
                          n.chunk.offset, "KEYFRAMER")
        order = np.argsort(frames, kind="stable")
        frames = frames[order]
        if cid == ids.ROLL_TRACK:
            continue                      # carried by the target's orientation (camroll.py)
        if cid in (ids.MORPH_TRACK, ids.HOT_TRACK):
            # kept as read, so that an untouched hotspot goes back key for key
            node.extras["3ds_track_" + TRACK_KEYS[cid] + "_keys"] = (
                [[float(f), v] for f, v in zip(frames, [t.values[k] for k in order])] if cid == ids.MORPH_TRACK
                else [[float(f), float(v)] for f, v in zip(frames, t.values[order, 0])])
            if cid == ids.HOT_TRACK and node.kind == "LIGHT" and len(t) > 1:
                out.append(_hotspot(n, target, node, sc, frames, t.values[order, 0]))
            continue
        if len(t) < 2 and cid != ids.HIDE_TRACK:
            continue                      # one key: the static value, already in the node
        values, tcb = t.values[order] if cid != ids.HIDE_TRACK else None, t.tcb[order]
        if cid == ids.POS_TRACK:
            out.append(_curve(target, "location", frames, values, tcb))
        elif cid == ids.ROT_TRACK:
            rf, rq = rotation_path(t)
            out.append(Channel(target, "rotation_quaternion", rf, rq, interpolation=_interp(t)))
        elif cid == ids.SCL_TRACK:
            out.append(_curve(target, "scale", frames, values, tcb))
        elif cid == ids.FOV_TRACK and node.kind == "CAMERA":
            out.append(_curve(target, "data.lens", frames, values[:, :1], tcb, blender_lens))
        elif cid == ids.COL_TRACK and node.kind == "LIGHT":
            out.append(_curve(target, "data.color", frames, values, tcb))
        elif cid == ids.FALL_TRACK and node.kind == "LIGHT":
            out.append(_curve(target, "data.spot_size", frames, values[:, :1], tcb, np.radians))
        elif cid == ids.HIDE_TRACK:
            # each key toggles visibility, starting visible
            hidden = (np.arange(len(frames)) % 2 == 0).astype(np.float64)
            if len(frames) and frames[0] > 0:
                # constant extrapolation would show the first toggle before it happens
                frames, hidden = np.r_[0.0, frames], np.r_[0.0, hidden]
            out.append(Channel(target, "hide_viewport", frames, hidden[:, None], interpolation="CONSTANT"))
    return out
