"""Scenes at the edges (empty, faceless, NaN coordinates, joints out of range, animation glTF cannot hold)
still give glTF files the Khronos validator passes, with a warning for what was changed or left out."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import encode, save
from addon.codec.scene import Animation, Armature, Bone, Channel, Mesh, Node, Scene, Skin
from tests.codec.test_gltf_validator import validate

TRI = np.eye(3, dtype=np.float32)


def cases() -> dict[str, tuple[Scene, str]]:
    """name -> (scene, a warning it must give, "" for none)."""
    nan = TRI.copy()
    nan[1, 1] = np.nan
    quad = Mesh.from_triangles("q", np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32), [[0, 1, 2], [0, 2, 3]])
    quad.corners, quad.faces = np.array([0, 1, 2, 3], np.uint32), np.array([0], np.uint32)
    skin = Skin(0, np.array([[5, -1], [0, 0], [0, 1]], np.int32), np.array([[1, 0], [0, 0], [0.5, 0.5]], np.float32))
    moves = Animation("A", 0, 10, 24, [
        Channel(0, "location", np.array([0.0, 5, 10]), np.array([[0, 0, 0], [1, 2, 3], [0, 0, 0]], float),
                interpolation="BEZIER"),
        Channel(0, "rotation_euler", np.array([0.0, 10]), np.array([[0, 0, 0], [0, 0, 3]], float)),
        Channel(0, "data.lens", np.array([0.0, 10]), np.array([[20], [50]], float))])
    return {
        "empty": (Scene(), ""),
        "faceless": (Scene(nodes=[Node("p", "MESH", 0)], meshes=[Mesh("p", positions=TRI)]), "has no faces"),
        "quad": (Scene(nodes=[Node("q", "MESH", 0)], meshes=[quad]), ""),
        "nan": (Scene(nodes=[Node("n", "MESH", 0)], meshes=[Mesh.from_triangles("n", nan, [[0, 1, 2]])]),
                "NaN, infinite or out-of-range number set to 0"),      # codec.finite, before any writer
        "joints": (Scene(nodes=[Node("a", "ARMATURE", 0), Node("s", "MESH", 0, parent=0)],
                         meshes=[Mesh.from_triangles("s", TRI, [[0, 1, 2]], skin=skin)],
                         armatures=[Armature("a", [Bone("b0"), Bone("b1", 0)])]), ""),
        "camera lens": (Scene(nodes=[Node("e")], animations=[moves]), "data.lens not written"),
    }


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
def test_edge_scenes_are_valid_gltf(ext, tmp_path):
    written = []
    for name, (scene, warning) in cases().items():
        out = tmp_path / f"{name.replace(' ', '_')}{ext}"
        files, warnings = encode(scene, out)
        assert not warning or any(warning in w for w in warnings), (name, warnings)
        save(scene, out)
        written.append(out)
    reports = validate(written)
    bad = {p.name: [m for m in reports[str(p)]["messages"] if m.startswith("error")] for p in written
           if reports[str(p)]["errors"]}
    assert not bad
