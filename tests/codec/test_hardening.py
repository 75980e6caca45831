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


# ---------------------------------------------------------------------------
# Any Scene an importer makes exports to every format, or stops with a CodecError (issue 23)
# ---------------------------------------------------------------------------
def _encode_everywhere(scene, folder: Path, but: str = "") -> dict:
    """Each other format -> its warnings, or the CodecError that stopped it; anything else escapes."""
    from addon.codec import encode, registered_formats
    from addon.codec.errors import CodecError
    out = {}
    for name, spec in registered_formats().items():
        if name == but:
            continue
        try:
            out[name] = encode(scene, spec.main_output(folder, "x"), name)[1]
        except CodecError as e:
            out[name] = e
    return out


def _nan_3ds(path: Path) -> None:
    """A cube whose material's diffuse colour is (NaN, 0.5, NaN), and a camera whose lens is NaN."""
    from addon.codec.formats.studio3ds import ids
    from addon.codec.formats.studio3ds.model import Chunk
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, obj, trimesh
    red = Chunk(ids.MAT_ENTRY)
    red.add(ids.MAT_NAME, "Red")
    red.add(ids.MAT_DIFFUSE).add(ids.COLOR_F, (NAN, 0.5, NAN))
    cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, NAN)))
    box = obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Red", range(12))]))
    path.write_bytes(build([box, cam], [red]))


def test_nan_a_file_holds_is_replaced_where_it_enters_and_the_scene_converts_everywhere(tmp_path):
    _nan_3ds(tmp_path / "nan.3ds")
    scene = load(tmp_path / "nan.3ds")
    assert scene.materials[0].base_color == (0.8, 0.5, 0.8)            # the bad ones: Material's default
    assert np.isfinite(scene.cameras[0].lens)
    assert any("material 'Red' base_color: 2 NaN, infinite or out-of-range numbers" in w for w in scene.warnings)
    results = _encode_everywhere(scene, tmp_path, but="3ds")
    assert all(isinstance(r, list) for r in results.values() if "anim" not in str(r))


def _hostile_scene():
    """A Scene as a script or Blender may hand an exporter: NaN and infinity wherever numbers go,
    a zero lens, keys at a NaN and a negative frame, names no code page holds."""
    from addon.codec.scene import Animation, Camera, Channel, Node
    scene = load(Path(__file__).resolve().parents[2] / "test_assets/3ds/cube_with_materials.3ds")
    m = scene.materials[0]
    m.base_color, m.alpha, m.specular, m.emission = (NAN, 0.2, INF), NAN, -INF, (1.0, NAN, 0.0)
    m.name = "Würfel Ω"
    scene.materials[-1].name = "Würfel Σ"                    # both "Würfel ?" in Latin-1: must stay two names
    mesh = scene.meshes[0]
    mesh.positions = mesh.positions.copy()
    mesh.positions[0] = (NAN, INF, -INF)
    for name, uv in list(mesh.uv_layers.items()):
        mesh.uv_layers[name] = np.where(np.arange(len(uv))[:, None] == 0, NAN, uv).astype(np.float32)
    scene.nodes[0].name = "\udcff\udcfe"                      # UNIGINE keeps undecodable bytes this way
    scene.nodes[0].matrix = np.full((4, 4), NAN)
    scene.cameras.append(Camera("Cam", lens=0.0, clip_end=INF))
    cam = scene.add_node(Node("Cam", "CAMERA", len(scene.cameras) - 1))
    scene.animations = [Animation("Move", -5, 20, channels=[
        Channel(cam, "location", np.array([-5.0, NAN, 10.0, 20.0]), np.array([[0, 0, 0], [1, 1, 1], [NAN, 0, 0],
                                                                              [2, INF, 2]], np.float64)),
        Channel(0, "rotation_quaternion", np.array([0.0, 10.0]), np.array([[1.0, 0, 0, 0], [NAN, NAN, NAN, NAN]]))])]
    return scene


def test_a_hostile_scene_exports_to_every_format_and_is_left_as_it_was(tmp_path):
    scene = _hostile_scene()
    before = scene.materials[0].base_color, scene.meshes[0].positions.copy(), scene.nodes[0].matrix.copy()
    results = _encode_everywhere(scene, tmp_path)
    for fmt in ("3ds", "u3d", "unreal", "unigine-mesh"):
        assert isinstance(results[fmt], list), (fmt, results[fmt])
        assert any("NaN, infinite or out-of-range" in w for w in results[fmt]), fmt
    assert scene.materials[0].base_color is before[0]
    np.testing.assert_array_equal(scene.meshes[0].positions, before[1])
    np.testing.assert_array_equal(scene.nodes[0].matrix, before[2])


