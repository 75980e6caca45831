"""3DS bad input: every corruption gives a FormatError with offset and path, or a warning."""
import struct

import numpy as np
import pytest

from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.studio3ds import ImportOptions, ids
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.formats.studio3ds.read import parse

from .fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, build, chunk_offset, kf_node, material, obj, trimesh


def _good() -> bytes:
    return build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, groups=np.ones(12), uv=CUBE_POINTS[:, :2],
                                     materials=[("Red", range(12))]))],
                 materials=[material("Red")], kf_nodes=[kf_node(0, "Box")])


def _load(data: bytes):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(), w), w


def _set_u32(data: bytes, at: int, v: int) -> bytes:
    return data[:at] + struct.pack("<I", v) + data[at + 4:]


def _set_u16(data: bytes, at: int, v: int) -> bytes:
    return data[:at] + struct.pack("<H", v) + data[at + 2:]


@pytest.mark.parametrize("name", ["cube_with_materials.3ds", "RotatingCube.3DS"])
def test_every_truncation_is_a_format_error(name):
    data = (ASSETS / name).read_bytes()
    for cut in range(0, len(data) - 1, 7):
        with pytest.raises(FormatError) as e:
            parse(data[:cut])
        assert e.value.offset is not None and e.value.offset <= cut


def test_lying_chunk_length_names_the_chunk_path():
    data = _good()
    at = chunk_offset(data, ids.POINT_ARRAY)
    with pytest.raises(FormatError) as e:
        parse(_set_u32(data, at + 2, 10_000_000))
    assert e.value.offset == at
    assert e.value.path == 'MAIN/EDITOR/OBJECT "Box"/TRIMESH'
    assert "claims 10000000 bytes" in str(e.value)


def test_chunk_length_under_six_is_an_error():
    data = _good()
    at = chunk_offset(data, ids.MESH_VERSION)
    with pytest.raises(FormatError, match="less than its 6-byte header"):
        parse(_set_u32(data, at + 2, 3))


def test_vertex_count_past_the_end_fails_before_allocating():
    data = _good()
    at = chunk_offset(data, ids.POINT_ARRAY)
    with pytest.raises(FormatError) as e:
        parse(_set_u16(data, at + 6, 65535))
    assert "65535" not in e.value.path and e.value.path.endswith("TRIMESH/VERTICES")
    assert "bytes" in str(e.value)


def test_face_count_and_material_count_past_the_end():
    data = _good()
    with pytest.raises(FormatError, match="FACES"):
        parse(_set_u16(data, chunk_offset(data, ids.FACE_ARRAY) + 6, 60000))
    at = chunk_offset(data, ids.MSH_MAT_GROUP)
    with pytest.raises(FormatError) as e:
        parse(_set_u16(data, at + 6 + len(b"Red\0"), 9999))
    assert e.value.path.endswith("FACES/MATERIAL_GROUP")


def test_huge_key_count_is_rejected_before_allocating():
    data = _good()
    at = chunk_offset(data, ids.POS_TRACK)
    with pytest.raises(FormatError) as e:
        parse(_set_u32(data, at + 6 + 10, 0xFFFFFFF0))
    assert "keys" in str(e.value) and e.value.path.endswith("OBJECT_NODE/POS_TRACK")


def test_string_without_terminator_is_an_error():
    data = _good()
    at = chunk_offset(data, ids.MAT_NAME)
    bad = data[:at + 6] + b"Re" + b"d" + b"X" + data[at + 10:]        # overwrite NUL of "Red\0"
    with pytest.raises(FormatError, match="NUL"):
        parse(bad)


def test_deep_nesting_is_refused_without_recursion_error():
    inner = Chunk(ids.N_TRI_OBJECT)
    for _ in range(200):
        inner = Chunk(ids.N_TRI_OBJECT, None, [inner])
    data = build([obj("Deep", inner)])
    with pytest.raises(FormatError, match="nested"):
        parse(data)


