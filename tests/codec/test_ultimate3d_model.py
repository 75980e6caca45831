"""Ultimate 3D file model: every documented field read as the documents say, and
write(read(b)) == b on files that cover every optional field (v2.0 and v1.0)."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from addon.codec import check
from addon.codec.errors import Warnings
from addon.codec.formats.ultimate3d.write import encode_bytes
from addon.codec.formats.ultimate3d.read import parse
from addon.codec.formats.ultimate3d.model import Model, ModelV1, RawChunk
from tests.codec import u3d_fixtures as fx

SKIN_MATRIX = fx.translation(0, -1, 0)


def full_skinned_v2() -> bytes:
    """Every optional v2 field: header extra, shader template, 4 texcoord sets of 1..4 dimensions, tangent
    frames, skinning, shadow geometry, textures (2D, cube, height map), shader pack, bones with keys, actions,
    unknown chunks and unknown chunk tails, chunks in an unusual order."""
    n = 4
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 0, 1)]
    tcs = [[(0.1 * i, 0.2 * i) for i in range(n)], [(i, 1.0, 2.0) for i in range(n)], [(0.5 * i,) for i in range(n)],
           [(1, 2, 3, float(i)) for i in range(n)]]
    sh = fx.shadow([[0, 0, 0, 0.5, 0.25, 0, 0, 1, 0]] * 2 + [[1, 1, 1, 0.5, 0.25, 0, 0, 1, 0]], [(0, 1, 2)],
                   extra=b"SHX")
    mesh = fx.mesh("skin", pos, normals=[(0, 0), (100, -200), (32767, 0), (-32767, 32767)], texcoords=tcs,
                   tris=[(0, 1, 2), (0, 2, 3), (0, 3, 1)], mats=[0, 1, 1], valid=1, ns=-1.0,
                   weights=[(0.5, 0.25)] * n, indices=[(0, 1, 0, 0)] * n, shadow_chunk=sh, extra=b"MESHTAIL")
    mats = (fx.material(1, "second", ops=(5, 4, 1, 1, 1, 1, 1, 1), tcs=(0, 0x10000, 0, 0, 0, 0, 0, 0),
                        textures=[fx.texture(["*wall.png"], 256, 128), fx.texture([f"c{i}.dds" for i in range(6)],
                                                                                    64, 0, cube=1, extra=b"TX")],
                        shader=b"\x01\x02\x03", extra=b"MT")
            + fx.material(0, "first", textures=[fx.texture(["h.bmp"], normal=1, height_scalar=2.5)]))
    bones = (fx.bone(1, "child", 0, 3.0, 0, [0], [SKIN_MATRIX], skeys=[(0, (1, 1, 1)), (5, (2, 2, 2))],
                     tkeys=[(0, (0, 1, 0))], rkeys=[(0, (0, 0, 0, 1)), (5, (0, 0.70710677, 0, 0.70710677))],
                     extra=b"BX")
             + fx.bone(0, "root", meshes=[0], matrices=[fx.IDENTITY]))
    return (fx.file_header(extra=b"FHX")
            + fx.model_header(n_mat=2, n_bone=2, n_frame=6, dims=(2, 3, 1, 4, 0, 0, 0, 0), nsw=2, shader=b"TPL",
                              extra=b"HDRX")
            + fx.actions([("walk", 0, 2), ("run", 3, 5)], extra=b"AX")
            + bones + fx.chunk("$U3DC_CUSTOM", b"anything") + mats + mesh + fx.chunk("$U3DC_EMPTY", b""))


def frames_v2() -> bytes:
    """No bones: 2 frames x 2 LoDs, vertex tweening, TrianglesOwned = false for frame 1."""
    pos0 = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    pos1 = [(0, 0, 0), (2, 0, 0), (0, 2, 0)]
    return (fx.file_header() + fx.model_header(n_mesh=4, n_frame=2, n_lod=2, tween=1, lod_dist=(10.0, fx.FLT_MAX))
            + fx.mesh("hi", pos0) + fx.mesh("lo", pos0, lod=1) + fx.mesh("hi", pos1, frame=1, owned=0)
            + fx.mesh("lo", pos1, lod=1, frame=1, owned=0) + fx.material())


FRAME_POS = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0)]


def frames_topology_v2() -> bytes:
    """No bones, 3 frames of 4 vertices: frame 1 owns other triangles and another material, frame 2 shares
    frame 0's indices (TrianglesOwned = false) with moved vertices."""
    moved = [(x, y, 2.0) for x, y, _ in FRAME_POS]
    return (fx.file_header() + fx.model_header(n_mesh=3, n_frame=3, n_mat=2)
            + fx.mesh("a", FRAME_POS, texcoords=[[(0, 0)] * 4], tris=[(0, 1, 2)], mats=[0])
            + fx.mesh("a", FRAME_POS, texcoords=[[(0, 0)] * 4], frame=1, tris=[(1, 3, 2)], mats=[1])
            + fx.mesh("a", moved, texcoords=[[(0, 0)] * 4], frame=2, owned=0)
            + fx.material(0) + fx.material(1, "m1"))


