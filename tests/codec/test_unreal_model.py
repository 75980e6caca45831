"""Unreal Engine 1 vertex mesh: the file model, packing, and byte-exact rewrites."""
from __future__ import annotations

import shutil
import struct
from pathlib import Path

import numpy as np
import pytest

from addon.codec import check, load
from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.unreal import packing, read, write
from addon.codec.formats.unreal.model import DEUS_EX, STANDARD
from addon.codec.formats.unreal.options import ImportOptions
from tests.codec.unreal_fixtures import ASSETS, TETRA, a_file, d_file, pack_word, tetra_pair, tri, write_set

CORPUS = {  # pair: (triangles, vertices, frames, FrameSize), from the corpus PROVENANCE table
    "box": (12, 8, 30, 32),
    "mar_rifle": (572, 421, 30, 1684),
}


def _read(path: Path, **kw):
    w = Warnings()
    return read.read(path, ImportOptions(**kw), w), w


# -- packing -------------------------------------------------------------------
def test_unpack_sign_extends_each_field():
    # 0xFF4017FF is x=-1, y=2, z=-3 packed by hand: 0x7FF | 2<<11 | 0x3FD<<22
    frames = np.frombuffer(struct.pack("<I", 0xFF4017FF), np.uint8).reshape(1, 4)
    assert packing.unpack(frames, STANDARD, 1).tolist() == [[[-1, 2, -3]]]


def test_pack_extremes_match_the_spec_formula():
    raw = np.array([[[-1024, 1023, -512], [1023, -1024, 511], [0, 0, 0]]])
    got = packing.pack(raw, STANDARD).view("<u4").ravel().tolist()
    assert got == [pack_word(-1024, 1023, -512), pack_word(1023, -1024, 511), 0]
    assert packing.unpack(packing.pack(raw, STANDARD), STANDARD, 3).tolist() == raw.tolist()


def test_quantize_clamps_instead_of_wrapping():
    raw, clamped = packing.quantize(np.array([[[1030.0, -2000.0, 600.4]]]), STANDARD)
    assert raw.tolist() == [[[1023, -1024, 511]]]
    assert clamped == 3


def test_deus_ex_pack_is_int16_with_zero_pad():
    raw = np.array([[[-30000, 5, 32767]]])
    assert packing.pack(raw, DEUS_EX).tobytes() == struct.pack("<4h", -30000, 5, 32767, 0)


# -- the corpus ------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_corpus_counts(name):
    model, warnings = _read(ASSETS / f"{name}_d.3d")
    tris, verts, frames, size = CORPUS[name]
    assert (model.geometry.num_polys, model.geometry.num_verts) == (tris, verts)
    assert (model.animation.num_frames, model.animation.frame_size) == (frames, size)
    assert model.animation.frames.shape == (frames, size)
    assert model.variant == STANDARD
    assert set(model.geometry.triangles["type"].tolist()) == {0}
    assert set(model.geometry.triangles["texture"].tolist()) == {1}
    assert not warnings


def test_mar_rifle_raw_bounds_match_provenance():
    model, _ = _read(ASSETS / "mar_rifle_a.3d")
    raw = packing.unpack(model.animation.frames, STANDARD, 421)
    assert raw[..., 0].min() == -28 and raw[..., 0].max() == 28
    assert raw[..., 1].min() == -161 and raw[..., 1].max() == 172
    assert raw[..., 2].min() == -285 and raw[..., 2].max() == 179
    assert (raw == raw[0]).all()                          # 30 identical frames


@pytest.mark.parametrize("name", sorted(CORPUS))
@pytest.mark.parametrize("pick", ["d", "a"])
def test_corpus_rewrites_byte_for_byte(name, pick):
    path = ASSETS / f"{name}_{pick}.3d"
    model, _ = _read(path)
    out = write.encode(model, path)
    assert out[ASSETS / f"{name}_d.3d"] == (ASSETS / f"{name}_d.3d").read_bytes()
    assert out[ASSETS / f"{name}_a.3d"] == (ASSETS / f"{name}_a.3d").read_bytes()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_in_memory_parse_and_encode_bytes_round_trip(name):
    d, a = (ASSETS / f"{name}_d.3d").read_bytes(), (ASSETS / f"{name}_a.3d").read_bytes()
    model = read.parse(d, a, Warnings(), name=name)
    assert write.encode_bytes(model) == {f"{name}_d.3d": d, f"{name}_a.3d": a}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_codec_check_reports_identical(name):
    results = check(ASSETS / f"{name}_d.3d", fmt="unreal")
    assert len(results) == 2
    assert all(r.ok for r in results), [r.message for r in results]


