"""Bytes -> ModelV1: the fixed-order v1.0 layout (header, meshes, materials, bones).

v1 has no chunk sizes, so it is read strictly in the documented order. The
notes' decisions live here: nLOD is a WORD unless only a DWORD puts the first
"$U3D_MESH\\0" right after the header (`read_header`), and the material parts
the document says to skip are kept raw up to the next record (`_skip_to`).
"""
from __future__ import annotations

import numpy as np

from ...binary import Reader
from ...errors import FormatError, Warnings
from .model import (BONE_ID, MAT_ID, MESH_ID, ROOT_V1, ROT_KEY_V1, SCALE_KEY_V1, V1_MAGIC, BoneV1, HeaderV1,
                    MaterialV1, MeshV1, ModelV1, TextureV1, has_texcoords, mesh_places)
from .transforms import warn_not_affine
from .validate import MAX_FRAMES, bone_depths


def _header(r: Reader, nlod_dword: bool) -> HeaderV1:
    if r.bytes(13) != V1_MAGIC:
        r.fail("not a v1.0 .u3d file (no 'U3DModelFile' header)", 0)
    h = HeaderV1(file_version=r.f32(), nlod_is_dword=nlod_dword)
    h.n_mesh, h.n_mesh_per_frame, h.n_frame = r.unpack("2HI")
    h.n_lod = r.u32() if nlod_dword else r.u16()
    h.n_material, h.n_bone = r.unpack("2H")
    h.cel_shading_strength = r.f32()
    h.cel_shading_color = r.unpack("4f")
    h.alpha_blending, h.vertex_tweening = r.unpack("2B")
    if h.n_lod == 0 or h.n_frame == 0 or h.n_material == 0:
        r.fail(f"nLOD, nFrame and nMaterial must be at least 1 (got {h.n_lod}, {h.n_frame}, {h.n_material})")
    if h.n_frame > MAX_FRAMES:
        r.fail(f"nFrame {h.n_frame} is not a plausible frame count (at most {MAX_FRAMES})")
    h.lod_level_of_detail = r.array("<f4", h.n_lod - 1)
    h.lod_camera_distance_sq = r.array("<f4", h.n_lod - 1)
    return h


def read_header(r: Reader) -> HeaderV1:
    """The notes: nLOD lost its type. WORD first; DWORD if only that puts "$U3D_MESH\\0" next."""
    errors = []
    for dword in (False, True):
        r.pos = 0
        try:
            with r.chunk("HEADER"):
                h = _header(r, dword)
        except FormatError as e:
            errors.append(str(e))
            continue
        if r.buf.startswith(MESH_ID, r.pos) or (h.n_mesh == 0 and not dword):
            return h
        errors.append(f"no $U3D_MESH right after a header read with a {'DWORD' if dword else 'WORD'} nLOD")
    raise FormatError("v1.0 header: " + "; ".join(errors), 0, "HEADER")


def _tag(r: Reader, tag: bytes) -> None:
    if r.bytes(len(tag)) != tag:
        r.fail(f"expected {tag[:-1].decode()!r}", r.pos - len(tag))


def _mesh(r: Reader) -> MeshV1:
    _tag(r, MESH_ID)
    m = MeshV1(name=r.cstring())
    m.frame = r.u16()
    m.lod, m.normal_scalar = r.unpack("2f")
    m.valid_tangent_frames = r.u8()
    n = r.u16()
    m.tex_coord_dimension = r.unpack("8H")
    if max(m.tex_coord_dimension) > 4:
        r.fail(f"texture coordinate dimensions must be 0 to 4, got {list(m.tex_coord_dimension)}")
    m.n_skin_weight = r.u16()
    if m.n_skin_weight > 3:
        r.fail(f"nSkinWeight must be 0 to 3, got {m.n_skin_weight}")
    m.max_blending_matrix = r.u8()
    n_sv, n_st = r.unpack("2H")
    # v1 shadow vertex: position, normal, skin weights, 4 BYTE indices
    stride = 6 + m.n_skin_weight + (1 if m.n_skin_weight else 0)
    m.shadow_vertices = r.array("<u4", n_sv * stride).reshape(n_sv, stride)
    m.shadow_triangles = _triangles(r, n_st, n_sv, "shadow geometry")
    m.positions = r.array("<f4", n * 3).reshape(n, 3)
    m.normals = r.array("i1", n * 2).reshape(n, 2)
    m.use_texcoord_buffer, m.texcoords_owned = r.unpack("2B")
    if has_texcoords(m):
        m.texcoords = [r.array("<f4", n * d).reshape(n, d) if d else None for d in m.tex_coord_dimension]
    else:
        m.texcoords = [None] * 8
    if m.n_skin_weight:
        m.skin_weights = r.array("<f4", n * m.n_skin_weight).reshape(n, m.n_skin_weight)
        m.bone_indices = r.array("u1", n * 4).reshape(n, 4)
    m.n_triangle = r.u16()
    m.triangles_owned = r.u8()
    if m.triangles_owned:
        m.triangles = _triangles(r, m.n_triangle, n, "triangles")
        m.triangle_material = r.array("<u2", m.n_triangle)
    return m


def _triangles(r: Reader, n_tri: int, n_vertex: int, what: str) -> np.ndarray:
    at = r.pos
    tris = r.array("<u2", n_tri * 3).reshape(n_tri, 3)
    if n_tri and int(tris.max()) >= n_vertex:
        r.fail(f"{what}: vertex index {int(tris.max())} out of range ({n_vertex} vertices)", at)
    return tris


