"""UNIGINE model -> neutral Scene (axes, UVs and the names it keeps in the Scene: conventions.py).

Surfaces become material slots (or objects), coordinate vertices Blender
vertices, triangle vertices per-corner data; bones an armature with rest
matrices in armature space, unscaled (Blender bones cannot rest scaled: the
bind's rotation and translation); animations pose-bone channels relative to
that rest, chosen so that Blender deforms as the file's skinning does
(pose.split_rest).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import axes
from ...errors import FormatError, Warnings
from ...meshops import weld_by_normals
from ...scene import Animation, Armature, Bone, Channel, Material, Mesh, Node, RestPose, Scene, ShapeKey, Skin
from . import pose, tangent
from .conventions import BASIS, COLOR_NAME, ORDER_PROP, SIGN_ATTR, TANGENT_ATTR, UV_NAMES, uv_to_blender
from .model import R_BIT, S_BITS, T_BITS, WEIGHT_SCALE, AnimFile, MeshFile, Surface, Track
from .options import AnimImportOptions, ImportOptions
from .read import read_mesh

def _surface_mesh(name: str, surfaces: list[Surface], slots: list[int], bone_count: int) -> Mesh:
    """One Mesh from several surfaces: vertices appended surface after surface."""
    v_off = np.cumsum([0] + [s.coordinate_count for s in surfaces])
    positions = np.concatenate([s.targets[0].positions if s.targets else np.zeros((0, 3), np.float32)
                                for s in surfaces]).astype(np.float32)
    corners = np.concatenate([s.coord_indices.astype(np.int64) + o for s, o in zip(surfaces, v_off)])
    mesh = Mesh.from_triangles(name, positions @ BASIS.T.astype(np.float32), corners)
    mesh.face_material = np.concatenate([np.full(len(s.coord_indices) // 3, slot, np.int32)
                                         for s, slot in zip(surfaces, slots)])

    def per_corner(attr, width, dtype=np.float32):
        """Gather a triangle-vertex array to corners; surfaces without it give zeros."""
        return np.concatenate([getattr(s, attr)[s.tri_indices] if len(getattr(s, attr))
                               else np.zeros((len(s.tri_indices), width), dtype) for s in surfaces])

    mesh.uv_layers[UV_NAMES[0]] = uv_to_blender(per_corner("uv0", 2))
    if any(len(s.uv1) for s in surfaces):
        mesh.uv_layers[UV_NAMES[1]] = uv_to_blender(per_corner("uv1", 2))
    if any(len(s.colors) for s in surfaces):
        mesh.colors[COLOR_NAME] = per_corner("colors", 4, np.uint8).astype(np.float32) / 255.0
    # decode once per triangle vertex, then hand the frames to the corners
    frames = [[a[s.tri_indices] for a in tangent.decode(s.targets[0].tangents)] if s.targets else
              [np.zeros((0, 3), np.float32)] * 2 + [np.zeros(0, np.float32)] for s in surfaces]
    rot = BASIS.T.astype(np.float32)
    mesh.normals = np.concatenate([f[0] for f in frames]) @ rot
    mesh.corner_attributes[TANGENT_ATTR] = np.concatenate([f[1] for f in frames]) @ rot
    mesh.corner_attributes[SIGN_ATTR] = np.concatenate([f[2] for f in frames])
    mesh.shape_keys = _shape_keys(surfaces)
    if bone_count and any(len(s.weights) for s in surfaces):
        mesh.skin = _skin(surfaces)
    return mesh


def _shape_keys(surfaces: list[Surface]) -> list[ShapeKey]:
    count = max((len(s.targets) for s in surfaces), default=0)
    if count < 2:
        return []
    keys = []
    for k in range(count):
        name = next(s.targets[k].name for s in surfaces if len(s.targets) > k)
        parts = []
        for s in surfaces:
            t = s.targets[k] if len(s.targets) > k else s.targets[0]
            if len(t.positions) != s.coordinate_count:
                raise FormatError(f"surface {s.name!r}: morph target {t.name!r} has {len(t.positions)} vertices, "
                                  f"target 0 has {s.coordinate_count}")
            parts.append(t.positions)
        keys.append(ShapeKey(name, (np.concatenate(parts) @ BASIS.T).astype(np.float32)))
    return keys


def _skin(surfaces: list[Surface]) -> Skin:
    joints, weights = [], []
    for s in surfaces:
        w = s.weights
        if len(w):
            used = np.arange(w.bones.shape[1])[None, :] < w.counts[:, None]
            joints.append(np.where(used, w.bones, -1).astype(np.int32))
            weights.append(np.where(used, w.weights / WEIGHT_SCALE, 0).astype(np.float32))
        else:
            joints.append(np.full((s.coordinate_count, 4), -1, np.int32))
            weights.append(np.zeros((s.coordinate_count, 4), np.float32))
    return Skin(0, np.concatenate(joints), np.concatenate(weights))


NON_UNIFORM = ("the bind pose scales bones unevenly, and Blender bones rest unscaled: animations are fitted "
               "to the unscaled rest approximately (shear is dropped), so their deformation may differ")


def rest_frames(names: list[str], parents, local: np.ndarray) -> tuple[dict[str, np.ndarray], np.ndarray, bool]:
    """Per bone name a (3, 4, 4) stack: rigid parent-local rest, the parent's scale residue, its own.

    Also the rigid rest in armature space and whether every bind scale is
    uniform (pose.split_rest: then the channels are exact).
    """
    rigid_world, rigid_local, d_parent, resid = pose.split_rest(local, list(parents))
    frames = np.stack([rigid_local, d_parent, resid], 1)
    return {n: frames[i] for i, n in enumerate(names)}, rigid_world, pose.uniform(resid)


def armature_of(bones, bind) -> tuple[Armature, dict[str, np.ndarray], bool]:
    """The armature (rigid rest matrices in armature space), rest_frames by name, and 'uniform'."""
    local = pose.bind_local(bind)
    names = [b.name for b in bones]
    rest, world, uniform = rest_frames(names, [b.parent for b in bones], local)
    b4 = np.eye(4)
    b4[:3, :3] = BASIS
    world = b4 @ world @ np.linalg.inv(b4)
    # the file's order (parents may follow children) survives Blender's own bone order as a custom property
    arm = Armature("Armature", [Bone(b.name, b.parent, world[i], extras={ORDER_PROP: i}) for i, b in enumerate(bones)])
    return arm, rest, uniform


def track_animation(track: Track, names: list[str], bind, rest: dict[str, np.ndarray],
                    target: int, fps: float, warnings: Warnings) -> Animation:
    """Channels for every animated bone that has a rest pose, relative to that rest.

    rest: rest_frames by bone name; Blender's pose then deforms as the file's keys do.
    """
    anim = Animation(track.name, 0.0, float(max(track.frame_count - 1, 0)), fps)
    if not track.frame_count or not len(track.bones):
        return anim
    t, q, s = pose.decoded_keys(track, bind)
    t, q, s = _finite_keys(track, bind, t, q, s, warnings)
    bone_names = [names[i] for i in track.bones]
    keep = [i for i, n in enumerate(bone_names) if n in rest]
    for i, n in enumerate(bone_names):
        if n not in rest:
            warnings.warn(f"animation {track.name!r}: bone {n!r} is not in the armature; its keys are skipped")
    if not keep:
        return anim
    frames3 = np.stack([rest[bone_names[i]] for i in keep])
    loc, rot, scale = pose.keys_to_basis(frames3[:, 0], t[:, keep], q[:, keep], s[:, keep],
                                         frames3[:, 1], frames3[:, 2])
    frames = np.arange(track.frame_count, dtype=np.float64)
    for j, i in enumerate(keep):
        for path, values in (("location", loc), ("rotation_quaternion", rot), ("scale", scale)):
            anim.channels.append(Channel(target, path, frames, values[:, j].astype(np.float32), bone=bone_names[i]))
    return anim


def _finite_keys(track: Track, bind: np.ndarray, t, q, s, warnings: Warnings):
    """Keys a lying box or bind makes infinite or NaN hold the bind pose there (or none, if that lies too)."""
    bad = ~(np.isfinite(t).all(-1) & np.isfinite(q).all(-1) & np.isfinite(s).all(-1))
    if not bad.any():
        return t, q, s
    warnings.warn(f"animation {track.name!r}: {int(bad.sum())} bone keys are not finite numbers; "
                  "those bones hold their bind pose there")
    b = bind[track.bones.astype(np.int64)]
    rest_t = np.where(np.isfinite(b["t"]), b["t"], 0.0)
    rest_s = np.where(np.isfinite(b["s"]), b["s"], 1.0)
    rest_q = pose.safe_quat(pose.xyzw_to_wxyz(np.nan_to_num(b["r"].astype(np.float64), nan=0.0, posinf=0.0, neginf=0.0)))
    m = bad[..., None]
    return np.where(m, rest_t[None], t), np.where(m, rest_q[None], q), np.where(m, rest_s[None], s)


def warn_bad_bind(bones, bind: np.ndarray, warnings: Warnings, where: str = "") -> None:
    """One line naming the bones whose bind pose cannot be used as it is (pose.bind_local reads them)."""
    bad = np.flatnonzero(pose.bad_bind(bind)) if len(bind) else []
    if len(bad):
        names = ", ".join(repr(bones[i].name) for i in bad[:5]) + (" ..." if len(bad) > 5 else "")
        warnings.warn(f"{where}{len(bad)} bone(s) with a NaN, infinite or zero-scale bind pose ({names}): "
                      "those parts read as no move, no turn, scale 1")


def each_alone(scene: Scene) -> None:
    """Several animations become NLA strips one after another (an active action would hide the
    others); the timeline covers the first, as the file plays it from frame 0."""
    if len(scene.animations) > 1:
        for a in scene.animations:
            a.placement = "NLA"
    if scene.animations:
        scene.frame_start = 0
        scene.frame_end = int(max(a.frame_end for a in scene.animations))


def _warn_non_uniform(uniform: bool, tracks: list[Track], warnings: Warnings) -> None:
    if not uniform and any(t.frame_count and len(t.bones) for t in tracks):
        warnings.warn(NON_UNIFORM)


def mesh_to_scene(m: MeshFile, opts: ImportOptions, warnings: Warnings) -> Scene:
    scene = Scene(fps=opts.fps)
    name = m.name or "Mesh"
    for s in m.surfaces:
        scene.materials.append(Material(s.name))
    arm_node = -1
    if m.bones:
        warn_bad_bind(m.bones, m.bind, warnings)
        arm, rest, uniform = armature_of(m.bones, m.bind)
        arm.name = f"{name}_skeleton"     # the file names no objects: keep the mesh object the file's stem
        scene.armatures.append(arm)
        arm_node = scene.add_node(Node(arm.name, "ARMATURE", 0))
        _warn_non_uniform(uniform, m.animations, warnings)
        for tr in m.animations:
            scene.animations.append(track_animation(tr, [b.name for b in m.bones], m.bind, rest, arm_node,
                                                    opts.fps, warnings))
    if opts.one_object_per_surface:
        groups = [[i] for i in range(len(m.surfaces))]
    else:
        groups = [list(range(len(m.surfaces)))]
    for group in groups:
        surfs = [m.surfaces[i] for i in group]
        mesh_name = surfs[0].name if opts.one_object_per_surface else name
        mesh = _surface_mesh(mesh_name, surfs, list(range(len(group))), len(m.bones))
        mesh.materials = list(group)
        if opts.normals != "KEEP":
            # coordinate vertices split where surfaces meet (and where an exporter split them for a
            # normal or UV): welded, with the file's tangent frames kept per corner for export
            weld_by_normals(mesh, opts.normals == "EXACT", warnings)
        scene.meshes.append(mesh)
        scene.add_node(Node(mesh_name, "MESH", len(scene.meshes) - 1, parent=arm_node))
    each_alone(scene)
    return scene


def _rest_pose(kept: list[str], rigid_local: dict[str, np.ndarray], parent_of: dict[str, str | None]) -> RestPose:
    """The rigid rest of the kept bones, parents as indices into `kept` (-1: a root, or a parent not kept)."""
    if not kept:
        return RestPose()
    bind = pose.bind_from_local(np.stack([rigid_local[n] for n in kept]))
    at = {n: i for i, n in enumerate(kept)}
    return RestPose(bones=list(kept), parents=[at.get(parent_of.get(n), -1) for n in kept],
                    translation=bind["t"].copy(), rotation=pose.xyzw_to_wxyz(bind["r"]).copy(), scale=bind["s"].copy())


_COMPONENT_BITS = T_BITS + (R_BIT,) + S_BITS


def _unstored(track: Track, names: list[str]) -> dict[str, list[bool]]:
    stored = np.bitwise_or.reduce(track.flags, axis=0) if track.frame_count else np.zeros(len(track.bones), np.uint8)
    return {names[b]: [not (int(stored[j]) & bit) for bit in _COMPONENT_BITS] for j, b in enumerate(track.bones)}


def _rest_local(rest: RestPose | None) -> dict[str, np.ndarray]:
    """The parent-local rest matrices an imported .anim's channels are relative to, by bone name."""
    if rest is None or not rest.bones:
        return {}
    local = pose.axes.compose(np.asarray(rest.translation, np.float64), pose.safe_quat(rest.rotation),
                              np.asarray(rest.scale, np.float64))
    return {n: local[i] for i, n in enumerate(rest.bones)}


