"""Bake whatever moves objects, bones and vertices into sampled Scene channels.

Each take (animation_takes: an action, an NLA strip, a marker range or the
scene range) becomes one Scene Animation, baked with only its own actions
playing. Where nothing but plain action curves moves things, the curves are
read without stepping the scene; otherwise the evaluated scene is sampled
frame by frame, which catches every driver: keys, constraints, drivers, NLA,
armatures and modifiers. Meshes that the codec cannot deform from the Scene
(modifiers, drivers) are baked to one absolute shape key per frame.
"""
from __future__ import annotations

import numpy as np

from ..codec import animation, axes
from ..codec.errors import UnsupportedFeature
from ..codec.scene import Animation, Channel, Marker, Scene, ShapeKey
from . import action_keys, action_sample, animation_takes
from .scope import CollectOptions, local_matrix, matrix_array


def bake(context, scene: Scene, objs: list, o: CollectOptions) -> None:
    """One Scene Animation per take (animation_takes), each baked with only its own actions playing;
    the user's scene is put back afterwards."""
    sc = context.scene
    scene.markers = [Marker(mk.name, mk.frame) for mk in sc.timeline_markers]
    todo = animation_takes.takes(context, objs, o.animation_source, o.frame_start, o.frame_end)
    if todo:
        scene.frame_start = int(min(t.start for t in todo))
        scene.frame_end = int(max(t.end for t in todo))
    # what one take keys goes back to rest before the next; a lone take has no next
    keyed = animation_takes.keyed_paths(todo) if len(todo) > 1 else {}
    # only actions of objects move matrices (shape-key actions alone, e.g. Unreal's, do not)
    moves = any(owner.id_type == "OBJECT" for take in todo for owner, _ in take.actions.values())
    with animation_takes.preserved(context, objs) as reset:
        for take in todo:
            reset()
            animation_takes.play(take, objs, keyed)
            _bake_take(context, scene, objs, o, take, moves)


def _bake_take(context, scene: Scene, objs: list, o: CollectOptions, take, moves: bool) -> None:
    action_sample.forget_keys()
    try:
        _sample_take(context, scene, objs, o, take, moves)
    finally:
        action_sample.forget_keys()


def _sample_take(context, scene: Scene, objs: list, o: CollectOptions, take, moves: bool) -> None:
    frames = np.arange(int(round(take.start)), int(round(take.end)) + 1)
    if not len(frames):
        return
    G = matrix_array(o.global_matrix)
    mesh_objs = [(i, ob) for i, ob in enumerate(objs) if ob.type == "MESH" and o.bake_vertices
                 and needs_vertex_bake(ob, o.apply_modifiers)]
    arms = [(i, ob) for i, ob in enumerate(objs) if ob.type == "ARMATURE"]

    local = None                   # (F, objects, 4, 4) when the scene is stepped
    poses = {i: np.empty((len(frames), len(ob.pose.bones), 4, 4)) for i, ob in arms}
    verts: dict[int, list] = {i: [] for i, _ in mesh_objs}
    keyed = [(i, ob.data.shape_keys) for i, ob in enumerate(objs) if ob.type == "MESH" and ob.data.shape_keys
             and (ob.data.shape_keys.animation_data is not None)]
    key_values = {i: np.empty((len(frames), len(k.key_blocks)), np.float32) for i, k in keyed}
    sources = {i: action_sample.pose_source(ob) for i, ob in arms}
    plain_keys = all(action_sample.plain_keys(k) for _, k in keyed)
    sampled: dict[int, tuple] = {}      # armature -> its pose's curves sampled, not composed into matrices
    from_keys: dict[int, list] = {}     # armature -> its pose's channels read from its keys (action_keys)
    stepped = (mesh_objs or not plain_keys or "EVALUATE" in sources.values()
               or any(action_sample.has_own_transform_motion(ob) for ob in objs))
    if stepped:
        local = np.empty((len(frames), len(objs), 4, 4))
        if moves:
            context.view_layer.update()      # matrices as this take leaves them, not the last one
        _step_frames(context, objs, frames, G, local, poses, verts, keyed, key_values, bool(mesh_objs))
    else:
        # nothing but plain actions moves anything: read the curves, never step the scene nor evaluate
        # it (what is read is the curves and the values they leave alone), and no object moves (own
        # transform motion makes it stepped)
        for i, ob in arms:
            keys = action_keys.pose_keys(ob, i, frames) if sources[i] == "ACTION" and o.source_keys else None
            if keys is not None:
                from_keys[i] = keys
                continue
            if sources[i] == "ACTION":
                sampled[i] = action_sample.pose_trs(ob, frames.astype(np.float64))
            else:
                poses[i][:] = action_sample.pose_now(ob)
        for i, keys in keyed:
            key_values[i][:] = action_sample.key_values(keys, frames.astype(np.float64))

    anim = Animation(name=take.name, frame_start=float(frames[0]), frame_end=float(frames[-1]),
                     fps=take.fps,
                     markers=[Marker(n, int(round(frames[0] + f))) for n, f in take.markers],
                     extras=dict(take.extras))
    f32 = frames.astype(np.float32)
    for i in range(len(objs)) if local is not None else ():
        m = local[:, i]
        if np.allclose(m, m[0], atol=1e-7):
            continue
        _trs_channels(anim, f32, m, target=i, bone="")
    for i, ob in arms:
        if i in from_keys:
            anim.channels += from_keys[i]
            continue
        trs = _pose_trs(poses[i], sampled.get(i))
        if trs is None:
            continue
        t, q, s = trs
        for bi, pb in enumerate(ob.pose.bones):
            _add_trs(anim, f32, t[:, bi], q[:, bi], s[:, bi], target=i, bone=pb.name)
    for i, ob in enumerate(objs):
        for owner, prefix in ((ob, ""), (ob.data, "data.")):
            for path, vals in action_sample.property_channels(owner, frames.astype(np.float64)).items():
                step = "CONSTANT" if isinstance(owner.path_resolve(path), (bool, int)) else "LINEAR"
                anim.channels.append(Channel(i, prefix + path, f32, vals.astype(np.float32), interpolation=step))
    for i, keys in keyed:
        rest = scene.meshes[scene.nodes[i].data].shape_keys
        for k, kb in enumerate(keys.key_blocks):
            v = key_values[i][:, k]
            if not np.allclose(v, v[0]) or (k < len(rest) and not np.isclose(v[0], rest[k].value)):
                anim.channels.append(Channel(i, f'key_blocks["{kb.name}"].value', f32, v[:, None].copy()))
    number = len(scene.animations)
    for i, ob in mesh_objs:
        stack = verts[i]
        if len({len(v) for v in stack}) != 1:
            raise UnsupportedFeature(f"{ob.name}: the vertex count changes during the animation; cannot bake frames")
        mesh = scene.meshes[scene.nodes[i].data]
        if not mesh.baked_frames:
            mesh.shape_keys, mesh.baked_frames, mesh.baked_animation = [], [], []
        mesh.baked_frames += [int(f) for f in frames]
        mesh.baked_animation += [number] * len(frames)
        mesh.shape_keys += [ShapeKey(f"{take.name} {int(f)}", v) for f, v in zip(frames, stack)]
    if o.source_keys:
        curves: dict[int, dict] = {}
        done = {id(c) for chans in from_keys.values() for c in chans}
        anim.channels = [c if id(c) in done else _source_keys(c, objs, curves) for c in anim.channels]
    if anim.channels or mesh_objs or take.source != "SCENE":
        scene.animations.append(anim)


