"""Hand-built Ultimate 3D (.u3d) files for the test_ultimate3d*.py tests.

No sample files exist anywhere, so these are written from the two format
documents and the notes with struct, independently of the codec: the tests
never check the codec against itself.
"""
from __future__ import annotations

import struct

FLT_MAX = 3.4028234663852886e+38


def s(text: str) -> bytes:
    return text.encode("latin-1") + b"\0"


def chunk(ident: str, data: bytes) -> bytes:
    return s(ident) + struct.pack("<I", len(data)) + data


def f32(*v) -> bytes:
    return struct.pack(f"<{len(v)}f", *v)


def u32(*v) -> bytes:
    return struct.pack(f"<{len(v)}I", *v)


# ----------------------------------------------------------------------------- v2.0
def file_header(major=2, minor=0, sub=0, enc=0, comp=0, extra=b"") -> bytes:
    return chunk("$U3D_FILE_HEADER", u32(major, minor, sub, enc, comp) + extra)


def model_header(n_mesh=1, n_mpf=1, n_frame=1, n_lod=1, n_mat=1, n_bone=0, tween=0, lod_dist=(FLT_MAX,),
                 dims=(2, 0, 0, 0, 0, 0, 0, 0), nsw=0, shader: bytes | None = None, extra=b"") -> bytes:
    d = u32(n_mesh, n_mpf, n_frame, n_lod, n_mat, n_bone) + bytes([tween]) + f32(*lod_dist) + u32(*dims) + u32(nsw)
    d += b"\1" + chunk("$U3D_SHADER_PACK", shader) if shader is not None else b"\0"
    return chunk("$U3D_MODEL_HEADER", d + extra)


def tri_block(tris, n_vertex: int) -> bytes:
    # Triangle16 when nVertex <= 65536, else Triangle32 (the document)
    fmt = "H" if n_vertex <= 65536 else "I"
    return b"".join(struct.pack(f"<3{fmt}", *t) for t in tris)


def shadow(vertices: list[list[float]], tris, extra=b"") -> bytes:
    d = u32(len(vertices), len(tris)) + b"".join(f32(*v) for v in vertices) + tri_block(tris, len(vertices))
    return chunk("$U3D_SHADOW_GEOMETRY", d + extra)


def mesh(name="m", positions=((0, 0, 0), (1, 0, 0), (0, 1, 0)), normals=None, texcoords=None, tris=((0, 1, 2),),
         mats=None, mpf=0, lod=0, frame=0, ns=1.0, valid=0, weights=None, indices=None, owned=1,
         shadow_chunk: bytes | None = None, extra=b"") -> bytes:
    n = len(positions)
    normals = normals or [(0, 0)] * n
    texcoords = texcoords if texcoords is not None else [[(0.0, 0.0)] * n]
    d = u32(mpf, lod, frame) + s(name) + f32(ns) + bytes([valid]) + u32(n)
    d += b"".join(f32(*p) for p in positions)
    d += b"".join(struct.pack("<2h", *nn) for nn in normals)
    for tset in texcoords:
        d += b"".join(f32(*t) for t in tset)
    if weights is not None:
        d += b"".join(f32(*w) for w in weights) + b"".join(bytes(i) for i in indices)
    d += u32(len(tris)) + bytes([owned])
    if owned:
        d += tri_block(tris, n) + struct.pack(f"<{len(tris)}H", *(mats or [0] * len(tris)))
    d += b"\1" + shadow_chunk if shadow_chunk is not None else b"\0"
    return chunk("$U3D_MESH", d + extra)


def texture(files=None, width=0, height=0, cube=0, normal=0, height_scalar=0.0, extra=b"") -> bytes:
    if files is None:
        return chunk("$U3D_TEXTURE", b"\0" + extra)
    d = b"\1" + u32(width, height) + bytes([cube, normal]) + f32(height_scalar) + b"".join(s(f) for f in files)
    return chunk("$U3D_TEXTURE", d + extra)


def material(index=0, name="mat", ambient=(0.1, 0.1, 0.1, 1), diffuse=(0.8, 0.6, 0.4, 1), specular=(0.5, 0.5, 0.5, 1),
             emissive=(0, 0, 0, 1), power=16.0, depth=0.0, quality=1.0, ops=(1,) * 8, tcs=(0,) * 8,
             textures: list[bytes] | None = None, shader: bytes | None = None, extra=b"") -> bytes:
    textures = (textures or []) + [texture()] * (8 - len(textures or []))
    d = u32(index) + s(name) + f32(*ambient, *diffuse, *specular, *emissive, power, depth, quality)
    d += u32(*ops) + u32(*tcs) + b"".join(textures)
    d += b"\1" + chunk("$U3D_SHADER_PACK", shader) if shader is not None else b"\0"
    return chunk("$U3D_MATERIAL", d + extra)


