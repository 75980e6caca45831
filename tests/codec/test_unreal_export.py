"""Neutral Scene -> Unreal Engine 1 vertex mesh, and the round trips through the Scene."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from addon.codec import save
from addon.codec.errors import UnsupportedFeature, Warnings
from addon.codec.formats.unreal import from_scene as export, read, to_scene as scene, write
from addon.codec.formats.unreal.options import ExportOptions, ImportOptions
from addon.codec.scene import Animation, Image, Marker, Material, Mesh, Node, Scene, ShapeKey, TextureSlot
from tests.codec.unreal_fixtures import ASSETS, pack_word, tetra_pair, write_set
from tests.codec.test_unreal_scene import UC

STEP = np.array([1 / 8, 1 / 8, 1 / 4])          # one packing step per axis at the default scale


def _import(path, **kw):
    w = Warnings()
    return scene.to_scene(read.read(path, ImportOptions(**kw), w), ImportOptions(**kw), w)


def _export(s, target: Path, **kw) -> tuple[dict[Path, bytes], list[str]]:
    w = Warnings()
    model = export.from_scene(s, ExportOptions(**kw), w)
    return write.encode(model, target), w.as_list()


def _write(files: dict[Path, bytes]) -> None:
    for p, b in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b)


def _blender_scene(frames: int = 3) -> Scene:
    """A quad and two triangles (5 corners fan), with shape keys, UVs, materials."""
    rng = np.random.default_rng(7)
    base = rng.uniform(-50, 50, (6, 3)).astype(np.float32)
    keys = [ShapeKey(f"k{i}", base + np.float32(i * 1.37)) for i in range(frames)]
    corners = np.array([0, 1, 2, 3, 3, 2, 4, 0, 3, 4, 5], np.uint32)       # quad, triangle, quad
    faces = np.array([0, 4, 7], np.uint32)
    uv = rng.uniform(0, 1, (len(corners), 2)).astype(np.float32)
    mesh = Mesh("thing", positions=base, corners=corners, faces=faces, uv_layers={"UVMap": uv},
                face_material=np.array([0, 1, 0], np.int32), materials=[0, 1], shape_keys=keys,
                face_attributes={"ue_type": np.array([0, 3, 1]), "ue_flags": np.array([16, 0, 128]),
                                 "ue_color": np.array([1, 2, 3]), "ue_texture": np.array([0, 1, 0]),
                                 "ue_flags_byte": np.array([0, 7, 0])})
    s = Scene(meshes=[mesh], materials=[Material("Body"), Material("Glass")])
    s.add_node(Node("thing", "MESH", 0))
    return s


# -- round trips -------------------------------------------------------------------
@pytest.mark.parametrize("name", ["box", "mar_rifle"])
def test_file_to_scene_to_file_is_byte_identical(tmp_path, name):
    s = _import(ASSETS / f"{name}_d.3d")
    out, warnings = _export(s, tmp_path / f"{name}_d.3d")
    assert out[tmp_path / f"{name}_d.3d"] == (ASSETS / f"{name}_d.3d").read_bytes()
    assert out[tmp_path / f"{name}_a.3d"] == (ASSETS / f"{name}_a.3d").read_bytes()


def test_scene_to_file_to_scene_keeps_frames_uvs_attributes(tmp_path):
    src = _blender_scene()
    out, warnings = _export(src, tmp_path / "thing_d.3d")
    _write(out)
    back = _import(tmp_path / "thing_d.3d")
    m0, m1 = src.meshes[0], back.meshes[0]
    assert len(m1.shape_keys) == 3
    world = back.nodes[0].matrix
    for k0, k1 in zip(m0.shape_keys, m1.shape_keys):
        pos = k1.positions.astype(np.float64) @ world[:3, :3].T + world[:3, 3]
        assert (np.abs(pos - k0.positions) <= STEP / 2 + 1e-6).all()
    # triangles: the quads fan out to 2 each
    assert len(m1.corners) == 3 * 5
    tri_face = np.array([0, 0, 1, 2, 2])
    for name, values in m0.face_attributes.items():
        assert m1.face_attributes[name].tolist() == np.asarray(values)[tri_face].tolist(), name
    fan = np.array([0, 1, 2, 0, 2, 3, 4, 5, 6, 7, 8, 9, 7, 9, 10])
    np.testing.assert_array_equal(m1.corners, m0.corners[fan])
    assert (np.abs(m1.uv_layers["UVMap"] - m0.uv_layers["UVMap"][fan]) <= 1 / 256 + 1e-6).all()


def test_script_transform_round_trips(tmp_path):
    d, a = tetra_pair(frames=6)
    root = tmp_path / "Pkg"
    write_set(root / "Models", "anim", d, a, UC, uc_folder=root / "Classes")
    s = _import(root / "Classes" / "anim.uc")
    out, _ = _export(s, tmp_path / "Out" / "Classes" / "anim.uc")
    models = tmp_path / "Out" / "Models"
    assert out[models / "anim_d.3d"] == d and out[models / "anim_a.3d"] == a
    text = out[tmp_path / "Out" / "Classes" / "anim.uc"].decode()
    assert "#exec MESH IMPORT MESH=anim ANIVFILE=MODELS\\anim_a.3d DATAFILE=MODELS\\anim_d.3d" in text
    assert "#exec MESH ORIGIN MESH=anim X=8 Y=16 Z=-4 YAW=64\r\n" in text          # zero angles left out
    assert "#exec MESHMAP SCALE MESHMAP=anim X=0.05 Y=0.1 Z=0.2" in text
    assert "#exec MESH SEQUENCE MESH=anim SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving" in text
    assert "#exec MESH SEQUENCE MESH=anim SEQ=Still STARTFRAME=0 NUMFRAMES=1" in text
    assert "#exec MESH NOTIFY MESH=anim SEQ=Walk TIME=0.5 FUNCTION=Footstep" in text
    assert "#exec TEXTURE IMPORT NAME=Jskin FILE=Textures\\Skin_One.PCX GROUP=Skins" in text
    assert "#exec MESHMAP SETTEXTURE MESHMAP=anim NUM=1 TEXTURE=Jskin" in text
    assert "#exec MESHMAP NEW MESHMAP=anim MESH=anim" in text
    assert "class anim extends Actor;" in text


# -- the packed values ---------------------------------------------------------------
def test_export_packs_the_inverse_of_the_import_mapping(tmp_path):
    mesh = Mesh.from_triangles("p", [(1.0, 2.0, 3.0), (-1.0, 0.5, -2.0), (0, 0, 0)], [(0, 1, 2)])
    s = Scene(meshes=[mesh])
    s.add_node(Node("p", "MESH", 0))
    out, _ = _export(s, tmp_path / "p_d.3d", write_uc=False)
    assert set(out) == {tmp_path / "p_d.3d", tmp_path / "p_a.3d"}
    a = np.frombuffer(out[tmp_path / "p_a.3d"], "<u4", offset=4).tolist()
    # raw = (x * 8, -y * 8, z * 4)
    assert a == [pack_word(8, -16, 12), pack_word(-8, -4, -8), 0]
    assert out[tmp_path / "p_a.3d"][:4] == b"\x01\x00\x0c\x00"       # 1 frame of 12 bytes
    d = out[tmp_path / "p_d.3d"]
    assert d[:4] == b"\x01\x00\x03\x00" and d[4:48] == bytes(44)
    assert np.frombuffer(d, "<u2", 3, 48).tolist() == [0, 2, 1]      # winding reversed back


def test_deus_ex_export(tmp_path):
    mesh = Mesh.from_triangles("dx", [(1.0, 2.0, -3.0), (0, 0, 0), (0, 0, 1)], [(0, 1, 2)])
    s = Scene(meshes=[mesh])
    out, _ = _export(s, tmp_path / "dx_d.3d", variant="DEUS_EX", write_uc=False)
    a = out[tmp_path / "dx_a.3d"]
    assert a[:4] == b"\x01\x00\x18\x00"                                # FrameSize 24 = 8 * 3
    assert np.frombuffer(a, "<i2", 4, 4).tolist() == [256, -512, -768, 0]


def test_values_outside_the_range_clamp_with_a_warning(tmp_path):
    mesh = Mesh.from_triangles("big", [(200.0, 0, 0), (0, -200.0, 0), (0, 0, 500.0)], [(0, 1, 2)])
    out, warnings = _export(Scene(meshes=[mesh]), tmp_path / "big_d.3d", write_uc=False)
    a = np.frombuffer(out[tmp_path / "big_a.3d"], "<u4", offset=4).tolist()
    assert a == [pack_word(1023, 0, 0), pack_word(0, 1023, 0), pack_word(0, 0, 511)]
    assert any("3 coordinates were outside" in w and "clamped" in w for w in warnings)


def test_automatic_scale_fits_and_warns(tmp_path):
    mesh = Mesh.from_triangles("fit", [(400.0, 0, 0), (0, -100.0, 0), (0, 0, 10.0)], [(0, 1, 2)])
    s = Scene(meshes=[mesh])
    s.add_node(Node("fit", "MESH", 0))
    out, warnings = _export(s, tmp_path / "fit_d.3d", scale=0.0)
    assert any(w.startswith("automatic scale") for w in warnings)
    assert not any("clamped" in w for w in warnings)
    a = np.frombuffer(out[tmp_path / "fit_a.3d"], "<u4", offset=4)
    assert a[0] == pack_word(1023, 0, 0)                                 # the largest extent fills the field
    _write(out)
    back = _import(tmp_path / "fit_d.3d")
    world = back.meshes[0].positions.astype(np.float64) @ back.nodes[0].matrix[:3, :3].T
    np.testing.assert_allclose(world, mesh.positions, atol=400 / 1023)


def test_vertex_limit_is_refused(tmp_path):
    n = 16384
    mesh = Mesh.from_triangles("huge", np.zeros((n, 3)), [(0, 1, 2)])
    with pytest.raises(UnsupportedFeature, match="16384 vertices; the standard format holds at most 16383"):
        _export(Scene(meshes=[mesh]), tmp_path / "huge_d.3d")
    mesh = Mesh.from_triangles("dx", np.zeros((8192, 3)), [(0, 1, 2)])
    with pytest.raises(UnsupportedFeature, match="at most 8191"):
        _export(Scene(meshes=[mesh]), tmp_path / "dx_d.3d", variant="DEUS_EX")


def test_failed_export_leaves_existing_files_untouched(tmp_path):
    target = tmp_path / "keep_d.3d"
    shutil.copy(ASSETS / "box_d.3d", target)
    mesh = Mesh.from_triangles("huge", np.zeros((20000, 3)), [(0, 1, 2)])
    with pytest.raises(UnsupportedFeature):
        save(Scene(meshes=[mesh]), target, fmt="unreal")
    assert target.read_bytes() == (ASSETS / "box_d.3d").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep_d.3d"]


def test_save_writes_the_pair_and_script(tmp_path):
    save(_blender_scene(), tmp_path / "thing.uc", fmt="unreal")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thing.uc", "thing_a.3d", "thing_d.3d"]


# -- types, flags and skins from materials --------------------------------------------------
def test_types_flags_and_skins_come_from_materials_without_attributes(tmp_path):
    mats = [Material("solid", two_sided=False), Material("cloth", two_sided=True), Material("glass", blend="BLEND"),
            Material("leaves", blend="CLIP"), Material("shadow", blend="MULTIPLY"),
            Material("special", extras={"ue_type": 1, "ue_flags": 16 | 64}),
            Material("gun", extras={"ue_weapon": True})]
    n = len(mats)
    mesh = Mesh.from_triangles("m", np.arange(n * 9, dtype=np.float32).reshape(-1, 3) / 10,
                               np.arange(n * 3).reshape(-1, 3), face_material=np.arange(n, dtype=np.int32),
                               materials=list(range(n)))
    s = Scene(meshes=[mesh], materials=mats)
    out, warnings = _export(s, tmp_path / "m_d.3d")
    d = out[tmp_path / "m_d.3d"]
    recs = np.frombuffer(d, np.uint8, n * 16, 48).reshape(n, 16)
    assert recs[:, 6].tolist() == [0, 1, 2, 3, 4, 1 | 16 | 64, 8]        # type byte
    assert recs[:, 14].tolist() == list(range(n))                         # texture number = material slot
    # the weapon triangle keeps its corner order; the others are reversed back
    v = np.frombuffer(d, "<u2", n * 8, 48).reshape(n, 8)[:, :3]
    assert v[6].tolist() == [18, 19, 20] and v[0].tolist() == [0, 2, 1]
    text = out[tmp_path / "m.uc"].decode()
    assert "#exec MESHMAP SETTEXTURE MESHMAP=m NUM=2 TEXTURE=glass" in text
    assert "TEXTURE=gun" not in text                                       # weapon triangles need no skin
    assert any("skin 0 has no image" in w for w in warnings)


def test_texture_file_from_image(tmp_path):
    s = _blender_scene(1)
    s.images = [Image("Body_Tex", "/some/where/body.bmp")]
    s.materials[0].textures = [TextureSlot("base_color", 0)]
    out, _ = _export(s, tmp_path / "thing_d.3d", texture_prefix="J", package_name="MyPkg")
    text = out[tmp_path / "thing.uc"].decode()
    assert "#exec TEXTURE IMPORT NAME=JBody FILE=Textures\\body.bmp GROUP=Skins FLAGS=0" in text
    assert "#exec MESHMAP SETTEXTURE MESHMAP=thing NUM=0 TEXTURE=JBody" in text
    assert "Mesh=MyPkg.thing" in text


# -- frames and sequences ---------------------------------------------------------------------
def test_sequences_from_animations_with_rate_group_and_notifies(tmp_path):
    s = _blender_scene(frames=10)
    s.animations = [Animation("Idle", 0, 3, 10.0), Animation("Shoot", 4, 9, 24.0, markers=[Marker("Fire", 7)],
                                                             extras={"ue_group": "Attack"})]
    out, _ = _export(s, tmp_path / "thing_d.3d")
    text = out[tmp_path / "thing.uc"].decode()
    assert "SEQ=Idle STARTFRAME=0 NUMFRAMES=4 RATE=10\r\n" in text
    assert "SEQ=Shoot STARTFRAME=4 NUMFRAMES=6 RATE=24 GROUP=Attack" in text
    assert "#exec MESH NOTIFY MESH=thing SEQ=Shoot TIME=0.5 FUNCTION=Fire" in text


def test_sequences_from_markers_and_frame_range(tmp_path):
    s = _blender_scene(frames=10)
    s.markers = [Marker("Run", 6), Marker("Idle", 2), Marker("Late", 12)]
    s.fps = 30.0
    out, warnings = _export(s, tmp_path / "thing_d.3d", sequence_source="MARKERS", use_scene_range=False,
                           frame_start=2, frame_end=8)
    assert out[tmp_path / "thing_a.3d"][:2] == b"\x07\x00"                # frames 2..8
    text = out[tmp_path / "thing.uc"].decode()
    assert "SEQ=Idle STARTFRAME=0 NUMFRAMES=4 RATE=30" in text
    assert "SEQ=Run STARTFRAME=4 NUMFRAMES=3 RATE=30" in text              # clipped at frame 8
    assert any("'Run' (frames 6..11)" in w and "clipped" in w for w in warnings)
    assert any("'Late'" in w for w in warnings) and "SEQ=Late" not in text
    first = np.frombuffer(out[tmp_path / "thing_a.3d"], "<u4", 6, 4)
    again, _ = _export(s, tmp_path / "x_d.3d", sequence_source="ALL", use_scene_range=False,
                        frame_start=2, frame_end=2)
    assert np.frombuffer(again[tmp_path / "x_a.3d"], "<u4", 6, 4).tolist() == first.tolist()
    assert "SEQ=All STARTFRAME=0 NUMFRAMES=1" in again[tmp_path / "x.uc"].decode()



def test_explicit_frame_range_is_honoured_as_given(tmp_path):
    s = _blender_scene(frames=10)
    s.meshes[0].baked_frames = list(range(4, 14))                  # a scene at 4..13
    out, warnings = _export(s, tmp_path / "a_d.3d", use_scene_range=False, frame_start=2, frame_end=6)
    assert out[tmp_path / "a_a.3d"][:2] == b"\x03\x00"                        # frames 4, 5, 6
    assert any("2..6: 2 of its frames are not in the scene" in w for w in warnings)
    out, _ = _export(s, tmp_path / "b_d.3d", frame_start=6, frame_end=7)     # scene range: options ignored
    assert out[tmp_path / "b_a.3d"][:2] == b"\x0a\x00"
    with pytest.raises(UnsupportedFeature, match="selects none"):
        _export(s, tmp_path / "c_d.3d", use_scene_range=False, frame_start=0, frame_end=2)
    with pytest.raises(UnsupportedFeature, match="before the start"):
        _export(s, tmp_path / "c_d.3d", use_scene_range=False, frame_start=8, frame_end=5)


def test_sequences_without_their_own_rate_take_the_scene_rate(tmp_path):
    s = _blender_scene(frames=10)
    s.fps = 25.0
    s.animations = [Animation("Made", 0, 3, 0.0),                            # a user's action: no fps property
                    Animation("Imported", 4, 9, 0.0, extras={"ue_rate": 0.0}),   # a script sequence without RATE
                    Animation("Own", 2, 5, 12.0)]
    text = _export(s, tmp_path / "thing_d.3d")[0][tmp_path / "thing.uc"].decode()
    assert "SEQ=Made STARTFRAME=0 NUMFRAMES=4 RATE=25\r\n" in text
    assert "SEQ=Imported STARTFRAME=4 NUMFRAMES=6\r\n" in text
    assert "SEQ=Own STARTFRAME=2 NUMFRAMES=4 RATE=12\r\n" in text


def test_script_round_trip_keeps_a_sequence_without_rate(tmp_path):
    d, a = tetra_pair(frames=6)
    write_set(tmp_path / "Models", "anim", d, a, UC, uc_folder=tmp_path / "Classes")
    s = _import(tmp_path / "Classes" / "anim.uc")
    s.fps = 30.0
    text = _export(s, tmp_path / "out.uc")[0][tmp_path / "out.uc"].decode()
    assert "SEQ=All STARTFRAME=0 NUMFRAMES=6\r\n" in text and "SEQ=Still STARTFRAME=0 NUMFRAMES=1\r\n" in text
    assert "SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving" in text


def test_names_that_are_not_identifiers_are_sanitised_in_the_script(tmp_path):
    s = _blender_scene(1)
    s.animations = [Animation("Walk Fast", 0, 0, 10.0, markers=[Marker("foot step", 0)])]
    out, warnings = _export(s, tmp_path / "my gun_d.3d", package_name="My Pkg")
    assert sorted(p.name for p in out) == ["my gun.uc", "my gun_a.3d", "my gun_d.3d"]     # files keep their names
    text = out[tmp_path / "my gun.uc"].decode()
    assert "class my_gun extends Actor;" in text
    assert '#exec MESH IMPORT MESH=my_gun ANIVFILE="my gun_a.3d" DATAFILE="my gun_d.3d" X=0 Y=0 Z=0' in text
    assert "#exec MESHMAP NEW MESHMAP=my_gun MESH=my_gun" in text
    assert "SEQ=Walk_Fast " in text and "FUNCTION=foot_step" in text
    assert "Mesh=My_Pkg.my_gun" in text
    for what in ("mesh name 'my gun'", "class name 'my gun'", "package 'My Pkg'", "sequence 'Walk Fast'",
                 "notify function 'foot step'"):
        assert any(what in w for w in warnings), what
    assert any("rename my gun.uc" in w for w in warnings)
    # the script reads back: quoted file names, the sanitised mesh
    _write(out)
    back = _import(tmp_path / "my gun.uc")
    assert back.meshes[0].name == "my_gun" and len(back.meshes[0].positions) == 6
    out, warnings = _export(s, tmp_path / "1st_d.3d")
    assert "class _1st extends Actor;" in out[tmp_path / "1st.uc"].decode()


# -- interoperation ---------------------------------------------------------------------------
def _assimp_counts(path: Path) -> tuple[int, int]:
    assert shutil.which("assimp"), "assimp-utils must be installed (the CI installs it)"
    text = subprocess.run(["assimp", "info", str(path)], capture_output=True, text=True, timeout=60).stdout
    return (int(re.search(r"^Vertices:\s+(\d+)", text, re.M).group(1)),
            int(re.search(r"^Faces:\s+(\d+)", text, re.M).group(1)))


@pytest.mark.parametrize("name", ["box", "mar_rifle"])
def test_exported_pairs_load_in_assimp_with_the_same_counts(tmp_path, name):
    out, _ = _export(_import(ASSETS / f"{name}_d.3d"), tmp_path / f"{name}_d.3d")
    _write(out)
    assert _assimp_counts(tmp_path / f"{name}_d.3d") == _assimp_counts(ASSETS / f"{name}_d.3d")


def test_generated_pair_loads_in_assimp(tmp_path):
    out, _ = _export(_blender_scene(), tmp_path / "thing_d.3d")
    _write(out)
    vertices, faces = _assimp_counts(tmp_path / "thing_d.3d")
    assert faces == 5
    assert 6 <= vertices <= 15                                              # corners, joined where identical


def test_object_animation_is_baked_into_the_frames(tmp_path):
    from addon.codec.scene import Channel
    mesh = Mesh.from_triangles("m", [(1.0, 0, 0), (0, 1.0, 0), (0, 0, 1.0)], [(0, 1, 2)])
    mesh.shape_keys = [ShapeKey("f1", mesh.positions.copy()), ShapeKey("f2", mesh.positions.copy())]
    mesh.baked_frames = [1, 2]
    s = Scene(meshes=[mesh])
    s.add_node(Node("m", "MESH", 0))                    # rest matrix: identity
    frames = np.array([1.0, 2.0])
    s.animations = [Animation("Scene", 1, 2, 24.0, channels=[
        Channel(0, "location", frames, np.array([[0, 0, 0], [2.0, 0, 0]])),
        Channel(0, "rotation_quaternion", frames, np.array([[1.0, 0, 0, 0], [0.7071067811865476, 0, 0, 0.7071067811865476]])),
        Channel(0, "scale", frames, np.ones((2, 3)))])]
    out, _ = _export(s, tmp_path / "m_d.3d", sequence_source="ALL")
    words = np.frombuffer(out[tmp_path / "m_a.3d"], "<u4", 6, 4).reshape(2, 3).tolist()
    assert words[0] == [pack_word(8, 0, 0), pack_word(0, -8, 0), pack_word(0, 0, 4)]
    # frame 2: turned 90 degrees about Z (x -> y), then moved +2 X; raw = (x*8, -y*8, z*4)
    assert words[1] == [pack_word(16, -8, 0), pack_word(8, 0, 0), pack_word(16, 0, 4)]


def test_moving_parent_is_baked_into_the_frames(tmp_path):
    from addon.codec.scene import Channel
    mesh = Mesh.from_triangles("m", [(1.0, 0, 0), (0, 1.0, 0), (0, 0, 1.0)], [(0, 1, 2)])
    mesh.shape_keys = [ShapeKey("f0", mesh.positions.copy()), ShapeKey("f1", mesh.positions.copy())]
    s = Scene(meshes=[mesh])
    s.add_node(Node("rig", "EMPTY"))
    s.add_node(Node("m", "MESH", 0, parent=0))
    s.animations = [Animation("Scene", 0, 1, 24.0, channels=[
        Channel(0, "location", np.array([0.0, 1.0]), np.array([[0, 0, 0], [0, 0, 3.0]]))])]
    out, _ = _export(s, tmp_path / "m_d.3d", sequence_source="ALL")
    words = np.frombuffer(out[tmp_path / "m_a.3d"], "<u4", 6, 4).reshape(2, 3).tolist()
    assert words[1] == [pack_word(8, 0, 12), pack_word(0, -8, 12), pack_word(0, 0, 16)]   # +3 Z = 12 raw


def test_texture_numbers_follow_material_slots_over_stale_attributes(tmp_path):
    mats = [Material("imported", extras={"ue_texture": 4}), Material("new"), Material("gun", extras={"ue_weapon": True})]
    mesh = Mesh.from_triangles("m", np.arange(27, dtype=np.float32).reshape(-1, 3) / 10, np.arange(9).reshape(-1, 3),
                               face_material=np.array([0, 1, 2], np.int32), materials=[0, 1, 2],
                               face_attributes={"ue_texture": np.array([9, 9, 7])})
    out, _ = _export(Scene(meshes=[mesh], materials=mats), tmp_path / "m_d.3d", write_uc=False)
    recs = np.frombuffer(out[tmp_path / "m_d.3d"], np.uint8, 3 * 16, 48).reshape(3, 16)
    # custom property from import; slot index for a new material; the weapon keeps its attribute
    assert recs[:, 14].tolist() == [4, 1, 7]
    assert recs[:, 6].tolist() == [1, 1, 8]                 # Material() is two-sided by default
