"""UNIGINE .mesh / .anim through the real operators, in real Blender."""
import bmesh
import mathutils
import numpy as np

from addon.codec import axes
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.unigine import read, write
from tests import unigine_samples as samples
from tests.blender.helpers import evaluated_positions
from tests.codec.unigine_fixtures import (IDENT, Q_IDENTITY, anim_file, anim_record, mesh_file, mesh_record,
                                          quad_surface, surface_geometry, surface_header)

S45 = 0.70710678


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


def test_default_import_reports_file_normals_it_cannot_keep(clean, tmp_path, capfd):
    (tmp_path / "two.mesh").write_bytes(_two_surfaces())
    _import(tmp_path / "two.mesh")
    assert "3 of the file's corner normals are not what sharp edges can give" in capfd.readouterr().out
    (tmp_path / "fold.mesh").write_bytes(_fold())
    _import(tmp_path / "fold.mesh")
    assert "corner normals" not in capfd.readouterr().out


def test_import_surfaces_uvs_normals(clean, tmp_path):
    (tmp_path / "two.mesh").write_bytes(_two_surfaces())
    _import(tmp_path / "two.mesh", normals="EXACT")          # the file's own normals, which face away
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


def _fold():
    """Two surfaces meeting at a right angle along the X axis: a floor facing up, a wall facing -Y
    (its tangent frame turned 90 degrees about X); each stores its own four vertices."""
    floor = quad_surface("floor")
    wall = [(0, 0, 0), (1, 0, 0), (1, 0, -1), (0, 0, -1)]
    geo = surface_geometry([(wall, [(23170, 0, 0, 23170)] * 4)], uv0=[(0, 0), (1, 0), (1, 1), (0, 1)],
                           coord=[0, 2, 1, 0, 3, 2], tri=[0, 2, 1, 0, 3, 2])
    return mesh_file(surfaces=[floor, (surface_header("wall"), geo)])


def _corner_normals(me):
    n = np.empty(len(me.loops) * 3, np.float32)
    me.corner_normals.foreach_get("vector", n)
    return n.reshape(-1, 3)


@pytest.mark.parametrize("mode,verts,custom", [("KEEP", 8, True), ("EXACT", 6, True), (None, 6, False)])
def test_normals_option_welds_surfaces_with_sharp_edges_by_default(clean, tmp_path, mode, verts, custom):
    """Surfaces split their points where they meet: welded by default, the fold is a sharp edge and
    Blender's own normals are the file's; exact keeps them as custom normals; keep leaves the points."""
    (tmp_path / "fold.mesh").write_bytes(_fold())
    _import(tmp_path / "fold.mesh", **({} if mode is None else {"normals": mode}))
    (ob,) = _objects("MESH")
    me = ob.data
    assert (len(me.vertices), len(me.polygons), me.has_custom_normals) == (verts, 4, custom)
    want = [[0, 0, 1]] * 6 + [[0, -1, 0]] * 6                # the file's frames, per corner
    np.testing.assert_allclose(_corner_normals(me), want, atol=1e-4)
    uv = np.empty(len(me.loops) * 2, np.float32)
    me.uv_layers["UVMap"].uv.foreach_get("vector", uv)
    assert uv.reshape(-1, 2)[6:9].tolist() == [[0, 1], [1, 0], [1, 1]]       # UVs stay per corner
    if mode is None:
        sharp = np.empty(len(me.edges), bool)
        me.attributes["sharp_edge"].data.foreach_get("value", sharp)
        (edge,) = np.flatnonzero(sharp)                      # the fold; the quads' diagonals stay smooth
        assert sorted(tuple(me.vertices[v].co) for v in me.edges[edge].vertices) == [(0, 0, 0), (1, 0, 0)]
        out = tmp_path / "back.mesh"
        assert bpy.ops.export_scene.unigine_mesh(filepath=str(out)) == {"FINISHED"}
        bpy.ops.wm.read_homefile(use_empty=True)
        _import(out, normals="KEEP")
        (ob,) = _objects("MESH")
        assert len(ob.data.polygons) == 4 and len(ob.data.vertices) == 8       # split again per surface
        np.testing.assert_allclose(_corner_normals(ob.data), want, atol=1e-3)


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
    _import(path, normals="KEEP")                            # the file's vertices, as it stores them
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


