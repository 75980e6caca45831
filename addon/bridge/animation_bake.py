"""Bake whatever moves objects, bones and vertices into sampled Scene channels.

Sampling the evaluated scene frame by frame catches every driver: keys,
constraints, drivers, NLA, armatures and modifiers. The named ranges that
exporters may turn into sequences come from actions, NLA strips and markers,
in `scene.metadata["ranges"]`.
"""
from __future__ import annotations

import numpy as np

from ..codec import axes
from ..codec.scene import Animation, Channel, Marker, Scene, ShapeKey
from . import action_sample, props
from .collect import CollectOptions, _m, local_matrix


def frame_ranges(context, objs) -> list[dict]:
    """Named ranges from actions, NLA strips and timeline markers, in that order of preference."""
    out, seen = [], set()
    for ob in objs:
        for owner in (ob, getattr(ob.data, "shape_keys", None)):
            anim = getattr(owner, "animation_data", None) if owner is not None else None
            if anim is None:
                continue
            for track in anim.nla_tracks:
                for strip in track.strips:
                    key = ("NLA", strip.name, strip.frame_start, strip.frame_end)
                    if key not in seen:
                        seen.add(key)
                        out.append({"name": strip.name, "start": strip.frame_start, "end": strip.frame_end,
                                    "source": "NLA", **_action_details(strip.action)})
            if anim.action is not None:
                a = anim.action
                key = ("ACTION", a.name)
                if key not in seen:
                    seen.add(key)
                    lo, hi = a.frame_range
                    out.append({"name": a.name, "start": float(lo), "end": float(hi),
                                "source": "ACTION", **_action_details(a)})
    sc = context.scene
    marks = sorted(sc.timeline_markers, key=lambda mk: mk.frame)
    for i, mk in enumerate(marks):
        end = marks[i + 1].frame - 1 if i + 1 < len(marks) else sc.frame_end
        out.append({"name": mk.name, "start": float(mk.frame), "end": float(max(end, mk.frame)),
                    "fps": 0.0, "source": "MARKER", "markers": [], "extras": {}})
    return out


def _action_details(action) -> dict:
    """fps, pose markers (name, frames after the action's first frame) and custom
    properties of the action behind a range."""
    if action is None:
        return {"fps": 0.0, "markers": [], "extras": {}}
    extras = props.load(action)
    return {"fps": float(extras.pop("fps", 0.0)),
            "markers": [(mk.name, mk.frame - action.frame_range[0]) for mk in action.pose_markers],
            "extras": extras}


