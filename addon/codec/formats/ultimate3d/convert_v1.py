"""ModelV1 <-> Model (v2): the scene code works on v2 only.

v1 meshes carry no iLOD/iMeshPerFrame: the LoD is the one whose level of
detail matches the mesh's LOD value (1.0 is the highest), and meshes are
numbered in file order within a (frame, LoD). v1 stores squared camera
distances at which a LoD starts; v2 stores each LoD's maximal distance.
Values only v1 has go into `extras` (the mesh objects' custom properties).
"""
from __future__ import annotations

import numpy as np

from ...errors import FormatError, UnsupportedFeature, Warnings
from . import normals as ncodec
from .model import (FLT_MAX, ROOT_V1, ROT_KEY, ROT_KEY_V1, SCALE_KEY, SCALE_KEY_V1, Bone, BoneV1, FileHeader,
                    HeaderV1, Material, MaterialV1, Mesh, MeshV1, Model, ModelHeader, ModelV1, Texture, TextureV1,
                    has_texcoords, mesh_places)
from .validate import ROOT_V2


def _retype(keys: np.ndarray, dtype: np.dtype) -> np.ndarray:
    out = np.zeros(len(keys), dtype)
    out["frame"], out["value"] = keys["frame"], keys["value"]
    return out


def from_v1(m1: ModelV1, warnings: Warnings) -> Model:
    h1 = m1.header
    dims = m1.meshes[0].tex_coord_dimension if m1.meshes else (2, 0, 0, 0, 0, 0, 0, 0)
    dist = np.append(np.sqrt(np.maximum(h1.lod_camera_distance_sq.astype(np.float64), 0)), FLT_MAX)
    h = ModelHeader(n_mesh=h1.n_mesh, n_mesh_per_frame=h1.n_mesh_per_frame, n_frame=h1.n_frame, n_lod=h1.n_lod,
                    n_material=h1.n_material, n_bone=h1.n_bone, vertex_tweening=h1.vertex_tweening,
                    lod_max_camera_distance=dist.astype("<f4"), tex_coord_dimension=tuple(dims),
                    n_skin_weight=max([m.n_skin_weight for m in m1.meshes], default=0))
    model = Model(file_header=FileHeader(1, 0, 0), chunks=[h], source=m1.source)
    model.extras = {"u3d_v1_file_version": float(h1.file_version),
                    "u3d_v1_cel_shading_strength": float(h1.cel_shading_strength),
                    "u3d_v1_cel_shading_color": list(h1.cel_shading_color),
                    "u3d_v1_alpha_blending": bool(h1.alpha_blending),
                    "u3d_v1_lod_level_of_detail": [float(v) for v in h1.lod_level_of_detail]}
    first_of: dict[tuple[int, int], Mesh] = {}
    for i, (mv, (lod, frame, mpf)) in enumerate(zip(m1.meshes, mesh_places(m1))):
        if lod >= h1.n_lod or frame >= h1.n_frame:
            raise FormatError(f"mesh LoD {lod} / frame {frame} outside the header's {h1.n_lod} / {h1.n_frame}",
                              None, f"MESH[{i}]")
        m = Mesh(i_mesh_per_frame=mpf, i_lod=lod, i_frame=frame, name=mv.name, normal_scalar=mv.normal_scalar,
                 valid_tangent_frames=mv.valid_tangent_frames, positions=mv.positions, normals=mv.normals,
                 texcoords=list(mv.texcoords), skin_weights=mv.skin_weights, bone_indices=mv.bone_indices,
                 n_triangle=mv.n_triangle, triangles_owned=mv.triangles_owned, triangles=mv.triangles,
                 triangle_material=mv.triangle_material)
        m.extras = {"u3d_v1_lod": float(mv.lod)}
        owner = first_of.get((lod, mpf))
        if owner is None and frame == 0:
            first_of[(lod, mpf)] = owner = m
        if not mv.triangles_owned or not has_texcoords(mv):
            if owner is None or owner is m or owner.triangles is None:
                raise FormatError("shares the first frame's data, but there is no such mesh", None, f"MESH[{i}]")
            if not has_texcoords(mv):
                m.texcoords = list(owner.texcoords)
        model.chunks.append(m)
    for i, mv in enumerate(m1.materials):
        mat = Material(i_material=i, name=mv.name, ambient=mv.ambient, diffuse=mv.diffuse, specular=mv.specular,
                       emissive=mv.emissive, specular_power=mv.specular_power, color_op=mv.color_op,
                       tex_coord_set=mv.tex_coord_set)
        for s, t in enumerate(mv.textures[:8]):
            if t.uses and t.type == 0:
                mat.textures[s] = Texture(holds_texture=1, width=t.width, height=t.height, files=[t.file])
        mat.extras = {"u3d_v1_texture_identifiers": [t.identifier for t in mv.textures]}
        if mv.raw_tail or mv.export_resources or mv.effect_used:
            warnings.warn(f"material {mv.name!r}: embedded resources or effects are not imported")
        model.chunks.append(mat)
    for i, bv in enumerate(m1.bones):
        model.chunks.append(Bone(i_bone=i, name=bv.name, i_parent=ROOT_V2 if bv.i_parent == ROOT_V1 else bv.i_parent,
                                 bone_frame=bv.bone_frame, pass_on_bone_frame=bv.pass_on_bone_frame,
                                 meshes=bv.meshes.astype("<u4"), mesh_to_bone=bv.mesh_to_bone,
                                 scaling_keys=_retype(bv.scaling_keys, SCALE_KEY),
                                 translation_keys=_retype(bv.translation_keys, SCALE_KEY),
                                 rotation_keys=_retype(bv.rotation_keys, ROT_KEY)))
    return model