def test_anim_onto_the_selected_armature(clean, tmp_path, capfd):
    path, model = _skinned(tmp_path)
    _import(path)
    (arm,) = _objects("ARMATURE")
    bpy.context.view_layer.objects.active = arm
    # bone01 slides to x = 4 (box 0..4, u = 65535), plus a bone the rig lacks
    recs = anim_record(0x01, (65535, 0, 0)) + anim_record(0x01, (0, 0, 0))
    data = anim_file(bones=[("bone01", -1), ("ghost", -1)], poses=[IDENT, IDENT],
                     anims=[("slide", [0, 1], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    (tmp_path / "slide.anim").write_bytes(data)
    capfd.readouterr()
    assert bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "slide.anim"), fps=24.0) == {"FINISHED"}
    # the operator lists every warning on the console: the bone the rig lacks, and the rig's bones left still
    console = capfd.readouterr().out
    assert "slide.anim: animation 'slide': bone 'ghost' is not in the armature; its keys are skipped" in console
    for b in model.bones:
        if b.name != "bone01":
            assert f"armature bone {b.name!r} is not in the animation; it keeps its rest pose" in console
    assert "armature bone 'bone01'" not in console
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


def test_export_of_kept_tangents_skips_mikktspace_and_writes_the_same_file(lgf, clean, tmp_path):
    """A mesh imported from UNIGINE keeps the file's tangents, which export prefers; so the bridge
    does not ask Blender for MikkTSpace (most of a large export's time), and the file is the same."""
    from importlib import import_module
    collect = import_module(f"{lgf.__name__}.bridge.collect")
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=6)
    first = tmp_path / "first.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(first)) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(first)
    (ob,) = _objects("MESH")
    kept = collect.read_mesh(ob.data, True, True, "unigine_tangent")
    assert "unigine_tangent" in kept.corner_attributes and "tangent" not in kept.corner_attributes
    assert "tangent" in collect.read_mesh(ob.data, True, True).corner_attributes      # without: MikkTSpace
    again = tmp_path / "again.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(again)) == {"FINISHED"}
    opts = lgf.bridge.CollectOptions(tangents=True)             # MikkTSpace read, the kept ones written
    lgf.codec.save(lgf.bridge.collect_scene(bpy.context, opts), tmp_path / "mikk.mesh")
    assert again.read_bytes() == (tmp_path / "mikk.mesh").read_bytes()


# -- a bind pose with scale (Blender bones rest unscaled) ---------------------------------------------------------
def _trs(t, q_xyzw, s=(1, 1, 1)):
    """T @ R @ S from a quaternion in the file's x, y, z, w order."""
    x, y, z, w = q_xyzw
    return axes.compose(t, [w, x, y, z], s)


def _scaled_rig(path):
    """hand -> arm -> root; arm binds at T(0,2,0) Rz(90) S(2); the hand, T(0,0,1) under it, is keyed."""
    bones = [("hand", 2), ("root", -1), ("arm", 1)]
    poses = [((0, 0, 1), (0, 0, 0, 1), (1, 1, 1)), IDENT, ((0, 2, 0), (0, 0, S45, S45), (2, 2, 2))]
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    geo = surface_geometry([(pos, [Q_IDENTITY])], weights=[[(0, 65535)], [(2, 65535)], [(1, 65535)]],
                           coord=[0, 1, 2], tri=[0, 0, 0])
    recs = (mesh_record(0x0F, (0, 0, 3), (0, 0, 0, 32767)) + mesh_record(0x08, q=(23170, 0, 0, 23170))
            + mesh_record(0x04, (0, 0, 1)))
    path.write_bytes(mesh_file(bones=bones, poses=poses, anims=[("wave", [0], 0x0F, 3, recs)],
                               surfaces=[(surface_header("body"), geo)]))
    # the file's own skinning, by hand: vertex' = anim_world * bind_world^-1 * vertex
    arm = _trs((0, 2, 0), (0, 0, S45, S45), (2, 2, 2))
    hand_bind = arm @ _trs((0, 0, 1), (0, 0, 0, 1))
    keys = [((0, 0, 3), (0, 0, 0, 1)), ((0, 0, 3), (S45, 0, 0, S45)), ((0, 0, 1), (S45, 0, 0, S45))]
    hand = [arm @ _trs(t, q) for t, q in keys]
    verts = [np.array([(h @ np.linalg.inv(hand_bind) @ [0, 0, 0, 1.0])[:3], [1, 0, 0], [0, 1, 0]]) for h in hand]
    return [h[:3, 3] for h in hand], verts