# -- what real files contain -------------------------------------------------------
def test_junk_header_and_trailing_bytes_are_kept(tmp_path):
    d_bytes, _ = tetra_pair()
    junk = bytes(range(1, 45))
    d = d_file([d_bytes[48 + 16 * i:64 + 16 * i] for i in range(4)], 4, junk=junk, trailing=b"\x01\x02\x03")
    a = a_file([[(0, 0, 0)] * 4], trailing=b"xyz")
    p = write_set(tmp_path, "junk", d, a)
    model, warnings = _read(p)
    assert model.geometry.header_rest == junk
    assert model.geometry.trailing == b"\x01\x02\x03"
    out = write.encode(model, p)
    assert out[p] == d and out[tmp_path / "junk_a.3d"] == a
    assert any("after the last triangle" in w for w in warnings.as_list())


def test_frame_stride_with_extra_bytes_reads_and_rewrites(tmp_path):
    d, _ = tetra_pair()
    frames = [[(1, 2, 3), (4, 5, 6), (-7, -8, -9), (10, 11, 12)]] * 2
    a = a_file(frames, frame_size=4 * 4 + 8, pad=b"\xAA" * 8)          # NumVerts*4 + 8
    p = write_set(tmp_path, "stride", d, a)
    model, warnings = _read(p)
    raw = packing.unpack(model.animation.frames, model.variant, 4)
    assert raw[1].tolist() == [[1, 2, 3], [4, 5, 6], [-7, -8, -9], [10, 11, 12]]
    assert write.encode(model, p)[tmp_path / "stride_a.3d"] == a
    assert not warnings


def test_short_stride_warns_and_zeroes_the_missing_vertices(tmp_path):
    d, _ = tetra_pair()
    a = a_file([[(1, 2, 3), (4, 5, 6), (7, 8, 9)]], frame_size=12)    # holds 3 of 4 vertices
    p = write_set(tmp_path, "short", d, a)
    model, warnings = _read(p)
    raw = packing.unpack(packing.frame_vertices(model.animation, model.variant, 4), model.variant, 4)
    assert raw[0].tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 0, 0]]
    assert any("hold 3 of the 4 vertices" in w for w in warnings.as_list())
    assert write.encode(model, p)[tmp_path / "short_a.3d"] == a


def test_single_frame_of_num_verts_times_3_reads_every_vertex(tmp_path):
    """One frame, FrameSize = NumVerts*3 (found in real files), all NumVerts*4 bytes present:
    vertex j is at 4 + j*4 whatever the stride says."""
    d, _ = tetra_pair(frames=1)
    a = a_file([TETRA], frame_size=12)
    assert struct.unpack("<HH", a[:4]) == (1, 12) and len(a) == 4 + 16
    p = write_set(tmp_path, "fs3", d, a)
    scene = load(p, fmt="unreal")
    want = [[x / 8, -y / 8, z / 4] for x, y, z in TETRA]
    assert scene.meshes[0].positions.tolist() == want            # vertex 3 is (0, 0, 1), not the origin
    assert not scene.warnings
    model, _ = _read(p)
    assert write.encode(model, p)[tmp_path / "fs3_a.3d"] == a


def test_vertices_past_a_short_stride_are_never_read_from_the_next_frame(tmp_path):
    """Vertex j of frame i at 4 + i*FrameSize + j*4, but only within the stride: with a 3-vertex
    stride and 4 vertices, frame 1's last vertex is after the last stride (the notes' NumVerts*3
    case); frame 0 does not store vertex 3 and keeps the position the last frame gives it,
    not the first word of frame 1."""
    d, _ = tetra_pair()
    words = [(1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 0), (5, 0, 0), (6, 0, 0), (7, 0, 0)]
    a = struct.pack("<HH", 2, 12) + b"".join(struct.pack("<I", pack_word(*v)) for v in words)
    p = write_set(tmp_path, "over", d, a)
    model, warnings = _read(p)
    raw = packing.unpack(packing.frame_vertices(model.animation, model.variant, 4), model.variant, 4)
    assert raw[:, :, 0].tolist() == [[1, 2, 3, 7], [4, 5, 6, 7]]
    (warning,) = warnings.as_list()
    assert "stores 3 of the 4 vertices per frame; the 1 unused ones keep the position the last frame" in warning
    assert write.encode(model, p)[tmp_path / "over_a.3d"] == a


