"""Bytes -> Model for v2.0: a list of chunks (String ident, DWORD size, data).

The reader follows the notes: after every chunk it continues at chunk start +
ChunkSize, keeping unknown chunks and the unknown tail of known ones; chunks
may come in any order after the model header.
"""
from __future__ import annotations

import numpy as np

from ...binary import Reader
from ...errors import FormatError, UnsupportedFeature, Warnings, WrongPassword
from . import crypto
from .model import (FILE_HEADER, ROT_KEY, SCALE_KEY, ActionRanges, Bone, FileHeader, Material, Mesh, Model,
                    ModelHeader, RawChunk, ShadowGeometry, Texture, index_dtype)
from .validate import validate

MAX_IDENT = 255


def chunk_header(r: Reader, expect: str | None = None) -> tuple[str, int]:
    """Reads ident and size; -> (ident, end offset). Checks the size against what is left."""
    start = r.pos
    ident = r.cstring(MAX_IDENT)
    if expect is not None and ident != expect:
        r.fail(f"expected chunk {expect!r}, found {ident[:40]!r}", start)
    size = r.u32()
    if size > r.remaining:
        r.fail(f"chunk {ident!r} claims {size} bytes, only {r.remaining} left (truncated or lying size)")
    return ident, r.pos + size


def _bool(r: Reader) -> int:
    return r.u8()


def _floats(r: Reader, n: int) -> tuple[float, ...]:
    return r.unpack(f"{n}f")


def read_file_header(r: Reader) -> FileHeader:
    _, end = chunk_header(r, FILE_HEADER)
    with r.chunk(FILE_HEADER, end):
        fh = FileHeader(*r.unpack("5I"))
        fh.extra = r.rest()
    return fh


def _model_header(r: Reader) -> ModelHeader:
    h = ModelHeader()
    (h.n_mesh, h.n_mesh_per_frame, h.n_frame, h.n_lod, h.n_material, h.n_bone) = r.unpack("6I")
    h.vertex_tweening = _bool(r)
    if h.n_lod == 0 or h.n_frame == 0 or h.n_material == 0:
        r.fail(f"nLOD, nFrame and nMaterial must be at least 1 (got {h.n_lod}, {h.n_frame}, {h.n_material})")
    h.lod_max_camera_distance = r.array("<f4", h.n_lod)
    h.tex_coord_dimension = r.unpack("8I")
    if max(h.tex_coord_dimension) > 4:
        r.fail(f"texture coordinate dimensions must be 0 to 4, got {list(h.tex_coord_dimension)}")
    h.n_skin_weight = r.u32()
    if h.n_skin_weight > 3:
        r.fail(f"nSkinWeight must be 0 to 3, got {h.n_skin_weight}")
    h.shader_pack_template_exists = _bool(r)
    if h.shader_pack_template_exists:
        h.shader_pack_template = _embedded_raw(r, "$U3D_SHADER_PACK")
    h.extra = r.rest()
    return h


def _embedded_raw(r: Reader, ident: str) -> bytes:
    _, end = chunk_header(r, ident)
    with r.chunk(ident, end):
        return r.rest()


def _triangles(r: Reader, n_tri: int, n_vertex: int, what: str) -> np.ndarray:
    at = r.pos
    tris = r.array(index_dtype(n_vertex), n_tri * 3).reshape(n_tri, 3)
    if n_tri and int(tris.max()) >= n_vertex:
        r.fail(f"{what}: vertex index {int(tris.max())} out of range ({n_vertex} vertices)", at)
    return tris


def _shadow(r: Reader, n_skin_weight: int) -> ShadowGeometry:
    _, end = chunk_header(r, "$U3D_SHADOW_GEOMETRY")
    with r.chunk("$U3D_SHADOW_GEOMETRY", end):
        n_vertex, n_tri = r.unpack("2I")
        # position, skin weights, 4 BYTE bone indices (one float's size), normal
        stride = 6 + n_skin_weight + (1 if n_skin_weight else 0)
        vertices = r.array("<u4", n_vertex * stride).reshape(n_vertex, stride)
        # exactly one index buffer, width by nVertex (the width-less line is a v1 leftover)
        tris = _triangles(r, n_tri, n_vertex, "shadow geometry")
        return ShadowGeometry(vertices, tris, r.rest())


def _mesh(r: Reader, h: ModelHeader) -> Mesh:
    m = Mesh()
    m.i_mesh_per_frame, m.i_lod, m.i_frame = r.unpack("3I")
    m.name = r.cstring()
    m.normal_scalar = r.f32()
    m.valid_tangent_frames = _bool(r)
    n = r.u32()
    m.positions = r.array("<f4", n * 3).reshape(n, 3)
    m.normals = r.array("<i2", n * 2).reshape(n, 2)
    m.texcoords = [r.array("<f4", n * d).reshape(n, d) if d else None for d in h.tex_coord_dimension]
    if h.n_skin_weight:
        m.skin_weights = r.array("<f4", n * h.n_skin_weight).reshape(n, h.n_skin_weight)
        m.bone_indices = r.array("u1", n * 4).reshape(n, 4)
    m.n_triangle = r.u32()
    m.triangles_owned = _bool(r)
    if m.triangles_owned:
        m.triangles = _triangles(r, m.n_triangle, n, "triangles")
        m.triangle_material = r.array("<u2", m.n_triangle)
    m.shadow_exists = _bool(r)
    if m.shadow_exists:
        m.shadow = _shadow(r, h.n_skin_weight)
    m.extra = r.rest()
    return m


