"""Degenerate faces are dropped with their corner data, in bulk, before Blender sees them."""
import numpy as np
import pytest

from addon import codec
from addon.codec import meshops
from addon.codec.scene import Mesh, ShapeKey
from tests.odd_geometry import DROPPED, KEPT, WRITERS


def _mesh():
    # a quad, a triangle repeating vertex 1, a triangle past the vertices, a 2-corner face, a good triangle
    corners = np.array([0, 1, 2, 3, 1, 1, 2, 0, 9, 2, 0, 1, 2, 4, 3], np.uint32)
    faces = np.array([0, 4, 7, 10, 12], np.uint32)
    m = Mesh("m", positions=np.arange(15, dtype=np.float32).reshape(5, 3), corners=corners, faces=faces)
    m.uv_layers["UVMap"] = np.arange(15 * 2, dtype=np.float32).reshape(15, 2)
    m.normals = np.tile(np.float32([0, 0, 1]), (15, 1))
    m.face_material = np.array([0, 1, 2, 3, 4], np.int32)
    m.face_attributes["smooth"] = np.array([10, 11, 12, 13, 14], np.int32)
    m.smoothing = np.array([1, 2, 4, 8, 16], np.uint32)
    return m


def test_drops_repeated_missing_and_short_faces_with_their_data():
    m = _mesh()
    assert meshops.degenerate_faces(m).tolist() == [False, True, True, True, False]
    assert meshops.drop_degenerate_faces(m) == 3
    assert m.faces.tolist() == [0, 4]
    assert m.corners.tolist() == [0, 1, 2, 3, 2, 4, 3]
    assert m.uv_layers["UVMap"][:, 0].tolist() == [0, 2, 4, 6, 24, 26, 28]
    assert len(m.normals) == 7
    assert m.face_material.tolist() == [0, 4]
    assert m.face_attributes["smooth"].tolist() == [10, 14]
    assert m.smoothing.tolist() == [1, 16]
    assert len(m.positions) == 5                      # vertices stay


def test_clean_mesh_is_untouched():
    m = Mesh.from_triangles("t", np.zeros((3, 3)) + np.eye(3), [[0, 1, 2]])
    assert meshops.make_safe(m) == []
    assert m.corners.tolist() == [0, 1, 2]


def test_layers_of_the_wrong_length_are_left_out_with_a_warning():
    m = Mesh.from_triangles("t", np.eye(3), [[0, 1, 2]])
    m.uv_layers["short"] = np.zeros((2, 2), np.float32)
    m.shape_keys = [ShapeKey("Basis", np.eye(3, dtype=np.float32)), ShapeKey("bad", np.zeros((2, 3), np.float32))]
    (warning,) = meshops.make_safe(m)
    assert "UV layer 'short'" in warning and "shape key 'bad'" in warning
    assert not m.uv_layers and [k.name for k in m.shape_keys] == ["Basis"]


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_format_gives_the_bridge_faces_it_can_drop(tmp_path, fmt):
    scene = codec.load(WRITERS[fmt](tmp_path))
    odd = next(m for m in scene.meshes if m.name.lower() == "odd")
    (warning,) = meshops.make_safe(odd)
    assert f"{DROPPED} degenerate faces" in warning
    assert len(odd.faces) == KEPT and not meshops.degenerate_faces(odd).any()
