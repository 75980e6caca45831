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