def test_unused_vertices_no_frame_stores_stay_at_the_origin(tmp_path):
    d, _ = tetra_pair()
    words = [(1, 0, 0), (2, 0, 0), (3, 0, 0), (4, 0, 0), (5, 0, 0), (6, 0, 0)]
    a = struct.pack("<HH", 2, 12) + b"".join(struct.pack("<I", pack_word(*v)) for v in words)
    model, warnings = _read(write_set(tmp_path, "none", d, a))
    raw = packing.unpack(packing.frame_vertices(model.animation, model.variant, 4), model.variant, 4)
    assert raw[:, :, 0].tolist() == [[1, 2, 3, 0], [4, 5, 6, 0]]
    assert any("unused ones stay at the origin" in w for w in warnings.as_list())


def test_frames_that_store_almost_nothing_cannot_ask_for_gigabytes(tmp_path):
    """20 KB of 1-byte frames for 65535 vertices would unpack to 15 GB: refused before allocating."""
    d = d_file([tri((0, 1, 2))], 65535)
    a = struct.pack("<HH", 65535, 1) + bytes(20000)
    with pytest.raises(FormatError, match="FrameSize 1 stores 0 of the 65535 vertices per frame"):
        _read(write_set(tmp_path, "lie", d, a))


def test_header_frame_count_beyond_data_reads_whole_frames(tmp_path):
    d, _ = tetra_pair()
    full = a_file([[(k, 0, 0)] * 4 for k in range(3)], num_frames=7)
    a = full + b"\x01\x02"                                              # a partial 4th frame
    p = write_set(tmp_path, "over", d, a)
    model, warnings = _read(p)
    assert model.animation.num_frames == 7 and len(model.animation.frames) == 3
    assert any("claims 7 frames" in w for w in warnings.as_list())
    assert write.encode(model, p)[tmp_path / "over_a.3d"] == a


def test_deus_ex_detected_and_rewritten(tmp_path):
    d, _ = tetra_pair()
    frames = [[(-3000, 200, 31000), (5, -6, 7), (0, 0, 0), (32767, -32768, 1)]]
    a = a_file(frames, deus_ex=True)
    p = write_set(tmp_path, "dx", d, a)
    model, _ = _read(p)
    assert model.variant == DEUS_EX
    assert packing.unpack(model.animation.frames, DEUS_EX, 4)[0].tolist() == [list(v) for v in frames[0]]
    out = write.encode(model, p)
    assert out[p] == d and out[tmp_path / "dx_a.3d"] == a


def test_eight_bytes_per_vertex_with_nonzero_pads_stays_standard(tmp_path):
    # a standard mesh whose FrameSize happens to be 8 * NumVerts: the pad test tells them apart
    d = d_file([tri((0, 1, 2))], 2)
    a = a_file([[(1, 2, 3), (4, 5, 6), (7, 8, 9), (1, 1, 1)]])          # 16 bytes = 8 * 2 vertices
    p = write_set(tmp_path, "ut", d, a)
    model, _ = _read(p)
    assert model.variant == STANDARD
    assert packing.unpack(model.animation.frames, STANDARD, 2)[0].tolist() == [[1, 2, 3], [4, 5, 6]]


def test_partner_found_case_insensitively(tmp_path):
    shutil.copy(ASSETS / "box_d.3d", tmp_path / "BOX_D.3D")
    shutil.copy(ASSETS / "box_a.3d", tmp_path / "Box_A.3d")
    model, _ = _read(tmp_path / "BOX_D.3D")
    assert Path(model.anim_path).name == "Box_A.3d"
    assert model.geometry.num_polys == 12


def test_command_line_check_rewrites_the_corpus():
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    files = [str(ASSETS / "box_d.3d"), str(ASSETS / "mar_rifle_a.3d")]
    run = subprocess.run([sys.executable, "-m", "addon.codec", "check", *files], cwd=root,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) == 4 and all(line.startswith("OK") and "bytes identical" in line for line in lines)
