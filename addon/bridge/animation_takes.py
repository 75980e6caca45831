"""What to bake, one take at a time, and the user's scene put back afterwards.

A take is one animation of the exported file: a name, a frame range, and the
action each animated ID plays while it is baked (None: leave the ID as it
is). Sources, as the export option "Animation source" names them:
  ACTIONS  every action that fits the exported objects (active, NLA strips,
           stashed, and for armatures any action that keys their bones),
           grouped by name, each played alone;
  NLA      every NLA strip, its action played alone over the strip's action range;
  MARKERS  the timeline cut at its markers, the scene played as it is;
  SCENE    the scene's frame range, played as it is;
  AUTO     ACTIONS when an object has several actions, else SCENE (named after
           the first action when there is one).
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

import bpy
import numpy as np

from . import action_api, props
from .scope import ANIMATION_SOURCES

SOURCES = tuple(ANIMATION_SOURCES)


@dataclass
class Take:
    name: str
    start: float
    end: float
    fps: float = 0.0
    actions: dict = field(default_factory=dict)     # owner pointer -> (owner, action); empty = scene as it is
    markers: list = field(default_factory=list)     # (name, frame) pose markers
    extras: dict = field(default_factory=dict)      # the action's custom properties
    source: str = "SCENE"


def animated_ids(objs) -> list:
    """The objects and their shape-key IDs."""
    out = []
    for ob in objs:
        out.append(ob)
        key = getattr(ob.data, "shape_keys", None) if ob.type == "MESH" else None
        if key is not None:
            out.append(key)
    return out


def _fits_bones(action, ob) -> bool:
    """An unassigned action that keys this armature's bones (and nothing that is not there)."""
    paths = [fc.data_path for fc in action_api.curves_of(action)]
    bones = [p.split('"')[1] for p in paths if p.startswith('pose.bones["') and p.count('"') >= 2]
    return bool(bones) and all(b in ob.pose.bones for b in bones)


def _actions_of(owner, objs_armature: bool) -> list:
    anim = getattr(owner, "animation_data", None)
    out = []
    if anim is not None:
        if anim.action is not None:
            out.append(anim.action)
        for track in anim.nla_tracks:
            out += [s.action for s in track.strips if s.action is not None and s.action not in out]
    if objs_armature:
        out += [a for a in bpy.data.actions if a not in out and _fits_bones(a, owner)]
    return out


def _details(action) -> dict:
    extras = props.load(action)
    lo = action.frame_range[0]
    return {"fps": float(extras.pop("fps", 0.0)),
            "markers": [(mk.name, mk.frame - lo) for mk in action.pose_markers], "extras": extras}


def _partner(owner, action, objs):
    """The name of the take a shape-key action joins: a mesh's active shape-key action plays with
    its object's active action (as glTF pairs them); None otherwise."""
    if owner.animation_data.action != action:
        return None
    ob = next((o for o in objs if o.type == "MESH" and o.data.shape_keys == owner), None)
    anim = getattr(ob, "animation_data", None)
    if anim is None or anim.action is None:
        return None
    return anim.action.name.split("|")[0]


def _action_takes(objs) -> list[Take]:
    by_name: dict[str, Take] = {}
    for owner in animated_ids(objs):
        for action in _actions_of(owner, getattr(owner, "type", "") == "ARMATURE"):
            lo, hi = (float(x) for x in action.frame_range)
            # import names the actions of one animation "Name|Object"
            name = (_partner(owner, action, objs) if isinstance(owner, bpy.types.Key) else None) \
                or action.name.split("|")[0]
            take = by_name.get(name)
            if take is None:
                take = by_name[name] = Take(name, lo, hi, source="ACTION", **_details(action))
            take.start, take.end = min(take.start, lo), max(take.end, hi)
            take.actions[owner.as_pointer()] = (owner, action)
    return list(by_name.values())


def _several(found: list[Take]) -> bool:
    """Does some object (or its shape keys) play more than one of the takes?"""
    seen: set[int] = set()
    for take in found:
        if seen & set(take.actions):
            return True
        seen |= set(take.actions)
    return False


