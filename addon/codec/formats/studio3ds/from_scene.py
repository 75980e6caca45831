"""Neutral Scene -> Model: editor objects, materials, and the keyframer.

Each mesh is written once, placed by the world matrix of its first node
(0x4110 points = that matrix * local points, 0x4160 = that matrix); further
nodes of the same mesh become instances (0xB011). The hierarchy goes
through the keyframer with ids in write order.

When that matrix mirrors, readers (lib3ds, assimp, ours) flip the mesh's X
after taking 0x4160 out, so every node of such a mesh is written with its
world matrix times X_FLIP (a positive scale), and its children relative to that.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ... import animation, axes
from ...errors import Warnings
from ...parallel import PARALLEL_CORNERS, map_two
from ...scene import Animation, Channel, Node, Scene
from . import ids
from .camlight import ENERGY_PER_MULTIPLIER, lens_3ds
from .camroll import roll_keys
from .conventions import X_FLIP
from .keyframer_out import MAX_FRAME, NO_PARENT, node_chunk, node_tracks
from .materials_out import kept, material_chunk, texture_names
from .mesh_out import mesh_chunks
from .model import Chunk, Model
from .options import ExportOptions
from .world import world_chunks


def unique_names(names: list[str], limit: int, warnings: Warnings, what: str,
                 taken: set[str] | None = None) -> list[str]:
    """Names cut to `limit` and unique (case-insensitive) among themselves and `taken` (which grows)."""
    out = []
    taken = set() if taken is None else taken
    for name in names:
        # a character Latin-1 lacks becomes "?" here, so that names stay unique as the file has them
        base = (name or what).encode("latin-1", "replace").decode("latin-1")[:limit]
        cand, n = base, 1
        while cand.lower() in taken:
            suffix = f".{n:03d}" if limit >= 8 else str(n)
            cand = base[:max(limit - len(suffix), 1)] + suffix
            n += 1
        if cand != name:
            warnings.warn(f"{what} name {name!r} written as {cand!r} (unique within {limit} characters)")
        taken.add(cand.lower())
        out.append(cand)
    return out


def part_names(name: str, count: int, limit: int, taken: set[str], warnings: Warnings) -> list[str]:
    """`name`, then `<name>.001`... for the further parts of a split mesh, skipping names already
    in the file (`taken`, lower case, which grows)."""
    out, k = [name], 1
    for _ in range(1, count):
        while True:
            suffix = f".{k:03d}"
            cand = name[:max(limit - len(suffix), 1)] + suffix
            k += 1
            if cand.lower() not in taken:
                break
            warnings.warn(f"part of mesh object {name!r} not named {cand!r}: another object has that name")
        taken.add(cand.lower())
        out.append(cand)
    return out


def mirror_channels(ch: dict[str, Channel], parent_flip: bool, own_flip: bool) -> dict[str, Channel]:
    """Blender channels of a node as 3DS tracks see them: local' = F_parent @ local @ F_own, with
    F = X_FLIP for a node of a mirrored mesh (its 3DS node matrix is world @ X_FLIP)."""
    if not ch or not (parent_flip or own_flip):
        return ch
    out = dict(ch)

    def scaled(c: Channel, k) -> Channel:
        k = np.asarray(k, np.float64)
        handles = None
        if c.handles is not None:
            handles = np.array(c.handles, np.float64)
            handles[..., 1] *= k[None, :, None]
        return dataclasses.replace(c, values=np.asarray(c.values, np.float64) * k, handles=handles)
    if parent_flip:
        # X_FLIP @ T(t) @ R @ S = T(X_FLIP t) @ (X_FLIP R X_FLIP) @ X_FLIP @ S
        if "location" in out:
            out["location"] = scaled(out["location"], [-1.0, 1.0, 1.0])
        if "rotation_quaternion" in out:
            out["rotation_quaternion"] = scaled(out["rotation_quaternion"], [1.0, 1.0, -1.0, -1.0])
        if "rotation_euler" in out:                     # XYZ: Rx(a) Ry(-b) Rz(-c) conjugated
            out["rotation_euler"] = scaled(out["rotation_euler"], [1.0, -1.0, -1.0])
    if parent_flip != own_flip and "scale" in out:
        out["scale"] = scaled(out["scale"], [-1.0, 1.0, 1.0])
    return out


def _color_f(cid: int, rgb) -> Chunk:
    c = Chunk(cid)
    c.add(ids.COLOR_F, tuple(float(x) for x in rgb[:3]))
    return c


def timeline_animation(scene: Scene, warnings: Warnings) -> Animation | None:
    """The animation a .3ds file's one timeline holds: the first that has channels; the others
    are named in a warning."""
    anims = [a for a in scene.animations if a.channels]
    if len(anims) > 1:
        warnings.warn(f"a .3ds file holds one timeline: animation {anims[0].name!r} is written; "
                      f"{', '.join(repr(a.name) for a in anims[1:])} are not (export each on its own)")
    return anims[0] if anims else None


def _channels(anim: Animation | None) -> dict[int, dict[str, Channel]]:
    out: dict[int, dict[str, Channel]] = {}
    for ch in anim.channels if anim is not None else []:
        if not ch.bone and len(ch.frames):
            out.setdefault(ch.target, {})[ch.path] = ch
    return out


def _parents_first(scene: Scene) -> list[int]:
    """Depth first: each node, then all of its descendants; roots and siblings in scene order.
    This is the order 3ds writes the keyframer in, and assimp's reader needs it: it finds a
    node's parent by walking back from the node written last."""
    n = len(scene.nodes)
    children: list[list[int]] = [[] for _ in range(n)]
    roots = []
    for i, node in enumerate(scene.nodes):
        (children[node.parent] if 0 <= node.parent < n and node.parent != i else roots).append(i)
    out, seen = [], set()
    for start in roots + list(range(n)):           # the tail picks up nodes of a parent cycle
        stack = [start]
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            out.append(i)
            stack.extend(reversed(children[i]))
    return out


