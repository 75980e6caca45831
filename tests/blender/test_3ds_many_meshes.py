"""Many big 3DS meshes: the bridge works out their smoothing groups two at a time
(mesh_build.build_meshes); the result is what one mesh at a time gives, splits included."""
import importlib

import numpy as np

import bpy
from tests.codec.fixtures_3ds import build, obj, trimesh
from tests.codec.test_3ds_mesh_queue import _grid


def _mesh_arrays(me):
    out = {}
    for name, domain_len, width, dtype in (("position", len(me.vertices), 3, np.float32),
                                           (".corner_vert", len(me.loops), 1, np.int32),
                                           ("sharp_edge", len(me.edges), 1, bool),
                                           ("sharp_face", len(me.polygons), 1, bool)):
        a = np.empty(domain_len * width, dtype)
        me.attributes[name].data.foreach_get("vector" if width == 3 else "value", a)
        out[name] = a
    return out


def _file(tmp_path):
    objects = []
    for k, n in enumerate((100, 102, 3, 101)):
        pts, tris = _grid(n, 200.0 * k)
        if k == 1:                   # a second grid touching the first at one corner point: a split
            p2, t2 = _grid(4, 200.0 * k + n)
            pts, tris = np.r_[pts, p2 + [0, n, 0]], np.r_[tris, t2 + len(pts)]
        groups = np.where(np.arange(len(tris)) % 5 == 0, 2, 1).astype(np.uint32)
        groups[::11] = 0
        objects.append(obj(f"O{k}", trimesh(pts, tris, groups=groups)))
    path = tmp_path / "many.3ds"
    path.write_bytes(build(objects))
    return path


def test_meshes_worked_out_two_at_a_time_match_one_at_a_time(clean, lgf, tmp_path, monkeypatch):
    path = _file(tmp_path)
    mesh_build = importlib.import_module(lgf.__name__ + ".bridge.mesh_build")
    monkeypatch.setattr(mesh_build, "PARALLEL_CORNERS", 0)   # two at a time, however small
    assert bpy.ops.import_scene.studio3ds(filepath=str(path)) == {"FINISHED"}
    two = {o.name: _mesh_arrays(o.data) for o in bpy.context.scene.objects if o.type == "MESH"}
    bpy.ops.wm.read_homefile(use_empty=True)
    monkeypatch.setattr(mesh_build, "PARALLEL_CORNERS", 10 ** 12)
    assert bpy.ops.import_scene.studio3ds(filepath=str(path)) == {"FINISHED"}
    one = {o.name: _mesh_arrays(o.data) for o in bpy.context.scene.objects if o.type == "MESH"}
    assert two.keys() == one.keys() == {"O0", "O1", "O2", "O3"}
    for name in one:
        for key in one[name]:
            np.testing.assert_array_equal(two[name][key], one[name][key], err_msg=f"{name} {key}")
    welded = (102 + 1) ** 2 + 5 * 5 - 1                     # two grids welded, one shared point ...
    assert len(one["O1"]["position"]) // 3 == welded + 1    # ... split again: one vertex per fan
    assert one["O0"]["sharp_edge"].any() and one["O0"]["sharp_face"].any()