def _nla_takes(objs) -> list[Take]:
    out = []
    for owner in animated_ids(objs):
        anim = getattr(owner, "animation_data", None)
        for track in (anim.nla_tracks if anim is not None else []):
            for strip in track.strips:
                if strip.action is None:
                    continue
                out.append(Take(strip.name, float(strip.action_frame_start), float(strip.action_frame_end),
                                actions={owner.as_pointer(): (owner, strip.action)}, source="NLA",
                                **_details(strip.action)))
    return out


def _plain_player(anim, start: float, end: float):
    """The one action that alone moves an ID over start..end, played frame for frame (its active
    action, or the single plain NLA strip that holds it); None when something else plays."""
    if anim.drivers or anim.use_tweak_mode:
        return None
    tracks = [t for t in anim.nla_tracks if not t.mute] if anim.use_nla else []
    if not tracks:
        return anim.action
    if anim.action is not None or len(tracks) != 1 or len(tracks[0].strips) != 1:
        return None
    s = tracks[0].strips[0]
    plain = (s.action is not None and not s.mute and s.blend_type == "REPLACE" and s.scale == 1.0
             and s.repeat == 1.0 and not s.use_animated_influence and not s.use_animated_time
             and s.blend_in == 0.0 and s.blend_out == 0.0 and s.frame_start == s.action_frame_start
             and s.frame_start <= start and end <= s.frame_end)
    return s.action if plain else None


def _plain_players(objs, start: float, end: float) -> dict | None:
    """Owner pointer -> (owner, action) when each animated ID plays one action plainly over the range:
    the take can then play them alone and read their curves instead of stepping the scene."""
    out = {}
    for owner in animated_ids(objs):
        anim = getattr(owner, "animation_data", None)
        if anim is None:
            continue
        action = _plain_player(anim, start, end)
        if action is None:
            if anim.action is None and not anim.drivers and not any(t.strips for t in anim.nla_tracks):
                continue            # animation data that plays nothing
            return None
        out[owner.as_pointer()] = (owner, action)
    return out


def _marker_takes(sc) -> list[Take]:
    marks = sorted(sc.timeline_markers, key=lambda mk: mk.frame)
    out = []
    for i, mk in enumerate(marks):
        end = marks[i + 1].frame - 1 if i + 1 < len(marks) else sc.frame_end
        out.append(Take(mk.name, float(mk.frame), float(max(end, mk.frame)), source="MARKER"))
    return out


def takes(context, objs, source: str, frame_start=None, frame_end=None) -> list[Take]:
    sc = context.scene
    if source not in SOURCES:
        raise ValueError(f"animation source must be one of {', '.join(SOURCES)}, not {source!r}")
    start = sc.frame_start if frame_start is None else frame_start
    end = sc.frame_end if frame_end is None else frame_end
    if source in ("AUTO", "ACTIONS") and frame_start is None and frame_end is None:
        found = _action_takes(objs)
        if source == "ACTIONS" and found or _several(found):
            return found
        if found:               # one action per object: the scene range as it plays, named after the first
            one = found[0]
            return [Take(one.name, float(start), float(end), one.fps, _plain_players(objs, start, end) or {},
                         one.markers, one.extras, "ACTION")]
    elif source == "NLA":
        return _nla_takes(objs)
    elif source == "MARKERS" and sc.timeline_markers:
        return _marker_takes(sc)
    return [Take(sc.name, float(start), float(end), source="SCENE")]


# -- playing a take, and putting the scene back ------------------------------------------
def _pose_state(ob):
    if ob.type != "ARMATURE":
        return None
    flat = np.empty(len(ob.pose.bones) * 16, np.float32)
    ob.pose.bones.foreach_get("matrix_basis", flat)
    return flat


def _trs(ob) -> list[tuple]:
    return [tuple(v) for v in (ob.location, ob.rotation_quaternion, ob.rotation_euler, ob.rotation_axis_angle,
                               ob.scale)]


def _key_values(owner):
    blocks = getattr(owner, "key_blocks", None)
    if blocks is None:
        return None
    vals = np.empty(len(blocks), np.float32)
    blocks.foreach_get("value", vals)
    return vals


