"""Scene Animations -> actions on objects, pose bones, object data and shape keys.

An Animation becomes one action per animated ID. Its `placement` says
where it goes: "ACTIVE" (default: the ID's active action, or an NLA strip
when the ID already has one), "NLA" (a strip at frame_start) or "STASH"
(kept with a fake user only). NLA strips are laid one after another
(codec.animation.layout: overlapping only where they show the same values,
as ranges cut from one file timeline do) and hold nothing before or after
themselves, so each plays alone.
"""
from __future__ import annotations

import bpy
import numpy as np

from ..codec import animation, axes
from ..codec.axes import inverse_or_identity
from ..codec.scene import Animation, Scene
from . import action_api, props


def _owner_and_path(obj, channel):
    path = channel.path
    if channel.bone:
        pb = obj.pose.bones.get(channel.bone) if obj.pose else None
        if pb is None and obj.pose:      # renamed on import (empty or repeated name)
            pb = next((p for p in obj.pose.bones if p.bone.get("source_name") == channel.bone), None)
        if pb is None:
            return None, None, None
        if path == "rotation_quaternion":
            pb.rotation_mode = "QUATERNION"
        return obj, f'pose.bones["{pb.name}"].{path}', pb.name
    if path.startswith("key_blocks"):
        key = obj.data.shape_keys if obj.type == "MESH" else None
        return key, path, ""
    if path.startswith("data."):
        return obj.data, path[5:], ""
    if path == "rotation_quaternion":
        obj.rotation_mode = "QUATERNION"
    elif path == "rotation_euler" and obj.rotation_mode in ("QUATERNION", "AXIS_ANGLE"):
        obj.rotation_mode = "XYZ"
    return obj, path, ""


def _apply_global(path: str, v: np.ndarray, G: np.ndarray) -> np.ndarray:
    """Root-node values (N, D) in the global frame: M' = G M, for G a rotation times a uniform scale."""
    R = G[:3, :3]
    s = float(np.cbrt(abs(np.linalg.det(R)))) or 1.0
    if path == "location":
        return v @ R.T + G[:3, 3]
    if path == "rotation_quaternion":
        q = axes.matrix_to_quat(R / s)
        return axes.quat_multiply(np.broadcast_to(q, v.shape), v)
    if path == "scale":
        return v * s
    return v


def _global_handles(path: str, handles, G: np.ndarray):
    """The same map for Bezier handles; it mixes the components, so it needs handles that
    sit at the same frames in every component (else Blender recomputes them)."""
    if handles is None or path not in ("location", "rotation_quaternion", "scale"):
        return handles
    h = np.asarray(handles, np.float64)                     # (N, D, side, xy)
    if not np.allclose(h[..., 0], h[:, :1, :, 0]):
        return None
    out = h.copy()
    for side in (0, 1):
        out[:, :, side, 1] = _apply_global(path, h[:, :, side, 1], G)
    return out


def build_animations(scene: Scene, objects: list, G, default_target=None) -> list:
    G = np.asarray(G, np.float64)
    rooted = not np.allclose(G, np.eye(4))
    actions = []
    stripped: dict = {}         # owner pointer -> (owner, [(action placed on a strip, (path, index) keyed)])
    # NLA strips one after another, overlapping only where they agree: each animation plays alone
    placed = [a for a in scene.animations if a.placement == "NLA"]
    starts = {id(a): s for group in _sharing_targets(placed) for a, s in zip(group, animation.layout(group))}
    if placed and scene.frame_end is not None:
        last = max(starts[id(a)] + animation.frame_span(a)[1] - 1 for a in placed)
        scene.frame_end = max(int(scene.frame_end), int(last))
    for anim in scene.animations:
        by_owner: dict = {}
        for ch in anim.channels:
            obj = objects[ch.target] if 0 <= ch.target < len(objects) else default_target
            if obj is None:
                continue
            owner, path, group = _owner_and_path(obj, ch)
            if owner is None:
                continue
            values = np.asarray(ch.values, np.float64)
            if values.ndim == 1:
                values = values[:, None]
            handles = ch.handles
            if rooted and not ch.bone and 0 <= ch.target < len(scene.nodes) and scene.nodes[ch.target].parent < 0:
                values = _apply_global(ch.path, values, G)
                handles = _global_handles(ch.path, handles, G)
            by_owner.setdefault(owner.as_pointer(), (owner, []))[1].append((path, group, ch, values, handles))
        for owner, curves in by_owner.values():
            name = anim.name if len(by_owner) == 1 else f"{anim.name}|{owner.name}"
            action = bpy.data.actions.new(name)
            action.use_fake_user = True
            fcurves = action_api.channels(action, owner)
            for path, group, ch, values, handles in curves:
                for index in range(values.shape[1]):
                    action_api.add_curve(fcurves, path, index, np.asarray(ch.frames, np.float32), values[:, index],
                                         ch.interpolation, group, None if handles is None else handles[:, index])
            if _finish(action, anim, owner, starts.get(id(anim), anim.frame_start)):
                keyed = {(path, i) for path, _, _, values, _ in curves for i in range(values.shape[1])}
                stripped.setdefault(owner.as_pointer(), (owner, []))[1].append((action, keyed))
            actions.append(action)
    for owner, placed_actions in stripped.values():
        _shape_keys_rest_between_strips(owner, placed_actions)
    return actions


