"""UNIGINE ms11/an10: bad input gives a FormatError naming offset and place, never a traceback."""
from __future__ import annotations

import struct

import pytest

from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.unigine import FORMAT, read
from tests.codec.unigine_fixtures import (IDENT, Q_IDENTITY, anim_file, anim_record, cint, mesh_file, mesh_record,
                                          quad_surface, string, surface_geometry, surface_header)


def _fails(data: bytes, reader=read.read_mesh) -> FormatError:
    with pytest.raises(FormatError) as e:
        reader(data, Warnings())
    return e.value


def _skinned_quad(bones, weights=None, anims=()):
    pos = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    geo = surface_geometry([(pos, [Q_IDENTITY] * 4)], weights=weights, coord=[0, 1, 2, 0, 2, 3], tri=[0, 1, 2, 0, 2, 3])
    return mesh_file(bones=bones, poses=[IDENT] * len(bones), anims=anims, surfaces=[(surface_header("s"), geo)])


def test_wrong_magic():
    e = _fails(b"MS11" + bytes(60))
    assert e.offset == 0 and "magic" in str(e)


@pytest.mark.parametrize("magic", [b"ms10", b"ms12", b"ms13", b"ms14", b"ms15"])
def test_other_mesh_versions_are_named(magic):
    e = _fails(magic + bytes(60))
    assert magic.decode() in str(e) and "not supported" in str(e)


@pytest.mark.parametrize("magic", [b"an11", b"an12"])
def test_other_anim_versions_are_named(magic):
    e = _fails(magic + bytes(60), read.read_anim)
    assert magic.decode() in str(e)


def test_other_versions_reach_the_reader_through_sniff():
    mesh_spec, anim_spec = FORMAT
    assert mesh_spec.sniff(b"ms12" + bytes(8), "x.mesh") and anim_spec.sniff(b"an12", "x.anim")
    assert not mesh_spec.sniff(b"an10", "x.mesh") and not mesh_spec.sniff(b"RIFF", "x.mesh")


def test_second_and_closing_magic_are_checked():
    h, g = quad_surface()
    good = mesh_file(surfaces=[(h, g)])
    e = _fails(good[:-4] + b"ms1x")
    assert e.offset == len(good) - 4 and "closing" in str(e)
    second = 4 + 40 + 1 + 1 + 1 + len(h)
    assert good[second:second + 4] == b"ms11"
    e = _fails(good[:second] + b"ms12" + good[second + 4:])
    assert e.offset == second and "ms12" in str(e)


def test_sixth_continuation_byte_in_a_count():
    data = b"ms11" + bytes(40) + bytes.fromhex("ffffffffff01")
    e = _fails(data)
    assert e.offset == 44 and "sixth" in str(e)


def test_negative_count():
    e = _fails(b"ms11" + bytes(40) + cint(-3))
    assert e.offset == 44 and "negative" in str(e)


@pytest.mark.parametrize("count", [1, 1000, 1 << 30])
def test_counts_past_the_end(count):
    # a surface count that the remaining bytes cannot hold: refused before allocating
    data = b"ms11" + bytes(40) + cint(0) + cint(0) + cint(count) + string("s")
    e = _fails(data)
    assert "exceeds" in str(e) and e.offset == 44 + 2


def test_vertex_count_past_the_end():
    h, _ = quad_surface()
    geo = cint(1 << 24) + bytes(12)
    e = _fails(mesh_file(surfaces=[(h, geo)]))
    assert "vertex count" in str(e) and 'SURFACE "quad"' in e.path


@pytest.mark.parametrize("which", ["coord", "tri"])
def test_index_out_of_range(which):
    pos = [(0, 0, 0), (1, 0, 0), (1, 1, 0)]
    coord, tri = [0, 1, 2], [0, 1, 2]
    (coord if which == "coord" else tri)[1] = 3
    geo = surface_geometry([(pos, [Q_IDENTITY] * 3)], coord=coord, tri=tri)
    data = mesh_file(surfaces=[(surface_header("s"), geo)])
    e = _fails(data)
    assert "index 1 is 3" in str(e)
    assert data[e.offset] == 3
    assert ("COORDINATE" if which == "coord" else "TRIANGLE") in e.path


