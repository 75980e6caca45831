"""Unreal Engine 1 vertex mesh -> neutral Scene: axes, scale, winding, UVs, attributes, script."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec.errors import Warnings
from addon.codec.formats.unreal import conventions, read, to_scene as scene
from addon.codec.formats.unreal.options import ImportOptions
from tests.codec.unreal_fixtures import (ASSETS, TETRA, TETRA_FACES, a_file, d_file, signed_volume, tetra_pair, tri,
                                         write_set)


def _load(path, **kw):
    w = Warnings()
    model = read.read(path, ImportOptions(**kw), w)
    return scene.to_scene(model, ImportOptions(**kw), w), w.as_list()


def _value_at(channel, frame):
    """A CONSTANT channel's value at `frame` (the last key at or before it; before the first, the first)."""
    i = np.searchsorted(channel.frames, frame, side="right") - 1
    return float(channel.values[max(i, 0), 0])


def test_default_scale_mirror_y_and_outward_winding(tmp_path):
    d, a = tetra_pair(frames=1)
    s, warnings = _load(write_set(tmp_path, "t", d, a))
    m = s.meshes[0]
    # X = raw/8, Y = -raw/8, Z = raw/4
    expected = [(x / 8, -y / 8, z / 4) for x, y, z in TETRA]
    np.testing.assert_array_equal(m.positions, np.array(expected, np.float32))
    np.testing.assert_array_equal(s.nodes[0].matrix, np.eye(4))
    tris = m.corners.reshape(-1, 3).tolist()
    # winding reversed with the first corner kept: (a, b, c) -> (a, c, b)
    assert tris == [[a, c, b] for a, b, c in TETRA_FACES]
    assert signed_volume(m.positions.tolist(), tris) > 0          # normals point outward in Blender
    assert not warnings


def test_box_is_closed_and_outward():
    s, _ = _load(ASSETS / "box_d.3d")
    m = s.meshes[0]
    assert signed_volume(m.positions.astype(np.float64).tolist(), m.corners.reshape(-1, 3).tolist()) > 0


def test_uvs_and_face_attributes(tmp_path):
    tris = [tri((0, 1, 2), type_=2 | 16 | 64, color=77, uv=((0, 0), (128, 64), (255, 255)), tex=3, flags=9),
            tri((0, 2, 3), type_=1 | 128, color=5, uv=((1, 2), (3, 4), (5, 6)), tex=0, flags=0)]
    a = a_file([TETRA])
    s, _ = _load(write_set(tmp_path, "uv", d_file(tris, 4), a))
    m = s.meshes[0]
    uv = m.uv_layers["UVMap"].reshape(-1, 3, 2)
    # corners stored (0, 2, 1): u = U/256, v = 1 - V/256
    np.testing.assert_allclose(uv[0], [[0, 1], [255 / 256, 1 - 255 / 256], [0.5, 0.75]])
    np.testing.assert_allclose(uv[1], [[1 / 256, 1 - 2 / 256], [5 / 256, 1 - 6 / 256], [3 / 256, 1 - 4 / 256]])
    fa = m.face_attributes
    assert fa["ue_type"].tolist() == [2, 1]
    assert fa["ue_flags"].tolist() == [80, 128]
    assert fa["ue_color"].tolist() == [77, 5]
    assert fa["ue_texture"].tolist() == [3, 0]
    assert fa["ue_flags_byte"].tolist() == [9, 0]
    # one material per texture number, sorted; face -> slot
    names = [s.materials[i].name for i in m.materials]
    assert names == ["skin0", "skin3"]
    assert m.face_material.tolist() == [1, 0]
    assert s.materials[m.materials[1]].blend == "ADD"          # translucent: the engine adds it
    assert s.materials[m.materials[0]].two_sided is True       # two-sided


def test_weapon_triangle_keeps_corner_order_and_own_material(tmp_path):
    tris = [tri(f, tex=1) for f in TETRA_FACES] + [tri((3, 1, 0), type_=8, tex=1)]
    s, _ = _load(write_set(tmp_path, "w", d_file(tris, 4), a_file([TETRA])))
    m = s.meshes[0]
    assert m.corners.reshape(-1, 3)[4].tolist() == [3, 1, 0]
    assert m.face_attributes["ue_type"].tolist() == [0, 0, 0, 0, 8]
    weapon = s.materials[m.materials[m.face_material[4]]]
    assert weapon.name == scene.WEAPON_MATERIAL and weapon.extras["ue_weapon"] is True
    assert weapon.alpha == 0.0
    assert len(set(m.face_material[:4].tolist())) == 1 and m.face_material[0] != m.face_material[4]


