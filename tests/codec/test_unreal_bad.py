"""Unreal Engine 1 vertex mesh: bad input gives a clear FormatError or a warning, never a traceback."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.unreal import read, to_scene as scene
from addon.codec.formats.unreal.options import ImportOptions
from tests.codec.unreal_fixtures import ASSETS, a_file, d_file, tetra_pair, tri, write_set


def _load(path, **kw):
    w = Warnings()
    model = read.read(path, ImportOptions(**kw), w)
    return model, scene.to_scene(model, ImportOptions(**kw), w), w.as_list()


@pytest.mark.parametrize("cut", [0, 3, 47, 48 + 16 * 12 - 1, 100])
def test_truncated_geometry_file(tmp_path, cut):
    shutil.copy(ASSETS / "box_a.3d", tmp_path / "box_a.3d")
    (tmp_path / "box_d.3d").write_bytes((ASSETS / "box_d.3d").read_bytes()[:cut])
    with pytest.raises(FormatError) as e:
        read.read(tmp_path / "box_d.3d", ImportOptions(), Warnings())
    assert e.value.path.startswith("_d.3d/")
    assert e.value.offset is not None
    assert e.value.file.endswith("box_d.3d")
    if cut >= 48:
        assert "header says 12 triangles" in str(e.value) and "truncated" in str(e.value)


@pytest.mark.parametrize("cut", [0, 1, 3])
def test_truncated_animation_header(tmp_path, cut):
    shutil.copy(ASSETS / "box_d.3d", tmp_path / "box_d.3d")
    (tmp_path / "box_a.3d").write_bytes((ASSETS / "box_a.3d").read_bytes()[:cut])
    with pytest.raises(FormatError) as e:
        read.read(tmp_path / "box_d.3d", ImportOptions(), Warnings())
    assert e.value.path == "_a.3d/HEADER" and e.value.file.endswith("box_a.3d")


def test_truncated_animation_frames_is_a_warning(tmp_path):
    shutil.copy(ASSETS / "box_d.3d", tmp_path / "box_d.3d")
    (tmp_path / "box_a.3d").write_bytes((ASSETS / "box_a.3d").read_bytes()[:4 + 32 * 10 + 5])
    _, s, warnings = _load(tmp_path / "box_d.3d")
    assert len(s.meshes[0].shape_keys) == 10
    assert any("claims 30 frames" in w and "holds 10" in w for w in warnings)


def test_lying_frame_count_does_not_allocate(tmp_path):
    d, _ = tetra_pair()
    a = b"\xff\xff\xff\xff" + bytes(16)           # 65535 frames of 65535 bytes claimed, 16 bytes present
    p = write_set(tmp_path, "lie", d, a)
    model, s, warnings = _load(p)
    assert len(model.animation.frames) == 0
    assert any("no frames" in w for w in warnings)
    assert len(s.meshes[0].positions) == 4


def test_zero_frame_size_with_frames_is_an_error(tmp_path):
    d, _ = tetra_pair()
    p = write_set(tmp_path, "zero", d, b"\x05\x00\x00\x00")
    with pytest.raises(FormatError, match="FrameSize is 0"):
        read.read(p, ImportOptions(), Warnings())


def test_missing_partner_file(tmp_path):
    shutil.copy(ASSETS / "box_d.3d", tmp_path / "box_d.3d")
    with pytest.raises(FormatError, match="missing partner file box_a.3d"):
        read.read(tmp_path / "box_d.3d", ImportOptions(), Warnings())
    shutil.copy(ASSETS / "box_a.3d", tmp_path / "solo_a.3d")
    with pytest.raises(FormatError, match="missing partner file solo_d.3d"):
        read.read(tmp_path / "solo_a.3d", ImportOptions(), Warnings())


def test_unpaired_name_is_refused(tmp_path):
    shutil.copy(ASSETS / "box_d.3d", tmp_path / "box.3d")
    with pytest.raises(FormatError, match="_d.3d or <name>_a.3d"):
        read.read(tmp_path / "box.3d", ImportOptions(), Warnings())


def test_script_naming_missing_files(tmp_path):
    (tmp_path / "gone.uc").write_text("#exec MESH IMPORT MESH=gone ANIVFILE=MODELS\\gone_a.3d DATAFILE=MODELS\\gone_d.3d\n")
    with pytest.raises(FormatError, match="not found"):
        read.read(tmp_path / "gone.uc", ImportOptions(), Warnings())
    (tmp_path / "empty.uc").write_text("class empty extends Actor;\n")
    with pytest.raises(FormatError, match="no #exec MESH IMPORT"):
        read.read(tmp_path / "empty.uc", ImportOptions(), Warnings())


def test_index_past_the_vertices_warns_and_clamps(tmp_path):
    d = d_file([tri((0, 1, 2)), tri((1, 2, 3))], 3)      # index 3 == NumVerts, as real files have
    a = a_file([[(0, 0, 0), (8, 0, 0), (0, 8, 0)]])
    _, s, warnings = _load(write_set(tmp_path, "idx", d, a))
    assert any("1 triangle corners index past the 3 vertices" in w for w in warnings)
    assert int(s.meshes[0].corners.max()) == 2


def test_zero_vertices_with_triangles_is_an_error(tmp_path):
    p = write_set(tmp_path, "nov", d_file([tri((0, 0, 0))], 0), a_file([[]], frame_size=4))
    with pytest.raises(FormatError, match="0 vertices"):
        _load(p)


def test_malformed_script_gives_warnings_not_errors(tmp_path):
    d, a = tetra_pair(frames=4)
    uc = "\n".join([
        "#exec MESH IMPORT MESH=bad ANIVFILE=bad_a.3d DATAFILE=bad_d.3d",
        "#exec MESH ORIGIN MESH=bad X=abc Y=0 Z=0",
        "#exec MESH SEQUENCE MESH=bad SEQ=Walk STARTFRAME=1",
        "#exec MESH SEQUENCE MESH=bad SEQ=Run STARTFRAME=1 NUMFRAMES=9 RATE=nan",
        "#exec MESH NOTIFY MESH=bad SEQ=Nope TIME=0.5 FUNCTION=Step",
        "#exec MESHMAP",
        "#exec MESHMAP SCALE MESHMAP=bad X=0.1 Y=0.1 Z=0.2 garbage",
    ])
    _, s, warnings = _load(write_set(tmp_path, "bad", d, a, uc))
    text = "\n".join(warnings)
    assert "X='abc' is not a number" in text
    assert "MESH SEQUENCE needs SEQ, STARTFRAME >= 0 and NUMFRAMES >= 1" in text
    assert "RATE='nan' is not a number" in text
    assert "unknown sequence 'Nope'" in text
    assert "#exec without a group and command" in text
    assert "cannot read 'garbage'" in text
    assert "sequence 'Run' runs to frame 9, beyond the last frame 3" in text
    # the readable parts still apply: SCALE 0.1/0.1/0.2 over the default 1/8, 1/8, 1/4
    np.testing.assert_allclose(np.diag(s.nodes[0].matrix)[:3], [0.8, 0.8, 0.8])
    assert [a.name for a in s.animations] == ["All", "Run"]


def test_binary_garbage_script_does_not_crash(tmp_path):
    d, a = tetra_pair()
    p = write_set(tmp_path, "noise", d, a)
    (tmp_path / "noise.uc").write_bytes(bytes(range(256)) * 4 + b"\n#exec \xff\xfe = = =\n")
    _, s, warnings = _load(p)
    assert len(s.meshes[0].shape_keys) == 3
    assert any("no MESH IMPORT" in w or "without a group" in w for w in warnings)