def _sharing_targets(anims: list[Animation]) -> list[list[Animation]]:
    """The animations in groups that key common objects, each in their order: a group's strips are laid one
    after another, while objects that share none (an Unreal script's meshes) each start on their own. An
    animation that keys nothing belongs with all. Linear in the channels (a file may hold thousands)."""
    if any(not a.channels for a in anims):
        return [anims] if anims else []
    group, owner = list(range(len(anims))), {}

    def root(i: int) -> int:
        while group[i] != i:
            group[i] = i = group[group[i]]
        return i

    for i, a in enumerate(anims):
        for t in {c.target for c in a.channels}:
            group[root(i)] = root(owner.setdefault(t, i))
    out: dict[int, list[Animation]] = {}
    for i, a in enumerate(anims):
        out.setdefault(root(i), []).append(a)
    return list(out.values())


def _shape_keys_rest_between_strips(owner, placed_actions) -> None:
    """Blender 5.0 gives a shape key that no playing strip keys its default value, 1.0, not 0:
    every strip then also holds at 0 the keys that only the other strips key, so that each plays
    alone (a per-frame Unreal import: one key per frame, one strip per sequence)."""
    if not isinstance(owner, bpy.types.Key) or bpy.types.ShapeKey.bl_rna.properties["value"].default == 0.0:
        return
    every = set().union(*(keyed for _, keyed in placed_actions))
    for action, keyed in placed_actions:
        missing = sorted(every - keyed)
        if missing:
            bag = action_api.channels(action, owner)
            start = np.float32(action.frame_range[0])
            for path, index in missing:
                action_api.add_curve(bag, path, index, np.array([start]), np.zeros(1), "CONSTANT")


def _finish(action, anim: Animation, owner, start: float) -> bool:
    """Frame range, markers, extras and placement; True when the action went onto an NLA strip."""
    if anim.frame_end >= anim.frame_start:
        action.use_frame_range = True
        action.frame_start, action.frame_end = anim.frame_start, anim.frame_end
    for mk in anim.markers:
        action.pose_markers.new(mk.name).frame = int(mk.frame)
    extras = dict(anim.extras)
    placement = anim.placement
    if anim.fps:
        extras["fps"] = anim.fps
    props.store(action, extras)
    if placement == "STASH":
        return False
    has_active = action_api.action_owner(owner) is not None
    if placement == "ACTIVE" and not has_active:
        action_api.assign(owner, action)
        return False
    action_api.push_to_nla(owner, action, start, anim.name)
    return True


def find_armature(context, name: str = ""):
    """The armature the user names, else the active object's (or its parent's), else the only one."""
    if name:
        ob = bpy.data.objects.get(name)
        return ob if ob is not None and ob.type == "ARMATURE" else None
    ob = context.view_layer.objects.active
    for cand in (ob, getattr(ob, "parent", None)):
        if cand is not None and cand.type == "ARMATURE":
            return cand
    arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
    return arms[0] if len(arms) == 1 else None


def armature_rest(arm) -> dict:
    """Parent-local rest matrices of the armature's bones, by name (per bone: fine)."""
    out = {}
    for b in arm.data.bones:
        m = np.array(b.matrix_local, np.float64)
        if b.parent is not None:
            m = inverse_or_identity(np.array(b.parent.matrix_local, np.float64)) @ m
        out[b.name] = m
    return out
