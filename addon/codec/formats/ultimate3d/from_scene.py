"""Neutral Scene -> Model (v2, converted to v1 on request). The inverse of
import_scene: Blender (x, y, z) -> U3D (X, Z, Y), winding reversed, V flipped.

Skinning in U3D demands exactly one mesh: skinned objects and objects
parented to bones are merged into it; anything else is refused. Bone keys
are baked at every integer frame of the timeline. Objects that import made of
one mesh's frames go back as those frames; other animation (object transforms,
properties) cannot be stored and is reported.
"""
from __future__ import annotations

import re

import numpy as np

from ... import animation
from ...axes import apply_points, inverse_or_identity
from ...errors import UnsupportedFeature, Warnings
from ...option_rules import choices
from ...scene import Mesh as SMesh, Scene
from .convert_v1 import to_v1
from .crypto import password_key
from .animation_out import action_ranges, bone_keys, shape_key_frames, timeline
from .conventions import SWAP, file_bone_name, matrix_from_blender
from .mesh_out import VertexData, mesh_vertices, set_layout
from .skin_out import merge_skinned
from .materials import material_from_scene
from .model import FLT_MAX, ActionRanges, Bone, FileHeader, Material, Mesh, Model, ModelHeader, ModelV1
from .options import ExportOptions

LOD_COLLECTION = re.compile(r"^LOD(\d+)(?:\.\d+)?$", re.IGNORECASE)   # "LOD1", or "LOD1.001" once renamed


def _lod_of(node) -> int:
    m = LOD_COLLECTION.match(node.collection or "")
    return int(m.group(1)) if m else int(node.extras.get("u3d_lod", 0))