def _check_scaled_rig(scene, heads, verts):
    (arm,) = _objects("ARMATURE")
    (ob,) = _objects("MESH")
    for f in range(3):
        scene.frame_set(f)
        np.testing.assert_allclose(np.array(arm.pose.bones["hand"].matrix)[:3, 3], heads[f], atol=1e-4)
        np.testing.assert_allclose(evaluated_positions(ob, world=True), verts[f], atol=1e-4)


def test_scaled_bind_pose_deforms_as_the_file(clean, tmp_path):
    heads, verts = _scaled_rig(tmp_path / "rig.mesh")
    assert [h.tolist() for h in heads] == [[0, 2, 6], [0, 2, 6], [0, 2, 2]]
    assert np.allclose(verts[0][0], [0, 0, 4]) and np.allclose(verts[1][0], [-2, 0, 6])
    _import(tmp_path / "rig.mesh")
    _check_scaled_rig(clean.scene, heads, verts)
    # export writes Blender's unscaled rest as the bind and moves the scale into the keys: same motion again
    out = tmp_path / "out" / "rig.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), embed_animations=True) == {"FINISHED"}
    back = read.read_mesh(out.read_bytes(), Warnings())
    np.testing.assert_allclose(back.bind["s"], np.ones((3, 3)), atol=1e-5)
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(out)
    _check_scaled_rig(bpy.context.scene, heads, verts)


# -- Blender -> .mesh -> Blender ------------------------------------------------------------------------------
def _blender_rig(scene, frames=10):
    """A triangulated sphere with custom normals, 2 UV maps, corner colours, a shape key, weights on two
    rolled bones, and an action on the child bone."""
    bpy.ops.mesh.primitive_uv_sphere_add(segments=8, ring_count=5, location=(0, 0, 1))
    ob = bpy.context.active_object
    ob.name = "body"
    me = ob.data
    bm = bmesh.new()
    bm.from_mesh(me)
    bmesh.ops.triangulate(bm, faces=bm.faces[:])
    bm.to_mesh(me)
    bm.free()
    rng = np.random.default_rng(7)
    n = len(me.loops)
    uv = rng.random(n * 2).astype(np.float32)
    me.uv_layers[0].uv.foreach_set("vector", uv)
    me.uv_layers.new(name="UV2").uv.foreach_set("vector", rng.random(n * 2).astype(np.float32))
    col = me.color_attributes.new("Col", "BYTE_COLOR", "CORNER")
    col.data.foreach_set("color", (rng.integers(0, 256, n * 4) / 255.0).astype(np.float32))
    # corner normals: each corner leans towards its own (made-up) direction
    lv = np.empty(n, np.int32)
    me.loops.foreach_get("vertex_index", lv)
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    co = co.reshape(-1, 3)
    tilt = co[lv] + 0.4 * rng.standard_normal((n, 3))
    me.normals_split_custom_set((tilt / np.linalg.norm(tilt, axis=1, keepdims=True)).tolist())
    ob.shape_key_add(name="Basis")
    key = ob.shape_key_add(name="up")
    kco = co + rng.normal(0, 0.2, co.shape).astype(np.float32)
    key.data.foreach_set("co", kco.ravel())
    bpy.ops.object.armature_add(location=(0, 0, 0))
    arm = bpy.context.active_object
    arm.name = "rig"
    bpy.ops.object.mode_set(mode="EDIT")
    eb = arm.data.edit_bones
    root = eb[0]
    root.name, root.head, root.tail, root.roll = "root", (0, 0, 0), (0, 0.3, 0.5), 0.4
    tip = eb.new("tip")
    tip.head, tip.tail, tip.roll, tip.parent = (0, 0.3, 0.5), (0.4, 0.3, 1.6), -0.7, root
    bpy.ops.object.mode_set(mode="OBJECT")
    ob.parent = arm
    ob.modifiers.new("Armature", "ARMATURE").object = arm
    t = np.clip(co[:, 2] / 2, 0, 1)
    g_root, g_tip = ob.vertex_groups.new(name="root"), ob.vertex_groups.new(name="tip")
    for i, ti in enumerate(t):            # per vertex: fine for a test
        g_root.add([i], float(1 - ti), "REPLACE")
        g_tip.add([i], float(ti), "REPLACE")
    arm.animation_data_create()
    arm.animation_data.action = bpy.data.actions.new("wave")
    pb = arm.pose.bones["tip"]
    pb.rotation_mode = "QUATERNION"
    for f in range(frames):
        pb.rotation_quaternion = mathutils.Quaternion((1, 0.3, 0), 0.1 * f)
        pb.location = (0, 0.02 * f, 0.01 * f * f)
        pb.scale = (1, 1 + 0.05 * f, 1)
        for path in ("rotation_quaternion", "location", "scale"):
            pb.keyframe_insert(path, frame=f)
    scene.frame_start, scene.frame_end = 0, frames - 1
    return arm, ob


