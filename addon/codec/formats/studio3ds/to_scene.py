"""Model -> neutral Scene for .3ds.

3DS coordinates are right-handed with Z up and UV origin bottom-left, like
Blender's, so the basis is the identity and no winding change comes from axes;
mesh points are stored in world space and are made local here.

A mirrored object (0x4160 with a negative determinant) is read as lib3ds and
assimp read it: the local mesh is flipped in X (local = X_FLIP * inverse(0x4160)
* points), so the node matrix from the tracks (positive scale as 3ds writes it)
puts the points back where they were stored, with the file's face order; no
object gets a negative scale and the normals stay as the stored winding has them.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import axes
from ...errors import Warnings
from ...scene import Animation, Channel, Mesh, Node, Scene
from . import ids
from .camlight import build_camera, build_light, look_at
from .camroll import orient_target, target_axes
from .conventions import X_FLIP
from .keyframer import KfNode, local_matrices, order_parents_first, read_nodes, world_matrices
from .materials import TextureFinder, build_material
from .mesh_in import NORMAL_MODES, MeshQueue
from .model import Chunk, Model
from .options import ImportOptions
from .tracks_in import node_channels
from .world import read_world

HIDDEN = 0x800               # 0xB010 flags1 bit


def mesh_matrix(tri: Chunk, warnings: Warnings, path: str) -> np.ndarray:
    """0x4160 as a 4x4 column-vector matrix: the rows as written are its columns."""
    m = np.eye(4)
    v = tri.value(ids.MESH_MATRIX)
    if v is None or len(v) < 12:
        return m
    m[:3, :4] = np.asarray(v[:12], np.float64).reshape(4, 3).T
    if abs(axes.det3(m[:3, :3])) < 1e-12:
        warnings.warn("object matrix (0x4160) is singular; identity used", tri.offset, path + "/MATRIX")
        return np.eye(4)
    return m


def mirror_fix(m: np.ndarray) -> np.ndarray:
    """X_FLIP when a 0x4160 matrix mirrors (lib3ds and assimp flip the mesh's X then), else identity."""
    return X_FLIP.copy() if axes.det3(np.asarray(m)[:3, :3]) < 0 else np.eye(4)


def _translate(v) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = v
    return m


class _Builder:
    def __init__(self, model: Model, options: ImportOptions, warnings: Warnings):
        self.sc = Scene()
        self.opt = options
        self.w = warnings
        self.ed = model.editor()
        self.objects: dict[str, Chunk] = {}
        self.mesh_cache: dict[tuple, int] = {}
        self.used: set[str] = set()
        self.mat_slots: dict[str, int] = {}
        self.chunk_roll: dict[int, float] = {}          # keyframer camera node -> its 0x4700 roll
        self.roll_channels: list[Channel] = []          # the targets' baked orientation (camroll.py)
        self.weld_stats: dict[str, int] = {}
        self.mesh_queue = MeshQueue(self.mat_slots, warnings, options.normals, self.weld_stats)
        if options.normals not in NORMAL_MODES:
            raise ValueError(f"normals must be one of {', '.join(NORMAL_MODES)}, not {options.normals!r}")
        if self.ed is None:
            warnings.warn("no 3D editor chunk (0x3D3D): the file holds no objects", 0, "MAIN")
            return
        finder = TextureFinder(model.source, options.image_search_folder)
        image_index: dict[str, int] = {}
        for c in self.ed.find_all(ids.MAT_ENTRY):
            mat = build_material(c, self.sc.images, image_index, finder, warnings)
            if mat.name in self.mat_slots:
                warnings.warn(f"material {mat.name!r} defined twice; the first one is used", c.offset, "MATERIAL")
                continue
            self.mat_slots[mat.name] = len(self.sc.materials)
            self.sc.materials.append(mat)
        self.sc.world = read_world(self.ed, self.sc)
        if self.sc.world is not None and self.sc.world.image >= 0:
            img = self.sc.images[self.sc.world.image]
            img.filepath = finder.find(img.name)
            if not img.filepath:
                warnings.warn(f"background image {img.name!r} not found", self.ed.find(ids.BIT_MAP).offset,
                              "MAIN/EDITOR/BIT_MAP")
        for o in self.ed.find_all(ids.OBJECT):
            if o.data in self.objects:
                warnings.warn(f"object name {o.data!r} used twice; the second is imported as a copy", o.offset,
                              "EDITOR")
                self.objects[f"{o.data}#{o.offset}"] = o
            else:
                self.objects[o.data] = o

    # -- pieces -------------------------------------------------------------
    def _mesh(self, name: str, tri: Chunk, to_local: np.ndarray, key: tuple) -> int:
        if key not in self.mesh_cache:
            path = f'MAIN/EDITOR/OBJECT "{name}"/TRIMESH'
            self.mesh_cache[key] = len(self.sc.meshes)
            self.mesh_queue.add(self.sc.meshes, name, tri, to_local, path)
        return self.mesh_cache[key]

    def _object_flags(self, node: Node, obj: Chunk) -> None:
        node.hide = node.hide or obj.has(ids.OBJ_HIDDEN)
        node.cast_shadow = not obj.has(ids.OBJ_DOESNT_CAST)
        for cid, key in ((ids.OBJ_DONT_RCVSHADOW, "no_receive_shadows"), (ids.OBJ_MATTE, "matte"),
                         (ids.OBJ_FAST, "fast"), (ids.OBJ_FROZEN, "frozen"), (ids.OBJ_VIS_LOFTER, "lofter")):
            if obj.has(cid):
                node.extras["3ds_" + key] = 1

    def _add(self, node: Node) -> int:
        return self.sc.add_node(node)

    def _target(self, name: str, pos, parent: int = -1) -> int:
        return self._add(Node(name=f"{name}.Target", kind="EMPTY", matrix=_translate(pos), parent=parent,
                              extras={"3ds_target_of": name}))

    def static_object(self, name: str, obj: Chunk) -> None:
        """An object without keyframer node: its points are already in place."""
        tri = obj.find(ids.N_TRI_OBJECT)
        cam = obj.find(ids.N_CAMERA)
        light = obj.find(ids.N_DIRECT_LIGHT)
        if tri is not None:
            m = mesh_matrix(tri, self.w, f'MAIN/EDITOR/OBJECT "{name}"/TRIMESH')
            f = mirror_fix(m)
            # placed = (m @ f) @ (f @ inverse(m)) @ points: the stored points, without a mirrored object
            mesh = self._mesh(name, tri, f @ axes.inverse_or_identity(m), (name, "static"))
            node = Node(name=obj.data, kind="MESH", data=mesh, matrix=m @ f)
        elif cam is not None:
            data, pos, tgt, roll = build_camera(obj.data, cam)
            self.sc.cameras.append(data)
            node = Node(name=obj.data, kind="CAMERA", data=len(self.sc.cameras) - 1, matrix=look_at(pos, tgt, roll))
            node.target = self._target(obj.data, tgt)
            if roll:
                # the roll rides on the target's Z axis (camroll.py)
                node.target_up = True
                self.sc.nodes[node.target].matrix[:3, :3] = target_axes(pos, tgt, roll)
        elif light is not None:
            data, pos, tgt = build_light(obj.data, light)
            self.sc.lights.append(data)
            node = Node(name=obj.data, kind="LIGHT", data=len(self.sc.lights) - 1,
                        matrix=look_at(pos, tgt) if tgt is not None else _translate(pos))
            if tgt is not None:
                node.target = self._target(obj.data, tgt)
        else:
            self.w.warn(f"object {name!r} has no mesh, camera or light; imported as an empty", obj.offset, "EDITOR")
            node = Node(name=obj.data, kind="EMPTY")
        self._object_flags(node, obj)
        self._add(node)

    def keyframed(self, kf: Chunk, nodes: list[KfNode]) -> list[int]:
        """Scene node index per keyframer node (-1 when it made none)."""
        local0 = local_matrices(nodes, 0.0)
        world0 = world_matrices(nodes, 0.0, local0)
        scene_of = [-1] * len(nodes)
        by_name_tag = {(n.tag, n.name): i for i, n in enumerate(nodes)}
        for i in order_parents_first(nodes):
            n = nodes[i]
            parent = scene_of[n.parent] if n.parent >= 0 else -1
            parent_world = world0[n.parent] if n.parent >= 0 else np.eye(4)
            node = Node(name=n.display_name, matrix=local0[i], parent=parent,
                        hide=bool(n.flags1 & HIDDEN),
                        extras={"3ds_node_id": int(n.node_id), "3ds_node_flags": [int(n.flags1), int(n.flags2)]})
            if n.display_name != n.name:
                node.source_name = n.name
            if n.instance:
                node.extras["3ds_instance"] = n.instance
            if any(n.pivot):
                node.extras["3ds_pivot"] = [float(x) for x in n.pivot]
            obj = self.objects.get(n.name)
            if n.tag == ids.OBJECT_NODE_TAG and not n.is_dummy:
                tri = obj.find(ids.N_TRI_OBJECT) if obj is not None else None
                if tri is None:
                    self.w.warn(f"keyframer node {n.name!r} names no mesh object; imported as an empty",
                                n.chunk.offset, "KEYFRAMER")
                else:
                    self.used.add(n.name)
                    path = f'MAIN/EDITOR/OBJECT "{n.name}"/TRIMESH'
                    m = mesh_matrix(tri, self.w, path)
                    # lib3ds and assimp: local = T(-pivot) @ X_FLIP @ inverse(M) when M mirrors; the
                    # flip makes the transform det > 0, so the local mesh keeps the stored winding
                    to_local = _translate(-np.asarray(n.pivot)) @ mirror_fix(m) @ axes.inverse_or_identity(m)
                    node.kind, node.data = "MESH", self._mesh(n.name, tri, to_local,
                                                              (n.name, tuple(n.pivot)))
                    self._object_flags(node, obj)
            elif n.tag in (ids.CAMERA_NODE_TAG, ids.LIGHT_NODE_TAG, ids.SPOTLIGHT_NODE_TAG):
                self._camlight(n, i, node, obj, nodes, world0, by_name_tag, parent_world)
            elif n.tag in (ids.TARGET_NODE_TAG, ids.L_TARGET_NODE_TAG):
                node.name = f"{n.name}.Target"
                node.extras["3ds_target_of"] = n.name
            elif n.tag == ids.AMBIENT_NODE_TAG:
                continue
            scene_of[i] = self._add(node)
        # aim cameras and spots at their target nodes
        for i, n in enumerate(nodes):
            if n.tag in (ids.TARGET_NODE_TAG, ids.L_TARGET_NODE_TAG) and scene_of[i] >= 0:
                owner_tag = ids.CAMERA_NODE_TAG if n.tag == ids.TARGET_NODE_TAG else ids.SPOTLIGHT_NODE_TAG
                j = by_name_tag.get((owner_tag, n.name), -1)
                if j >= 0 and scene_of[j] >= 0:
                    self.sc.nodes[scene_of[j]].target = scene_of[i]
                    if owner_tag == ids.CAMERA_NODE_TAG and self.sc.nodes[scene_of[j]].kind == "CAMERA":
                        animate = self.opt.use_keyframes and not self.opt.apply_transform
                        ch = orient_target(nodes, j, i, self.sc.nodes[scene_of[j]], self.sc.nodes[scene_of[i]],
                                           scene_of[i], self.chunk_roll.get(j, 0.0), animate)
                        if ch is not None:
                            self.roll_channels.append(ch)
        return scene_of

    def _camlight(self, n, i, node, obj, nodes, world0, by_name_tag, parent_world) -> None:
        sub = None if obj is None else obj.find(ids.N_CAMERA if n.tag == ids.CAMERA_NODE_TAG else ids.N_DIRECT_LIGHT)
        if sub is None:
            self.w.warn(f"keyframer node {n.name!r} names no such camera or light; imported as an empty",
                        n.chunk.offset, "KEYFRAMER")
            return
        self.used.add(n.name)
        roll = 0.0
        if n.tag == ids.CAMERA_NODE_TAG:
            data, pos, tgt, roll = build_camera(n.name, sub)
            self.chunk_roll[i] = float(roll)
            self.sc.cameras.append(data)
            node.kind, node.data = "CAMERA", len(self.sc.cameras) - 1
            roll_track = n.tracks.get(ids.ROLL_TRACK)
            if roll_track is not None and len(roll_track):
                roll = float(roll_track.values[0, 0])
            tag = ids.TARGET_NODE_TAG
        else:
            data, pos, tgt = build_light(n.name, sub)
            self.sc.lights.append(data)
            node.kind, node.data = "LIGHT", len(self.sc.lights) - 1
            tag = ids.L_TARGET_NODE_TAG
        if ids.POS_TRACK in n.tracks and len(n.tracks[ids.POS_TRACK]):
            pos = world0[i][:3, 3]
        j = by_name_tag.get((tag, n.name), -1)
        if j >= 0 and ids.POS_TRACK in nodes[j].tracks and len(nodes[j].tracks[ids.POS_TRACK]):
            tgt = world0[j][:3, 3]
        world = look_at(pos, tgt, roll) if tgt is not None else _translate(pos)
        node.matrix = axes.inverse_or_identity(parent_world) @ world     # a zero-scale parent: no LinAlgError
        self._object_flags(node, obj)


def _filter(sc: Scene, kinds: set[str]) -> None:
    """Drop nodes of unwanted kinds; their children move up, keeping their world placement."""
    keep = [n.kind in kinds for n in sc.nodes]
    if all(keep):
        return
    new_index, out = {}, []
    for i, n in enumerate(sc.nodes):
        if keep[i]:
            new_index[i] = len(out)
            out.append(n)
    for n in out:
        while n.parent >= 0 and not keep[n.parent]:
            p = sc.nodes[n.parent]
            n.matrix = p.matrix @ n.matrix
            n.parent = p.parent
        n.parent = new_index.get(n.parent, -1)
        n.target = new_index.get(n.target, -1)
    for a in sc.animations:
        a.channels = [c for c in a.channels if keep[c.target]]
        for c in a.channels:
            c.target = new_index[c.target]
    sc.nodes[:] = out


def _report_welding(stats: dict, warnings: Warnings) -> None:
    if stats.get("differ"):
        warnings.warn(f"smoothing groups: {stats['differ']} of {stats['corners']} corners get other normals from "
                      "sharp edges than from their groups (groups that do not chain around a point); import with "
                      "Normals: Exact to keep the groups' normals")


def _apply_transforms(sc: Scene) -> None:
    """Bake each mesh node's frame-0 world matrix into its own copy of the mesh; unparent all."""
    worlds = [sc.world_matrix(i) for i in range(len(sc.nodes))]
    meshes: list[Mesh] = []
    for n, world in zip(sc.nodes, worlds):
        if n.kind == "MESH":
            src = sc.meshes[n.data]
            m = Mesh(name=src.name, positions=axes.apply_points(world, src.positions), corners=src.corners,
                     faces=src.faces, uv_layers=src.uv_layers, face_material=src.face_material,
                     materials=src.materials, face_attributes=src.face_attributes,
                     vertex_attributes=src.vertex_attributes, extras=dict(src.extras),
                     smoothing=src.smoothing)
            m.normals = axes.apply_normals(world, src.normals) if src.normals is not None else None
            if axes.mirrors(world):
                order = axes.reverse_winding(m.corners, m.faces)
                m.corners = m.corners[order]
                m.normals = m.normals[order] if m.normals is not None else None
                m.uv_layers = {k: v[order] for k, v in m.uv_layers.items()}
            n.data, world = len(meshes), np.eye(4)
            meshes.append(m)
        n.matrix, n.parent, n.matrix_parent_inverse = world, -1, np.eye(4)
    sc.meshes[:] = meshes


def _scale(sc: Scene, k: float) -> None:
    for n in sc.nodes:
        n.matrix = n.matrix.copy()
        n.matrix[:3, 3] *= k
    for m in sc.meshes:
        m.positions = m.positions * np.float32(k)
    for a in sc.animations:
        for c in a.channels:
            if c.path == "location":
                c.values = c.values * k


SEGMENT_MARGIN = 100_000     # frames past the last key (about an hour at 30 fps) a segment may still reach


def frame_range(kf: Chunk, warnings: Warnings) -> tuple[int, int] | None:
    """The 0xB008 segment (start, end), or, when it is implausible (end before start, or far past
    every key), the span of the keys, with a warning. The chunk itself keeps the raw values."""
    c = kf.find(ids.KFSEG)
    if c is None or c.data is None:
        return None
    start, end = int(c.data[0]), int(c.data[1])
    frames = [t.data.frames for t in kf.walk() if t.cid in ids.TRACKS and t.data is not None and len(t.data.frames)]
    last = max((int(np.max(f)) for f in frames), default=0)
    if start <= end <= max(last, start) + SEGMENT_MARGIN:
        return start, end
    first = min((int(np.min(f)) for f in frames), default=0)
    warnings.warn(f"implausible frame range {start}..{end} (keys span {first}..{last}); the keys' span is used",
                  c.offset, "MAIN/KEYFRAMER/KF_SEGMENT")
    return first, last


def to_scene(model: Model, options: ImportOptions, warnings: Warnings) -> Scene:
    # junk floats in a damaged file overflow harmlessly; what matters is reported as warnings
    with np.errstate(all="ignore"):
        return _to_scene(model, options, warnings)


def _to_scene(model: Model, options: ImportOptions, warnings: Warnings) -> Scene:
    b = _Builder(model, options, warnings)
    sc = b.sc
    if b.ed is None:
        return sc
    kf = model.keyframer()
    nodes = read_nodes(kf, warnings) if kf is not None and options.use_hierarchy else []
    scene_of = b.keyframed(kf, nodes) if nodes else []
    for name, obj in b.objects.items():
        if name not in b.used:
            b.static_object(name, obj)
    if kf is not None:
        seg = frame_range(kf, warnings)
        hdr = kf.value(ids.KFHDR)
        if seg is not None:
            sc.frame_start, sc.frame_end = seg
        anim = Animation(name=(hdr[1] if hdr and hdr[1] else Path(model.source).stem or "Scene"),
                         frame_start=float(seg[0]) if seg else 0.0, frame_end=float(seg[1]) if seg else 0.0)
        if hdr:
            anim.extras["3ds_kf_revision"] = int(hdr[0])
            if int(hdr[2]) <= max(seg[1] if seg else 0, 0) + SEGMENT_MARGIN:
                anim.extras["3ds_kf_length"] = int(hdr[2])
            else:
                warnings.warn(f"implausible animation length {int(hdr[2])} in the keyframer header; not kept",
                              kf.find(ids.KFHDR).offset, "MAIN/KEYFRAMER/KF_HEADER")
        if options.use_keyframes and not options.apply_transform:
            for i, n in enumerate(nodes):
                if scene_of[i] >= 0:
                    node = sc.nodes[scene_of[i]]
                    anim.channels += node_channels(n, scene_of[i], node, sc, warnings)
            anim.channels += b.roll_channels
        if anim.channels:
            sc.animations.append(anim)
    b.mesh_queue.finish()
    _report_welding(b.weld_stats, warnings)
    if options.apply_transform:
        _apply_transforms(sc)
    master = float(b.ed.value(ids.MASTER_SCALE, 1.0) or 1.0)
    if options.use_master_scale and master != 1.0:
        _scale(sc, master)
    types = options.object_types
    kinds = {k.strip().upper() for k in (types.split(",") if isinstance(types, str) else types) if k.strip()}
    _filter(sc, kinds)
    return sc