def _texture(r: Reader, stage: int) -> Texture:
    _, end = chunk_header(r, "$U3D_TEXTURE")
    with r.chunk(f"$U3D_TEXTURE[{stage}]", end):
        t = Texture(holds_texture=_bool(r))
        if t.holds_texture:
            t.width, t.height = r.unpack("2I")
            t.is_cube, t.is_normal_map = _bool(r), _bool(r)
            t.height_scalar = r.f32()
            t.files = [r.cstring() for _ in range(6 if t.is_cube else 1)]
        t.extra = r.rest()
        return t


def _material(r: Reader) -> Material:
    m = Material(i_material=r.u32(), name=r.cstring())
    c = _floats(r, 16)
    m.ambient, m.diffuse, m.specular, m.emissive = c[0:4], c[4:8], c[8:12], c[12:16]
    m.specular_power, m.material_depth, m.parallax_quality = _floats(r, 3)
    m.color_op = r.unpack("8I")
    m.tex_coord_set = r.unpack("8I")
    m.textures = [_texture(r, i) for i in range(8)]
    m.shader_pack_exists = _bool(r)
    if m.shader_pack_exists:
        m.shader_pack = _embedded_raw(r, "$U3D_SHADER_PACK")
    m.extra = r.rest()
    return m


def _keys(r: Reader, dtype: np.dtype, what: str) -> np.ndarray:
    n = r.u32()
    r.check_count(n, dtype.itemsize, what)
    return r.array(dtype, n)


def _bone(r: Reader) -> Bone:
    b = Bone(i_bone=r.u32(), name=r.cstring(), i_parent=r.u32(), bone_frame=r.f32(),
             pass_on_bone_frame=_bool(r))
    n_mesh = r.u32()
    r.check_count(n_mesh, 4 + 64, "appended meshes")
    b.meshes = r.array("<u4", n_mesh)
    b.mesh_to_bone = r.array("<f4", n_mesh * 16).reshape(n_mesh, 4, 4)
    b.scaling_keys = _keys(r, SCALE_KEY, "scaling keys")
    b.translation_keys = _keys(r, SCALE_KEY, "translation keys")
    b.rotation_keys = _keys(r, ROT_KEY, "rotation keys")
    b.extra = r.rest()
    return b


def _actions(r: Reader) -> ActionRanges:
    n = r.u32()
    r.check_count(n, 9, "actions")   # an empty name and two DWORDs at least
    acts = []
    for _ in range(n):
        name = r.cstring()
        first, last = r.unpack("2I")
        acts.append((name, first, last))
    return ActionRanges(acts, r.rest())


_KNOWN = {"$U3D_MESH": _mesh, "$U3D_MATERIAL": _material, "$U3D_BONE": _bone,
          "$U3D_ACTION_RANGE": _actions}


def parse_chunks(data: bytes, start: int, model: Model) -> dict[int, int]:
    """The chunk list from `start` to the end. -> {id(chunk): offset} for validation messages."""
    r = Reader(data, start)
    header: ModelHeader | None = None
    offsets: dict[int, int] = {}
    counts: dict[str, int] = {}
    while r.remaining:
        start = r.pos
        ident, end = chunk_header(r)
        k = counts[ident] = counts.get(ident, -1) + 1
        with r.chunk(f"{ident}[{k}]", end):
            if ident == "$U3D_MODEL_HEADER":
                if header is not None:
                    r.fail("a second $U3D_MODEL_HEADER (it must occur once)", start)
                chunk = header = _model_header(r)
            elif ident in _KNOWN:
                if header is None:
                    r.fail(f"{ident} before $U3D_MODEL_HEADER", start)
                chunk = _mesh(r, header) if ident == "$U3D_MESH" else _KNOWN[ident](r)
            else:
                chunk = RawChunk(ident, r.rest())
        r.pos = end          # always continue at chunk start + ChunkSize
        offsets[id(chunk)] = start
        model.chunks.append(chunk)
    if header is None:
        raise FormatError("no $U3D_MODEL_HEADER chunk", len(data), "")
    return offsets


def read(data: bytes, warnings: Warnings, password: str = "", source: str = "") -> Model:
    r = Reader(data)
    fh = read_file_header(r)
    model = Model(file_header=fh, source=source)
    if fh.major > 2:
        raise UnsupportedFeature(f".u3d file version {fh.major}.{fh.minor}.{fh.subminor} is newer than 2.x")
    if fh.compression:
        raise UnsupportedFeature(f".u3d compression version {fh.compression} is not supported "
                                 "(the format documents none)")
    if fh.encryption == 2:
        body, model.padding = crypto.decrypt(data[r.pos:], password, r.pos)
        model.password = password
        try:
            validate(model, parse_chunks(body, 0, model), warnings)
        except FormatError as e:
            # the notes: the right password yields data that parses to the end
            raise WrongPassword(f"wrong password: the decrypted data does not parse ({e})") from e
        return model
    if fh.encryption:
        raise UnsupportedFeature(f".u3d encryption version {fh.encryption} is undocumented and not supported"
                                 if fh.encryption == 1 else
                                 f"unknown .u3d encryption version {fh.encryption}")
    validate(model, parse_chunks(data, r.pos, model), warnings)
    return model