class _Exporter:
    def __init__(self, scene: Scene, v1: bool, warnings: Warnings):
        self.sc, self.v1, self.warnings = scene, v1, warnings
        self.mesh_nodes = [i for i, n in enumerate(scene.nodes) if n.kind == "MESH" and 0 <= n.data < len(scene.meshes)]
        self.arm_nodes = [i for i, n in enumerate(scene.nodes) if n.kind == "ARMATURE"
                          and 0 <= n.data < len(scene.armatures)]
        if len(self.arm_nodes) > 1:
            warnings.warn("only the first armature is exported (a .u3d model has one skeleton)")
        self.arm = self.arm_nodes[0] if self.arm_nodes else -1
        self.line = timeline(scene)
        for anim, _, frames in self.line.parts:
            if len(frames) > animation.MAX_BAKED_SPAN and any(c.interpolation != "LINEAR" for c in anim.channels):
                warnings.warn(f"animation {anim.name!r} runs {len(frames)} frames (more than "
                              f"{animation.MAX_BAKED_SPAN}): written at its key frames only, between which "
                              f"U3D plays straight lines")
        self.shape_key_nodes: set[int] = set()       # nodes whose shape-key animation became frames
        self.frame_object_nodes: set[int] = set()    # one object per frame, shown in turn

    def dropped_animation(self) -> None:
        """Warn, once per object, about animation a .u3d file cannot hold: only bone keys, shape keys
        baked into frames, and the visibility that shows frame objects in turn are exported."""
        bones = set()
        if self.arm >= 0:
            bones = {b.name for b in self.sc.armatures[self.sc.nodes[self.arm].data].bones}
        dropped: dict[int, set[str]] = {}
        for a in self.sc.animations:
            for c in a.channels:
                if c.target == self.arm and c.bone in bones:
                    continue
                if c.target in self.shape_key_nodes and c.path.startswith("key_blocks["):
                    continue
                if c.target in self.frame_object_nodes and c.path in ("hide_viewport", "hide_render"):
                    continue
                dropped.setdefault(c.target, set()).add(f"bone {c.bone!r}" if c.bone else c.path)
        for target, what in dropped.items():
            name = self.sc.nodes[target].name if 0 <= target < len(self.sc.nodes) else f"#{target}"
            self.warnings.warn(f"animation of {name!r} ({', '.join(sorted(what))}) not exported: a .u3d file "
                               "animates only bones and frame meshes (shape keys)")

    # -- skeleton ------------------------------------------------------------------
    def rest_world(self) -> list[np.ndarray]:
        self.rest = []
        if self.arm < 0:
            return []
        arm_world = self.sc.world_matrix(self.arm)
        bones = self.sc.armatures[self.sc.nodes[self.arm].data].bones
        self.rest = [arm_world @ np.asarray(b.matrix, np.float64) for b in bones]
        return self.rest

    def bones(self, rest: list[np.ndarray], appended: dict[int, list[tuple[int, np.ndarray]]]) -> list[Bone]:
        arm = self.sc.armatures[self.sc.nodes[self.arm].data]
        out = []
        parent_rest = np.stack([rest[b.parent] if b.parent >= 0 else np.eye(4) for b in arm.bones]) \
            if arm.bones else np.zeros((0, 4, 4))
        rest_locals = inverse_or_identity(parent_rest) @ np.stack(rest[:len(arm.bones)]) if arm.bones else []
        every_keys = bone_keys(self.sc, self.arm, [b.name for b in arm.bones], rest_locals, self.line)
        for i, (b, keys) in enumerate(zip(arm.bones, every_keys)):
            pairs = appended.get(i, [])
            out.append(Bone(i_bone=i, name=file_bone_name(b.name, b.extras),
                            i_parent=0xFFFFFFFF if b.parent < 0 else b.parent,
                            bone_frame=float(b.extras.get("u3d_bone_frame", -1.0)),
                            pass_on_bone_frame=int(bool(b.extras.get("u3d_pass_on_bone_frame", True))),
                            meshes=np.array([p[0] for p in pairs], "<u4"),
                            mesh_to_bone=np.array([matrix_from_blender(p[1]) for p in pairs], "<f4").reshape(-1, 4, 4),
                            scaling_keys=keys[0], translation_keys=keys[1], rotation_keys=keys[2],
                            extra=bytes.fromhex(str(b.extras.get("u3d_extra", "")))))
        return out

    # -- meshes ---------------------------------------------------------------------
    def _placement(self, ni: int) -> tuple[np.ndarray, int]:
        """-> (model-space matrix of the object, bone index or -1).

        A bone-parented object's `matrix` is its placement in the bone's frame (the Scene's convention)."""
        node = self.sc.nodes[ni]
        if node.parent_bone and node.parent == self.arm:
            names = [b.name for b in self.sc.armatures[self.sc.nodes[self.arm].data].bones]
            if node.parent_bone in names:
                bone = names.index(node.parent_bone)
                return self.rest[bone] @ node.matrix, bone
        return self.sc.world_matrix(ni), -1

    def skinned(self, rest: list[np.ndarray], layout) -> tuple[list[Mesh], int]:
        """Every mesh merged into the one skinned mesh the format allows."""
        parts = []
        for ni in self.mesh_nodes:
            node, sm = self.sc.nodes[ni], self.sc.meshes[self.sc.nodes[ni].data]
            matrix, bone = self._placement(ni)
            if sm.skin is None and bone < 0:
                raise UnsupportedFeature(
                    f"object {node.name!r} is neither skinned nor parented to a bone, but a skinned .u3d model "
                    "must be exactly one mesh: parent it to a bone, skin it, or export it separately")
            if _lod_of(node) > 0:
                self.warnings.warn(f"LoD object {node.name!r} skipped: a skinned model has one mesh and one LoD")
                continue
            parts.append((node.name, sm, matrix, bone))
        mesh, nsw = merge_skinned(parts, layout, self.v1, self.warnings, self._material_index)
        return [mesh], nsw

    def _material_index(self, sm: SMesh, face: np.ndarray) -> np.ndarray:
        if sm.face_material is None or not sm.materials:
            return np.zeros(len(face), "<u2")
        slots = np.asarray(sm.materials + [-1], np.int64)
        fm = np.clip(np.asarray(sm.face_material, np.int64)[face], 0, len(sm.materials))
        g = slots[fm]
        return np.where(g >= 0, g, 0).astype("<u2")

    def _frame_groups(self) -> list[dict[int, int]]:
        """Mesh objects in export order: {0: node} each, or {frame: node} for the objects that import made
        of one mesh's frames ("u3d_frame_group"/"u3d_frame"; only without a skeleton). A second import of
        the same file starts a new group when a frame repeats."""
        out: list[dict[int, int]] = []
        open_groups: dict[str, list[dict[int, int]]] = {}
        for ni in self.mesh_nodes:
            ex = self.sc.nodes[ni].extras
            if self.arm >= 0 or "u3d_frame_group" not in ex or "u3d_frame" not in ex:
                out.append({0: ni})
                continue
            f = int(ex["u3d_frame"])
            groups = open_groups.setdefault(str(ex["u3d_frame_group"]), [])
            group = next((g for g in groups if f not in g), None)
            if group is None:
                group = {}
                groups.append(group)
                out.append(group)
            group[f] = ni
        return out

    def rigid(self, rest: list[np.ndarray], layout, appended: dict) -> tuple[list[Mesh], int, int]:
        per_lod: dict[int, int] = {}
        out: list[Mesh] = []
        frames_total = 1
        groups = []
        for members in self._frame_groups():
            parts = {}
            for f, ni in sorted(members.items()):
                node, sm = self.sc.nodes[ni], self.sc.meshes[self.sc.nodes[ni].data]
                matrix, bone = self._placement(ni)
                ns = float(sm.extras.get("u3d_normal_scalar", 1.0))
                # appended meshes keep their own space: MeshToBone carries the placement
                vd = mesh_vertices(sm, None if bone >= 0 else matrix, ns, layout, self.v1)
                parts[f] = (node, sm, vd, ns, bone, matrix, self._material_index(sm, vd.triangle_face))
            node, sm, vd, ns, bone, matrix, mats = parts[min(parts)]
            lod = _lod_of(node)
            mpf = per_lod.get(lod, 0)
            per_lod[lod] = mpf + 1
            frames = shape_key_frames(self.sc, members[min(parts)], sm, self.line) \
                if self.arm < 0 and len(parts) == 1 else None
            if frames is not None:
                frames_total = max(frames_total, len(frames))
                self.shape_key_nodes.add(members[min(parts)])
            if len(members) > 1 or "u3d_frame_group" in node.extras:
                self.frame_object_nodes.update(members.values())
            if len(parts) > 1:
                frames_total = max(frames_total, max(parts) + 1)
            groups.append((parts, lod, mpf, frames))
        tweening = 0
        for parts, lod, mpf, frames in groups:
            node, sm, vd, ns, bone, matrix, mats = parts[min(parts)]
            base = _mesh(node.name, sm, vd, lod, mpf, 0, ns, mats,
                         vd.positions if frames is None else _frame_positions(frames, 0, vd, matrix))
            index = len(out)
            out.append(base)
            if bone >= 0:     # MeshToWorld = MeshToBone * BoneToWorld (row vectors)
                appended.setdefault(bone, []).append((index, inverse_or_identity(rest[bone]) @ matrix))
            if frames_total > 1:
                tweening |= bool(sm.extras.get("u3d_vertex_tweening", True))
                for f in range(1, frames_total):
                    # a frame object rules until the next one (as import shows them)
                    own = max((k for k in parts if k <= f), default=min(parts))
                    if own != min(parts):
                        _, sm_f, vd_f, _, _, _, mats_f = parts[own]
                        out.append(_mesh(node.name, sm_f, vd_f, lod, mpf, f, ns, mats_f, vd_f.positions))
                        continue
                    pos = vd.positions if frames is None else _frame_positions(frames, f, vd, matrix)
                    m = _mesh(node.name, sm, vd, lod, mpf, f, ns, mats, pos)
                    m.triangles_owned, m.triangles, m.triangle_material = 0, None, None   # share frame 0's
                    out.append(m)
        n_lod = max(per_lod) + 1 if per_lod else 1
        missing = [i for i in range(n_lod) if i not in per_lod]
        if missing:
            raise UnsupportedFeature(f"LoD collections {missing} are empty; LoDs must be numbered from 0 without gaps")
        return out, frames_total, int(tweening)


