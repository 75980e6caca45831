"""Unreal scripts with several meshes, and data files only the package's scripts pair, through the real
operators in real Blender."""
import numpy as np
import pytest

import bpy
from tests.blender.helpers import evaluated_positions
from tests.codec.unreal_fixtures import quadshot_package

MESHES = ["QuadShotPickup", "QuadShotHeld"]


def _meshes():
    return {o.name: o for o in bpy.context.scene.objects if o.type == "MESH"}


def _strips(ob):
    ad = ob.data.shape_keys.animation_data
    return sorted(((s.name, s.frame_start, s.frame_end) for t in ad.nla_tracks for s in t.strips), key=lambda s: s[1])


def test_a_script_imports_each_mesh_as_its_own_object(clean, tmp_path):
    uc = quadshot_package(tmp_path) / "Classes" / "QuadShot.uc"
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(uc)) == {"FINISHED"}
    obs = _meshes()
    assert sorted(obs) == sorted(MESHES)
    pickup, held = obs["QuadShotPickup"], obs["QuadShotHeld"]
    assert (len(pickup.data.shape_keys.key_blocks), len(held.data.shape_keys.key_blocks)) == (3, 5)
    assert pickup.data.shape_keys != held.data.shape_keys
    # placement: YAW=64 turns the pickup a quarter; the held mesh's MESHMAP SCALE is x1.6
    np.testing.assert_allclose(np.array(pickup.matrix_world)[:3, 0], [0, -1, 0], atol=1e-6)
    np.testing.assert_allclose(np.array(held.matrix_world)[:3, :3], np.eye(3) * 1.6, atol=1e-6)
    # actions: each mesh's sequences are strips of its own, laid out from frame 0 whatever the other has;
    # Spin (file frames 1-2, keying what All keys) keeps its file frames, as ranges cut from one timeline do
    # (codec.animation.layout), while Fire keys fewer shape keys than All and goes after it
    assert _strips(pickup) == [("QuadShotPickup:All", 0, 2), ("QuadShotPickup:Spin", 1, 2)]
    assert _strips(held) == [("QuadShotHeld:All", 0, 4), ("QuadShotHeld:Fire", 5, 7)]
    # each object plays its own file frames: vertex 3 rises 1.0 per file frame
    for frame, pickup_frame, held_frame in [(0, 0, 0), (1, 1, 1), (2, 2, 2), (3, None, 3), (5, None, 1), (7, None, 3)]:
        clean.scene.frame_set(frame)
        assert evaluated_positions(held)[3, 2] == pytest.approx(1.0 + held_frame), frame
        if pickup_frame is not None:
            assert evaluated_positions(pickup)[3, 2] == pytest.approx(1.0 + pickup_frame), frame
    assert clean.scene.frame_end >= 7
    assert pickup.material_slots[0].material != held.material_slots[0].material


def test_mesh_name_imports_one_mesh(clean, tmp_path):
    uc = quadshot_package(tmp_path) / "Classes" / "QuadShot.uc"
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(uc), mesh_name="QuadShotHeld") == {"FINISHED"}
    assert list(_meshes()) == ["QuadShotHeld"]
    assert _strips(_meshes()["QuadShotHeld"]) == [("All", 0, 4), ("Fire", 5, 7)]


def test_a_prototype_data_file_picked_directly_imports(clean, tmp_path):
    pkg = quadshot_package(tmp_path)
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(pkg / "Models" / "data20.3D")) == {"FINISHED"}
    (ob,) = _meshes().values()
    assert ob.name == "QuadShotHeld" and len(ob.data.shape_keys.key_blocks) == 5


def test_separate_meshes_export_round_trips_each_object(clean, tmp_path):
    uc = quadshot_package(tmp_path / "in") / "Classes" / "QuadShot.uc"
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(uc)) == {"FINISHED"}
    out = tmp_path / "out" / "Classes" / "Weapon.uc"
    assert bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(out), separate_meshes=True) == {"FINISHED"}
    text = out.read_text("latin-1")
    assert sorted(line.split()[3] for line in text.splitlines() if line.startswith("#exec MESH IMPORT")) == \
        sorted(f"MESH={m}" for m in MESHES)
    # each mesh its own sequences, as the file had them: the pickup has no Fire
    seqs = sorted(tuple(line.split()[3:7]) for line in text.splitlines() if line.startswith("#exec MESH SEQUENCE"))
    assert seqs == [("MESH=QuadShotHeld", "SEQ=All", "STARTFRAME=0", "NUMFRAMES=5"),
                    ("MESH=QuadShotHeld", "SEQ=Fire", "STARTFRAME=1", "NUMFRAMES=3"),
                    ("MESH=QuadShotPickup", "SEQ=All", "STARTFRAME=0", "NUMFRAMES=3"),
                    ("MESH=QuadShotPickup", "SEQ=Spin", "STARTFRAME=1", "NUMFRAMES=2")]
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(out)) == {"FINISHED"}
    obs = _meshes()
    assert sorted(obs) == sorted(MESHES)
    np.testing.assert_allclose(np.array(obs["QuadShotHeld"].matrix_world)[:3, :3], np.eye(3) * 1.6, atol=1e-5)
    # the held mesh's five file frames come back as they were
    held = obs["QuadShotHeld"]
    assert len(held.data.shape_keys.key_blocks) >= 5
    names = [s[0] for s in _strips(held)] or [held.data.shape_keys.animation_data.action.name]
    assert "QuadShotHeld:Fire" in names
