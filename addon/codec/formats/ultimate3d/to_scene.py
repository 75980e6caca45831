"""Model -> neutral Scene. U3D is left-handed (X right, Y up, Z into the screen);
Blender (x, y, z) = U3D (X, Z, Y), a reflection, so every triangle is reversed.

One object per (iLOD, iMeshPerFrame); frames of a bone-less model become
shape keys keyed so that Blender frame f shows file frame f, or, when a frame
has its own vertex count, triangles, materials or texture coordinates, one
object per frame shown in turn; bones get unique non-empty names (the file's
name kept in "u3d_name"); LoD > 0 objects
go to collections "LOD<i>"; bones become one armature whose rest matrices are
inverse(MeshToBoneSpace) for a skinned model (the notes: already model space),
else the pose of frame 0; appended meshes keep MeshToBone relative to it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import animation
from ...errors import Warnings
from ...meshops import weld_by_normals
from ...scene import Animation, Armature, Bone as SBone, Channel, Marker, Mesh as SMesh, Node, Scene, ShapeKey, Skin
from . import normals as ncodec
from .conventions import FILE_NAME, SWAP, matrix_to_blender
from .convert_v1 import from_v1
from .materials import material_to_scene, uv_name
from .model import Mesh, Model, ModelV1
from .options import ImportOptions
from .transforms import affine, invertible, key_frames, local_matrices, pose_channels, safe_inverse, slerp_frames
from .validate import ROOT_V2, bone_depths
from .weights import sum_repeated


def _triangles(m: Mesh, owners: dict) -> np.ndarray:
    if m.triangles_owned:
        return m.triangles
    return owners[(m.i_lod, m.i_mesh_per_frame)].triangles    # TrianglesOwned = false: frame-0 indices


def _materials_of(m: Mesh, owners: dict, n_material: int) -> np.ndarray:
    src = m if m.triangles_owned else owners[(m.i_lod, m.i_mesh_per_frame)]
    mats = src.triangle_material.astype(np.int64)
    return np.where(mats < n_material, mats, 0)


def scene_mesh(m: Mesh, tris: np.ndarray, tri_mat: np.ndarray, mat_index: dict[int, int]) -> SMesh:
    """One U3D mesh -> Scene mesh: axes swapped, winding reversed, V flipped, per-corner data."""
    corners = tris[:, [0, 2, 1]].reshape(-1).astype(np.uint32)   # reverse: Blender corners = i0, i2, i1
    out = SMesh(name=m.name, positions=np.ascontiguousarray(m.positions[:, SWAP], np.float32),
                corners=corners, faces=np.arange(0, len(corners), 3, dtype=np.uint32))
    n = ncodec.decode(m.normals)[:, SWAP] * np.float32(m.normal_scalar)
    out.normals = n[corners]
    dims = [0 if t is None else t.shape[1] for t in m.texcoords]
    present = [i for i, d in enumerate(dims) if d]
    tangent_sets = set(present[-2:]) if m.valid_tangent_frames else set()
    for i in present:
        tc = m.texcoords[i][corners]
        if i in tangent_sets:
            out.corner_attributes[f"u3d_tangent_frame{i}"] = tc.astype(np.float32)
        elif dims[i] == 2:
            uv = tc.astype(np.float32)
            uv[:, 1] = 1.0 - uv[:, 1]          # Direct3D (0, 0) is the top left
            out.uv_layers[uv_name(i)] = uv
        else:
            out.corner_attributes[f"u3d_texcoord{i}"] = tc.astype(np.float32)
    used, inverse = np.unique(tri_mat, return_inverse=True)
    out.materials = [mat_index.get(int(u), -1) for u in used]
    out.face_material = inverse.astype(np.int32)
    out.extras.update({"u3d_normal_scalar": float(m.normal_scalar),
                       "u3d_valid_tangent_frames": int(m.valid_tangent_frames),
                       "u3d_mesh_per_frame": m.i_mesh_per_frame})
    if m.extra:
        out.extras["u3d_extra"] = m.extra.hex()
    out.extras.update(m.extras)
    return out


def _skin(m: Mesh) -> Skin:
    w = m.skin_weights.astype(np.float32)
    k = w.shape[1] + 1
    weights = np.concatenate([w, 1.0 - w.sum(1, keepdims=True)], 1)   # the implied last weight
    # a bone may be listed twice for one vertex (indices 0, 1, 0): its weights add up
    joints, weights = sum_repeated(m.bone_indices[:, :k], weights)
    return Skin(armature=0, joints=joints.astype(np.int32), weights=weights.astype(np.float32))


def _same_set(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return np.array_equal(a, b, equal_nan=True)


class _Builder:
    def __init__(self, model: Model, options: ImportOptions, warnings: Warnings):
        self.model, self.options, self.warnings = model, options, warnings
        self.h = model.header
        self.sc = Scene()
        self.stem = Path(model.source).stem if model.source else "u3d"
        self.channels: list[Channel] = []
        self.arm_node = -1
        self.rest_world: list[np.ndarray] = []
        self.bone_length = 0.1
        self.bone_names: list[str] = []

    # -- materials -------------------------------------------------------------
    def materials(self) -> dict[int, int]:
        model_dir = str(Path(self.model.source).parent) if self.model.source else ""
        mat_index = {}
        for m in self.model.materials:
            mat_index[m.i_material] = len(self.sc.materials)
            self.sc.materials.append(material_to_scene(m, self.sc, model_dir, self.options.texture_search_folder,
                                                       list(self.h.tex_coord_dimension), self.warnings))
        return mat_index

    # -- skeleton --------------------------------------------------------------
    def skeleton(self) -> None:
        bones = self.model.bones
        if not bones:
            return
        # read() warned about matrices that are not affine: only their affine part is used
        m2b = [affine(b.mesh_to_bone) for b in bones]
        parents = [b.i_parent for b in bones]
        depth = bone_depths(parents, ROOT_V2)
        rest = [None] * len(bones)
        skinned = self.h.n_skin_weight > 0
        for i in sorted(range(len(bones)), key=lambda j: depth[j]):
            b = bones[i]
            if skinned and len(m2b[i]) and not invertible(m2b[i][0]):
                self.warnings.warn(f"bone {b.name!r}: MeshToBoneSpace cannot be inverted; rest from frame 0")
            if skinned and len(m2b[i]) and invertible(m2b[i][0]):
                # the notes: the skinned mesh sits at identity at rest, so inverse(MeshToBone) is already
                # the bone's model-space rest; no parent product
                rest[i] = safe_inverse(matrix_to_blender(m2b[i][0]))
            else:
                # rigid meshes do not define a rest pose: use the pose of frame 0
                local = local_matrices(b.scaling_keys, b.translation_keys, b.rotation_keys, np.zeros(1))[0]
                rest[i] = local if b.i_parent == ROOT_V2 else rest[b.i_parent] @ local
                if not invertible(rest[i]):
                    self.warnings.warn(f"bone {b.name!r}: degenerate frame-0 transform; identity rest used")
                    rest[i] = np.eye(4) if b.i_parent == ROOT_V2 else rest[b.i_parent].copy()
        self.rest_world = rest
        self.bone_length = bone_length(rest)
        self.bone_names = names = unique_bone_names([b.name for b in bones])
        renamed = [i for i, b in enumerate(bones) if names[i] != b.name]
        if renamed:
            self.warnings.warn(f"{len(renamed)} bone(s) with an empty or repeated name renamed (e.g. "
                               f"{bones[renamed[0]].name!r} -> {names[renamed[0]]!r}); export writes the file's names")
        arm = Armature(name=f"{self.stem}_armature")
        for i, b in enumerate(bones):
            arm.bones.append(SBone(name=names[i], parent=-1 if b.i_parent == ROOT_V2 else b.i_parent, matrix=rest[i],
                                   length=self.bone_length,
                                   extras={"u3d_bone_frame": float(b.bone_frame),
                                           "u3d_pass_on_bone_frame": bool(b.pass_on_bone_frame)}))
            if names[i] != b.name:
                arm.bones[-1].extras[FILE_NAME] = b.name     # the file's own name, for the round trip
            if b.extra:
                arm.bones[-1].extras["u3d_extra"] = b.extra.hex()
        self.sc.armatures.append(arm)
        self.arm_node = self.sc.add_node(Node(name=arm.name, kind="ARMATURE", data=0))
        for i, b in enumerate(bones):
            frames = np.union1d(key_frames(b.scaling_keys, b.translation_keys, b.rotation_keys),
                                slerp_frames(b.rotation_keys, self.h.n_frame))
            if frames.max() >= self.h.n_frame:
                self.warnings.warn(f"bone {b.name!r}: keys after the last frame ({self.h.n_frame - 1}) ignored")
                frames = np.unique(np.append(frames[frames < self.h.n_frame], self.h.n_frame - 1))
            local = local_matrices(b.scaling_keys, b.translation_keys, b.rotation_keys, frames.astype(np.float64))
            parent_rest = np.eye(4) if b.i_parent == ROOT_V2 else rest[b.i_parent]
            rest_local = safe_inverse(parent_rest) @ rest[i]
            if not invertible(rest_local):
                self.warnings.warn(f"bone {b.name!r}: degenerate rest transform; its keys are not imported")
                continue
            t, q, s = pose_channels(rest_local, local)
            f = frames.astype(np.float64)
            for path, vals in (("location", t), ("rotation_quaternion", q), ("scale", s)):
                self.channels.append(Channel(target=self.arm_node, path=path, frames=f, values=vals, bone=names[i]))

    # -- meshes ----------------------------------------------------------------
    def meshes(self, mat_index: dict[int, int]) -> None:
        h, meshes = self.h, self.model.meshes
        owners = {(m.i_lod, m.i_mesh_per_frame): m for m in meshes if m.i_frame == 0 and m.triangles_owned}
        appended: dict[int, list[tuple[int, np.ndarray]]] = {}
        for bi, b in enumerate(self.model.bones):
            for mi, m2b in zip(b.meshes, affine(b.mesh_to_bone)):
                appended.setdefault(int(mi), []).append((bi, m2b))
        groups: dict[tuple[int, int], dict[int, int]] = {}
        for i, m in enumerate(meshes):
            groups.setdefault((m.i_lod, m.i_mesh_per_frame), {})[m.i_frame] = i
        for (lod, mpf), frames in sorted(groups.items()):
            first = frames[min(frames)]
            m = meshes[first]
            sm = scene_mesh(m, _triangles(m, owners), _materials_of(m, owners, h.n_material), mat_index)
            if m.skin_weights is not None and self.arm_node >= 0:
                sm.skin = _skin(m)
            extras = {"u3d_lod": lod}
            if lod < len(h.lod_max_camera_distance):
                extras["u3d_lod_max_camera_distance"] = float(h.lod_max_camera_distance[lod])
            nodes = self._mesh_nodes(sm, first, appended, lod, extras)
            if h.n_bone == 0 and len(frames) > 1:
                self._frames(sm, nodes, frames, owners, mat_index, lod, extras)

    def _mesh_nodes(self, sm: SMesh, index: int, appended: dict, lod: int, extras: dict) -> list[int]:
        self.sc.meshes.append(sm)
        data = len(self.sc.meshes) - 1
        coll = f"LOD{lod}" if lod else ""
        targets = [(-1, None)] if sm.skin is not None or index not in appended else appended[index]
        out = []
        for bi, m2b in targets:
            node = Node(name=sm.name or f"mesh{index}", kind="MESH", data=data, collection=coll, hide=lod > 0,
                        extras=dict(extras))
            if sm.skin is not None:
                node.parent = self.arm_node
            elif bi >= 0:
                # MeshToWorld = MeshToBone * BoneToWorld: MeshToBone is the placement in the bone's frame
                node.parent, node.parent_bone = self.arm_node, self.bone_names[bi]
                node.matrix = matrix_to_blender(m2b)
            out.append(self.sc.add_node(node))
        return out

    def _frames(self, sm: SMesh, nodes: list[int], frames: dict[int, int], owners, mat_index, lod, extras) -> None:
        """Frame-based animation: one shape key per file frame, keyed to show frame f at frame f."""
        meshes = self.model.meshes
        order = sorted(frames)
        if not self._shape_key_frames(frames, owners):
            self._frame_objects(frames, owners, mat_index, lod, extras, nodes)
            return
        sm.shape_keys.append(ShapeKey(name="Basis", positions=sm.positions))
        interp = "LINEAR" if self.h.vertex_tweening else "CONSTANT"
        sm.extras["u3d_vertex_tweening"] = bool(self.h.vertex_tweening)
        for f in order[1:]:
            name = f"frame_{f}"
            sm.shape_keys.append(ShapeKey(name=name, positions=np.ascontiguousarray(
                meshes[frames[f]].positions[:, SWAP], np.float32)))
            kf = np.array([k for k in (f - 1, f, f + 1) if 0 <= k < self.h.n_frame], np.float64)
            vals = (kf == f).astype(np.float64)[:, None]
            for n in nodes:
                self.channels.append(Channel(target=n, path=f'key_blocks["{name}"].value', frames=kf, values=vals,
                                             interpolation=interp))

    def _shape_key_frames(self, frames: dict[int, int], owners) -> bool:
        """Shape keys hold positions only: every frame must share frame 0's vertex count, triangles,
        triangle materials and texture coordinates."""
        meshes, n_mat = self.model.meshes, self.h.n_material
        order = sorted(frames)
        base = meshes[frames[order[0]]]
        tris, mats = _triangles(base, owners), _materials_of(base, owners, n_mat)
        for f in order[1:]:
            m = meshes[frames[f]]
            if len(m.positions) != len(base.positions):
                return False
            if m.triangles_owned and not (np.array_equal(m.triangles, tris) and
                                          np.array_equal(_materials_of(m, owners, n_mat), mats)):
                return False
            if not all(_same_set(a, b) for a, b in zip(m.texcoords, base.texcoords)):
                return False
        return True

    def _frame_objects(self, frames, owners, mat_index, lod, extras, nodes) -> None:
        """Frames that shape keys cannot hold (another vertex count, their own triangles, materials or
        texture coordinates): one object per frame, shown in turn. "u3d_frame_group" and "u3d_frame" let
        the export put them back together as the frames of one mesh."""
        meshes = self.model.meshes
        order = sorted(frames)
        group = frames[order[0]]        # the file index of the first frame's mesh: unique in the file
        name = meshes[group].name
        self.warnings.warn(f"mesh {name!r}: its frames differ in vertex count, triangles, materials or texture "
                           "coordinates: imported as one object per frame")
        tween = bool(self.h.vertex_tweening)
        for n in nodes:
            self.sc.nodes[n].extras.update(u3d_frame=order[0], u3d_frame_group=group)
            self.sc.meshes[self.sc.nodes[n].data].extras["u3d_vertex_tweening"] = tween
        for f in order[1:]:
            m = meshes[frames[f]]
            sm = scene_mesh(m, _triangles(m, owners), _materials_of(m, owners, self.h.n_material), mat_index)
            sm.name = f"{m.name}_frame{f}"
            sm.extras["u3d_vertex_tweening"] = tween
            nodes += self._mesh_nodes(sm, frames[f], {}, lod, dict(extras, u3d_frame=f, u3d_frame_group=group))
        last = self.h.n_frame - 1
        for i, (f, n) in enumerate(zip(order, nodes)):
            # shown from its frame until the next frame's mesh takes over (no key past the file's last frame)
            until = order[i + 1] if i + 1 < len(order) else last + 1
            kf = np.array(sorted({0.0, float(f), float(until)}))
            kf = kf[kf <= last]
            vis = ((kf < f) | (kf >= until)).astype(np.float64)[:, None]
            for path in ("hide_viewport", "hide_render"):
                self.channels.append(Channel(target=n, path=path, frames=kf, values=vis, interpolation="CONSTANT"))

    # -- animations ------------------------------------------------------------
    def animations(self) -> None:
        last = self.h.n_frame - 1
        self.sc.frame_start, self.sc.frame_end = 0, last
        actions = self.model.actions
        if not actions:
            if self.channels:
                self.sc.animations.append(Animation(name=self.stem, frame_start=0, frame_end=last,
                                                    channels=self.channels, extras={"u3d_whole": True}))
            return
        for name, first, end in actions:
            if end < first or end > last:
                self.warnings.warn(f"action range {name!r} [{first}, {end}] is reversed or reaches past the "
                                   f"file's last frame ({last}); it plays the frames the file has")
            lo, hi = min(first, last), min(max(first, end), last)        # the file's frames, no more
            self.sc.animations.append(Animation(name=name, frame_start=lo, frame_end=hi,
                                                channels=[slice_channel(c, lo, hi) for c in self.channels],
                                                # NLA strips, one per range: an active action would hide the others
                                                placement="NLA", extras={"u3d_action_range": [first, end]}))
            self.sc.markers += [Marker(name, lo), Marker(f"{name}_end", hi)]

    def build(self) -> Scene:
        mat_index = self.materials()
        self.skeleton()
        self.meshes(mat_index)
        if self.options.normals != "KEEP":
            # U3D stores a vertex per (point, normal, UV): welded, the seams become UV seams; one
            # object per frame keeps the file's vertices, which its frames share by index
            per_frame = {n.data for n in self.sc.nodes if n.kind == "MESH" and "u3d_frame_group" in n.extras}
            for i, sm in enumerate(self.sc.meshes):
                if i not in per_frame:
                    weld_by_normals(sm, self.options.normals == "EXACT", self.warnings)
        self.animations()
        h = self.h
        model_wide = dict(self.model.extras)
        if h.shader_pack_template_exists:
            model_wide["u3d_shader_pack_template"] = (h.shader_pack_template or b"").hex()
        # model-wide values ride on every mesh object (the LoD distances on each LoD's objects)
        for n in self.sc.nodes:
            if n.kind == "MESH":
                n.extras.update(model_wide)
        return self.sc


def unique_bone_names(names: list[str]) -> list[str]:
    """Every bone a unique, non-empty name (a channel of bone "" means the object itself):
    "bone<i>" for an empty name, "<name>.<i>" for a repeat, in file order."""
    used: set[str] = set()
    out = []
    for i, name in enumerate(names):
        cand = name if name and name not in used else (f"{name}.{i}" if name else f"bone{i}")
        k = 0
        while cand in used:
            k += 1
            cand = f"{name or 'bone'}.{i}.{k}"
        used.add(cand)
        out.append(cand)
    return out


def bone_length(rest: list[np.ndarray]) -> float:
    """One display length for every bone (U3D bones have none), explicit so that bone parenting can undo it."""
    heads = np.array([m[:3, 3] for m in rest])
    span = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 1.0
    return max(span * 0.05, 1e-3)


def slice_channel(c: Channel, first: int, last: int) -> Channel:
    """The keys of one action range, with its ends evaluated when no key sits there."""
    f = c.frames
    inside = (f >= first) & (f <= last)
    frames = np.unique(np.concatenate([f[inside], [first, last]]).astype(np.float64))
    values = animation.evaluate(c, frames)
    if c.path == "rotation_quaternion":
        values = animation.unit(values)
    return Channel(target=c.target, path=c.path, frames=frames, values=values, bone=c.bone,
                   interpolation=c.interpolation)


def to_scene(model: Model | ModelV1, options: ImportOptions, warnings: Warnings) -> Scene:
    if isinstance(model, ModelV1):
        model = from_v1(model, warnings)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):   # NaN/inf floats in a file stay data
        return _Builder(model, options, warnings).build()
