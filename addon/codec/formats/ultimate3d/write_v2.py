"""Model -> bytes for v2.0, the mirror of read_v2 (byte-exact for what it read)."""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np

from ...binary import Writer
from ...errors import CodecError
from . import crypto
from .model import (FILE_HEADER, ROT_KEY, SCALE_KEY, ActionRanges, Bone, FileHeader, Material, Mesh, Model,
                    ModelHeader, RawChunk, ShadowGeometry, Texture, index_dtype)


@contextmanager
def chunk(w: Writer, ident: str):
    """Writes the header, the body, then patches ChunkSize."""
    w.cstring(ident)
    at = w.tell()
    w.u32(0)
    yield w
    w.patch(at, "u32", w.tell() - at - 4)


def _file_header(w: Writer, fh: FileHeader) -> None:
    with chunk(w, FILE_HEADER):
        w.pack("5I", fh.major, fh.minor, fh.subminor, fh.encryption, fh.compression)
        w.bytes(fh.extra)


def _model_header(w: Writer, h: ModelHeader) -> None:
    w.pack("6I", h.n_mesh, h.n_mesh_per_frame, h.n_frame, h.n_lod, h.n_material, h.n_bone)
    w.u8(h.vertex_tweening)
    w.array(h.lod_max_camera_distance, "<f4")
    w.pack("8I", *h.tex_coord_dimension)
    w.u32(h.n_skin_weight)
    w.u8(h.shader_pack_template_exists)
    if h.shader_pack_template_exists:
        with chunk(w, "$U3D_SHADER_PACK"):
            w.bytes(h.shader_pack_template or b"")
    w.bytes(h.extra)


def _shadow(w: Writer, s: ShadowGeometry) -> None:
    with chunk(w, "$U3D_SHADOW_GEOMETRY"):
        w.pack("2I", len(s.vertices), len(s.triangles))
        w.array(s.vertices, "<u4")
        w.array(s.triangles, index_dtype(len(s.vertices)))
        w.bytes(s.extra)


class _Out(Writer):
    """A Writer that keeps large arrays by reference: the file is joined once, at the end, so
    that the bulk of a big mesh is copied once rather than appended and copied again."""

    def __init__(self) -> None:
        super().__init__()
        self.done: list = []            # finished segments: bytearrays and arrays' memoryviews
        self.base = 0                   # their total size

    def tell(self) -> int:
        return self.base + len(self.parts)

    def patch(self, offset: int, kind: str, value) -> None:
        start = self.base
        for seg in [self.parts] + self.done[::-1]:
            if seg is not self.parts:
                start -= len(seg)
            if offset >= start:
                w = Writer()
                w.parts = seg                   # (sizes are always written into a bytearray)
                w.patch(offset - start, kind, value)
                return
        raise IndexError(offset)

    def big(self, buf: memoryview) -> None:
        self.done += [self.parts, buf]
        self.base += len(self.parts) + len(buf)
        self.parts = bytearray()

    def segments(self) -> list:
        return self.done + [self.parts]

    def getvalue(self) -> bytes:
        return b"".join(self.segments())


def _bulk(w: Writer, a: np.ndarray, dtype: str) -> None:
    """Writer.array, with large arrays kept by reference in an _Out."""
    a = np.ascontiguousarray(np.asarray(a).astype(dtype, copy=False))
    if isinstance(w, _Out) and a.nbytes >= 1 << 16:
        w.big(memoryview(a).cast("B"))
    else:
        w.bytes(memoryview(a).cast("B") if a.size else b"")


