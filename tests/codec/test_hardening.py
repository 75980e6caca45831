"""Only the codec's own errors escape: damaged numbers in a bind pose and file names from a file
that the OS rejects become warnings; the .uc parser reads long tokens without backtracking."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from addon.codec import fileio, load
from addon.codec.errors import Warnings
from addon.codec.formats.ultimate3d import materials as u3d_materials
from addon.codec.formats.unreal import ucscript
from tests.codec.unigine_fixtures import (IDENT, Q_IDENTITY, anim_file, anim_record, mesh_file, surface_geometry,
                                          surface_header)
from tests.codec.unreal_fixtures import tetra_pair

NAN, INF = math.nan, math.inf


def _skinned_mesh(poses):
    pos = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    geo = surface_geometry([(pos, [Q_IDENTITY] * 4)], weights=[[(0, 65535)], [(1, 65535)], [(1, 65535)], [(0, 65535)]],
                           coord=[0, 1, 2, 0, 2, 3], tri=[0, 1, 2, 0, 2, 3])
    return mesh_file(bones=[("root", -1), ("child", 0)], poses=poses, surfaces=[(surface_header("s"), geo)])


@pytest.mark.parametrize("pose", [
    ((0, 0, 0), (0, 0, 0, 1), (0, 0, 0)),            # zero scale: no inverse
    ((0, 0, 0), (0, 0, 0, 1), (NAN, 1, 1)),          # NaN scale
    ((NAN, 0, INF), (NAN, 0, 0, 1), (1, 1, 1)),      # NaN and infinite move and turn
    ((3e38, 3e38, 3e38), (0, 0, 0, 1), (3e38, 3e38, 3e38)),   # finite, but the chain overflows
])
def test_damaged_bind_pose_is_a_warning_not_a_linalg_error(tmp_path, pose):
    (tmp_path / "bad.mesh").write_bytes(_skinned_mesh([IDENT, pose]))
    scene = load(tmp_path / "bad.mesh")
    (arm,) = scene.armatures
    assert all(np.isfinite(b.matrix).all() for b in arm.bones)
    if not np.isfinite(np.asarray(pose[0] + pose[1] + pose[2], float)).all() or 0 in pose[2]:
        assert any("1 bone(s) with a NaN, infinite or zero-scale bind pose ('child')" in w for w in scene.warnings)


def test_damaged_rest_mesh_bind_for_an_animation(tmp_path):
    (tmp_path / "rest.mesh").write_bytes(_skinned_mesh([IDENT, ((0, 0, 0), (0, 0, 0, 1), (0, 0, 0))]))
    recs = anim_record(0x01, (65535, 0, 0)) * 2
    (tmp_path / "walk.anim").write_bytes(anim_file(
        bones=[("root", -1), ("child", 0)], poses=[IDENT, IDENT],
        anims=[("walk", [0, 1], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)]))
    scene = load(tmp_path / "walk.anim", rest_mesh=str(tmp_path / "rest.mesh"))
    assert any("rest.mesh: 1 bone(s) with a NaN, infinite or zero-scale bind pose" in w for w in scene.warnings)
    assert all(np.isfinite(c.values).all() for a in scene.animations for c in a.channels)


@pytest.mark.parametrize("name", ["x" * 300 + ".pcx", "CON.pcx", "lpt1", "a\0b.pcx", ""])
def test_names_no_os_can_open_are_not_files(tmp_path, name):
    assert not fileio.usable_name(name)
    if name:
        assert not fileio.is_file(tmp_path / name) and not fileio.is_dir(tmp_path / name)


def test_unreal_skin_names_the_os_rejects_are_missing_skins(tmp_path):
    d, a = tetra_pair()
    (tmp_path / "t_d.3d").write_bytes(d)
    (tmp_path / "t_a.3d").write_bytes(a)
    script = ("#exec MESH IMPORT MESH=t ANIVFILE=t_a.3d DATAFILE=t_d.3d\r\n"
              f"#exec TEXTURE IMPORT NAME=Long FILE={'L' * 300}.pcx\r\n"
              "#exec TEXTURE IMPORT NAME=Dev FILE=Skins\\CON.pcx\r\n"
              "#exec MESHMAP SETTEXTURE MESHMAP=t NUM=0 TEXTURE=Long\r\n"
              "#exec MESHMAP SETTEXTURE MESHMAP=t NUM=1 TEXTURE=Dev\r\n")
    (tmp_path / "t.uc").write_bytes(script.encode())
    scene = load(tmp_path / "t.uc")
    assert sum("not found; the material has no texture" in w for w in scene.warnings) >= 1
    assert all(not img.filepath for img in scene.images)


def test_u3d_texture_names_the_os_rejects_resolve_to_nothing(tmp_path):
    for name in ("y" * 400 + ".bmp", "*gfx\\NUL.bmp", "a\0.bmp"):
        assert u3d_materials.resolve_texture(name, str(tmp_path), str(tmp_path)) == ""


def test_uc_parser_keeps_what_the_old_pattern_read():
    text = (b'#exec MESH IMPORT MESH=Box ANIVFILE="My Models\\box_a.3d" DATAFILE=x_d.3d X=0 garbage\r\n'
            b"#exec MESHMAP SCALE MESHMAP=Box X=0.1 Y = 0.2 Z=0.4 // a comment X=9\r\n"
            b"  #EXEC mesh sequence MESH=Box SEQ=All-Frames STARTFRAME=0 NUMFRAMES=2\r\n"
            b"#execute nothing\r\n")
    w = Warnings()
    script = ucscript.parse(text, w)
    imp, scale, seq = script.directives
    assert imp.params == {"MESH": "Box", "ANIVFILE": "My Models\\box_a.3d", "DATAFILE": "x_d.3d", "X": "0"}
    assert scale.params == {"MESHMAP": "Box", "X": "0.1", "Y": "0.2", "Z": "0.4"}
    assert (seq.group, seq.command, seq.get("SEQ")) == ("MESH", "SEQUENCE", "All-Frames")
    assert w.as_list() == [".uc line 1: cannot read 'garbage' in #exec MESH IMPORT"]


def test_uc_warning_quotes_a_long_line_briefly():
    w = Warnings()
    ucscript.parse(b"#exec MESH IMPORT " + b"a" * 100_000, w)
    (warning,) = w.as_list()
    assert len(warning) < 200 and "..." in warning


def _v1_lods_and_frames(lod1_frame1_points=3):
    from tests.codec.u3d_fixtures import v1_header, v1_material, v1_mesh
    quad = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    tri = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    up = [(x, y, 1) for x, y, _ in quad]
    return (v1_header(n_mesh=4, n_frame=2, n_lod=2, levels=(0.5,), dist_sq=(100.0,))
            + v1_mesh("hi", quad, tris=((0, 1, 2), (0, 2, 3)), frame=0, lod=1.0)
            + v1_mesh("lo", tri, tris=((0, 1, 2),), frame=0, lod=0.5)
            + v1_mesh("hi", up, tris=((0, 0, 0), (0, 0, 0)), frame=1, lod=1.0, owned=0)
            + v1_mesh("lo", [(x, y, 1) for x, y, _ in tri][:lod1_frame1_points], tris=((0, 0, 0),), frame=1,
                      lod=0.5, owned=0)
            + v1_material())


def test_u3d_v1_frames_share_indices_with_frame_0_of_their_own_lod(tmp_path):
    """LoD 1's frame 1 has 3 vertices: it is checked against LoD 1's frame 0 (indices up to 2),
    not against the first mesh of the file (indices up to 3), as the import reads it."""
    (tmp_path / "lods.u3d").write_bytes(_v1_lods_and_frames())
    scene = load(tmp_path / "lods.u3d")
    sizes = sorted((len(m.positions), len(m.faces)) for m in scene.meshes)
    assert sizes[0] == (3, 1) and sizes[-1] == (4, 2)
    assert any(m.shape_keys for m in scene.meshes)


def test_u3d_v1_frame_whose_own_lod_indices_do_not_fit_is_refused(tmp_path):
    from addon.codec.errors import FormatError
    (tmp_path / "bad.u3d").write_bytes(_v1_lods_and_frames(lod1_frame1_points=2))
    with pytest.raises(FormatError, match=r"frame-0 mesh's indices do not fit .*MESH\[3\] \(LoD 1, frame 1"):
        load(tmp_path / "bad.u3d")


def test_3ds_camera_under_a_zero_scale_parent_is_placed_without_a_linalg_error():
    from addon.codec.formats.studio3ds import ids
    from addon.codec.formats.studio3ds.model import Chunk
    from addon.codec.formats.studio3ds.options import ImportOptions
    from addon.codec.formats.studio3ds.read import parse
    from addon.codec.formats.studio3ds.to_scene import to_scene
    from tests.codec.fixtures_3ds import build, kf_node, obj
    cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 50.0)))
    nodes = [kf_node(0, "$$$DUMMY", instance="Flat", scl=(0, 0, 0)),
             kf_node(1, "Cam", parent=0, tag=ids.CAMERA_NODE_TAG, pos=(1, 2, 3)),
             kf_node(2, "Cam", parent=0, tag=ids.TARGET_NODE_TAG, pos=(0, 5, 0))]
    w = Warnings()
    scene = to_scene(parse(build([cam], kf_nodes=nodes), w), ImportOptions(), w)
    assert all(np.isfinite(n.matrix).all() for n in scene.nodes)


def test_uc_zero_meshmap_scale_is_a_warning_and_a_usable_placement(tmp_path):
    d, a = tetra_pair()
    (tmp_path / "t_d.3d").write_bytes(d)
    (tmp_path / "t_a.3d").write_bytes(a)
    (tmp_path / "t.uc").write_bytes(b"#exec MESH IMPORT MESH=t ANIVFILE=t_a.3d DATAFILE=t_d.3d\r\n"
                                    b"#exec MESHMAP SCALE MESHMAP=t X=0.5 Y=0 Z=0.25\r\n")
    scene = load(tmp_path / "t.uc")
    assert any("MESHMAP SCALE of 0 would flatten the mesh" in w for w in scene.warnings)
    assert abs(np.linalg.det(scene.nodes[0].matrix)) > 0


def test_errors_past_reading_are_codec_errors_the_operators_report():
    """Operators catch only CodecError and OSError: a node cycle or an oversized count must be one."""
    from addon.codec.errors import CodecError
    from addon.codec.formats.unigine.compact import encode_int
    from addon.codec.scene import Node, Scene

    s = Scene()
    s.add_node(Node(name="a", parent=1))
    s.add_node(Node(name="b", parent=0))
    with pytest.raises(CodecError, match="cycle"):
        s.world_matrix(0)
    with pytest.raises(CodecError, match="compact int"):
        encode_int(1 << 40)


def test_unigine_keys_that_are_not_finite_hold_the_bind_pose_without_numpy_warnings():
    """A fuzzed tube (saved case) whose key boxes and one bind are NaN: one warning, finite keys, and
    no RuntimeWarning from the maths after reading (the cast of NaN to int16 is undefined)."""
    import warnings as pywarnings

    from addon.codec import encode, load
    case = Path(__file__).resolve().parents[1] / "fuzz_cases/unigine-mesh-0fba43fe7d/tube_skinned.mesh"
    with pywarnings.catch_warnings():
        pywarnings.simplefilter("error")
        s = load(case)
        encode(s, Path("x.mesh"))
    assert any("not finite numbers" in w for w in s.warnings)
    assert all(np.isfinite(ch.values).all() for a in s.animations for ch in a.channels)
