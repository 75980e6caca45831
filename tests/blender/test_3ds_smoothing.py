"""3DS smoothing groups as Blender's own smoothing: welded vertices, sharp edges, flat faces."""
import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.read import read
from tests.blender.helpers import render_touching_point
from tests.codec.fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, build, material, obj, trimesh


def _import(path, **kw):
    assert bpy.ops.import_scene.studio3ds(filepath=str(path), **kw) == {"FINISHED"}
    return [o for o in bpy.context.scene.objects if o.type == "MESH"]


def _get(coll, key, n, width, dtype=np.float32):
    out = np.empty(n * width, dtype)
    coll.foreach_get(key, out)
    return out.reshape(-1, width) if width > 1 else out


def corner_normals(me) -> np.ndarray:
    return _get(me.corner_normals, "vector", len(me.loops), 3)


def rendered_normals(me) -> np.ndarray:
    """The normal per corner that Cycles and EEVEE shade with: corner normals when the mesh has
    any (sharp edges, flat faces, custom normals), else the vertex normals, which average every
    face at a vertex, whether or not the faces share an edge there."""
    if me.normals_domain == "CORNER":
        return corner_normals(me)
    if me.normals_domain == "FACE":
        return np.repeat(_get(me.polygon_normals, "vector", len(me.polygons), 3), 3, axis=0)
    vn = _get(me.vertex_normals, "vector", len(me.vertices), 3)
    return vn[_get(me.loops, "vertex_index", len(me.loops), 1, np.int32)]


def unwelded(points, tris):
    """Each triangle with its own three vertices, as a file split at UV seams stores them."""
    pts = np.asarray(points, np.float32)[np.asarray(tris).ravel()]
    return pts, np.arange(len(pts)).reshape(-1, 3)


def corner_positions(me) -> np.ndarray:
    co = _get(me.vertices, "co", len(me.vertices), 3)
    return co[_get(me.loops, "vertex_index", len(me.loops), 1, np.int32)]


def two_boxes(tmp_path, flat_face: bool):
    """Two smooth boxes in one object that touch at one point (1, 1, 1), every face stored apart;
    flat_face: the far bottom face of the first box has no group (so the mesh has corner normals)."""
    ga, gb = np.ones(12, np.uint32), np.ones(12, np.uint32)
    if flat_face:
        ga[:2] = 0
    pts = np.r_[CUBE_POINTS, CUBE_POINTS + 1]
    tris = np.r_[CUBE_TRIS, CUBE_TRIS + 8]
    p, t = unwelded(pts, tris)
    one = tmp_path / "boxes.3ds"
    one.write_bytes(build([obj("Boxes", trimesh(p, t, groups=np.r_[ga, gb]))]))
    apart = tmp_path / "apart.3ds"
    pa, ta = unwelded(CUBE_POINTS, CUBE_TRIS)
    pb, tb = unwelded(CUBE_POINTS + 1, CUBE_TRIS)
    apart.write_bytes(build([obj("A", trimesh(pa, ta, groups=ga)), obj("B", trimesh(pb, tb, groups=gb))]))
    return one, apart


