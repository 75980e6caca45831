"""3DS file model: byte-exact round trip of every corpus file, unknown data kept."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.studio3ds import FORMAT, ids
from addon.codec.formats.studio3ds.model import Chunk, Model
from addon.codec.formats.studio3ds.read import parse
from addon.codec.formats.studio3ds.write import encode_bytes

from .fixtures_3ds import ASSETS, CORPUS, GOOD, CUBE_POINTS, CUBE_TRIS, build, kf_node, obj, track, trimesh

ROOT = Path(__file__).resolve().parents[2]


def test_corpus_is_complete():
    # 27 corpus entries: 20 good .3ds files, 2 negative ones, 5 textures
    assert len(GOOD) == 20 and len(CORPUS) == 22


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_corpus_file_rewrites_byte_for_byte(path):
    data = path.read_bytes()
    model = parse(data)
    assert encode_bytes(model) == data
    assert model.root.cid == ids.MAIN


def test_cli_check_rewrites_every_corpus_file():
    r = subprocess.run([sys.executable, "-m", "addon.codec", "check", *map(str, GOOD)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.count("OK ") == len(GOOD)


@pytest.mark.parametrize("name,expect", [("wrong.3ds", "not a 3DS file"), ("empty.3ds", "too short")])
def test_negative_corpus_files_fail_clearly(name, expect):
    path = next(p for p in CORPUS if p.name == name)
    with pytest.raises(FormatError) as e:
        FORMAT.read(path, None, Warnings())
    assert expect in str(e.value) and e.value.offset == 0


def test_cli_check_reports_the_negative_files_as_format_errors():
    bad = [str(p) for p in CORPUS if p.name in ("wrong.3ds", "empty.3ds")]
    r = subprocess.run([sys.executable, "-m", "addon.codec", "check", *bad], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1
    assert r.stderr.count("FAIL") == 2 and r.stderr.count("FormatError") == 2   # errors go to stderr


def test_unknown_chunks_and_unknown_bytes_are_kept():
    tri = trimesh(CUBE_POINTS, CUBE_TRIS)
    tri.children.append(Chunk(0x4F00, b"\x01\x02\x03"))            # unknown chunk in a mesh
    tri.find(ids.FACE_ARRAY).tail = b"\xAA\xBB"                      # bytes after the face sub-chunks
    data = build([obj("Box", tri), Chunk(0x5555, b"opaque")], kf_nodes=[kf_node(0, "Box")])
    data += b"PAD!"                                                  # trailing bytes after MAIN
    w = Warnings()
    model = parse(data, w)
    assert encode_bytes(model) == data
    tri2 = model.editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    assert tri2.find(0x4F00).data == b"\x01\x02\x03"
    assert tri2.find(ids.FACE_ARRAY).tail == b"\xAA\xBB"
    assert model.editor().find(0x5555).data == b"opaque"
    assert model.trailing == b"PAD!" and any("after the main chunk" in x for x in w.as_list())


def test_fields_are_read_as_the_file_stores_them():
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, flags=0x4007, groups=np.arange(12) + 1))],
                 kf_nodes=[kf_node(7, "Box", pos=(1, 2, 3), pivot=(0.5, 0, 0))])
    m = parse(data)
    tri = m.editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    np.testing.assert_array_equal(tri.value(ids.POINT_ARRAY), CUBE_POINTS)
    faces = tri.find(ids.FACE_ARRAY)
    np.testing.assert_array_equal(faces.data[:, :3], CUBE_TRIS)
    assert (faces.data[:, 3] == 0x4007).all()
    np.testing.assert_array_equal(faces.value(ids.SMOOTH_GROUP), np.arange(12) + 1)
    node = m.keyframer().find(ids.OBJECT_NODE_TAG)
    assert node.value(ids.NODE_ID) == 7 and node.value(ids.NODE_HDR) == ("Box", 0, 0, 0xFFFF)
    assert node.value(ids.PIVOT) == (0.5, 0.0, 0.0)
    np.testing.assert_array_equal(node.value(ids.POS_TRACK).values, [[1, 2, 3]])


def test_tcb_values_and_track_flags_survive_a_round_trip():
    tcb = np.full((2, 5), np.nan, np.float32)
    tcb[0, 0], tcb[1, 3], tcb[1, 4] = 0.25, 0.5, 0.75
    pos = track(ids.POS_TRACK, [0, 10], [[0, 0, 0], [1, 1, 1]], key_flags=[0x1, 0x18], tcb=tcb, flags=0x43)
    node = kf_node(0, "Box", extra=())
    node.children[2] = pos
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node])
    # 0x1: one float (tension); 0x18: two floats (ease to, ease from)
    t = parse(data).keyframer().find(ids.OBJECT_NODE_TAG).value(ids.POS_TRACK)
    assert t.flags == 0x43 and list(t.key_flags) == [1, 0x18]
    assert t.tcb[0, 0] == 0.25 and np.isnan(t.tcb[0, 1:]).all()
    assert (t.tcb[1, 3], t.tcb[1, 4]) == (0.5, 0.75)
    assert encode_bytes(parse(data)) == data


def test_vertex_flags_without_a_count_are_read_per_vertex():
    # fels.3ds writes 0x4111 as one word per vertex with no count (386 vertices, all 7)
    m = parse((ASSETS / "fels.3ds").read_bytes())
    tri = m.editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    vf = tri.value(ids.POINT_FLAG_ARRAY)
    assert vf.counted is False and len(vf.flags) == 386 and (vf.flags == 7).all()
    assert len(tri.value(ids.POINT_ARRAY)) == 386


def test_object_7001_with_data_before_sub_chunks_is_kept_whole():
    payload = bytes(range(14)) + bytes([0x11, 0x70, 6, 0, 0, 0])      # 14 bytes, then a sub-chunk
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], editor_extra=[Chunk(ids.VIEWPORT_LAYOUT, payload)])
    m = parse(data)
    assert m.editor().find(ids.VIEWPORT_LAYOUT).data == payload
    assert encode_bytes(m) == data


def test_built_trees_get_their_lengths_computed():
    root = Chunk(ids.MAIN)
    root.add(ids.VERSION, 3)
    data = encode_bytes(Model(root))
    assert data == bytes.fromhex("4d4d 10000000 0200 0a000000 03000000".replace(" ", ""))
