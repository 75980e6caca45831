"""Export fast path for Unreal vertex meshes: frames of a mesh moved only by its shape keys.

Baking through the depsgraph costs one scene evaluation per frame; a mesh
whose only motion is its own relative shape keys, keyed with CONSTANT or
LINEAR keys in its active action (what our importer builds), can be mixed
in bulk from the key blocks instead: frame = basis + sum(w * (key - relative)).
Anything else that could move it (modifiers, constraints, object or parent
animation, drivers, other interpolation, NLA channels the active action does
not override) returns None, and the generic depsgraph bake runs.
"""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from .. import bridge
from ..bridge import action_api
from ..bridge.animation_bake import frame_ranges
from ..codec.scene import Marker, ShapeKey

_VALUE = re.compile(r'^key_blocks\["(.+)"\]\.value$')
_CONSTANT, _LINEAR = 0, 1


def _moves(idb) -> bool:
    ad = getattr(idb, "animation_data", None)
    return ad is not None and (ad.action is not None or len(ad.nla_tracks) > 0 or len(ad.drivers) > 0)


def _still_object(ob) -> bool:
    if any(md.show_viewport for md in ob.modifiers) or _moves(ob.data):
        return False
    p = ob
    while p is not None:
        if _moves(p) or any(not c.mute for c in p.constraints):
            return False
        p = p.parent
    return True


def _curve_values(fc, frames: np.ndarray) -> np.ndarray | None:
    """An F-curve sampled at `frames`, for CONSTANT/LINEAR keys with constant extrapolation."""
    n = len(fc.keyframe_points)
    if n == 0 or len(fc.modifiers) or fc.extrapolation != "CONSTANT":
        return None
    co = np.empty(n * 2, np.float32)
    fc.keyframe_points.foreach_get("co", co)
    kind = np.empty(n, np.int32)
    fc.keyframe_points.foreach_get("interpolation", kind)
    if kind.max() > _LINEAR:                      # CONSTANT 0, LINEAR 1; BEZIER and the rest: no
        return None
    x, y = co[0::2].astype(np.float64), co[1::2].astype(np.float64)
    if not kind.any():                            # all CONSTANT: the last key at or before each frame
        return y[np.clip(np.searchsorted(x, frames, side="right") - 1, 0, n - 1)]
    i = np.clip(np.searchsorted(x, frames, side="right") - 1, 0, n - 1)
    j = np.minimum(i + 1, n - 1)
    span = np.where(x[j] > x[i], x[j] - x[i], 1.0)
    t = np.clip((frames - x[i]) / span, 0.0, 1.0)
    linear = (kind[i] == _LINEAR) & (j > i) & (frames >= x[0])
    return y[i] + np.where(linear, t * (y[j] - y[i]), 0.0)


def _weights(key, frames: np.ndarray) -> np.ndarray | None:
    """(F, K) key values per frame, or None when the key's animation is not simple."""
    blocks = list(key.key_blocks)
    w = np.tile(np.array([kb.value for kb in blocks], np.float64), (len(frames), 1))
    ad = key.animation_data
    if ad is None:
        return w
    if len(ad.drivers):
        return None
    curves = action_api.existing_channels(ad.action, key) if ad.action is not None else []
    index = {kb.name: i for i, kb in enumerate(blocks)}
    covered = set()
    for fc in curves:
        m = _VALUE.match(fc.data_path)
        if m is None or m.group(1) not in index:
            return None
        if fc.mute:
            continue
        values = _curve_values(fc, frames)
        if values is None:
            return None
        w[:, index[m.group(1)]] = values
        covered.add(fc.data_path)
    if ad.use_nla:
        overrides = ad.action is not None and ad.action_influence == 1.0 and ad.action_blend_type == "REPLACE"
        for track in ad.nla_tracks:
            for strip in track.strips:
                if track.mute or strip.mute or strip.action is None:
                    continue
                paths = {fc.data_path for fc in action_api.existing_channels(strip.action, key)}
                if not overrides or not paths <= covered:
                    return None
    lo = np.array([kb.slider_min for kb in blocks])
    hi = np.array([kb.slider_max for kb in blocks])
    muted = np.array([kb.mute or bool(kb.vertex_group) for kb in blocks])
    if any(kb.vertex_group for kb in blocks):
        return None
    w = np.clip(w, lo, hi)
    w[:, muted] = 0.0
    return w


def shape_key_scene(context, o: bridge.CollectOptions):
    """The collected Scene with baked frames, or None when the fast path does not apply."""
    objs = bridge.objects_in_scope(context, o)
    meshes = [ob for ob in objs if ob.type == "MESH"]
    if len(meshes) != 1 or not _still_object(meshes[0]):
        return None
    ob = meshes[0]
    sc = context.scene
    start = sc.frame_start if o.frame_start is None else o.frame_start
    end = sc.frame_end if o.frame_end is None else o.frame_end
    frames = np.arange(start, end + 1, dtype=np.float64)
    key = ob.data.shape_keys
    if key is not None and not key.use_relative:
        return None
    weights = _weights(key, frames) if key is not None and o.use_keyframes else None
    if key is not None and o.use_keyframes and weights is None:
        return None
    scene = bridge.collect_scene(context, replace(o, use_keyframes=False, bake_vertices=False))
    node = next(i for i, n in enumerate(scene.nodes) if n.kind == "MESH")
    mesh = scene.meshes[scene.nodes[node].data]
    if key is None or not mesh.shape_keys:
        basis, keys, rel = mesh.positions, [], []
        weights = np.zeros((len(frames), 0))
    else:
        basis = mesh.shape_keys[0].positions
        keys = [k.positions for k in mesh.shape_keys]
        rel = [k.relative_to for k in mesh.shape_keys]
        if weights is None:
            weights = np.tile(np.array([k.value for k in mesh.shape_keys]), (len(frames), 1))
        weights[:, 0] = 0.0                       # the reference key only holds the basis
    out = np.empty((len(frames), len(basis), 3), np.float32)
    for f in range(len(frames)):                  # per frame, a few keys each: bulk adds
        nz = np.flatnonzero(weights[f])
        if len(nz) == 1 and weights[f, nz[0]] == 1.0 and rel[nz[0]] == 0:
            out[f] = keys[nz[0]]                  # basis + 1 * (key - basis)
            continue
        out[f] = basis
        for k in nz:
            out[f] += np.float32(weights[f, k]) * (keys[k] - keys[rel[k]])
    mesh.shape_keys = [ShapeKey(f"Frame {int(f)}", out[i]) for i, f in enumerate(frames)]
    mesh.extras["baked_frames"] = [int(f) for f in frames]
    scene.frame_start, scene.frame_end = int(start), int(end)
    scene.metadata["ranges"] = frame_ranges(context, objs)
    scene.markers = [Marker(mk.name, mk.frame) for mk in sc.timeline_markers]
    return scene
