"""UNIGINE ms11/an10 file model: compact ints, byte-exact round trips, index widths, frame records."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from addon.codec.binary import Reader, Writer
from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.unigine import compact, read, write
from tests import unigine_samples as samples
from tests.codec.unigine_fixtures import (IDENT, Q_IDENTITY, anim_file, anim_record, cint, floats,
                                          mesh_file, mesh_record, quad_surface, surface_geometry, surface_header)


# -- compact ints (notes: "Compact integer") ------------------------------------
@pytest.mark.parametrize("raw,value", [("41", -1), ("a016", 1440), ("bcc001", 12348), ("00", 0)])
def test_compact_examples_from_the_notes(raw, value):
    r = Reader(bytes.fromhex(raw))
    assert compact.read_int(r) == value
    assert r.remaining == 0
    assert compact.encode_int(value) == bytes.fromhex(raw)


@pytest.mark.parametrize("value,length", [(63, 1), (64, 2), (-63, 1), (-64, 2), (8191, 2), (8192, 3),
                                          ((1 << 20) - 1, 3), (1 << 20, 4), ((1 << 27) - 1, 4), (1 << 27, 5),
                                          (-(1 << 33), 5)])
def test_compact_shortest_form_lengths(value, length):
    # 6 bits in the first byte, then 7 per byte: lengths follow by hand
    encoded = compact.encode_int(value)
    assert len(encoded) == length
    assert encoded == cint(value)
    assert compact.read_int(Reader(encoded)) == value


def test_compact_sixth_byte_is_rejected():
    with pytest.raises(FormatError) as e:
        compact.read_int(Reader(bytes.fromhex("ffffffffff01")))
    assert "sixth" in str(e.value) and e.value.offset == 0


@pytest.mark.parametrize("raw,why", [("8000", "shortest"), ("c000", "shortest"), ("40", "negative zero")])
def test_compact_non_canonical_forms_are_rejected(raw, why):
    with pytest.raises(FormatError, match=why):
        compact.read_int(Reader(bytes.fromhex(raw)))


def test_string_counts_its_nul():
    w = Writer()
    compact.write_string(w, "Bip01")
    assert w.getvalue() == b"\x06Bip01\x00"
    assert compact.read_string(Reader(w.getvalue())) == "Bip01"


# -- whole files ------------------------------------------------------------------
def _roundtrip(data: bytes, reader=read.read_mesh, writer=write.write_mesh):
    w = Warnings()
    model = reader(data, w)
    assert writer(model) == data
    return model, w


def test_minimal_quad_reads_field_by_field():
    header, geo = quad_surface("floor", z=2.0)
    data = mesh_file(surfaces=[(header, geo)], bounds=floats(0, 0, 2, 1, 1, 2, 0.5, 0.5, 2, 0.5 ** 0.5))
    m, w = _roundtrip(data)
    assert w.as_list() == []
    (s,) = m.surfaces
    assert s.name == "floor"
    assert s.targets[0].positions.tolist() == [[0, 0, 2], [1, 0, 2], [1, 1, 2], [0, 1, 2]]
    assert s.coord_indices.tolist() == [0, 1, 2, 0, 2, 3]
    assert s.targets[0].tangents.tolist() == [list(Q_IDENTITY)] * 4
    assert s.uv0.tolist() == [[0, 0], [1, 0], [1, 1], [0, 1]]
    assert len(s.uv1) == 0 and len(s.colors) == 0 and len(s.weights) == 0


@pytest.mark.parametrize("coords,tris,coord_width,tri_width", [
    (10, 10, 1, 1), (255, 3, 1, 1), (256, 3, 2, 1), (300, 70000, 2, 4), (65535, 10, 2, 1), (65536, 300, 4, 2)])
def test_index_widths_per_list(coords, tris, coord_width, tri_width):
    # each list's width comes from its own vertex count; the file size proves the width read
    corners = [0, coords - 1, 1, 2, 0, 1]
    tri_idx = [0, 1, tris - 1, tris - 1, 0, 1]
    pos = [(float(i), 0.0, 0.0) for i in range(coords)]
    geo = surface_geometry([(pos, [Q_IDENTITY] * tris)], coord=corners, tri=tri_idx)
    data = mesh_file(surfaces=[(surface_header("s"), geo)])
    m, _ = _roundtrip(data)
    s = m.surfaces[0]
    assert s.coord_indices.tolist() == corners
    assert s.tri_indices.tolist() == tri_idx
    # the file ends: count 6, coordinate list, count 6, triangle list, "ms11"
    fmt = {1: "B", 2: "H", 4: "i"}
    tri_at = len(data) - 4 - 6 * tri_width
    coord_at = tri_at - 1 - 6 * coord_width
    assert data[tri_at - 1] == 6 and data[coord_at - 1] == 6
    assert list(struct.unpack(f"<6{fmt[tri_width]}", data[tri_at:tri_at + 6 * tri_width])) == tri_idx
    assert list(struct.unpack(f"<6{fmt[coord_width]}", data[coord_at:tri_at - 1])) == corners


def test_two_surfaces_with_different_widths_and_colors_uv1():
    big = [(float(i), 1.0, 0.0) for i in range(300)]
    geo_a = surface_geometry([(big, [Q_IDENTITY] * 3)], uv0=[(0, 0)] * 3, uv1=[(0.5, 0.25)] * 3,
                             colors=[(255, 0, 0, 255), (0, 255, 0, 128), (0, 0, 255, 0)],
                             coord=[299, 1, 0], tri=[0, 1, 2])
    h, geo_b = quad_surface("b")
    data = mesh_file(surfaces=[(surface_header("a"), geo_a), (h, geo_b)])
    m, _ = _roundtrip(data)
    a, b = m.surfaces
    assert a.coord_indices.tolist() == [299, 1, 0]
    assert a.colors.tolist()[1] == [0, 255, 0, 128]
    assert a.uv1.tolist() == [[0.5, 0.25]] * 3
    assert b.coordinate_count == 4 and b.triangle_count == 4


def test_weights_of_every_count_round_trip():
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (1, 1, 0), (2, 2, 0)]
    weights = [[], [(0, 65535)], [(0, 30000), (1, 35535)], [(1, 1), (0, 2), (1, 65532)],
               [(0, 16384), (1, 16384), (0, 16384), (1, 16383)]]
    geo = surface_geometry([(pos, [Q_IDENTITY] * 3)], weights=weights, coord=[0, 1, 2, 2, 3, 4], tri=[0, 1, 2] * 2)
    data = mesh_file(bones=[("a", -1), ("b", 0)], poses=[IDENT, IDENT], surfaces=[(surface_header("s"), geo)])
    m, _ = _roundtrip(data)
    wt = m.surfaces[0].weights
    assert wt.counts.tolist() == [0, 1, 2, 3, 4]
    assert wt.bones[2].tolist() == [0, 1, 0, 0]
    assert wt.weights[3].tolist() == [1, 2, 65532, 0]
    assert wt.weights[4].tolist() == [16384, 16384, 16384, 16383]


def test_parents_after_children_and_bind_pose():
    bones = [("hand", 2), ("root", -1), ("arm", 1)]
    poses = [((0, 0, 1), (0, 0, 0, 1), (1, 1, 1)), IDENT, ((0, 2, 0), (0, 0, 0.7071068, 0.7071068), (2, 2, 2))]
    h, g = quad_surface()
    m, _ = _roundtrip(mesh_file(bones=bones, poses=poses, surfaces=[(h, g)]))
    assert [(b.name, b.parent) for b in m.bones] == bones
    assert m.bind["t"][2].tolist() == [0, 2, 0]
    assert m.bind["s"][2].tolist() == [2, 2, 2]


def test_partial_flag_records_carry_forward():
    # frame 0 stores everything; frame 1 only tx and the rotation; frame 2 only sz; frame 3 nothing
    recs = (mesh_record(0x7F, (1, 2, 3), (0, 0, 0, 32767), (1, 1, 1))
            + mesh_record(0x09, (5, 0, 0), (32767, 0, 0, 0))
            + mesh_record(0x40, s=(0, 0, 4))
            + mesh_record(0x00))
    h, g = quad_surface()
    data = mesh_file(bones=[("b", -1)], poses=[IDENT], anims=[("walk", [0], 0x7F, 4, recs)], surfaces=[(h, g)])
    m, w = _roundtrip(data)
    assert not [x for x in w.as_list() if "animation" in x]
    t = m.animations[0]
    assert t.flags[:, 0].tolist() == [0x7F, 0x09, 0x40, 0x00]
    assert t.translation[:, 0].tolist() == [[1, 2, 3], [5, 2, 3], [5, 2, 3], [5, 2, 3]]
    assert t.rotation[:, 0].tolist() == [[0, 0, 0, 32767]] + [[32767, 0, 0, 0]] * 3
    assert t.scale[:, 0].tolist() == [[1, 1, 1], [1, 1, 1], [1, 1, 4], [1, 1, 4]]


def test_frame_major_records_for_two_bones():
    recs = b"".join(mesh_record(0x01, (float(10 * f + b), 0, 0)) for f in range(3) for b in range(2))
    h, g = quad_surface()
    data = mesh_file(bones=[("a", -1), ("b", 0)], poses=[IDENT, IDENT], anims=[("x", [1, 0], 0x01, 3, recs)],
                     surfaces=[(h, g)])
    m, _ = _roundtrip(data)
    t = m.animations[0]
    assert t.bones.tolist() == [1, 0]
    assert t.translation[:, :, 0].tolist() == [[0, 1], [10, 11], [20, 21]]


def test_anim_file_round_trip_and_quantized_values():
    recs = (anim_record(0x7F, (0, 65535, 100), (0, 0, 0, 32767), (65535, 65535, 65535))
            + anim_record(0x02, (0, 0, 0)))
    data = anim_file(bones=[("hip", -1)], poses=[IDENT],
                     anims=[("run", [0], ((-1, -2, -3), (2, 4, 6)), ((1, 1, 1), (0, 0, 0)), 0x7F, 2, recs)])
    a, w = _roundtrip(data, read.read_anim, write.write_anim)
    t = a.animations[0]
    assert t.translation_box.tolist() == [[-1, -2, -3], [2, 4, 6]]
    assert t.translation[:, 0].tolist() == [[0, 65535, 100], [0, 0, 100]]
    assert t.translation.dtype == np.uint16


def test_trailing_bytes_are_kept_with_a_warning():
    h, g = quad_surface()
    data = mesh_file(surfaces=[(h, g)], trailing=b"\x01\x02")
    m, w = _roundtrip(data)
    assert m.trailing == b"\x01\x02"
    assert any("after the closing magic" in x for x in w.as_list())


@pytest.mark.parametrize("build", [lambda: samples.static_mesh(5000), lambda: samples.skinned_mesh(3000, 12, 40)])
def test_generated_samples_round_trip(build):
    data = write.write_mesh(build())
    m, w = _roundtrip(data)
    assert w.as_list() == []


def test_unused_bounds_bytes_are_not_trusted():
    h, g = quad_surface()
    data = mesh_file(surfaces=[(h, g)], bounds=floats(9, 9, 9, -9, -9, -9, 0, 0, 0, -1))
    m, w = _roundtrip(data)
    assert any("mesh bounds do not match" in x for x in w.as_list())
    assert m.bounds.radius == -1.0