def _frame_positions(frames: list, f: int, vd: VertexData, matrix: np.ndarray) -> np.ndarray:
    pos = np.asarray(frames[min(f, len(frames) - 1)], np.float32)[vd.source_vertex]
    if not np.array_equal(matrix, np.eye(4)):
        pos = apply_points(matrix, pos)
    return np.ascontiguousarray(pos[:, SWAP], "<f4")


def _mesh(name, sm, vd: VertexData, lod, mpf, frame, ns, mats, positions) -> Mesh:
    return Mesh(i_mesh_per_frame=mpf, i_lod=lod, i_frame=frame, name=name, normal_scalar=ns,
                valid_tangent_frames=int(sm.extras.get("u3d_valid_tangent_frames", 0)),
                positions=positions, normals=vd.normals, texcoords=list(vd.texcoords), n_triangle=len(vd.triangles),
                triangles=vd.triangles.astype("<u4", copy=False), triangle_material=mats,
                extra=bytes.fromhex(str(sm.extras.get("u3d_extra", ""))))


def _lod_distances(nodes: list, n_lod: int) -> np.ndarray:
    known = {}
    for n in nodes:
        d = n.extras.get("u3d_lod_max_camera_distance")
        if d is not None:
            known[_lod_of(n)] = float(d)
    out = []
    for i in range(n_lod):
        if i in known:
            out.append(known[i])
        else:
            out.append(FLT_MAX if i == n_lod - 1 else 100.0 * 2 ** i)
    return np.array(out, "<f4")