def test_face_index_out_of_range_drops_the_face_with_a_warning():
    tris = CUBE_TRIS.copy()
    tris[3] = [0, 1, 99]
    data = build([obj("Box", trimesh(CUBE_POINTS, tris, groups=np.ones(12)))], kf_nodes=[kf_node(0, "Box")])
    sc, w = _load(data)
    assert len(sc.meshes[0].faces) == 11
    assert any("1 faces index vertices past the 8 stored" in x for x in w.as_list())


def test_material_face_index_out_of_range_is_a_warning():
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Red", [0, 1, 500])]))],
                 materials=[material("Red")])
    sc, w = _load(data)
    assert any("lists 1 faces past the 12 stored" in x for x in w.as_list())
    assert list(sc.meshes[0].face_material[:2]) == [0, 0]


def test_cycle_in_the_hierarchy_is_broken_with_a_warning():
    nodes = [kf_node(0, "A", parent=1), kf_node(1, "B", parent=0)]
    data = build([obj("A", trimesh(CUBE_POINTS, CUBE_TRIS)), obj("B", trimesh(CUBE_POINTS, CUBE_TRIS))],
                 kf_nodes=nodes)
    sc, w = _load(data)
    assert any("cycle" in x for x in w.as_list())
    assert len(sc.nodes) == 2
    for i in range(2):
        sc.world_matrix(i)                        # raises on a cycle


def test_parent_id_that_no_node_has_is_a_warning():
    data = build([obj("A", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[kf_node(0, "A", parent=42)])
    sc, w = _load(data)
    assert sc.nodes[0].parent == -1 and any("parent id 42" in x for x in w.as_list())


def test_uv_and_smoothing_counts_that_disagree_are_warnings():
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, groups=np.ones(5), uv=np.zeros((3, 2))))])
    sc, w = _load(data)
    text = " ".join(w.as_list())
    assert "smoothing groups: 5 entries for 12 items" in text and "UV coordinates: 3 entries for 8 items" in text
    assert sc.meshes[0].uv_layers["UVMap"].shape == (36, 2)


def test_random_corruption_never_escapes_as_another_exception():
    data = (ASSETS / "cube_hierarchy.3ds").read_bytes()
    rng = np.random.default_rng(3)
    for _ in range(300):
        b = bytearray(data)
        for at in rng.integers(0, len(b), 4):
            b[at] = int(rng.integers(0, 256))
        try:
            _load(bytes(b))
        except FormatError:
            pass


@pytest.mark.parametrize("seg,expect,warned", [((0, 0xFFFFFFFF), (0, 10), True), ((50, 10), (0, 10), True),
                                               ((0, 100), (0, 100), False), ((5, 5), (5, 5), False)])
def test_implausible_frame_range_is_a_warning_and_the_raw_segment_is_kept(seg, expect, warned):
    from addon.codec.formats.studio3ds.write import encode_bytes
    from .fixtures_3ds import track
    node = kf_node(0, "Box")
    node.children[2] = track(ids.POS_TRACK, [0, 10], [[0, 0, 0], [1, 1, 1]])
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node], seg=seg)
    model = parse(data)
    w = Warnings()
    sc = to_scene(model, ImportOptions(), w)
    assert (sc.frame_start, sc.frame_end) == expect
    assert (sc.animations[0].frame_start, sc.animations[0].frame_end) == expect
    msgs = [x for x in w.as_list() if "implausible frame range" in x]
    assert bool(msgs) == warned
    if warned:
        assert "KF_SEGMENT" in msgs[0] and str(seg[1]) in msgs[0]
    # the header's length (written as the segment end by the fixture) is only kept when it fits
    assert ("3ds_kf_length" in sc.animations[0].extras) == (seg[1] < 2 ** 31)
    assert model.keyframer().value(ids.KFSEG) == seg
    assert encode_bytes(model) == data                             # the raw values are written back