def test_one_shape_key_per_frame_and_all_action_shows_frame_i_at_i(tmp_path):
    d, a = tetra_pair(frames=5)
    s, _ = _load(write_set(tmp_path, "anim", d, a))
    m = s.meshes[0]
    assert [k.name for k in m.shape_keys] == [f"Frame {i:04d}" for i in range(5)]
    for k, key in enumerate(m.shape_keys):
        assert key.positions[3, 2] == pytest.approx((4 + 4 * k) / 4)     # vertex 3 rises 4 raw Z = 1.0 per frame
    np.testing.assert_array_equal(m.positions, m.shape_keys[0].positions)
    (anim,) = s.animations
    assert (anim.name, anim.frame_start, anim.frame_end) == ("All", 0, 4)
    assert (s.frame_start, s.frame_end) == (0, 4)
    by_key = {c.path: c for c in anim.channels}
    assert all(c.interpolation == "CONSTANT" for c in anim.channels)
    for frame in range(5):
        shown = [k for k in range(1, 5) if _value_at(by_key[f'key_blocks["Frame {k:04d}"].value'], frame) == 1.0]
        assert shown == ([] if frame == 0 else [frame])


UC = r"""//=====
class anim extends Actor;
#exec MESH IMPORT MESH=anim ANIVFILE=MODELS\anim_a.3d DATAFILE=MODELS\anim_d.3d X=0 Y=0 Z=0
#exec MESH ORIGIN MESH=anim X=8 Y=16 Z=-4 YAW=64
#exec MESH SEQUENCE MESH=anim SEQ=All STARTFRAME=0 NUMFRAMES=6
#exec MESH SEQUENCE MESH=anim SEQ=Still STARTFRAME=0 NUMFRAMES=1
#exec MESH SEQUENCE MESH=anim SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving
#exec MESH NOTIFY MESH=anim SEQ=Walk TIME=0.5 FUNCTION=Footstep
#exec MESHMAP NEW MESHMAP=animmap MESH=anim
#exec MESHMAP SCALE MESHMAP=animmap X=0.05 Y=0.1 Z=0.2
#exec TEXTURE IMPORT NAME=Jskin FILE=Textures\Skin_One.PCX GROUP=Skins
#exec MESHMAP SETTEXTURE MESHMAP=animmap NUM=1 TEXTURE=Jskin
// #exec MESH SEQUENCE MESH=anim SEQ=Commented STARTFRAME=0 NUMFRAMES=1
"""


@pytest.fixture
def package(tmp_path):
    """A mod's layout: Pkg/Models/anim_*.3d, Pkg/Classes/anim.uc, Pkg/Textures/skin_one.bmp."""
    d, a = tetra_pair(frames=6)
    root = tmp_path / "Pkg"
    write_set(root / "Models", "anim", d, a, UC, uc_folder=root / "Classes")
    (root / "Textures").mkdir()
    (root / "Textures" / "skin_one.bmp").write_bytes(b"BM")
    return root


@pytest.mark.parametrize("pick", ["Models/anim_d.3d", "Models/anim_a.3d", "Classes/anim.uc"])
def test_script_sequences_notifies_and_texture(package, pick):
    s, warnings = _load(package / pick)
    assert not warnings
    names = [(a.name, a.frame_start, a.frame_end, a.fps) for a in s.animations]
    assert names == [("All", 0, 5, 0.0), ("Still", 0, 0, 0.0), ("Walk", 1, 4, 15.0)]   # All gives no RATE
    walk = s.animations[2]
    assert walk.placement == "NLA" and walk.extras["ue_group"] == "Moving"
    assert [(m.name, m.frame) for m in walk.markers] == [("Footstep", 3)]     # 1 + 0.5 * 4
    # Walk keys: key k is 1 exactly at frame k inside the sequence
    by_key = {c.path: c for c in walk.channels}
    assert sorted(by_key) == [f'key_blocks["Frame {k:04d}"].value' for k in range(1, 5)]
    for frame in range(1, 5):
        assert [k for k in range(1, 5) if _value_at(by_key[f'key_blocks["Frame {k:04d}"].value'], frame) == 1] == [frame]
    # timeline markers show where sequences start; notifies stay inside their sequence
    assert sorted((m.name, m.frame) for m in s.markers) == [("All", 0), ("Still", 0), ("Walk", 1)]
    # texture: Textures\Skin_One.PCX found as textures/skin_one.bmp (case and extension)
    m = s.meshes[0]
    mat = s.materials[m.materials[0]]
    assert mat.name == "Jskin"
    image = s.images[mat.textures[0].image]
    assert image.filepath == str(package / "Textures" / "skin_one.bmp")