@contextmanager
def preserved(context, objs):
    """Everything a bake changes, restored on the way out: frame, active actions and their slots,
    NLA evaluation, object transforms, poses, shape-key values and the selection."""
    sc = context.scene
    ids = animated_ids(objs)
    saved = []
    for owner in ids:
        anim = getattr(owner, "animation_data", None)
        state = (action_api.snapshot(anim) if anim is not None else None,
                 _trs(owner) if isinstance(owner, bpy.types.Object) else None,
                 _pose_state(owner) if isinstance(owner, bpy.types.Object) else None,
                 _key_values(owner))
        saved.append((owner, state))
    frame, subframe = sc.frame_current, sc.frame_subframe
    selection = [(ob, ob.select_get()) for ob in context.view_layer.objects]
    active = context.view_layer.objects.active
    bare = [owner for owner in ids if getattr(owner, "animation_data", None) is None]
    try:
        yield lambda: _reset(saved)
    finally:
        for owner in bare:                   # playing an action gave it animation data: none again
            if owner.animation_data is not None:
                owner.animation_data_clear()
        if (sc.frame_current, sc.frame_subframe) != (frame, subframe):
            sc.frame_set(frame, subframe=subframe)   # the update below evaluates the rest
        _reset(saved)
        for ob, sel in selection:
            if ob.select_get() != sel:
                ob.select_set(sel)
        if context.view_layer.objects.active != active:
            context.view_layer.objects.active = active
        context.view_layer.update()


def _reset(saved) -> None:
    for owner, (anim_state, trs, pose, keys) in saved:
        anim = getattr(owner, "animation_data", None)
        if anim is not None and anim_state is not None:
            action_api.restore(anim, anim_state)
        # only what changed: every write makes the depsgraph evaluate the ID again
        if trs is not None and trs != _trs(owner):
            owner.location, owner.rotation_quaternion, owner.rotation_euler, owner.rotation_axis_angle, \
                owner.scale = trs
        if pose is not None and not np.array_equal(pose, _pose_state(owner)):
            owner.pose.bones.foreach_set("matrix_basis", pose)
        if keys is not None and not np.array_equal(keys, _key_values(owner)):
            owner.key_blocks.foreach_set("value", keys)
            owner.update_tag()


def keyed_paths(todo: list[Take]) -> dict[int, set[str]]:
    """Per ID, every data path that some take's action keys."""
    out: dict[int, set[str]] = {}
    for take in todo:
        for ptr, (owner, action) in take.actions.items():
            out.setdefault(ptr, set()).update(fc.data_path for fc in action_api.curves_of(action))
    return out


def _to_rest(owner, paths: set[str]) -> None:
    """Shape keys and pose bones that other takes key go back to rest, so that one take's
    pose never leaks into the next (objects have no rest: they keep the user's transform)."""
    blocks = getattr(owner, "key_blocks", None)
    if blocks is not None:
        rest = np.array([f'key_blocks["{kb.name}"].value' in paths for kb in blocks], bool)
        if rest.any():                   # in bulk: one by one, each write tags the depsgraph
            values = np.empty(len(blocks), np.float32)
            blocks.foreach_get("value", values)
            values[rest] = 0.0
            blocks.foreach_set("value", values)
            owner.update_tag()           # a bulk write tags nothing itself
    elif getattr(owner, "type", "") == "ARMATURE":
        for pb in owner.pose.bones:
            if any(p.startswith(f'pose.bones["{pb.name}"]') for p in paths):
                pb.matrix_basis = ((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1))


def play(take: Take, objs, keyed: dict[int, set[str]]) -> None:
    """Make each ID play the take's action alone (NLA off); IDs without one stay still."""
    if not take.actions:
        return
    for owner in animated_ids(objs):
        _to_rest(owner, keyed.get(owner.as_pointer(), set()))
        pair = take.actions.get(owner.as_pointer())
        anim = getattr(owner, "animation_data", None)
        if pair is None:
            if anim is not None:
                action_api.silence(anim)
            continue
        action_api.play_alone(owner, pair[1])