def anim_to_scene(a: AnimFile, opts: AnimImportOptions, warnings: Warnings,
                  rest_local: dict[str, np.ndarray] | None = None,
                  rest_parents: dict[str, str | None] | None = None) -> Scene:
    """Armature-less animations (channel target -1, bone names) for the armature the user picks.

    rest_local maps bone names to the parent-local bind matrices the keys are
    read against (a .mesh's, whose hierarchy rest_parents gives by name; the
    .anim's own otherwise); without it the .anim's own bind block stands in
    (the notes warn it is sometimes frame 0 rather than the mesh's rest).
    The channels are relative to the rigid version of that rest, as an
    imported .mesh's armature has it; scene.rest_pose keeps that rigid
    rest, for rebase_animations and for writing the keys back.
    """
    names = [b.name for b in a.bones]
    if rest_local is None:
        warn_bad_bind(a.bones, a.bind, warnings)
        local = pose.bind_local(a.bind)
        rest_local = {n: local[i] for i, n in enumerate(names)}
    else:
        for n in sorted(set(rest_local) - set(names)):
            warnings.warn(f"armature bone {n!r} is not in the animation; it keeps its rest pose")
    if rest_parents is None:
        rest_parents = {b.name: names[b.parent] if b.parent >= 0 else None for b in a.bones}
    rnames = list(rest_local)
    at = {n: i for i, n in enumerate(rnames)}
    parents = pose.break_cycles([at.get(rest_parents.get(n), -1) for n in rnames])
    rest, _, uniform = rest_frames(rnames, parents, np.stack([np.asarray(rest_local[n], np.float64) for n in rnames])
                                   if rnames else np.zeros((0, 4, 4)))
    # components an animation never stores keep the rest pose (notes: the rest comes from the mesh)
    fallback = a.bind.copy()
    for i, n in enumerate(names):
        if n in rest_local:
            fallback[i] = pose.bind_from_local(np.asarray(rest_local[n], np.float64)[None])[0]
    scene = Scene(fps=opts.fps)
    kept = [n for n in dict.fromkeys(names) if n in rest]
    scene.rest_pose = _rest_pose(kept, {n: rest[n][0] for n in kept},
                                 {n: rnames[p] if p >= 0 else None for n, p in zip(rnames, parents)})
    _warn_non_uniform(uniform, a.animations, warnings)
    for tr in a.animations:
        scene.animations.append(track_animation(tr, names, fallback, rest, -1, opts.fps, warnings))
        scene.rest_pose.unstored[tr.name] = _unstored(tr, names)
    each_alone(scene)
    return scene