def model_wide_extras(nodes: list) -> dict:
    """Model-wide values (v1 cel shading, shader template), from the mesh objects' properties."""
    out = {}
    for n in reversed(nodes):
        out.update({k: v for k, v in n.extras.items() if k.startswith("u3d_v1_") or k == "u3d_shader_pack_template"})
    return out


def build(scene: Scene, v1: bool, warnings: Warnings) -> Model:
    ex = _Exporter(scene, v1, warnings)
    if not ex.mesh_nodes:
        raise UnsupportedFeature("nothing to export: the scene has no mesh objects")
    layout = set_layout([scene.meshes[scene.nodes[i].data] for i in ex.mesh_nodes])
    rest = ex.rest_world()
    is_skinned = ex.arm >= 0 and any(scene.meshes[scene.nodes[i].data].skin is not None for i in ex.mesh_nodes)
    appended: dict[int, list[tuple[int, np.ndarray]]] = {}
    nsw, frames, tweening = 0, 1, 0
    if is_skinned:
        meshes, nsw = ex.skinned(rest, layout)
        inverse = inverse_or_identity(np.stack(rest)) if len(rest) else []     # all at once: one LAPACK call
        for b in range(len(rest)):    # skinning: every bone holds the one mesh, MeshToBone = inverse bind
            appended[b] = [(0, inverse[b])]
    else:
        meshes, frames, tweening = ex.rigid(rest, layout, appended)
    bones = ex.bones(rest, appended) if ex.arm >= 0 else []
    if bones:
        frames = max(frames, ex.line.last + 1)
    n_lod = max(m.i_lod for m in meshes) + 1
    mats = [material_from_scene(m, i, scene, [n for n, _ in layout], warnings) for i, m in enumerate(scene.materials)]
    if not mats:
        mats = [Material(name="Default")]
    h = ModelHeader(n_mesh=len(meshes), n_mesh_per_frame=max(m.i_mesh_per_frame for m in meshes) + 1,
                    n_frame=frames, n_lod=n_lod, n_material=len(mats), n_bone=len(bones),
                    vertex_tweening=tweening if not bones else 0,
                    lod_max_camera_distance=_lod_distances([scene.nodes[i] for i in ex.mesh_nodes], n_lod),
                    tex_coord_dimension=tuple(d for _, d in layout), n_skin_weight=nsw)
    wide = model_wide_extras([scene.nodes[i] for i in ex.mesh_nodes])
    tmpl = wide.get("u3d_shader_pack_template")
    if tmpl is not None:
        h.shader_pack_template_exists, h.shader_pack_template = 1, bytes.fromhex(str(tmpl))
    model = Model(file_header=FileHeader(), chunks=[h, *meshes, *mats, *bones], extras=wide)
    ex.dropped_animation()
    ranges = action_ranges(scene, ex.line, frames, warnings)
    if ranges:
        model.chunks.append(ActionRanges(ranges))
    for m in meshes:
        if int(m.triangle_material.max(initial=0) if m.triangle_material is not None else 0) >= len(mats):
            m.triangle_material = np.minimum(m.triangle_material, len(mats) - 1).astype("<u2")
    return model


def from_scene(scene: Scene, options: ExportOptions, warnings: Warnings) -> Model | ModelV1:
    version = {"1": "1.0", "2": "2.0"}.get(str(options.version).strip(), str(options.version).strip())
    allowed = choices(ExportOptions)["version"]
    if version not in allowed:            # (a script may pass the number 1.0)
        raise UnsupportedFeature(f"unknown .u3d version {options.version!r}: use {' or '.join(map(repr, allowed))}")
    v1 = version == "1.0"
    if v1 and options.password:
        raise UnsupportedFeature("only .u3d v2.0 files can be encrypted; v1.0 encryption is undocumented")
    if options.password:
        password_key(options.password, UnsupportedFeature)     # refused before any work, as an option error
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):   # NaN/inf in a scene stay data
        model = build(scene, v1, warnings)
    if v1:
        return to_v1(model, warnings)
    if options.password:
        model.file_header.encryption, model.password = 2, options.password
    return model
