"""UNIGINE .mesh / .anim through the real operators, in real Blender."""
import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.unigine import read, write
from tests import unigine_samples as samples
from tests.codec.unigine_fixtures import (IDENT, anim_file, anim_record, mesh_file, quad_surface,
                                          surface_geometry, surface_header)


def _import(path, **kw):
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(path), **kw) == {"FINISHED"}


def _objects(kind):
    return [o for o in bpy.context.scene.objects if o.type == kind]


def _two_surfaces():
    a = quad_surface("wood")
    pos = [(0, 0, 5), (1, 0, 5), (0, 1, 5)]
    geo = surface_geometry([(pos, [(23170, 0, 0, 23170)] * 3)], uv0=[(0, 0), (1, 0), (0, 1)],
                           uv1=[(0.25, 0.5)] * 3, coord=[0, 1, 2], tri=[0, 1, 2])
    return mesh_file(surfaces=[a, (surface_header("metal"), geo)])


def test_import_surfaces_uvs_normals(clean, tmp_path):
    (tmp_path / "two.mesh").write_bytes(_two_surfaces())
    _import(tmp_path / "two.mesh")
    (ob,) = _objects("MESH")
    me = ob.data
    assert (len(me.vertices), len(me.polygons)) == (7, 3)
    assert [s.material.name for s in ob.material_slots] == ["wood", "metal"]
    mat = np.empty(3, np.int32)
    me.polygons.foreach_get("material_index", mat)
    assert mat.tolist() == [0, 0, 1]
    assert [l.name for l in me.uv_layers] == ["UVMap", "UVMap2"]
    uv = np.empty(len(me.loops) * 2, np.float32)
    me.uv_layers["UVMap"].uv.foreach_get("vector", uv)
    assert uv.reshape(-1, 2)[:3].tolist() == [[0, 1], [1, 1], [1, 0]]        # file V runs down
    n = np.empty(len(me.loops) * 3, np.float32)
    me.corner_normals.foreach_get("vector", n)
    n = n.reshape(-1, 3)
    np.testing.assert_allclose(n[:6], [[0, 0, 1]] * 6, atol=1e-4)
    np.testing.assert_allclose(n[6:], [[0, -1, 0]] * 3, atol=1e-4)         # 90 degrees about X


def test_one_object_per_surface(clean, tmp_path):
    (tmp_path / "two.mesh").write_bytes(_two_surfaces())
    _import(tmp_path / "two.mesh", one_object_per_surface=True)
    assert sorted(o.name for o in _objects("MESH")) == ["metal", "wood"]


def _skinned(tmp_path, frames=12):
    model = samples.skinned_mesh(400, 5, frames)
    path = tmp_path / "rig.mesh"
    path.write_bytes(write.write_mesh(model))
    return path, model


