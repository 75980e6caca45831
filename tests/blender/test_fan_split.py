"""UNIGINE and U3D imports in the default (welded) mode: where two closed parts of one mesh touch at
a point, with no edge between them, each keeps its own vertex there, so Cycles shades them as if apart."""
import bmesh
import pytest

import bpy
import numpy as np

from addon.codec import save
from tests.blender.helpers import render_touching_point
from tests.codec.test_welding import touching_boxes_scene

IMPORT = {"mesh": "unigine_mesh", "u3d": "ultimate3d"}


def _import(path):
    assert getattr(bpy.ops.import_scene, IMPORT[path.suffix[1:]])(filepath=str(path)) == {"FINISHED"}
    return [o for o in bpy.context.scene.objects if o.type == "MESH"]


def _render(path, tmp_path) -> np.ndarray:
    """A tiny Cycles render from above the touching point, lit from the camera."""
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(path)
    return render_touching_point(tmp_path, path.stem)


@pytest.mark.parametrize("ext", ["mesh", "u3d"])
def test_touching_parts_get_a_vertex_each_and_render_as_if_apart(clean, tmp_path, ext):
    one, apart = tmp_path / f"one.{ext}", tmp_path / f"apart.{ext}"
    save(touching_boxes_scene(smooth=True), one)
    save(touching_boxes_scene(smooth=True, apart=True), apart)
    (ob,) = _import(one)
    me = ob.data
    assert len(me.vertices) == 16 and not me.has_custom_normals        # welded per box, split at the point
    bm = bmesh.new()
    bm.from_mesh(me)
    assert all(v.is_manifold for v in bm.verts)
    bm.free()
    welded, separate = _render(one, tmp_path), _render(apart, tmp_path)
    assert separate.max() > 0.2                        # the boxes are in view and lit
    assert np.abs(welded - separate).max() < 0.05