def test_script_transform_goes_to_the_object(package):
    s, _ = _load(package / "Models" / "anim_d.3d")
    mat = s.nodes[0].matrix
    m = s.meshes[0]
    world = m.positions.astype(np.float64) @ mat[:3, :3].T + mat[:3, 3]
    # engine: unreal = Yaw(64 = 90 deg, X toward Y) @ (scale * (raw - origin)); Blender = (x, -y, z)
    raw = np.array(TETRA, np.float64) + [0, 0, 4 * 0]
    local = (raw - [8, 16, -4]) * [0.05, 0.1, 0.2]
    unreal = np.stack([-local[:, 1], local[:, 0], local[:, 2]], axis=1)
    np.testing.assert_allclose(world, unreal * [1, -1, 1], atol=1e-6)


def test_peer_yaw_minus_64_turns_blender_minus_y_to_engine_forward():
    # the notes: YAW=-64 makes a model facing -Y in Blender face +X in the engine
    rot = conventions.rotation_matrix(-64, 0, 0)
    blender_forward = np.array([0.0, -1.0, 0.0])
    np.testing.assert_allclose(rot @ (blender_forward * [1, -1, 1]), [1, 0, 0], atol=1e-12)


def test_unmirror_mirrors_x_and_swaps_corners(tmp_path):
    d, a = tetra_pair(frames=1)
    uc = "#exec MESH IMPORT MESH=um ANIVFILE=um_a.3d DATAFILE=um_d.3d UNMIRROR=1\n"
    s, _ = _load(write_set(tmp_path, "um", d, a, uc))
    m = s.meshes[0]
    np.testing.assert_array_equal(m.positions, np.array([(-x / 8, -y / 8, z / 4) for x, y, z in TETRA], np.float32))
    # the engine swaps corners 1 and 2, then our winding reversal swaps them back
    assert m.corners.reshape(-1, 3).tolist() == [list(f) for f in TETRA_FACES]
    assert signed_volume(m.positions.tolist(), m.corners.reshape(-1, 3).tolist()) > 0
    uv = m.uv_layers["UVMap"].reshape(-1, 3, 2)[0]
    np.testing.assert_allclose(uv[:, 0], [10 / 256, 30 / 256, 50 / 256])


def test_without_script_option_ignores_it(package):
    s, _ = _load(package / "Models" / "anim_d.3d", use_uc_script=False)
    np.testing.assert_array_equal(s.nodes[0].matrix, np.eye(4))
    assert [a.name for a in s.animations] == ["All"]
    assert s.materials[s.meshes[0].materials[0]].name == "skin1"


def test_script_found_by_its_mesh_import_when_named_after_a_class(tmp_path):
    d, a = tetra_pair(frames=2)
    write_set(tmp_path / "Models", "gun", d, a)
    (tmp_path / "Classes").mkdir()
    (tmp_path / "Classes" / "MyGunPickup.uc").write_text(
        "#exec MESH IMPORT MESH=GunMesh ANIVFILE=MODELS\\gun_a.3d DATAFILE=MODELS\\gun_d.3d\n"
        "#exec MESH SEQUENCE MESH=GunMesh SEQ=Fire STARTFRAME=0 NUMFRAMES=2 RATE=20\n")
    s, _ = _load(tmp_path / "Models" / "gun_d.3d")
    assert s.meshes[0].name == "GunMesh"
    assert [a.name for a in s.animations] == ["All", "Fire"]


def test_deus_ex_default_scale_is_one_256th(tmp_path):
    d, _ = tetra_pair()
    a = a_file([[(256, 512, -768), (0, 0, 0), (0, 0, 0), (0, 0, 0)]], deus_ex=True)
    s, _ = _load(write_set(tmp_path, "dx", d, a))
    np.testing.assert_array_equal(s.meshes[0].positions[0], [1.0, -2.0, -3.0])
    assert s.meshes[0].extras["ue_variant"] == "DEUS_EX"