def bone(index=0, name="b", parent=0xFFFFFFFF, bone_frame=-1.0, pass_on=1, meshes=(), matrices=(),
         skeys=(), tkeys=(), rkeys=(), extra=b"") -> bytes:
    d = u32(index) + s(name) + u32(parent) + f32(bone_frame) + bytes([pass_on]) + u32(len(meshes))
    d += u32(*meshes) + b"".join(f32(*m) for m in matrices)
    for keys in (skeys, tkeys):
        d += u32(len(keys)) + b"".join(u32(f) + f32(*v) for f, v in keys)
    d += u32(len(rkeys)) + b"".join(u32(f) + f32(*q) for f, q in rkeys)
    return chunk("$U3D_BONE", d + extra)


def actions(items, extra=b"") -> bytes:
    return chunk("$U3D_ACTION_RANGE", u32(len(items)) + b"".join(s(n) + u32(a, b) for n, a, b in items) + extra)


IDENTITY = (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1)


def translation(x, y, z):
    """Row-vector (Direct3D) translation: elements 12, 13, 14."""
    return (1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, x, y, z, 1)


# A cube in U3D axes (Y up) whose triangles, in file order, have the plain
# cross product (v1 - v0) x (v2 - v0) pointing outward (the notes).
CUBE_POS = [(x, y, z) for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]


def _outward_tris():
    import numpy as np
    p = np.array(CUBE_POS, float)
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    out = []
    for q in quads:
        for t in ((q[0], q[1], q[2]), (q[0], q[2], q[3])):
            n = np.cross(p[t[1]] - p[t[0]], p[t[2]] - p[t[0]])
            c = p[list(t)].mean(0)
            out.append(t if n @ c > 0 else (t[0], t[2], t[1]))
    return out


CUBE_TRIS = _outward_tris()


def cube_file(extra_chunks: bytes = b"") -> bytes:
    return (file_header() + model_header() + mesh("cube", CUBE_POS, tris=CUBE_TRIS, texcoords=[[(0, 0)] * 8])
            + material() + extra_chunks)


# ----------------------------------------------------------------------------- v1.0
def v1_header(n_mesh=1, n_mpf=1, n_frame=1, n_lod=1, n_mat=1, n_bone=0, cel=0.0, cel_color=(0, 0, 0, 1),
              alpha=1, tween=0, levels=(), dist_sq=(), nlod_dword=False) -> bytes:
    d = b"U3DModelFile\0" + f32(1.0) + struct.pack("<HHI", n_mesh, n_mpf, n_frame)
    d += struct.pack("<I" if nlod_dword else "<H", n_lod) + struct.pack("<HH", n_mat, n_bone)
    return d + f32(cel, *cel_color) + bytes([alpha, tween]) + f32(*levels) + f32(*dist_sq)


def v1_mesh(name="m", positions=((0, 0, 0), (1, 0, 0), (0, 1, 0)), normals=None, dims=(2, 0, 0, 0, 0, 0, 0, 0),
            texcoords=None, tris=((0, 1, 2),), mats=None, frame=0, lod=1.0, ns=1.0, nsw=0, weights=None,
            indices=None, max_blend=0, shadow_v=(), shadow_t=(), use_buf=0, tc_owned=1, owned=1) -> bytes:
    n = len(positions)
    normals = normals or [(0, 0)] * n
    texcoords = texcoords if texcoords is not None else [[(0.0, 0.0)] * n]
    d = b"$U3D_MESH\0" + s(name) + struct.pack("<H", frame) + f32(lod, ns) + b"\0" + struct.pack("<H", n)
    d += struct.pack("<8H", *dims) + struct.pack("<H", nsw) + bytes([max_blend])
    d += struct.pack("<2H", len(shadow_v), len(shadow_t)) + b"".join(f32(*v) for v in shadow_v)
    d += b"".join(struct.pack("<3H", *t) for t in shadow_t)
    d += b"".join(f32(*p) for p in positions) + b"".join(struct.pack("<2b", *nn) for nn in normals)
    d += bytes([use_buf, tc_owned])
    if not (use_buf and not tc_owned):
        for tset in texcoords:
            d += b"".join(f32(*t) for t in tset)
    if nsw:
        d += b"".join(f32(*w) for w in weights) + b"".join(bytes(i) for i in indices)
    d += struct.pack("<H", len(tris)) + bytes([owned])
    if owned:
        d += b"".join(struct.pack("<3H", *t) for t in tris) + struct.pack(f"<{len(tris)}H", *(mats or [0] * len(tris)))
    return d