@pytest.mark.parametrize("flat_face", [False, True], ids=["all smooth", "one flat face"])
def test_faces_meeting_at_a_point_shade_as_if_apart(clean, tmp_path, flat_face):
    one, apart = two_boxes(tmp_path, flat_face)
    (ob,) = _import(one)
    me = ob.data
    assert len(me.vertices) == 16 and len(me.edges) == 36          # welded per box, split at the touching point
    assert not me.has_custom_normals
    got = rendered_normals(me)
    face = np.repeat(_get(me.polygon_normals, "vector", len(me.polygons), 3), 3, axis=0)
    smooth = np.repeat(np.r_[np.ones(12), np.ones(12)], 3).astype(bool)
    smooth[:6] = not flat_face
    assert (np.einsum("ij,ij->i", got, face)[smooth] < 0.99).all()      # smooth boxes: not the face normals
    bpy.ops.wm.read_homefile(use_empty=True)
    a, b = sorted(_import(apart), key=lambda o: o.name)
    want = np.r_[rendered_normals(a.data), rendered_normals(b.data)]
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_groups_become_sharp_edges_and_flat_faces(clean, tmp_path):
    # a cube: one bit per side, the top (triangles 2, 3) without a group
    groups = np.repeat(np.uint32(1) << np.arange(6, dtype=np.uint32), 2)
    groups[2:4] = 0
    p, t = unwelded(CUBE_POINTS, CUBE_TRIS)
    f = tmp_path / "cube.3ds"
    f.write_bytes(build([obj("Cube", trimesh(p, t, groups=groups))]))
    (ob,) = _import(f)
    me = ob.data
    assert len(me.vertices) == 8 and len(me.edges) == 18
    sharp = _get(me.attributes["sharp_edge"].data, "value", len(me.edges), 1, bool)
    ev = _get(me.edges, "vertices", len(me.edges), 2, np.int32)
    co = _get(me.vertices, "co", len(me.vertices), 3)
    # a cube edge runs along an axis (two coordinates agree); a side's diagonal does not
    along_axis = (np.isclose(co[ev[:, 0]], co[ev[:, 1]]).sum(1) == 2)
    np.testing.assert_array_equal(sharp, along_axis)
    flat = _get(me.attributes["sharp_face"].data, "value", len(me.polygons), 1, bool)
    np.testing.assert_array_equal(flat, groups == 0)
    face = np.repeat(_get(me.polygon_normals, "vector", len(me.polygons), 3), 3, axis=0)
    np.testing.assert_allclose(rendered_normals(me), face, atol=1e-5)      # a hard-edged cube
    np.testing.assert_array_equal(
        _get(me.attributes["smoothing_groups"].data, "value", len(me.polygons), 1, np.int32), groups)


def test_groups_that_do_not_chain_are_counted(clean, tmp_path):
    # three faces around an apex: A {1}, B {1, 2}, C {2}; 3D Studio smooths A with B and C with B
    # only, sharp edges smooth all three together: the apex corners of A and C differ
    pts = np.array([[0, 0, 1], [1, 0, 0], [-0.5, 0.87, 0], [-0.5, -0.87, 0]], np.float32)
    tris = np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1]])
    p, t = unwelded(pts, tris)
    f = tmp_path / "apex.3ds"
    f.write_bytes(build([obj("Apex", trimesh(p, t, groups=[1, 3, 2]))]))
    bpy.ops.import_scene.studio3ds(filepath=str(f))
    (ob,) = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(ob.data.vertices) == 4
    import io, contextlib
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        bpy.ops.wm.read_homefile(use_empty=True)
        bpy.ops.import_scene.studio3ds(filepath=str(f))
    assert "2 of 9 corners get other normals" in out.getvalue()
    # exact mode: the groups' own normals, as custom normals on the welded mesh
    bpy.ops.wm.read_homefile(use_empty=True)
    (ob,) = _import(f, normals="EXACT")
    assert ob.data.has_custom_normals and len(ob.data.vertices) == 4
    n = corner_normals(ob.data)
    assert np.dot(n[0], n[3]) < 0.999 and np.dot(n[3], n[6]) < 0.999     # the apex corners differ


def test_jeep_is_welded_with_uvs_kept_per_corner(clean):
    objs = _import(ASSETS / "jeep1.3ds", normals="KEEP")
    assert sum(len(o.data.vertices) for o in objs) == 1948           # as stored: cut at every UV seam
    assert all(o.data.has_custom_normals for o in objs)
    stored = {o.name: (corner_positions(o.data), _get(o.data.uv_layers[0].uv, "vector", len(o.data.loops), 2))
              for o in objs}
    bpy.ops.wm.read_homefile(use_empty=True)
    objs = _import(ASSETS / "jeep1.3ds")
    assert sum(len(o.data.vertices) for o in objs) == 1191           # 1190 points, one touching point split
    for o in objs:
        assert not o.data.has_custom_normals
        pos, uv = stored[o.name]
        np.testing.assert_array_equal(corner_positions(o.data), pos)
        np.testing.assert_array_equal(_get(o.data.uv_layers[0].uv, "vector", len(o.data.loops), 2), uv)