def _mesh(w: Writer, m: Mesh, h: ModelHeader) -> None:
    n = len(m.positions)
    w.pack("3I", m.i_mesh_per_frame, m.i_lod, m.i_frame)
    w.cstring(m.name)
    w.f32(m.normal_scalar)
    w.u8(m.valid_tangent_frames)
    w.u32(n)
    _bulk(w, m.positions, "<f4")
    _bulk(w, m.normals, "<i2")
    for dim, tc in zip(h.tex_coord_dimension, m.texcoords):
        if dim:
            if tc is None or tc.shape != (n, dim):
                raise CodecError(f"mesh {m.name!r}: texture coordinates do not match the header's dimension {dim}")
            _bulk(w, tc, "<f4")
    if h.n_skin_weight:
        if m.skin_weights is None or m.skin_weights.shape != (n, h.n_skin_weight):
            raise CodecError(f"mesh {m.name!r}: skin weights do not match nSkinWeight {h.n_skin_weight}")
        _bulk(w, m.skin_weights, "<f4")
        _bulk(w, m.bone_indices, "u1")
    w.u32(m.n_triangle)
    w.u8(m.triangles_owned)
    if m.triangles_owned:
        _bulk(w, m.triangles, index_dtype(n))
        _bulk(w, m.triangle_material, "<u2")
    w.u8(m.shadow_exists)
    if m.shadow_exists:
        _shadow(w, m.shadow)
    w.bytes(m.extra)


def _texture(w: Writer, t: Texture) -> None:
    with chunk(w, "$U3D_TEXTURE"):
        w.u8(t.holds_texture)
        if t.holds_texture:
            w.pack("2I", t.width, t.height)
            w.u8(t.is_cube)
            w.u8(t.is_normal_map)
            w.f32(t.height_scalar)
            files = list(t.files) + [""] * 6
            for name in files[:6 if t.is_cube else 1]:
                w.cstring(name)
        w.bytes(t.extra)


def _material(w: Writer, m: Material) -> None:
    w.u32(m.i_material)
    w.cstring(m.name)
    w.pack("16f", *m.ambient, *m.diffuse, *m.specular, *m.emissive)
    w.pack("3f", m.specular_power, m.material_depth, m.parallax_quality)
    w.pack("8I", *m.color_op)
    w.pack("8I", *m.tex_coord_set)
    for t in m.textures:
        _texture(w, t)
    w.u8(m.shader_pack_exists)
    if m.shader_pack_exists:
        with chunk(w, "$U3D_SHADER_PACK"):
            w.bytes(m.shader_pack or b"")
    w.bytes(m.extra)


def _keys(w: Writer, keys: np.ndarray, dtype: np.dtype) -> None:
    w.u32(len(keys))
    w.array(np.asarray(keys).astype(dtype, copy=False))


def _bone(w: Writer, b: Bone) -> None:
    w.u32(b.i_bone)
    w.cstring(b.name)
    w.u32(b.i_parent)
    w.f32(b.bone_frame)
    w.u8(b.pass_on_bone_frame)
    w.u32(len(b.meshes))
    w.array(b.meshes, "<u4")
    w.array(b.mesh_to_bone, "<f4")
    _keys(w, b.scaling_keys, SCALE_KEY)
    _keys(w, b.translation_keys, SCALE_KEY)
    _keys(w, b.rotation_keys, ROT_KEY)
    w.bytes(b.extra)


def _actions(w: Writer, a: ActionRanges) -> None:
    w.u32(len(a.actions))
    for name, first, last in a.actions:
        w.cstring(name)
        w.pack("2I", first, last)
    w.bytes(a.extra)


def write_chunks(w: Writer, model: Model) -> None:
    h = model.header
    for c in model.chunks:
        if isinstance(c, RawChunk):
            with chunk(w, c.ident):
                w.bytes(c.data)
            continue
        ident, fn = {ModelHeader: ("$U3D_MODEL_HEADER", _model_header), Mesh: ("$U3D_MESH", _mesh),
                     Material: ("$U3D_MATERIAL", _material), Bone: ("$U3D_BONE", _bone),
                     ActionRanges: ("$U3D_ACTION_RANGE", _actions)}[type(c)]
        with chunk(w, ident):
            fn(w, c, h) if fn is _mesh else fn(w, c)


def write(model: Model) -> bytes:
    w = Writer()
    _file_header(w, model.file_header)
    body = _Out()
    write_chunks(body, model)
    fh = model.file_header
    if fh.encryption == 2:
        w.bytes(crypto.encrypt(body.getvalue(), model.password, model.padding))
    elif fh.encryption or fh.compression:
        raise CodecError("only unencrypted or AES (version 2) uncompressed .u3d files can be written")
    else:
        return b"".join([w.parts] + body.segments())      # the one copy of the (large) body
    return w.getvalue()