def nameless_bones_v2(name_a: str = "", name_b: str = "") -> bytes:
    """The auditor's repro: two bones with empty (or equal) names, skinned, the second keyed."""
    n = 3
    return (fx.file_header() + fx.model_header(n_bone=2, nsw=1, n_frame=2)
            + fx.mesh("s", weights=[(0.25,)] * n, indices=[(0, 1, 0, 0)] * n) + fx.material()
            + fx.bone(0, name_a, meshes=[0], matrices=[fx.IDENTITY])
            + fx.bone(1, name_b, parent=0, meshes=[0], matrices=[fx.translation(0, -1, 0)],
                      tkeys=[(0, (0, 1, 0)), (1, (5, 1, 0))]))


def _rt(data: bytes, password: str = ""):
    w = Warnings()
    model = parse(data, w, password)
    assert encode_bytes(model) == data
    return model, w


def test_v2_every_optional_field_round_trips_byte_for_byte():
    data = full_skinned_v2()
    model, w = _rt(data)
    assert isinstance(model, Model) and not w.as_list()
    h = model.header
    assert (h.n_mesh, h.n_material, h.n_bone, h.n_frame, h.n_skin_weight) == (1, 2, 2, 6, 2)
    assert h.tex_coord_dimension == (2, 3, 1, 4, 0, 0, 0, 0)
    assert h.shader_pack_template == b"TPL" and h.extra == b"HDRX" and model.file_header.extra == b"FHX"
    m = model.meshes[0]
    assert m.name == "skin" and m.normal_scalar == -1.0 and m.valid_tangent_frames == 1
    assert [None if t is None else t.shape for t in m.texcoords[:5]] == [(4, 2), (4, 3), (4, 1), (4, 4), None]
    assert m.skin_weights.shape == (4, 2) and m.bone_indices.tolist()[0] == [0, 1, 0, 0]
    assert m.triangles.dtype == np.dtype("<u2") and m.triangle_material.tolist() == [0, 1, 1]
    assert m.shadow.vertices.shape == (3, 9) and m.shadow.extra == b"SHX" and m.extra == b"MESHTAIL"
    mats = model.materials
    assert [x.name for x in mats] == ["first", "second"]
    assert mats[1].shader_pack == b"\x01\x02\x03" and mats[1].extra == b"MT"
    assert mats[1].textures[1].is_cube == 1 and len(mats[1].textures[1].files) == 6
    assert mats[1].textures[1].extra == b"TX" and mats[1].textures[0].files == ["*wall.png"]
    assert mats[0].textures[0].is_normal_map == 1 and mats[0].textures[0].height_scalar == 2.5
    b = model.bones
    assert [x.name for x in b] == ["root", "child"] and b[1].i_parent == 0 and b[0].i_parent == 0xFFFFFFFF
    assert b[1].bone_frame == 3.0 and b[1].pass_on_bone_frame == 0 and b[1].extra == b"BX"
    assert b[1].scaling_keys["frame"].tolist() == [0, 5] and b[1].mesh_to_bone[0, 3, 1] == -1.0
    assert model.actions == [("walk", 0, 2), ("run", 3, 5)]
    raw = [c for c in model.chunks if isinstance(c, RawChunk)]
    assert [(c.ident, c.data) for c in raw] == [("$U3DC_CUSTOM", b"anything"), ("$U3DC_EMPTY", b"")]