def _snapshot(scene, arm, ob, frames):
    me = ob.data
    n = len(me.loops)
    m = np.array(ob.matrix_world)

    def get(coll, attr, width, count):
        a = np.empty(count * width, np.float32)
        coll.foreach_get(attr, a)
        return a.reshape(count, width)

    co = get(me.vertices, "co", 3, len(me.vertices)) @ m[:3, :3].T + m[:3, 3]
    snap = {"co": co, "loop_vertex": np.array([l.vertex_index for l in me.loops]),
            "uv": [get(layer.uv, "vector", 2, n) for layer in me.uv_layers],
            "normals": get(me.corner_normals, "vector", 3, n) @ m[:3, :3].T,
            "colors": get(me.color_attributes[0].data, "color", 4, n),
            "keys": [k.name for k in me.shape_keys.key_blocks],
            "up": get(me.shape_keys.key_blocks["up"].data, "co", 3, len(me.vertices)) @ m[:3, :3].T + m[:3, 3],
            "polys": [tuple(p.loop_indices) for p in me.polygons],
            "rest": {b.name: np.array(b.matrix_local) for b in arm.data.bones}}
    w = np.zeros((len(me.vertices), 2))
    names = ["root", "tip"]
    for v in me.vertices:
        for g in v.groups:
            w[v.index, names.index(ob.vertex_groups[g.group].name)] = g.weight
    snap["weights"] = w
    snap["poses"] = []
    for f in range(frames):
        scene.frame_set(f)
        snap["poses"].append({b.name: np.array(b.matrix) for b in arm.pose.bones})
    return snap


