"""Faces that repeat a vertex, zero-area faces and empty meshes import in real Blender, for
every format that can hold them: the bad faces are dropped with one counted warning, the rest
of the file comes in, and Blender never sees a face it could crash on."""
import numpy as np
import pytest

import bpy
from tests.odd_geometry import DROPPED, KEPT, WRITERS

OPERATORS = {"3ds": "studio3ds", "unreal": "unreal_vertex_mesh", "unigine": "unigine_mesh", "u3d": "ultimate3d"}
# (name of the mesh with odd faces, names of the meshes with nothing to draw)
EXPECT = {"3ds": ("Odd", ["Bone", "NoFaces"]), "unreal": ("odd", []), "unigine": ("odd", []),
          "u3d": ("odd", ["empty", "nofaces"])}


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_degenerate_faces_and_empty_meshes_import(clean, tmp_path, capfd, fmt):
    path = WRITERS[fmt](tmp_path)
    capfd.readouterr()
    assert getattr(bpy.ops.import_scene, OPERATORS[fmt])(filepath=str(path)) == {"FINISHED"}
    console = capfd.readouterr().out
    odd_name, empty_names = EXPECT[fmt]
    meshes = {o.name: o for o in clean.scene.objects if o.type == "MESH"}
    odd = next(o for n, o in meshes.items() if n.startswith(odd_name))
    me = odd.data
    assert len(me.polygons) == KEPT
    for p in me.polygons:
        assert len(set(p.vertices)) == len(p.vertices) == 3
    assert f"{DROPPED} degenerate faces" in console
    listed = [line for line in console.splitlines() if ": warning: " in line]
    assert sum("degenerate face" in line for line in listed) == 1
    for name in empty_names:
        assert name in meshes and len(meshes[name].data.polygons) == 0
    # the mesh is usable: Blender evaluates it and its normals
    deps = bpy.context.evaluated_depsgraph_get()
    ev = odd.evaluated_get(deps).to_mesh()
    normals = np.zeros(len(ev.loops) * 3, np.float32)
    ev.corner_normals.foreach_get("vector", normals) if hasattr(ev, "corner_normals") else \
        ev.loops.foreach_get("normal", normals)
    assert np.isfinite(normals).all()
    odd.evaluated_get(deps).to_mesh_clear()