def from_scene(scene: Scene, options: ExportOptions, warnings: Warnings) -> Model:
    # degenerate or huge coordinates only make normals and groups meaningless, never fail the export
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return _from_scene(scene, options, warnings)


def _from_scene(scene: Scene, options: ExportOptions, warnings: Warnings) -> Model:
    limit = 16 if options.name_limit >= 16 else 10
    root = Chunk(ids.MAIN)
    root.add(ids.VERSION, 3)
    ed = root.add(ids.EDITOR)
    ed.add(ids.MESH_VERSION, 3)
    ed.add(ids.MASTER_SCALE, float(options.master_scale))
    mat_names = unique_names([m.name for m in scene.materials], limit, warnings, "material")
    tex = texture_names(scene, options.texture_names_83, warnings)
    for m, name in zip(scene.materials, mat_names):
        ed.children.append(material_chunk(m, name, scene, tex))
    if scene.world is not None:
        ed.children += world_chunks(scene.world, scene, tex)

    worlds = [scene.world_matrix(i) for i in range(len(scene.nodes))]
    order = _parents_first(scene)
    targets = {n.target: i for i, n in enumerate(scene.nodes) if n.target >= 0 and n.kind in ("CAMERA", "LIGHT")}
    # only the first node of a mesh, cameras and lights write editor objects; those names must be unique
    owners, seen_mesh = [], set()
    for i in order:
        n = scene.nodes[i]
        if n.kind in ("CAMERA", "LIGHT") or (n.kind == "MESH" and n.data not in seen_mesh):
            owners.append(i)
            seen_mesh.add(n.data if n.kind == "MESH" else None)
    taken: set[str] = set()                    # every editor object name, lower case
    owner_names = unique_names([scene.nodes[i].source_name or scene.nodes[i].name for i in owners],
                               limit, warnings, "object", taken)
    obj_names = {i: nm for i, nm in zip(owners, owner_names)}
    anim = timeline_animation(scene, warnings) if options.use_keyframes else None
    for c in anim.channels if anim is not None else []:
        if c.interpolation != "LINEAR" and not c.bone and 0 <= c.target < len(scene.nodes):   # baked by playable
            animation.warn_cut(c.frames, f"{scene.nodes[c.target].name!r} {c.path}", warnings)
    channels = _channels(anim)
    kf_nodes: list[Chunk] = []
    kf_id: dict[int, int] = {}                 # scene node -> keyframer id of its (first) node
    mesh_object: dict[int, list[str]] = {}     # scene mesh -> object names of its parts

    # a mesh is written placed by its first node's world matrix; when that mirrors, readers flip
    # the mesh's X, so all its nodes are written as world @ X_FLIP (see the module docstring)
    mesh_world: dict[int, np.ndarray] = {}
    for i in order:
        n = scene.nodes[i]
        if n.kind == "MESH" and 0 <= n.data < len(scene.meshes):
            mesh_world.setdefault(n.data, worlds[i])
    flipped = {i for i, n in enumerate(scene.nodes) if n.kind == "MESH" and n.data in mesh_world
               and axes.det3(mesh_world[n.data][:3, :3]) < 0}
    worlds_3ds = [w @ X_FLIP if i in flipped else w for i, w in enumerate(worlds)]
    # the chunks of each mesh the loop below writes, two meshes at a time (numpy work, the most of a
    # big export's)
    written = list(dict.fromkeys(scene.nodes[i].data for i in order if i not in targets
                                 and scene.nodes[i].kind == "MESH" and scene.nodes[i].data in mesh_world))
    mesh_parts = dict(zip(written, map_two(
        lambda d: mesh_chunks(scene.meshes[d], mesh_world[d], [mat_names[s] if 0 <= s < len(mat_names) else ""
                                                              for s in scene.meshes[d].materials]),
        written, threaded=sum(len(scene.meshes[d].corners) for d in written) >= PARALLEL_CORNERS)))

    def parent_of(i: int) -> tuple[int, np.ndarray, bool]:
        p = scene.nodes[i].parent
        if options.use_hierarchy and p >= 0 and p in kf_id:
            return kf_id[p], worlds_3ds[p], p in flipped
        return NO_PARENT, np.eye(4), False

    for i in order:
        node = scene.nodes[i]
        if i in targets:
            continue                            # written with its camera or light
        pid, pworld, pflip = parent_of(i)
        local = axes.inverse_or_identity(pworld) @ worlds_3ds[i]
        ch = mirror_channels(channels.get(i, {}), pflip, i in flipped)
        if ch and not np.allclose(node.matrix_parent_inverse, np.eye(4)):
            warnings.warn(f"node {node.name!r}: animation under a parent inverse matrix is written as is")
        name = obj_names.get(i, node.name)
        if node.kind == "MESH" and 0 <= node.data < len(scene.meshes):
            mesh = scene.meshes[node.data]
            if node.data not in mesh_object:
                parts = mesh_parts[node.data]
                if len(parts) > 1:
                    warnings.warn(f"mesh {mesh.name!r} has more than 65535 vertices or faces: "
                                  f"written as {len(parts)} objects")
                pnames = part_names(name, len(parts), limit, taken, warnings)
                for pname, tri in zip(pnames, parts):
                    obj = ed.add(ids.OBJECT, pname)
                    obj.children.append(tri)
                    _object_flags(obj, node)
                mesh_object[node.data] = pnames
            inst = str(node.extras.get("3ds_instance", "" if i in obj_names else node.name))
            first = mesh_object[node.data][0]
            if inst.startswith(first + ".") and "3ds_instance" not in node.extras:
                inst = inst[len(first) + 1:]          # "Box.2" of object "Box" reads back as "Box.2"
            tracks = node_tracks("MESH", node, local, ch, None)
            for k, pname in enumerate(mesh_object[node.data]):
                nid = len(kf_nodes)
                kf_nodes.append(node_chunk(ids.OBJECT_NODE_TAG, nid, pname, pid, tracks, inst, node.hide))
                if k == 0:
                    kf_id[i] = nid
        elif node.kind == "CAMERA" and 0 <= node.data < len(scene.cameras):
            _camera(scene, ed, kf_nodes, kf_id, i, name, pid, local, worlds, ch, channels)
        elif node.kind == "LIGHT" and 0 <= node.data < len(scene.lights):
            _light(scene, ed, kf_nodes, kf_id, i, name, pid, local, worlds, ch, channels, warnings)
        else:
            nid = len(kf_nodes)
            kf_nodes.append(node_chunk(ids.OBJECT_NODE_TAG, nid, "$$$DUMMY", pid,
                                       node_tracks("EMPTY", node, local, ch, None), name, node.hide))
            kf_id[i] = nid

    kf = root.add(ids.KFDATA)
    start = scene.frame_start if scene.frame_start is not None else 0
    end = scene.frame_end if scene.frame_end is not None else 100
    if anim is not None and len(scene.animations) > 1:
        start, end = anim.frame_start, anim.frame_end
    title = anim.name if anim is not None else (scene.animations[0].name if scene.animations else "LGF")
    if start < 0 or any(len(c.frames) and np.min(c.frames) < -0.5 for a in scene.animations for c in a.channels):
        warnings.warn("a .3ds file's frames start at 0: what comes before frame 0 is written at frame 0")
    start, end = (int(min(max(round(x), 0), MAX_FRAME)) for x in (start, end))
    kf.add(ids.KFHDR, (5, title[:12], end))
    kf.add(ids.KFSEG, (start, end))
    kf.add(ids.KFCURTIME, start)
    kf.children += kf_nodes
    return Model(root)