def test_index_lists_of_different_lengths():
    geo = surface_geometry([([(0, 0, 0)] * 3, [Q_IDENTITY] * 3)], coord=[0, 1, 2], tri=[0, 1, 2, 0, 1, 2])
    e = _fails(mesh_file(surfaces=[(surface_header("s"), geo)]))
    assert "equally long" in str(e)


def test_bone_parent_cycle():
    e = _fails(_skinned_quad([("a", 2), ("b", 0), ("c", 1), ("root", -1)]))
    assert "cycle" in str(e) and "'a'" in str(e)
    assert e.offset == 4 + 40 + 1 + 3      # bone "a"'s parent field, after its 3-byte name
    assert e.path == "MESH/BONES"


def test_self_parent_is_a_cycle():
    e = _fails(_skinned_quad([("a", 0)]))
    assert "cycle" in str(e)


def test_parent_out_of_range():
    e = _fails(_skinned_quad([("a", -1), ("b", 5)]))
    assert "parent 5" in str(e) and 'BONE 1' in e.path


def test_more_than_four_weights():
    data = _skinned_quad([("a", -1)], weights=[[(0, 1)] * 5] + [[(0, 65535)]] * 3)
    e = _fails(data)
    assert "invalid lead byte 0x05" in str(e) and "WEIGHTS" in e.path


def test_weight_records_past_the_end():
    data = _skinned_quad([("a", -1)], weights=[[(0, 65535)]] * 4)
    cut = data.index(b"\x01\x00\x00\xff\xff")   # first weight record
    broken = data[:cut - 1] + cint(40) + data[cut:]
    e = _fails(broken)
    assert "weight" in str(e)


def test_animation_bone_out_of_range():
    rec = mesh_record(0x01, (1, 0, 0))
    e = _fails(_skinned_quad([("a", -1)], anims=[("x", [3], 0x01, 1, rec)]))
    assert "bone index 3" in str(e) and 'ANIMATION "x"' in e.path


def test_flag_bit_7_is_rejected():
    rec = bytes([0x81]) + struct.pack("<f", 1.0)
    e = _fails(_skinned_quad([("a", -1)], anims=[("x", [0], 0x01, 1, rec)]))
    assert "invalid lead byte 0x81" in str(e)


def test_frame_records_past_the_end():
    rec = mesh_record(0x7F, (1, 2, 3), Q_IDENTITY, (1, 1, 1))
    data = _skinned_quad([("a", -1)], anims=[("x", [0], 0x7F, 3, rec * 3)])
    at = data.index(rec)
    e = _fails(data[:at + len(rec) * 2 + 10])
    assert e.offset is not None and "FRAMES" in e.path


def test_undeclared_components_warn():
    recs = mesh_record(0x01, (1, 0, 0)) + mesh_record(0x03, (1, 2, 0))
    w = Warnings()
    read.read_mesh(_skinned_quad([("a", -1)], anims=[("x", [0], 0x01, 2, recs)]), w)
    assert any("(0x02) missing from its flag 0x01" in x for x in w.as_list())


def test_partial_first_frame_warns():
    recs = mesh_record(0x01, (1, 0, 0)) + mesh_record(0x02, (0, 2, 0))
    w = Warnings()
    read.read_mesh(_skinned_quad([("a", -1)], anims=[("x", [0], 0x03, 2, recs)]), w)
    assert any("first-frame records do not carry every component" in x for x in w.as_list())