def test_names_a_code_page_lacks_are_written_with_a_stated_replacement(tmp_path):
    from addon.codec import save
    scene = _hostile_scene()
    for ext, fmt in ((".3ds", "3ds"), (".u3d", "u3d")):
        warnings = save(scene, tmp_path / f"names{ext}")
        assert sum(f"{fmt} names hold Latin-1 characters only" in w and "written with '?'" in w
                   for w in warnings) == 1, fmt
    # Unreal writes names only as UnrealScript identifiers (ucscript.checked_identifier says what it changes)
    assert not any("names hold" in w for w in save(scene, tmp_path / "names_d.3d"))
    names = [m.name for m in load(tmp_path / "names.3ds").materials]
    assert len(set(names)) == len(names) and "Würfel ?" in names      # ü is Latin-1; Ω and Σ are not
    assert "Würfel ?" in [m.name for m in load(tmp_path / "names.u3d").materials]
    (tmp_path / "names.mesh").unlink(missing_ok=True)
    save(scene, tmp_path / "names.mesh")                      # UTF-8 names hold everything: no warning
    assert "Würfel Ω" in [m.name for m in load(tmp_path / "names.mesh").materials]
    # glTF is UTF-8 text: Ω stays, the undecodable bytes a UNIGINE name kept become "?", once said
    warnings = save(scene, tmp_path / "names.glb")
    assert sum("glb names hold UTF-8 characters only" in w for w in warnings) == 1
    back = load(tmp_path / "names.glb")
    assert "Würfel Ω" in [m.name for m in back.materials] and "??" in [n.name for n in back.nodes]


def test_writers_pack_a_float32_field_beyond_its_range_as_its_largest_value():
    import struct

    from addon.codec.binary import Writer
    w = Writer()
    w.f32(1e39)
    w.pack("2f", -1e300, 1.5)
    top = struct.pack("<f", np.finfo(np.float32).max)
    assert w.getvalue() == top + b"\xff\xff\x7f\xff" + struct.pack("<f", 1.5)


def test_a_3ds_mesh_matrix_that_cannot_be_inverted_converts_everywhere(tmp_path):
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, obj, trimesh
    from addon.codec import axes
    flat = np.diag([1.0, 0.0, 1.0, 1.0])
    (tmp_path / "flat.3ds").write_bytes(build([obj("Flat", trimesh(CUBE_POINTS, CUBE_TRIS, matrix=flat))]))
    results = _encode_everywhere(load(tmp_path / "flat.3ds"), tmp_path, but="3ds")
    assert all(isinstance(r, list) for name, r in results.items() if name != "unigine-anim")
    n = axes.apply_normals(np.zeros((3, 3)), np.array([[0.0, 0.0, 1.0]]))
    assert np.isfinite(n).all()
    np.testing.assert_array_equal(axes.conjugate(np.zeros((3, 3)), np.eye(4)), np.zeros((4, 4)) + np.diag([0, 0, 0, 1.0]))


def test_3ds_export_of_frames_before_0_and_a_camera_without_a_lens(tmp_path):
    from addon.codec import save
    scene = _hostile_scene()
    warnings = save(scene, tmp_path / "early.3ds")
    assert any("a .3ds file's frames start at 0" in w for w in warnings)
    back = load(tmp_path / "early.3ds")
    assert np.isfinite(back.cameras[0].lens) and back.cameras[0].lens > 0
    assert all(c.frames.min() >= 0 for a in back.animations for c in a.channels)


def test_an_unreal_sequence_is_cut_to_the_frames_there_are(tmp_path):
    d, a = tetra_pair(frames=4)
    (tmp_path / "t_d.3d").write_bytes(d)
    (tmp_path / "t_a.3d").write_bytes(a)
    (tmp_path / "t.uc").write_bytes(b"#exec MESH IMPORT MESH=t ANIVFILE=t_a.3d DATAFILE=t_d.3d\r\n"
                                    b"#exec MESH SEQUENCE MESH=t SEQ=Run STARTFRAME=1 NUMFRAMES=99999999\r\n")
    scene = load(tmp_path / "t.uc")
    run = next(an for an in scene.animations if an.name == "Run")
    assert (run.frame_start, run.frame_end) == (1, 3)
    assert any("'Run' runs to frame 99999999, beyond the last frame 3: cut there" in w for w in scene.warnings)


def test_u3d_samples_a_gap_a_file_made_up_at_its_ends_only():
    from addon.codec.formats.ultimate3d.animation_out import timeline
    scene = load(Path(__file__).resolve().parents[2] / "test_assets/unigine/tube_skinned.mesh")
    scene.animations[0].frame_start = 900_000.0          # after its own end: one frame, far away
    line = timeline(scene)
    assert line.last >= 900_000 and len(line.frames) < 100


def test_3ds_smoothing_groups_of_a_mesh_welded_to_one_point_stay_small():
    """Every patch touches every other at the one point: pairing them all made F^2 rows."""
    import tracemalloc

    from addon.codec.formats.studio3ds.groups import smoothing_groups
    n = 3000
    tris = np.arange(3 * n).reshape(n, 3)
    normals = np.repeat(np.random.default_rng(1).normal(size=(n, 3)).astype(np.float32), 3, axis=0)
    normals[1::3] *= -1                                   # corners disagree: no patch is flat
    tracemalloc.start()
    groups = smoothing_groups(np.zeros((3 * n, 3), np.float32), tris, normals)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(groups) == n and peak < 40 << 20
