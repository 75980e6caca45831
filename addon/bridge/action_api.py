"""The one place that knows how actions differ across Blender versions.

4.2-4.3: legacy actions with `action.fcurves`.
4.4+:    layered actions: slots, layers, keyframe strips and channelbags
         (`action.fcurves` is gone in 5.0).
Everything else in the bridge calls these functions only.
"""
from __future__ import annotations

import bpy
import numpy as np

from ..codec.errors import UnsupportedFeature

LAYERED = bpy.app.version >= (4, 4, 0)

_INTERP = {"CONSTANT": 0, "LINEAR": 1, "BEZIER": 2}
_FREE = 0          # keyframe handle type enum: FREE, ALIGNED, VECTOR, AUTO, AUTO_CLAMPED
# A keyframe's enums are bytes: foreach_get/foreach_set copy a uint8 buffer in bulk, and take any
# other type item by item through Python objects (5 to 7 times slower).
KEY_ENUM = np.uint8


def _slot_for(action, owner):
    for slot in action.slots:
        if slot.target_id_type == owner.id_type or slot.target_id_type == "UNSPECIFIED":
            return slot
    return action.slots.new(id_type=owner.id_type, name=owner.name)


def channels(action, owner):
    """What holds the F-curves of `action` for `owner`: the action itself before 4.4,
    else the channelbag of owner's slot (created if needed). Pass it to add_curve."""
    if not LAYERED:
        return action
    slot = _slot_for(action, owner)
    layer = action.layers[0] if action.layers else action.layers.new("Layer")
    strip = layer.strips[0] if layer.strips else layer.strips.new(type="KEYFRAME")
    return strip.channelbag(slot, ensure=True)


def existing_channels(action, owner) -> list:
    """Read-only list of the F-curves that animate `owner` (empty when none)."""
    if not LAYERED:
        return list(action.fcurves)
    anim = getattr(owner, "animation_data", None)
    slot = anim.action_slot if anim is not None and anim.action == action else None
    out = []
    for layer in action.layers:
        for strip in layer.strips:
            for bag in strip.channelbags:
                if slot is None or bag.slot == slot:
                    out.extend(bag.fcurves)
    return out


def assign(owner, action) -> None:
    """Make `action` the owner's active action (and pick its slot on 4.4+)."""
    anim = owner.animation_data or owner.animation_data_create()
    if anim.action != action:            # (each write rebuilds the depsgraph's relations)
        anim.action = action
    if LAYERED and anim.action_slot is None:
        anim.action_slot = _slot_for(action, owner)


def push_to_nla(owner, action, start: float, name: str) -> None:
    """Place `action` as a strip on its own NLA track at frame `start`."""
    anim = owner.animation_data or owner.animation_data_create()
    track = anim.nla_tracks.new()
    track.name = name
    strip = track.strips.new(name, int(round(start)), action)
    strip.extrapolation = "NOTHING"          # no hold into the frames of other strips
    if LAYERED and hasattr(strip, "action_slot") and strip.action_slot is None:
        strip.action_slot = _slot_for(action, owner)


def add_curve(bag, data_path: str, index: int, frames: np.ndarray, values: np.ndarray,
              interpolation: str = "LINEAR", group: str = "", handles: np.ndarray | None = None) -> None:
    """One F-curve, all keys at once. `bag` comes from channels(). `handles` (N, 2, 2):
    explicit left/right Bezier handles (frame, value) per key."""
    fc = bag.fcurves.new(data_path, index=index)
    if group:
        grp = bag.groups.get(group) or bag.groups.new(group)
        fc.group = grp
    n = len(frames)
    fc.keyframe_points.add(n)
    co = np.empty((n, 2), np.float32)
    co[:, 0] = frames
    co[:, 1] = values
    fc.keyframe_points.foreach_set("co", co.ravel())
    fc.keyframe_points.foreach_set("interpolation", np.full(n, _INTERP.get(interpolation, 1), KEY_ENUM))
    if handles is not None:
        free = np.full(n, _FREE, KEY_ENUM)
        fc.keyframe_points.foreach_set("handle_left_type", free)
        fc.keyframe_points.foreach_set("handle_right_type", free)
        h = np.asarray(handles, np.float32)
        fc.keyframe_points.foreach_set("handle_left", np.ascontiguousarray(h[:, 0]).ravel())
        fc.keyframe_points.foreach_set("handle_right", np.ascontiguousarray(h[:, 1]).ravel())
    else:
        fc.update()      # auto handles; explicit handles must not be recomputed


def action_owner(owner):
    """The active action of an ID, or None."""
    anim = getattr(owner, "animation_data", None)
    return anim.action if anim is not None else None


def curves_of(action) -> list:
    """Every F-curve of an action, whatever slot it animates."""
    if not LAYERED:
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags
            for fc in bag.fcurves]


def snapshot(anim) -> tuple:
    """What play_alone and silence change, for restore()."""
    slot = anim.action_slot if LAYERED else None
    return anim.action, slot, anim.use_nla


def restore(anim, state: tuple) -> None:
    action, slot, use_nla = state
    if anim.use_tweak_mode:
        return
    if anim.action != action:
        anim.action = action
    if LAYERED and action is not None and slot is not None and anim.action_slot != slot:
        anim.action_slot = slot
    if anim.use_nla != use_nla:
        anim.use_nla = use_nla


def _editable(anim) -> None:
    if anim.use_tweak_mode:
        raise UnsupportedFeature("an NLA strip is being edited (tweak mode): leave tweak mode to export its actions")


def silence(anim) -> None:
    """No action and no NLA: the ID keeps the values it has."""
    _editable(anim)
    anim.action = None
    anim.use_nla = False


def play_alone(owner, action) -> None:
    """`action` as the owner's only animation: NLA evaluation off."""
    anim = owner.animation_data or owner.animation_data_create()
    _editable(anim)
    assign(owner, action)
    if LAYERED and anim.action_slot is None or LAYERED and anim.action_slot not in list(action.slots):
        anim.action_slot = _slot_for(action, owner)
    if anim.use_nla:
        anim.use_nla = False