def _skip_to(r: Reader, marker: bytes | None) -> bytes:
    """What the document says to skip: up to the next record's tag (or the end)."""
    if marker is None:
        return r.rest()
    at = r.buf.find(marker, r.pos, r.end)
    if at < 0:
        r.fail(f"cannot find the next {marker[:-1].decode()!r} to skip to")
    return r.bytes(at - r.pos)


def _material(r: Reader, next_tag: bytes | None) -> MaterialV1:
    _tag(r, MAT_ID)
    m = MaterialV1(name=r.cstring())
    c = r.unpack("16f")
    m.ambient, m.diffuse, m.specular, m.emissive = c[0:4], c[4:8], c[8:12], c[12:16]
    m.specular_power = r.f32()
    m.n_texture = r.u16()
    m.color_op = r.unpack("8I")
    m.tex_coord_set = r.unpack("8I")
    m.export_resources = r.u8()
    m.effect_used = None
    if m.export_resources:
        m.raw_tail = _skip_to(r, next_tag)
        return m
    for _ in range(8):
        t = TextureV1(uses=r.u8())
        m.textures.append(t)
        if not t.uses:
            continue
        t.type = r.u32()
        if t.type != 0:       # the document: skip to the next material
            m.raw_tail = _skip_to(r, next_tag)
            return m
        t.identifier = r.cstring()
        t.width, t.height = r.unpack("2H")
        t.file = r.cstring()
    m.effect_used = r.u8()
    if m.effect_used:
        m.raw_tail = _skip_to(r, next_tag)
    return m


def _keys(r: Reader, dtype: np.dtype, what: str) -> tuple[np.ndarray, int]:
    n, unused = r.unpack("2H")
    r.check_count(n, dtype.itemsize, what)
    return r.array(dtype, n), unused


def _bone(r: Reader) -> BoneV1:
    _tag(r, BONE_ID)
    b = BoneV1(name=r.cstring(), i_parent=r.u16(), bone_frame=r.f32(), pass_on_bone_frame=r.u8())
    n_mesh = r.u16()
    r.check_count(n_mesh, 2 + 64, "appended meshes")
    b.meshes = r.array("<u2", n_mesh)
    b.mesh_to_bone = r.array("<f4", n_mesh * 16).reshape(n_mesh, 4, 4)
    b.scaling_keys, u0 = _keys(r, SCALE_KEY_V1, "scaling keys")
    b.translation_keys, u1 = _keys(r, SCALE_KEY_V1, "translation keys")
    b.rotation_keys, u2 = _keys(r, ROT_KEY_V1, "rotation keys")
    b.unused = (u0, u1, u2)
    return b


def read(data: bytes, warnings: Warnings, source: str = "") -> ModelV1:
    r = Reader(data)
    h = read_header(r)
    model = ModelV1(header=h, source=source)
    for i in range(h.n_mesh):
        with r.chunk(f"MESH[{i}]"):
            model.meshes.append(_mesh(r))
    for i in range(h.n_material):
        nxt = MAT_ID if i + 1 < h.n_material else (BONE_ID if h.n_bone else None)
        with r.chunk(f"MATERIAL[{i}]"):
            model.materials.append(_material(r, nxt))
    for i in range(h.n_bone):
        with r.chunk(f"BONE[{i}]"):
            model.bones.append(_bone(r))
    model.trailing = r.rest()
    if model.trailing:
        warnings.warn(f"{len(model.trailing)} bytes after the last record kept as they are", r.pos - len(model.trailing))
    _validate(model)
    warn_not_affine(model.bones, warnings, "BONE")
    return model


def _validate(model: ModelV1) -> None:
    h = model.header
    for i, b in enumerate(model.bones):
        if b.i_parent != ROOT_V1 and b.i_parent >= h.n_bone:
            raise FormatError(f"bone parent {b.i_parent} out of range ({h.n_bone} bones)", None, f"BONE[{i}]")
        if len(b.meshes) and int(b.meshes.max()) >= h.n_mesh:
            raise FormatError(f"appended mesh {int(b.meshes.max())} out of range ({h.n_mesh} meshes)", None,
                              f"BONE[{i}]")
    bone_depths([b.i_parent for b in model.bones], ROOT_V1, "BONE")
    owners: dict[tuple[int, int], MeshV1] = {}
    for i, (m, (lod, frame, mpf)) in enumerate(zip(model.meshes, mesh_places(model))):
        if m.bone_indices is not None:
            used = m.bone_indices[:, :m.n_skin_weight + 1]
            if len(used) and int(used.max()) >= h.n_bone:
                raise FormatError(f"skin bone index {int(used.max())} out of range ({h.n_bone} bones)", None,
                                  f"MESH[{i}]")
        if frame == 0:
            owners.setdefault((lod, mpf), m)
        if m.triangles_owned and has_texcoords(m):
            continue
        # a later frame shares the indices (or UVs) of the frame-0 mesh of its own LoD, as the import reads it
        owner = owners.get((lod, mpf))
        where = f"MESH[{i}] (LoD {lod}, frame {frame}, mesh {mpf})"
        if owner is None or owner is m:
            raise FormatError("shares the first frame's data, but no earlier frame-0 mesh of its LoD has it",
                              None, where)
        if not m.triangles_owned and (not owner.triangles_owned or owner.n_triangle != m.n_triangle
                                      or int(owner.triangles.max(initial=0)) >= len(m.positions)):
            raise FormatError("TrianglesOwned is false but the frame-0 mesh's indices do not fit", None, where)
        if not has_texcoords(m) and (not has_texcoords(owner) or len(owner.positions) != len(m.positions)):
            raise FormatError("shares the frame-0 mesh's texture coordinates, which do not fit its vertices",
                              None, where)