def _faces(path):
    """Per object: each face as its corner points, UVs, group and material name, in file order."""
    model = read(path, None, Warnings())
    out = {}
    for o in model.editor().find_all(ids.OBJECT):
        tri = o.find(ids.N_TRI_OBJECT)
        if tri is None:
            continue
        pts = tri.value(ids.POINT_ARRAY)
        fc = tri.find(ids.FACE_ARRAY)
        t = fc.data[:, :3].astype(np.int64)
        uv = tri.value(ids.TEX_VERTS)
        groups = fc.find(ids.SMOOTH_GROUP).data
        mat = np.full(len(t), "", object)
        for g in fc.find_all(ids.MSH_MAT_GROUP):
            mat[g.data.faces] = g.data.name
        out[o.data] = (pts[t], None if uv is None else uv[t], groups, mat)
    return out


@pytest.mark.parametrize("name", ["jeep1.3ds", "mp5_sil.3ds", "mar_rifle.3ds"])
def test_default_import_exports_the_same_faces_groups_materials_and_uvs(clean, tmp_path, name):
    _import(ASSETS / name)
    out = tmp_path / "back.3ds"
    assert bpy.ops.export_scene.studio3ds(filepath=str(out)) == {"FINISHED"}
    src, back = _faces(ASSETS / name), _faces(out)
    assert sorted(src) == sorted(back)
    for k in src:
        (p0, uv0, g0, m0), (p1, uv1, g1, m1) = src[k], back[k]
        # the exported points are world space (the object's 0x4160 placement); the source's too
        np.testing.assert_allclose(p1, p0, atol=1e-4)
        np.testing.assert_array_equal(g1, g0)
        np.testing.assert_array_equal(m1, m0)
        if uv0 is not None:
            np.testing.assert_allclose(uv1, uv0, atol=1e-6)


def test_editing_the_sharp_edges_rebuilds_the_groups(clean, tmp_path):
    groups = np.ones(12, np.uint32)
    p, t = unwelded(CUBE_POINTS, CUBE_TRIS)
    f = tmp_path / "cube.3ds"
    f.write_bytes(build([obj("Cube", trimesh(p, t, groups=groups))]))
    (ob,) = _import(f)
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    np.testing.assert_array_equal(_faces(out)["Cube"][2], groups)        # untouched: the groups as read
    me = ob.data
    sharp = np.ones(len(me.edges), bool)                                 # mark every edge sharp
    me.attributes["sharp_edge"].data.foreach_set("value", sharp)
    me.update()
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    g = _faces(out)["Cube"][2]
    assert not (g == 1).all()
    # the rewritten groups give hard edges: no two neighbouring triangles of different sides share a bit
    assert (g == 0).all() or len(set(g.tolist())) > 1


def test_making_a_face_of_a_smooth_model_flat_rebuilds_the_groups(clean, tmp_path):
    """One group on every face, no sharp edge: only the flat face tells the edit apart."""
    p, t = unwelded(CUBE_POINTS, CUBE_TRIS)
    f = tmp_path / "cube.3ds"
    f.write_bytes(build([obj("Cube", trimesh(p, t, groups=np.ones(12, np.uint32)))]))
    (ob,) = _import(f)
    flat = np.zeros(len(ob.data.polygons), bool)
    flat[3] = True
    ob.data.attributes["sharp_face"].data.foreach_set("value", flat)
    ob.data.update()
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    g = _faces(out)["Cube"][2]
    assert g[3] == 0 and (np.delete(g, 3) != 0).all()


def _render(path, tmp_path, engine="CYCLES", **kw) -> np.ndarray:
    """A tiny render of the file's meshes, seen from above the touching point, lit from the camera."""
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(path, **kw)
    return render_touching_point(tmp_path, path.stem, engine)


@pytest.mark.parametrize("flat_face", [False, True], ids=["all smooth", "one flat face"])
def test_cycles_shows_no_smear_where_faces_meet_at_a_point(clean, tmp_path, flat_face):
    one, apart = two_boxes(tmp_path, flat_face)
    welded, separate = _render(one, tmp_path), _render(apart, tmp_path)
    assert separate.max() > 0.2                        # the boxes are in view and lit
    assert np.abs(welded - separate).max() < 0.05