def rebase_animations(scene: Scene, rest_local: dict[str, np.ndarray], warnings: Warnings) -> None:
    """Re-express an imported .anim's bone channels relative to another armature's rest, matched by name.

    Bones the armature lacks lose their channels (a warning); armature bones
    that no animation moves are named in a warning too.
    """
    old = _rest_local(scene.rest_pose)
    unstored = scene.rest_pose.unstored if scene.rest_pose is not None else {}
    animated = set()
    for anim in scene.animations:
        by_bone: dict[str, dict[str, object]] = {}
        for ch in anim.channels:
            by_bone.setdefault(ch.bone, {})[ch.path] = ch
        kept = []
        for bone, chans in by_bone.items():
            if bone not in rest_local:
                warnings.warn(f"animation {anim.name!r}: bone {bone!r} is not in the armature; its keys are skipped")
                continue
            animated.add(bone)
            if bone in old and {"location", "rotation_quaternion", "scale"} <= set(chans):
                loc, rot, sca = (np.asarray(chans[p].values, np.float64)[:, None]
                                 for p in ("location", "rotation_quaternion", "scale"))
                t, q, s = pose.basis_to_keys(old[bone][None], loc, rot, sca)
                never = unstored.get(anim.name, {}).get(bone)
                if never:
                    # what the file never stores follows the new rest, not the one the keys were read with
                    rt, rq, rs = axes.decompose(np.asarray(rest_local[bone], np.float64))
                    t[..., :3] = np.where(never[0:3], rt, t[..., :3])
                    q[...] = np.where(never[3], rq, q)
                    s[..., :3] = np.where(never[4:7], rs, s[..., :3])
                loc, rot, sca = pose.keys_to_basis(np.asarray(rest_local[bone], np.float64)[None], t, q, s)
                for p, v in (("location", loc), ("rotation_quaternion", rot), ("scale", sca)):
                    chans[p].values = v[:, 0].astype(np.float32)
            kept += list(chans.values())
        anim.channels = kept
    for n in sorted(set(rest_local) - animated):
        warnings.warn(f"armature bone {n!r} is not in the animation; it keeps its rest pose")