def test_blender_mesh_file_blender_round_trip(clean, tmp_path):
    frames = 10
    arm, ob = _blender_rig(clean.scene, frames)
    a = _snapshot(clean.scene, arm, ob, frames)
    clean.scene.frame_set(0)
    out = tmp_path / "body.mesh"
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(out), embed_animations=True) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(out, normals="EXACT")                            # custom normals in, custom normals back
    (arm2,) = _objects("ARMATURE")
    (ob2,) = _objects("MESH")
    b = _snapshot(bpy.context.scene, arm2, ob2, frames)
    # vertices: the same places, matched by position
    assert len(b["co"]) == len(a["co"])
    key = lambda p: tuple(np.round(p, 4))
    at = {key(p): i for i, p in enumerate(a["co"])}
    vmap = np.array([at[key(p)] for p in b["co"]])          # B vertex -> A vertex
    np.testing.assert_allclose(b["co"], a["co"][vmap], atol=1e-6)
    # corners: each triangle by its vertices, each corner by its vertex
    corner_of = {}
    for poly in a["polys"]:
        corner_of[frozenset(a["loop_vertex"][list(poly)])] = poly
    bl, al = [], []
    for poly in b["polys"]:
        verts = vmap[b["loop_vertex"][list(poly)]]
        src = corner_of[frozenset(verts)]
        for li, v in zip(poly, verts):
            bl.append(li)
            al.append(next(x for x in src if a["loop_vertex"][x] == v))
    assert len(bl) == len(a["loop_vertex"])
    bl, al = np.array(bl), np.array(al)
    assert len(b["uv"]) == 2
    for k in range(2):                                       # float32 in the file, V flipped twice
        np.testing.assert_allclose(b["uv"][k][bl], a["uv"][k][al], atol=1e-6)
    # colours: a byte per channel
    np.testing.assert_allclose(b["colors"][bl], a["colors"][al], atol=0.5 / 255 + 1e-6)
    # normals: a short quaternion (1/32767), then Blender's own custom-normal encoding
    np.testing.assert_allclose(b["normals"][bl], a["normals"][al], atol=5e-4)
    assert b["keys"] == a["keys"]
    np.testing.assert_allclose(b["up"], a["up"][vmap], atol=1e-6)
    # weights: 1/65535 steps
    np.testing.assert_allclose(b["weights"], a["weights"][vmap], atol=1.5 / 65535)
    # the rolled rest, and every frame's pose (rotations are shorts: 1/32767 per component)
    for name in ("root", "tip"):
        np.testing.assert_allclose(b["rest"][name], a["rest"][name], atol=1e-5)
    assert arm2.animation_data.action.frame_range[:] == (0, frames - 1)
    for f in range(frames):
        for name in ("root", "tip"):
            np.testing.assert_allclose(b["poses"][f][name], a["poses"][f][name], atol=2e-4, err_msg=f"frame {f}")


def test_anim_import_onto_the_named_armature(clean, tmp_path, capfd):
    frames = 6
    arm, ob = _blender_rig(clean.scene, frames)
    want = _snapshot(clean.scene, arm, ob, frames)["poses"]
    bpy.ops.object.select_all(action="DESELECT")
    arm.select_set(True)
    bpy.context.view_layer.objects.active = arm
    out = tmp_path / "wave.anim"
    assert bpy.ops.export_anim.unigine_anim(filepath=str(out)) == {"FINISHED"}
    original = arm.animation_data.action
    arm.animation_data.action = None
    for pb in arm.pose.bones:
        pb.matrix_basis = mathutils.Matrix()
    # a decoy armature is the active object, so only the name can pick "rig"
    bpy.ops.object.armature_add(location=(5, 0, 0))
    decoy = bpy.context.active_object
    decoy.name = "decoy"
    assert bpy.context.view_layer.objects.active == decoy
    capfd.readouterr()
    assert bpy.ops.import_anim.unigine_anim(filepath=str(out), armature_name="rig") == {"FINISHED"}
    assert "not in the" not in capfd.readouterr().out          # every bone matched by name
    assert decoy.animation_data is None or decoy.animation_data.action is None
    action = arm.animation_data.action
    assert action is not None and action != original and action.name.startswith("wave")   # "wave" is taken
    for f in range(frames):
        clean.scene.frame_set(f)
        for pb in arm.pose.bones:
            np.testing.assert_allclose(np.array(pb.matrix), want[f][pb.name], atol=2e-4, err_msg=f"frame {f}")
    # a name that is no armature is refused, not guessed
    with pytest.raises(RuntimeError, match="no armature named 'body'"):
        bpy.ops.import_anim.unigine_anim(filepath=str(out), armature_name="body")