def bake(context, scene: Scene, objs: list, o: CollectOptions) -> None:
    sc = context.scene
    start = sc.frame_start if o.frame_start is None else o.frame_start
    end = sc.frame_end if o.frame_end is None else o.frame_end
    frames = np.arange(start, end + 1)
    scene.frame_start, scene.frame_end = int(start), int(end)
    scene.metadata["ranges"] = frame_ranges(context, objs)
    scene.markers = [Marker(mk.name, mk.frame) for mk in sc.timeline_markers]
    if not len(frames):
        return
    index = {ob.as_pointer(): i for i, ob in enumerate(objs)}
    G = _m(o.global_matrix)
    mesh_objs = [(i, ob) for i, ob in enumerate(objs) if ob.type == "MESH"] if o.bake_vertices else []
    arms = [(i, ob) for i, ob in enumerate(objs) if ob.type == "ARMATURE"]

    local = np.empty((len(frames), len(objs), 4, 4))
    poses = {i: np.empty((len(frames), len(ob.pose.bones), 4, 4)) for i, ob in arms}
    verts: dict[int, list] = {i: [] for i, _ in mesh_objs}
    keyed = [(i, ob.data.shape_keys) for i, ob in enumerate(objs) if ob.type == "MESH" and ob.data.shape_keys
             and (ob.data.shape_keys.animation_data is not None)]
    key_values = {i: np.empty((len(frames), len(k.key_blocks)), np.float32) for i, k in keyed}
    sources = {i: action_sample.pose_source(ob) for i, ob in arms}
    stepped = (o.bake_vertices or keyed or "EVALUATE" in sources.values()
               or any(action_sample.has_own_transform_motion(ob) for ob in objs))
    if stepped:
        _step_frames(context, objs, frames, G, local, poses, verts, keyed, key_values, o.bake_vertices)
    else:
        # nothing but plain actions moves anything: read the curves, never step the scene
        local[:] = [local_matrix(ob, _parent_in(ob, index), G) for ob in objs]
        for i, ob in arms:
            poses[i][:] = (action_sample.pose_bases(ob, frames.astype(np.float64)) if sources[i] == "ACTION"
                           else action_sample.pose_now(ob))

    anim = Animation(name=sc.name, frame_start=float(start), frame_end=float(end),
                     fps=sc.render.fps / sc.render.fps_base)
    f32 = frames.astype(np.float32)
    for i in range(len(objs)):
        m = local[:, i]
        if np.allclose(m, m[0], atol=1e-7):
            continue
        _trs_channels(anim, f32, m, target=i, bone="")
    for i, ob in arms:
        m = poses[i]
        if np.allclose(m, np.eye(4), atol=1e-7):
            continue
        for bi, pb in enumerate(ob.pose.bones):
            _trs_channels(anim, f32, m[:, bi], target=i, bone=pb.name)
    for i, ob in enumerate(objs):
        for owner, prefix in ((ob, ""), (ob.data, "data.")):
            for path, vals in action_sample.property_channels(owner, frames.astype(np.float64)).items():
                step = "CONSTANT" if isinstance(owner.path_resolve(path), (bool, int)) else "LINEAR"
                anim.channels.append(Channel(i, prefix + path, f32, vals.astype(np.float32), interpolation=step))
    for i, keys in keyed:
        for k, kb in enumerate(keys.key_blocks):
            v = key_values[i][:, k]
            if not np.allclose(v, v[0]):
                anim.channels.append(Channel(i, f'key_blocks["{kb.name}"].value', f32, v[:, None].copy()))
    for i, ob in mesh_objs:
        stack = verts[i]
        if len({len(v) for v in stack}) != 1:
            raise ValueError(f"{ob.name}: the vertex count changes during the animation; cannot bake frames")
        mesh = scene.meshes[scene.nodes[i].data]
        mesh.extras["baked_frames"] = [int(f) for f in frames]
        mesh.shape_keys = [ShapeKey(f"Frame {int(f)}", v) for f, v in zip(frames, stack)]
    if anim.channels:
        scene.animations.append(anim)


def _parent_in(ob, index):
    return ob.parent if ob.parent is not None and ob.parent.as_pointer() in index else None


def _step_frames(context, objs, frames, G, local, poses, verts, keyed, key_values, bake_vertices) -> None:
    """Step the scene through every frame and read what the evaluated depsgraph shows."""
    sc = context.scene
    index = {ob.as_pointer(): i for i, ob in enumerate(objs)}
    arms = [(i, ob) for i, ob in enumerate(objs) if ob.type == "ARMATURE"]
    mesh_objs = [(i, ob) for i, ob in enumerate(objs) if ob.type == "MESH" and i in verts]
    saved = sc.frame_current
    # Without vertex baking, deforming modifiers only slow each frame down: switch them off meanwhile.
    idle = [] if bake_vertices else [md for ob in objs if ob.type == "MESH" for md in ob.modifiers if md.show_viewport]
    for md in idle:
        md.show_viewport = False
    try:
        for fi, f in enumerate(frames):
            sc.frame_set(int(f))
            depsgraph = context.evaluated_depsgraph_get()
            for i, ob in enumerate(objs):
                local[fi, i] = local_matrix(ob, _parent_in(ob, index), G)
            for i, keys in keyed:
                keys.key_blocks.foreach_get("value", key_values[i][fi])
            for i, ob in arms:
                poses[i][fi] = action_sample.pose_now(ob)
            for i, ob in mesh_objs:
                ev = ob.evaluated_get(depsgraph)
                me = ev.to_mesh()
                try:
                    co = np.empty(len(me.vertices) * 3, np.float32)
                    me.vertices.foreach_get("co", co)
                finally:
                    ev.to_mesh_clear()
                verts[i].append(co.reshape(-1, 3))
    finally:
        for md in idle:
            md.show_viewport = True
        sc.frame_set(saved)


def _trs_channels(anim: Animation, frames, m: np.ndarray, target: int, bone: str) -> None:
    t, q, s = axes.decompose(m)
    # keep quaternions on one hemisphere so that interpolation takes the short way
    dots = np.sum(q[1:] * q[:-1], axis=1)
    flip = np.cumprod(np.where(dots < 0, -1.0, 1.0))
    q[1:] *= flip[:, None]
    anim.channels += [Channel(target, "location", frames, t.astype(np.float32), bone),
                      Channel(target, "rotation_quaternion", frames, q.astype(np.float32), bone),
                      Channel(target, "scale", frames, s.astype(np.float32), bone)]