def rest_from_mesh(path: str | Path, warnings: Warnings) -> tuple[dict[str, np.ndarray], dict[str, str | None]]:
    """Parent-local bind matrices by bone name, and each bone's parent name, from a .mesh's bind pose."""
    m = read_mesh(Path(path).read_bytes(), Warnings())
    warn_bad_bind(m.bones, m.bind, warnings, f"{Path(path).name}: ")
    local = pose.bind_local(m.bind)
    names = [b.name for b in m.bones]
    return ({n: local[i] for i, n in enumerate(names)},
            {b.name: names[b.parent] if b.parent >= 0 else None for b in m.bones})


def _anim_to_scene(a: AnimFile, opts: AnimImportOptions, warnings: Warnings) -> Scene:
    rest = parents = None
    if opts.rest_mesh:
        try:
            rest, parents = rest_from_mesh(opts.rest_mesh, warnings)
        except FormatError as e:
            raise e.in_file(opts.rest_mesh)
    return anim_to_scene(a, opts, warnings, rest, parents)


def to_scene(model: MeshFile | AnimFile, opts: ImportOptions | AnimImportOptions, warnings: Warnings) -> Scene:
    """Either file of the family: a .mesh, or an .anim (read against opts.rest_mesh's bind when it names one)."""
    if isinstance(model, AnimFile):
        return _anim_to_scene(model, opts, warnings)
    return mesh_to_scene(model, opts, warnings)