def v1_material(name="mat", colors=(0.1, 0.1, 0.1, 1, 0.8, 0.6, 0.4, 1, 0.5, 0.5, 0.5, 1, 0, 0, 0, 1), power=8.0,
                n_tex=0, ops=(1,) * 8, tcs=(0,) * 8, export_resources=0, stages=None, effect=0,
                tail=b"") -> bytes:
    d = b"$U3D_MAT\0" + s(name) + f32(*colors, power) + struct.pack("<H", n_tex) + u32(*ops) + u32(*tcs)
    d += bytes([export_resources])
    if export_resources:
        return d + tail
    for st in (stages or [None] * 8):
        if st is None:
            d += b"\0"
        else:
            typ, ident, w, h, f = st
            d += b"\1" + u32(typ)
            if typ != 0:
                return d + tail
            d += s(ident) + struct.pack("<2H", w, h) + s(f)
    return d + bytes([effect]) + (tail if effect else b"")


def v1_bone(name="b", parent=0xFFFF, bone_frame=-1.0, pass_on=1, meshes=(), matrices=(), skeys=(), tkeys=(),
            rkeys=(), unused=(0, 0, 0)) -> bytes:
    d = b"$U3D_BONE\0" + s(name) + struct.pack("<H", parent) + f32(bone_frame) + bytes([pass_on])
    d += struct.pack(f"<H{len(meshes)}H", len(meshes), *meshes) + b"".join(f32(*m) for m in matrices)
    for keys, un in ((skeys, unused[0]), (tkeys, unused[1])):
        d += struct.pack("<2H", len(keys), un) + b"".join(struct.pack("<2H", f, 0) + f32(*v) for f, v in keys)
    d += struct.pack("<2H", len(rkeys), unused[2]) + b"".join(struct.pack("<2H", f, 0) + f32(*q) for f, q in rkeys)
    return d


# ranges that share a frame: "bend" [0, 10] then "unbend" [10, 20] on one track
BEND_KEYS = ((0, 0.0), (10, 1.0), (20, 0.0))      # (frame, U3D Y of the bone: up)


def bend_file() -> bytes:
    """One rigid triangle on one bone keyed up and down again (translation keys at 0, 10 and 20), with
    the action ranges "bend" [0, 10] and "unbend" [10, 20]."""
    tkeys = [(f, (0.0, y, 0.0)) for f, y in BEND_KEYS]
    return (file_header() + model_header(n_frame=21, n_bone=1) + mesh("leaf") + material()
            + bone(0, "stem", meshes=[0], matrices=[IDENTITY], tkeys=tkeys, rkeys=[(0, (0, 0, 0, 1))])
            + actions([("bend", 0, 10), ("unbend", 10, 20)]))


# a 2 x 2 quad in the ground plane (U3D Y = 0, facing up), with two UV sets: set 0 runs along X,
# set 1 the other way (u = (1 - X) / 2)
QUAD_POS = [(-1, 0, -1), (-1, 0, 1), (1, 0, 1), (1, 0, -1)]
QUAD_TRIS = [(0, 1, 2), (0, 2, 3)]                # (v1 - v0) x (v2 - v0) = +Y: the front faces up


def stage_quad(ops=(1,) * 8, tcs=(0,) * 8, textures=(), diffuse=(1, 1, 1, 1)) -> bytes:
    """The quad with one material whose stages have these colour operations, UV sets and textures."""
    uv0 = [((x + 1) / 2, (z + 1) / 2) for x, _, z in QUAD_POS]
    uv1 = [((1 - x) / 2, (z + 1) / 2) for x, _, z in QUAD_POS]
    return (file_header() + model_header(dims=(2, 2, 0, 0, 0, 0, 0, 0))
            + mesh("quad", QUAD_POS, normals=[(-32767, 0)] * 4, texcoords=[uv0, uv1], tris=QUAD_TRIS)
            + material(ambient=(0, 0, 0, 1), diffuse=diffuse, specular=(0, 0, 0, 1), ops=ops, tcs=tcs,
                       textures=list(textures)))