def _limit(value: int, limit: int, what: str) -> int:
    if value > limit:
        raise UnsupportedFeature(f"Ultimate 3D v1.0 allows at most {limit} {what}, this model has {value}; "
                                 "export as v2.0")
    return value


def to_v1(model: Model, warnings: Warnings) -> ModelV1:
    h = model.header
    if model.actions:
        warnings.warn(f"v1.0 has no action ranges: {len(model.actions)} ranges not written (export as v2.0 to keep them)")
    tris_per_lod = np.zeros(h.n_lod)
    for m in model.meshes:
        if m.i_frame == 0:
            tris_per_lod[m.i_lod] += m.n_triangle
    levels = model.extras.get("u3d_v1_lod_level_of_detail")
    if levels is None or len(levels) != h.n_lod - 1:
        levels = tris_per_lod[1:] / max(tris_per_lod[0], 1)
    dist = np.asarray(h.lod_max_camera_distance[:-1], np.float64)
    hv = HeaderV1(n_mesh=_limit(h.n_mesh, 65535, "meshes"),
                  n_mesh_per_frame=_limit(h.n_mesh_per_frame, 65535, "meshes per frame"),
                  n_frame=h.n_frame, n_lod=_limit(h.n_lod, 65535, "LoDs"),
                  n_material=_limit(h.n_material, 65535, "materials"), n_bone=_limit(h.n_bone, 65535, "bones"),
                  cel_shading_strength=float(model.extras.get("u3d_v1_cel_shading_strength", 0.0)),
                  cel_shading_color=tuple(model.extras.get("u3d_v1_cel_shading_color", (0.0, 0.0, 0.0, 1.0))),
                  alpha_blending=int(bool(model.extras.get("u3d_v1_alpha_blending", True))),
                  vertex_tweening=h.vertex_tweening,
                  lod_level_of_detail=np.asarray(levels, "<f4"),
                  lod_camera_distance_sq=np.minimum(dist * dist, FLT_MAX).astype("<f4"))
    out = ModelV1(header=hv)
    for m in model.meshes:
        _limit(len(m.positions), 65535, "vertices per mesh")
        _limit(m.n_triangle, 65535, "triangles per mesh")
        _limit(m.i_frame, 65535, "frames")
        nsw = 0 if m.skin_weights is None else m.skin_weights.shape[1]
        normals = m.normals if m.normals.dtype.itemsize == 1 else ncodec.encode(ncodec.decode(m.normals), v1=True)
        out.meshes.append(MeshV1(
            name=m.name, frame=m.i_frame, lod=1.0 if m.i_lod == 0 else float(levels[m.i_lod - 1]),
            normal_scalar=m.normal_scalar, valid_tangent_frames=m.valid_tangent_frames,
            tex_coord_dimension=tuple(0 if t is None else t.shape[1] for t in m.texcoords), n_skin_weight=nsw,
            max_blending_matrix=int(m.bone_indices[:, :nsw + 1].max()) if nsw else 0,
            positions=m.positions, normals=normals, texcoords=list(m.texcoords), skin_weights=m.skin_weights,
            bone_indices=m.bone_indices, n_triangle=m.n_triangle, triangles_owned=m.triangles_owned,
            triangles=m.triangles, triangle_material=m.triangle_material))
    for mat in model.materials:
        tex = []
        for t in mat.textures:
            if t.holds_texture and t.is_cube:
                warnings.warn(f"material {mat.name!r}: v1.0 has no cube textures; dropped")
            use = bool(t.holds_texture and not t.is_cube and t.files)
            f = t.files[0] if use else ""
            tex.append(TextureV1(uses=int(use), identifier=f, width=min(t.width, 65535) if use else 0,
                                 height=min(t.height, 65535) if use else 0, file=f))
        out.materials.append(MaterialV1(
            name=mat.name, ambient=mat.ambient, diffuse=mat.diffuse, specular=mat.specular, emissive=mat.emissive,
            specular_power=mat.specular_power, n_texture=sum(t.uses for t in tex), color_op=mat.color_op,
            tex_coord_set=mat.tex_coord_set, textures=tex, effect_used=0))
    for b in model.bones:
        for keys in (b.scaling_keys, b.translation_keys, b.rotation_keys):
            if len(keys):
                _limit(int(keys["frame"].max()), 65535, "as a key frame")
        out.bones.append(BoneV1(name=b.name, i_parent=ROOT_V1 if b.i_parent == ROOT_V2 else b.i_parent,
                                bone_frame=b.bone_frame, pass_on_bone_frame=b.pass_on_bone_frame,
                                meshes=b.meshes.astype("<u2"), mesh_to_bone=b.mesh_to_bone,
                                scaling_keys=_retype(b.scaling_keys, SCALE_KEY_V1),
                                translation_keys=_retype(b.translation_keys, SCALE_KEY_V1),
                                rotation_keys=_retype(b.rotation_keys, ROT_KEY_V1)))
    return out
