"""The committed generated UNIGINE files: counts from their PROVENANCE table, and byte-exact rewrites."""
from __future__ import annotations

from pathlib import Path

import pytest

from addon.codec.errors import Warnings
from addon.codec.formats.unigine import FORMAT, read

ASSETS = Path(__file__).resolve().parents[2] / "test_assets" / "unigine"
MESH, ANIM = FORMAT


@pytest.mark.parametrize("name,vertices,corners,bones,frames", [
    ("grid_static.mesh", 121, 600, 0, None), ("tube_skinned.mesh", 160, 810, 6, 20)])
def test_mesh_assets(name, vertices, corners, bones, frames):
    data = (ASSETS / name).read_bytes()
    w = Warnings()
    m = read.read_mesh(data, w)
    assert w.as_list() == []
    (s,) = m.surfaces
    assert (s.coordinate_count, len(s.coord_indices), len(m.bones)) == (vertices, corners, bones)
    if frames:
        assert m.animations[0].frame_count == frames
        assert [b.parent for b in m.bones] == [1, 2, 3, 4, 5, -1]
    assert MESH.encode(m, ASSETS / name)[ASSETS / name] == data


def test_anim_asset():
    data = (ASSETS / "tube_bend.anim").read_bytes()
    a = read.read_anim(data, Warnings())
    assert [b.name for b in a.bones] == [f"bone{i:02d}" for i in range(6)]
    assert a.animations[0].name == "bend" and a.animations[0].frame_count == 20
    assert ANIM.encode(a, Path("x.anim"))[Path("x.anim")] == data


def test_in_memory_entry_points_take_either_file():
    from addon.codec.formats.unigine import from_scene, to_scene, write
    from addon.codec.formats.unigine.model import AnimFile, MeshFile
    from addon.codec.formats.unigine.options import AnimExportOptions, AnimImportOptions, ExportOptions, ImportOptions
    mesh_bytes, anim_bytes = (ASSETS / "tube_skinned.mesh").read_bytes(), (ASSETS / "tube_bend.anim").read_bytes()
    m, a = read.parse(mesh_bytes, Warnings()), read.parse(anim_bytes, Warnings())
    assert isinstance(m, MeshFile) and isinstance(a, AnimFile)
    assert (write.encode_bytes(m), write.encode_bytes(a)) == (mesh_bytes, anim_bytes)
    scene = to_scene.to_scene(m, ImportOptions(), Warnings())
    assert scene.meshes and scene.armatures
    anim_scene = to_scene.to_scene(a, AnimImportOptions(), Warnings())
    assert not anim_scene.meshes and [x.name for x in anim_scene.animations] == ["bend"]
    assert isinstance(from_scene.from_scene(scene, ExportOptions(), Warnings()), MeshFile)
    assert isinstance(from_scene.from_scene(scene, AnimExportOptions(), Warnings()), AnimFile)