def test_v2_frames_lods_and_shared_indices_round_trip():
    model, _ = _rt(frames_v2())
    ms = model.meshes
    assert [(m.i_lod, m.i_frame, m.triangles_owned) for m in ms] == [(0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 0)]
    assert ms[2].triangles is None and ms[2].triangle_material is None
    assert model.header.vertex_tweening == 1 and model.header.lod_max_camera_distance.tolist()[0] == 10.0


def test_triangle32_above_65536_vertices():
    n = 65537
    pos = np.zeros((n, 3), "<f4")
    body = (fx.u32(0, 0, 0) + fx.s("big") + fx.f32(1.0) + b"\0" + fx.u32(n) + pos.tobytes() + bytes(4 * n)
            + bytes(8 * n) + fx.u32(1) + b"\1" + struct.pack("<3I", 0, 1, 65536) + struct.pack("<H", 0) + b"\0")
    data = fx.file_header() + fx.model_header() + fx.chunk("$U3D_MESH", body) + fx.material()
    model, _ = _rt(data)
    assert model.meshes[0].triangles.dtype == np.dtype("<u4")
    assert model.meshes[0].triangles.tolist() == [[0, 1, 65536]]


def test_triangle16_at_exactly_65536_vertices():
    n = 65536
    body = (fx.u32(0, 0, 0) + fx.s("edge") + fx.f32(1.0) + b"\0" + fx.u32(n) + bytes(12 * n) + bytes(4 * n)
            + bytes(8 * n) + fx.u32(1) + b"\1" + struct.pack("<3H", 0, 1, 65535) + struct.pack("<H", 0) + b"\0")
    model, _ = _rt(fx.file_header() + fx.model_header() + fx.chunk("$U3D_MESH", body) + fx.material())
    assert model.meshes[0].triangles.dtype == np.dtype("<u2")


def test_chunk_size_is_always_followed():
    """Unknown data at the end of a known chunk is skipped by size, not misread as a chunk."""
    data = fx.file_header() + fx.model_header(extra=fx.chunk("$U3D_MESH", b"not a mesh")) + fx.mesh() + fx.material()
    model, _ = _rt(data)
    assert len(model.meshes) == 1 and model.header.extra.startswith(b"$U3D_MESH\0")


def v1_full(nlod_dword=False) -> bytes:
    """Every v1 field: 2 LoDs, cel shading, shadow geometry, skinning, textures, skipped effects, bones, trailing."""
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    hdr = fx.v1_header(n_mesh=2, n_lod=2, n_mat=3, n_bone=2, cel=0.5, cel_color=(1, 0, 0, 1), alpha=0,
                       levels=(0.5,), dist_sq=(100.0,), nlod_dword=nlod_dword)
    m0 = fx.v1_mesh("hi", pos, normals=[(0, 0), (31, -127), (-31, 127)], dims=(2, 3, 0, 0, 0, 0, 0, 0),
                    texcoords=[[(0.5, 0.5)] * 3, [(1, 2, 3)] * 3], nsw=1, weights=[(0.75,)] * 3,
                    indices=[(0, 1, 0, 0)] * 3, max_blend=1, shadow_v=[[0] * 8] * 3, shadow_t=[(0, 1, 2)])
    m1 = fx.v1_mesh("lo", pos, lod=0.5, nsw=1, weights=[(1.0,)] * 3, indices=[(1, 0, 0, 0)] * 3)
    mats = (fx.v1_material("plain", n_tex=1, stages=[(0, "id0", 64, 32, "tex.bmp")] + [None] * 7)
            + fx.v1_material("fx", effect=1, tail=b"EFFECTDATA")
            + fx.v1_material("res", export_resources=1, tail=b"RESOURCES"))
    bones = (fx.v1_bone("root", meshes=[0, 1], matrices=[fx.IDENTITY, fx.IDENTITY], unused=(1, 2, 3),
                        tkeys=[(0, (0, 0, 0)), (4, (0, 1, 0))])
             + fx.v1_bone("child", parent=0, rkeys=[(2, (0, 0, 0, 1))]))
    return hdr + m0 + m1 + mats + bones + b"TRAILER"