def _object_flags(obj: Chunk, node) -> None:
    if node.hide:
        obj.add(ids.OBJ_HIDDEN)
    if not node.cast_shadow:
        obj.add(ids.OBJ_DOESNT_CAST)
    for cid, key in ((ids.OBJ_DONT_RCVSHADOW, "no_receive_shadows"), (ids.OBJ_MATTE, "matte")):
        if node.extras.get("3ds_" + key):
            obj.add(cid)


def _aim(scene: Scene, i: int, worlds) -> tuple[np.ndarray, np.ndarray, int]:
    """Position, target position (world) and target node (-1 = none: 100 units along -Z)."""
    pos = worlds[i][:3, 3]
    t = scene.nodes[i].target
    if 0 <= t < len(scene.nodes):
        return pos, worlds[t][:3, 3], t
    return pos, pos - worlds[i][:3, 2] / max(np.linalg.norm(worlds[i][:3, 2]), 1e-12) * 100.0, -1


def _target_node(tag, kf_nodes, name, scene, t, tgt, channels):
    """A camera/spot target node (0xB004/0xB006), named like its owner, placed in world space."""
    ch = channels.get(t, {}) if t >= 0 else {}
    local = np.eye(4)
    local[:3, 3] = tgt
    node = scene.nodes[t] if t >= 0 else Node(f"{name}.Target")
    kf_nodes.append(node_chunk(tag, len(kf_nodes), name, NO_PARENT, node_tracks("TARGET", node, local, ch, None)))


