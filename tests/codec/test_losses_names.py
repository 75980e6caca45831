"""losses.report's names check over every list of the Scene (thousands of shape keys are taken a list at a
time): each name an encoding lacks is found, at any depth, and said in the order the Scene holds them."""
from __future__ import annotations

import numpy as np

from addon.codec import losses
from addon.codec.errors import Warnings
from addon.codec.scene import Armature, Bone, Material, Mesh, Scene, ShapeKey


def _said(scene: Scene, fmt: str) -> list[str]:
    w = Warnings()
    losses.report(scene, fmt, w)
    return w.as_list()


def test_names_a_code_page_lacks_at_every_depth_in_scene_order():
    mesh = Mesh.from_triangles("m", np.zeros((3, 3), np.float32), [(0, 1, 2)])
    mesh.shape_keys = [ShapeKey("Ω3" if i == 3 else f"k{i}", mesh.positions) for i in range(40)]
    scene = Scene(meshes=[mesh], materials=[Material("mat Ω")],
                  armatures=[Armature("Ωa1", [Bone("b"), Bone("Ωb1")]), Armature("a2", [Bone("Σb2")])])
    assert _said(scene, "u3d") == ["u3d names hold Latin-1 characters only: 'Ω3', 'mat Ω', 'Ωa1', 'Ωb1' and 1 more "
                                   "written with '?' for the others"]
    assert _said(scene, "glb") == []                    # UTF-8 holds them all
    mesh.shape_keys[39].name = "\udcff"                 # undecodable bytes kept as a surrogate
    assert _said(scene, "glb") == ["glb names hold UTF-8 characters only: '\\udcff' written with '?' for the others"]


def test_a_scene_of_plain_names_says_nothing():
    mesh = Mesh.from_triangles("m", np.zeros((3, 3), np.float32), [(0, 1, 2)])
    mesh.shape_keys = [ShapeKey(f"k{i}", mesh.positions) for i in range(40)]
    assert _said(Scene(meshes=[mesh], armatures=[Armature("a", [Bone("b")])]), "u3d") == []