def test_a_boneless_animation_cannot_claim_billions_of_frames():
    from addon.codec.formats.unigine.from_scene import scene_to_mesh
    from addon.codec.formats.unigine.options import AnimImportOptions, ExportOptions, ImportOptions
    from addon.codec.formats.unigine.to_scene import anim_to_scene, mesh_to_scene
    huge = 2 ** 33                                       # a 5-byte compact int, no record behind it
    w = Warnings()
    m = read.read_mesh(_skinned_quad([("a", -1)], anims=[("idle", [], 0x00, huge, b"")]), w)
    (t,) = m.animations
    assert t.frame_count == read.MAX_EMPTY_FRAMES < 200_000
    assert any("'idle' has no bones but claims 8589934592 frames" in x for x in w.as_list())
    sc = mesh_to_scene(m, ImportOptions(), w)
    assert sc.frame_end == read.MAX_EMPTY_FRAMES - 1
    back = scene_to_mesh(sc, ExportOptions(embed_animations=True), w)     # nothing to sample: no frame range
    assert back.animations == []
    a = read.read_anim(anim_file(bones=[("a", -1)], poses=[IDENT],
                                 anims=[("idle", [], ((0, 0, 0), (0, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0, huge, b"")]), w)
    assert a.animations[0].frame_count == read.MAX_EMPTY_FRAMES
    assert anim_to_scene(a, AnimImportOptions(), w).frame_end == read.MAX_EMPTY_FRAMES - 1
    # a modest count is kept as it is, without a warning
    w = Warnings()
    m = read.read_mesh(_skinned_quad([("a", -1)], anims=[("idle", [], 0x00, 40, b"")]), w)
    assert m.animations[0].frame_count == 40 and not any("claims" in x for x in w.as_list())


def test_export_skips_an_unsampled_range_however_long():
    from addon.codec import scene as S
    from addon.codec.formats.unigine.from_scene import scene_to_mesh
    from addon.codec.formats.unigine.options import ExportOptions
    sc = S.Scene()
    sc.meshes.append(S.Mesh.from_triangles("t", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]))
    sc.add_node(S.Node("t", "MESH", 0))
    sc.armatures.append(S.Armature("rig", [S.Bone("a")]))
    sc.add_node(S.Node("rig", "ARMATURE", 0))
    sc.animations.append(S.Animation("long", 0.0, 1e12, 30.0))             # no channel on any bone
    m = scene_to_mesh(sc, ExportOptions(embed_animations=True), Warnings())
    assert m.animations == []


def test_every_truncation_is_a_format_error():
    recs = anim_record(0x7F, (1, 2, 3), Q_IDENTITY, (4, 5, 6)) + anim_record(0x08, q=(1, 0, 0, 0))
    data = anim_file(bones=[("a", -1), ("b", 0)], poses=[IDENT, IDENT],
                     anims=[("run", [0, 1], ((0, 0, 0), (1, 1, 1)), ((1, 1, 1), (0, 0, 0)), 0x7F, 1, recs)])
    read.read_anim(data, Warnings())
    for cut in range(len(data)):
        with pytest.raises(FormatError):
            read.read_anim(data[:cut], Warnings())
    mesh = _skinned_quad([("a", -1)], weights=[[(0, 65535)]] * 4,
                         anims=[("x", [0], 0x7F, 2, mesh_record(0x7F, (1, 2, 3), Q_IDENTITY, (1, 1, 1)) + b"\0")])
    read.read_mesh(mesh, Warnings())
    for cut in range(len(mesh)):
        with pytest.raises(FormatError):
            read.read_mesh(mesh[:cut], Warnings())


def test_string_without_nul():
    data = b"ms11" + bytes(40) + cint(1) + cint(3) + b"abc" + struct.pack("<h", -1)
    e = _fails(data)
    assert "NUL" in str(e)


def test_weight_bone_out_of_range():
    data = _skinned_quad([("a", -1), ("b", 0)], weights=[[(0, 65535)], [(1, 30000), (2, 35535)], [], []])
    e = _fails(data)
    assert "record 1 names bone 2" in str(e) and "WEIGHTS" in e.path
    assert data[e.offset:e.offset + 2] == b"\x02\x00"


@pytest.mark.parametrize("asset", ["tube_skinned.mesh", "grid_static.mesh", "tube_bend.anim"])
def test_corrupted_bytes_give_a_format_error_or_an_exact_model(asset):
    # random byte damage: either a FormatError, or a model that rewrites to the damaged bytes
    import numpy as np
    from addon.codec.formats.unigine import write
    from tests.codec.test_unigine_assets import ASSETS
    src = (ASSETS / asset).read_bytes()
    reader, writer = (read.read_anim, write.write_anim) if asset.endswith(".anim") else (read.read_mesh, write.write_mesh)
    rng = np.random.default_rng(11)
    errors = 0
    for _ in range(150):
        b = bytearray(src)
        for pos in rng.integers(0, len(b), 2):
            b[int(pos)] = int(rng.integers(0, 256))
        try:
            model = reader(bytes(b), Warnings())
        except FormatError:
            errors += 1
            continue
        assert writer(model) == bytes(b)
    assert errors > 0
