"""ModelV1 -> bytes: the fixed-order v1.0 layout, mirror of read_v1."""
from __future__ import annotations

import numpy as np

from ...binary import Writer
from .model import (BONE_ID, MAT_ID, MESH_ID, ROT_KEY_V1, SCALE_KEY_V1, V1_MAGIC, BoneV1, HeaderV1, MaterialV1,
                    MeshV1, ModelV1, has_texcoords)


def _header(w: Writer, h: HeaderV1) -> None:
    w.bytes(V1_MAGIC)
    w.f32(h.file_version)
    w.pack("2HI", h.n_mesh, h.n_mesh_per_frame, h.n_frame)
    w.u32(h.n_lod) if h.nlod_is_dword else w.u16(h.n_lod)
    w.pack("2H", h.n_material, h.n_bone)
    w.f32(h.cel_shading_strength)
    w.pack("4f", *h.cel_shading_color)
    w.pack("2B", h.alpha_blending, h.vertex_tweening)
    w.array(h.lod_level_of_detail, "<f4")
    w.array(h.lod_camera_distance_sq, "<f4")


def _mesh(w: Writer, m: MeshV1) -> None:
    w.bytes(MESH_ID)
    w.cstring(m.name)
    w.u16(m.frame)
    w.pack("2f", m.lod, m.normal_scalar)
    w.u8(m.valid_tangent_frames)
    w.u16(len(m.positions))
    w.pack("8H", *m.tex_coord_dimension)
    w.u16(m.n_skin_weight)
    w.u8(m.max_blending_matrix)
    w.pack("2H", len(m.shadow_vertices), len(m.shadow_triangles))
    w.array(m.shadow_vertices, "<u4")
    w.array(m.shadow_triangles, "<u2")
    w.array(m.positions, "<f4")
    w.array(m.normals, "i1")
    w.pack("2B", m.use_texcoord_buffer, m.texcoords_owned)
    if has_texcoords(m):
        for dim, tc in zip(m.tex_coord_dimension, m.texcoords):
            if dim:
                w.array(tc, "<f4")
    if m.n_skin_weight:
        w.array(m.skin_weights, "<f4")
        w.array(m.bone_indices, "u1")
    w.u16(m.n_triangle)
    w.u8(m.triangles_owned)
    if m.triangles_owned:
        w.array(m.triangles, "<u2")
        w.array(m.triangle_material, "<u2")


def _material(w: Writer, m: MaterialV1) -> None:
    w.bytes(MAT_ID)
    w.cstring(m.name)
    w.pack("16f", *m.ambient, *m.diffuse, *m.specular, *m.emissive)
    w.f32(m.specular_power)
    w.u16(m.n_texture)
    w.pack("8I", *m.color_op)
    w.pack("8I", *m.tex_coord_set)
    w.u8(m.export_resources)
    if not m.export_resources:
        for t in m.textures:
            w.u8(t.uses)
            if t.uses:
                w.u32(t.type)
                if t.type == 0:
                    w.cstring(t.identifier)
                    w.pack("2H", t.width, t.height)
                    w.cstring(t.file)
        if m.effect_used is not None:
            w.u8(m.effect_used)
    w.bytes(m.raw_tail)


def _keys(w: Writer, keys: np.ndarray, unused: int, dtype: np.dtype) -> None:
    w.pack("2H", len(keys), unused)
    w.array(np.asarray(keys).astype(dtype, copy=False))


def _bone(w: Writer, b: BoneV1) -> None:
    w.bytes(BONE_ID)
    w.cstring(b.name)
    w.u16(b.i_parent)
    w.f32(b.bone_frame)
    w.u8(b.pass_on_bone_frame)
    w.u16(len(b.meshes))
    w.array(b.meshes, "<u2")
    w.array(b.mesh_to_bone, "<f4")
    _keys(w, b.scaling_keys, b.unused[0], SCALE_KEY_V1)
    _keys(w, b.translation_keys, b.unused[1], SCALE_KEY_V1)
    _keys(w, b.rotation_keys, b.unused[2], ROT_KEY_V1)


def write(model: ModelV1) -> bytes:
    w = Writer()
    _header(w, model.header)
    for m in model.meshes:
        _mesh(w, m)
    for m in model.materials:
        _material(w, m)
    for b in model.bones:
        _bone(w, b)
    w.bytes(model.trailing)
    return w.getvalue()