def test_import_skinned_mesh_with_animation(clean, tmp_path):
    path, model = _skinned(tmp_path)
    _import(path)
    (arm,) = _objects("ARMATURE")
    (ob,) = _objects("MESH")
    assert {b.name for b in arm.data.bones} == {b.name for b in model.bones}
    assert arm.data.bones["bone00"].parent.name == "bone01"           # parents listed after children
    assert arm.data.bones["bone00"]["unigine_index"] == 0             # the file's order, kept for export
    assert ob.modifiers[0].type == "ARMATURE" and ob.modifiers[0].object == arm
    assert {g.name for g in ob.vertex_groups} == {b.name for b in model.bones}
    # vertex 0: weights 45875, 6554, 6553, 6553 of 65535 on four distinct bones
    got = sorted(round(g.weight * 65535) for g in ob.data.vertices[0].groups)
    assert got == [6553, 6553, 6554, 45875]
    assert arm.animation_data.action.name == "bend"
    # the head of every bone follows parent * key at each frame: compare with the file's own keys
    track = model.animations[0]
    q = track.rotation.astype(np.float64) / 32767
    # components the animation never stores stay at the bind pose
    trans = _translations(model, track)
    for f in (0, 5, 11):
        clean.scene.frame_set(f)
        world = {}
        order = list(range(len(model.bones)))[::-1]                     # the root is listed last
        for i in order:
            x, y, z, w = q[f, i]
            r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                          [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                          [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
            m = np.eye(4)
            m[:3, :3], m[:3, 3] = r, trans[f, i]
            p = model.bones[i].parent
            world[i] = m if p < 0 else world[p] @ m
        for i, b in enumerate(model.bones):
            np.testing.assert_allclose(np.array(arm.pose.bones[b.name].matrix)[:3, 3], world[i][:3, 3], atol=1e-4)


def _translations(model, track):
    """Keys with the bind pose where the animation stores no component (notes: carried from the bind)."""
    stored = np.array([track.flag & bit for bit in (1, 2, 4)]) != 0
    return np.where(stored, track.translation, model.bind["t"][track.bones][None])


def test_skinned_round_trip_through_blender(clean, tmp_path):
    path, model = _skinned(tmp_path)
    _import(path)
    out = tmp_path / "out" / "rig.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), embed_animations=True) == {"FINISHED"}
    back = read.read_mesh(out.read_bytes(), Warnings())
    s0, s1 = model.surfaces[0], back.surfaces[0]
    assert s1.coord_indices.tolist() == s0.coord_indices.tolist()
    assert s1.coordinate_count == s0.coordinate_count and s1.triangle_count == s0.triangle_count
    np.testing.assert_allclose(s1.targets[0].positions, s0.targets[0].positions, atol=1e-6)
    np.testing.assert_allclose(s1.uv0, s0.uv0, atol=1e-6)
    assert np.abs(s1.targets[0].tangents.astype(int) - s0.targets[0].tangents).max() <= 2
    assert np.abs(s1.weights.weights.astype(int) - s0.weights.weights).max() <= 1
    assert [(b.name, b.parent) for b in back.bones] == [(b.name, b.parent) for b in model.bones]
    np.testing.assert_allclose(back.bind["t"], model.bind["t"], atol=1e-5)
    (t0,), (t1,) = model.animations, back.animations
    assert t1.frame_count == t0.frame_count
    names0 = [model.bones[i].name for i in t0.bones]
    names1 = [back.bones[i].name for i in t1.bones]
    for j, n in enumerate(names0):
        k = names1.index(n)
        d = np.abs(t1.rotation[:, k].astype(int) - t0.rotation[:, j])
        d = np.minimum(d, np.abs(-t1.rotation[:, k].astype(int) - t0.rotation[:, j]))
        assert d.max() <= 3
        np.testing.assert_allclose(_translations(back, t1)[:, k], _translations(model, t0)[:, j], atol=1e-4)


def test_anim_onto_the_selected_armature(clean, tmp_path):
    path, model = _skinned(tmp_path)
    _import(path)
    (arm,) = _objects("ARMATURE")
    bpy.context.view_layer.objects.active = arm
    # bone01 slides to x = 4 (box 0..4, u = 65535), plus a bone the rig lacks
    recs = anim_record(0x01, (65535, 0, 0)) + anim_record(0x01, (0, 0, 0))
    data = anim_file(bones=[("bone01", -1), ("ghost", -1)], poses=[IDENT, IDENT],
                     anims=[("slide", [0, 1], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    (tmp_path / "slide.anim").write_bytes(data)
    assert bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "slide.anim"), fps=24.0) == {"FINISHED"}
    action = bpy.data.actions["slide"]
    assert arm.animation_data.action == action or any(s.action == action for t in arm.animation_data.nla_tracks
                                                       for s in t.strips)
    arm.animation_data.action = action
    clean.scene.frame_set(0)
    # the key is parent-local: x = 4 from the file; y and z, never stored, keep the rig's rest (0, 1)
    parent = arm.pose.bones["bone01"].parent
    local = np.linalg.inv(np.array(parent.matrix)) @ np.array(arm.pose.bones["bone01"].matrix)
    np.testing.assert_allclose(local[:3, 3], [4, 0, 1], atol=1e-4)
    assert clean.scene.render.fps == 24


def test_anim_needs_an_armature(clean, tmp_path):
    data = anim_file(bones=[("a", -1)], poses=[IDENT], anims=[])
    (tmp_path / "x.anim").write_bytes(data)
    with pytest.raises(RuntimeError, match="armature"):
        bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "x.anim"))


def test_export_anim_from_the_armature(clean, tmp_path):
    path, model = _skinned(tmp_path, frames=8)
    _import(path)
    clean.scene.frame_start, clean.scene.frame_end = 0, 7
    out = tmp_path / "bend.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    a = read.read_anim(out.read_bytes(), Warnings())
    assert [b.name for b in a.bones] == [b.name for b in model.bones]
    (t,) = a.animations
    assert t.name == "bend" and t.frame_count == 8
    assert t.flags[0].tolist() == [t.flag] * len(t.bones)


def test_export_plain_cube(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    out = tmp_path / "cube.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    m = read.read_mesh(out.read_bytes(), Warnings())
    (s,) = m.surfaces
    assert s.coordinate_count == 8 and len(s.coord_indices) == 36
    np.testing.assert_allclose(m.bounds.values[:6], [-1, -1, -1, 1, 1, 1])
    assert not (tmp_path / "cube.anim").exists()


def test_export_uses_blenders_tangents(clean, tmp_path):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=6)
    ob = clean.active_object
    me = ob.data
    me.calc_tangents()
    n = len(me.loops)
    want_t = np.empty(n * 3, np.float32)
    me.loops.foreach_get("tangent", want_t)
    want_s = np.empty(n, np.float32)
    me.loops.foreach_get("bitangent_sign", want_s)
    me.free_tangents()
    me.calc_loop_triangles()
    loops = np.empty(len(me.loop_triangles) * 3, np.int32)
    me.loop_triangles.foreach_get("loops", loops)
    out = tmp_path / "sphere.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
    from addon.codec.formats.unigine import tangent
    s = read.read_mesh(out.read_bytes(), Warnings()).surfaces[0]
    _, t, sign = tangent.decode(s.targets[0].tangents)
    # the file's corners follow Blender's loop triangles; compare each corner's frame with Blender's
    got_t, got_s = t[s.tri_indices], sign[s.tri_indices]
    np.testing.assert_array_equal(got_s, np.where(want_s[loops] < 0, -1, 1))
    assert np.abs(got_t - want_t.reshape(-1, 3)[loops]).max() < 2e-3