@pytest.mark.parametrize("dword", [False, True])
def test_v1_every_field_round_trips_byte_for_byte(dword):
    model, w = _rt(v1_full(dword))
    assert isinstance(model, ModelV1)
    h = model.header
    assert h.nlod_is_dword == dword and h.n_lod == 2 and h.lod_level_of_detail.tolist() == [0.5]
    assert h.cel_shading_strength == 0.5 and h.alpha_blending == 0 and h.lod_camera_distance_sq.tolist() == [100.0]
    m0, m1 = model.meshes
    assert m0.normals.dtype == np.dtype("i1") and m0.normals.tolist()[1] == [31, -127]
    assert m0.texcoords[1].shape == (3, 3) and m0.shadow_vertices.shape == (3, 8) and m1.lod == 0.5
    plain, fxm, res = model.materials
    assert plain.textures[0].file == "tex.bmp" and plain.textures[0].width == 64 and plain.textures[0].identifier == "id0"
    assert fxm.effect_used == 1 and fxm.raw_tail == b"EFFECTDATA"
    assert res.export_resources == 1 and res.raw_tail == b"RESOURCES"
    assert model.bones[0].unused == (1, 2, 3) and model.bones[0].translation_keys["frame"].tolist() == [0, 4]
    assert model.bones[1].i_parent == 0 and model.trailing == b"TRAILER"
    assert any("TRAILER" in x or "7 bytes" in x for x in w.as_list())


def test_v1_texcoords_not_owned_are_absent():
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    data = (fx.v1_header(n_mesh=2, n_frame=2) + fx.v1_mesh("a", pos) +
            fx.v1_mesh("a", pos, frame=1, use_buf=1, tc_owned=0, owned=0) + fx.v1_material())
    model, _ = _rt(data)
    assert model.meshes[1].texcoords == [None] * 8 and model.meshes[1].triangles is None


def test_check_command_on_generated_files(tmp_path):
    for name, data in (("full.u3d", full_skinned_v2()), ("frames.u3d", frames_v2()), ("v1.u3d", v1_full())):
        (tmp_path / name).write_bytes(data)
        results = check(tmp_path / name)
        assert [r.ok for r in results] == [True], results


def test_encrypted_round_trip_keeps_padding():
    from Crypto.Cipher import AES
    plain = fx.model_header() + fx.mesh() + fx.material()
    n = 16 - len(plain) % 16
    pad = bytes(range(1, n)) + bytes([n])          # odd padding bytes: only the last one counts
    key = b"pw".ljust(16, b"\0")
    data = fx.file_header(enc=2) + AES.new(key, AES.MODE_ECB).encrypt(plain + pad)
    model, _ = _rt(data, "pw")
    assert model.meshes[0].name == "m" and model.padding == pad



def test_committed_sample_files_equal_their_fixtures():
    from tests.conftest import ASSETS
    assert (ASSETS / "ultimate3d" / "cube_v2.u3d").read_bytes() == fx.cube_file()
    assert (ASSETS / "ultimate3d" / "skinned_v2.u3d").read_bytes() == full_skinned_v2()