def _pose_trs(m: np.ndarray, sampled: tuple | None) -> tuple | None:
    """(F, B) location, continuous unit quaternion and scale of a pose over time, or None when it
    holds the rest pose (every matrix the identity). Sampled curves are their own decomposition where
    that is plain (finite, non-zero rotations and positive scales): what axes.decompose of their
    matrices gives, up to rounding, without composing them; `m` (F, B, 4, 4) otherwise."""
    if sampled is not None:
        loc, q, s = sampled
        n = np.linalg.norm(q, axis=-1, keepdims=True)
        if not (np.isfinite(loc).all() and np.isfinite(s).all() and (s > 0).all() and np.isfinite(n).all()
                and (n > 1e-12).all()):
            m = axes.compose(loc, q, s)
        elif not _at_rest(loc, q, s):
            q = q / n
            q *= np.where(q[..., :1] < 0, -1.0, 1.0)          # w >= 0, as axes.matrix_to_quat gives
            return loc, animation.continuous(q), s
        else:
            return None
    if np.allclose(m, np.eye(4), atol=1e-7):
        return None
    t, q, s = axes.decompose(m)               # every bone at once
    return t, animation.continuous(q), s


def _at_rest(loc: np.ndarray, q: np.ndarray, s: np.ndarray) -> bool:
    """np.allclose(compose(loc, q, s), identity, atol=1e-7), composing every matrix only when the
    one farthest from rest (by its rotation and scale) is close to it."""
    if not loc.size:
        return True
    if np.abs(loc).max() > 1e-7:
        return False          # the translation is the matrix's last column as it is
    far = np.unravel_index(np.argmax(np.abs(q[..., 1:]).sum(-1) / np.abs(q[..., 0]).clip(1e-12)
                                     + np.abs(s - 1).sum(-1)), loc.shape[:-1])
    if not np.allclose(axes.compose(loc[far], q[far], s[far]), np.eye(4), atol=1e-7):
        return False
    return bool(np.allclose(axes.compose(loc, q, s), np.eye(4), atol=1e-7))


def _source_keys(c: Channel, objs: list, curves: dict[int, dict]) -> Channel:
    """The channel on the action's own key frames where they replay it (action_keys).
    `curves` caches each owner's F-curves by path."""
    ob = objs[c.target]
    if c.bone:
        owner, path = ob, f'pose.bones["{c.bone}"].{c.path}'
    elif c.path.startswith("key_blocks"):
        owner, path = ob.data.shape_keys, c.path
    elif c.path.startswith("data."):
        owner, path = ob.data, c.path[5:]
    else:
        owner, path = ob, c.path
    if owner.as_pointer() not in curves:
        curves[owner.as_pointer()] = action_keys.curves_by_path(owner)
    return action_keys.keyed(c, curves[owner.as_pointer()].get(path, []))


def needs_vertex_bake(ob, apply_modifiers: bool) -> bool:
    """Is the mesh deformed by something the codec cannot replay from the Scene (modifiers,
    drivers or absolute shape keys)? Shape keys keyed plainly and the object's own motion it can."""
    if apply_modifiers and any(md.show_viewport for md in ob.modifiers):
        return True
    key = ob.data.shape_keys
    if key is None:
        return False
    if not key.use_relative or any(kb.vertex_group or kb.mute for kb in key.key_blocks):
        return True
    return not action_sample.plain_keys(key)


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
    _add_trs(anim, frames, t, animation.continuous(q), s, target, bone)


def _add_trs(anim: Animation, frames, t, q, s, target: int, bone: str) -> None:
    anim.channels += [Channel(target, "location", frames, t.astype(np.float32), bone),
                      Channel(target, "rotation_quaternion", frames, q.astype(np.float32), bone),
                      Channel(target, "scale", frames, s.astype(np.float32), bone)]