def _camera(scene, ed, kf_nodes, kf_id, i, name, pid, local, worlds, ch, channels) -> None:
    node, cam = scene.nodes[i], scene.cameras[scene.nodes[i].data]
    pos, tgt, t = _aim(scene, i, worlds)
    lens = float(kept(cam.extras, "3ds_lens", lens_3ds(cam.lens)))
    roll_frames, rolls, roll = roll_keys(scene, i, worlds, pos, tgt, channels)
    obj = ed.add(ids.OBJECT, name)
    c = obj.add(ids.N_CAMERA, (*map(float, pos), *map(float, tgt), roll, lens))
    c.add(ids.CAM_RANGES, (float(cam.clip_start), float(cam.clip_end)))
    _object_flags(obj, node)
    nid = len(kf_nodes)
    kf_nodes.append(node_chunk(ids.CAMERA_NODE_TAG, nid, name, pid, node_tracks("CAMERA", node, local, ch, lens,
                                                                              (roll_frames, rolls)),
                               hidden=node.hide))
    kf_id[i] = nid
    _target_node(ids.TARGET_NODE_TAG, kf_nodes, name, scene, t, tgt, channels)


SUN_CONE = 45.0           # degrees: the spot a sun becomes (overshoot lights beyond it too)


def _light(scene, ed, kf_nodes, kf_id, i, name, pid, local, worlds, ch, channels, warnings) -> None:
    """Omni or spot. 3DS has no sun: it becomes an overshoot spot (3D Studio's way to light the
    whole scene from one direction: it lights beyond its cone) aimed the same way; an area
    light becomes an omni light at its centre. Both are reported."""
    node, light = scene.nodes[i], scene.lights[scene.nodes[i].data]
    ex = light.extras
    sun = light.type == "SUN"
    if sun:
        warnings.warn(f"sun light {name!r} written as a spot light aimed the same way, lighting beyond its "
                      "cone (overshoot): 3DS has no directional light")
    elif light.type == "AREA":
        warnings.warn(f"area light {name!r} written as an omni light at its centre: 3DS has no area light")
    pos = worlds[i][:3, 3]
    obj = ed.add(ids.OBJECT, name)
    c = obj.add(ids.N_DIRECT_LIGHT, tuple(map(float, pos)))
    c.add(ids.COLOR_F, tuple(float(x) for x in light.color[:3]))
    if ex.get("3ds_off"):
        c.add(ids.DL_OFF)
    if light.use_attenuation:
        c.add(ids.DL_ATTENUATE)
    c.add(ids.DL_INNER_RANGE, float(light.attenuation_start))
    c.add(ids.DL_OUTER_RANGE, float(light.attenuation_end))
    per = 1.0 if sun else ENERGY_PER_MULTIPLIER        # a sun's strength is already about 1
    mult = float(kept(ex, "3ds_multiplier", light.energy / per)) if not ex.get("3ds_off") \
        else float(ex.get("3ds_multiplier", 1.0))
    c.add(ids.DL_MULTIPLIER, mult)
    spot = light.type in ("SPOT", "SUN")
    if spot:
        _, tgt, t = _aim(scene, i, worlds)
        fall = SUN_CONE if sun else math.degrees(light.spot_size)
        fall = float(kept(ex, "3ds_falloff", fall))
        hot = float(kept(ex, "3ds_hotspot", fall * (1.0 - (0.0 if sun else light.spot_blend))))
        s = c.add(ids.DL_SPOTLIGHT, (*map(float, tgt), hot, fall))
        if light.cast_shadow:
            s.add(ids.DL_SHADOWED)
        if sun or ex.get("3ds_overshoot"):
            s.add(ids.DL_SPOT_OVERSHOOT)
        if "3ds_roll" in ex:
            s.add(ids.DL_SPOT_ROLL, float(ex["3ds_roll"]))
    elif light.cast_shadow:
        c.add(ids.DL_SHADOWED)
    _object_flags(obj, node)
    nid = len(kf_nodes)
    tag = ids.SPOTLIGHT_NODE_TAG if spot else ids.LIGHT_NODE_TAG
    kf_nodes.append(node_chunk(tag, nid, name, pid, node_tracks("SPOT" if spot else "LIGHT", node, local, ch, None,
                                                                fall_static=fall if spot else 45.0),
                               hidden=node.hide))
    kf_id[i] = nid
    if spot:
        _target_node(ids.L_TARGET_NODE_TAG, kf_nodes, name, scene, t, tgt, channels)
