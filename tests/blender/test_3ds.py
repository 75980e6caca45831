"""3D Studio (.3ds) through the real operators, in real Blender."""
import shutil

import numpy as np
import pytest

import bpy
from tests.blender.helpers import lens_animated_camera
from tests.codec.fixtures_3ds import ASSETS


def _import(path, **kw):
    assert bpy.ops.import_scene.studio3ds(filepath=str(path), **kw) == {"FINISHED"}
    return list(bpy.context.scene.objects)


def _export(path, **kw):
    assert bpy.ops.export_scene.studio3ds(filepath=str(path), **kw) == {"FINISHED"}


def _world_bounds(ob):
    co = np.empty(len(ob.data.vertices) * 3, np.float32)
    ob.data.vertices.foreach_get("co", co)
    m = np.array(ob.matrix_world)
    p = co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
    return np.round(np.r_[p.min(0), p.max(0)], 3)


def _all_bounds():
    return sorted(tuple(_world_bounds(o)) for o in bpy.context.scene.objects if o.type == "MESH")


def test_hierarchy_dummies_and_linked_instances(clean):
    objs = _import(ASSETS / "cube_hierarchy.3ds")
    meshes = [o for o in objs if o.type == "MESH"]
    empties = [o for o in objs if o.type == "EMPTY"]
    assert len(meshes) == 8 and len(empties) == 2
    assert len({o.data.name for o in meshes}) == 1                 # linked duplicates share one mesh
    assert all(o.parent in empties for o in meshes)
    # where lib3ds places them (see tests/codec): cubes at x,y in {0,3}, z in {0,3}
    centres = sorted(tuple(np.round((b[:3] + b[3:]) / 2, 3)) for b in map(_world_bounds, meshes))
    assert centres == sorted((x, y, z) for x in (0.0, 3.0) for y in (0.0, 3.0) for z in (0.0, 3.0))


def test_smoothing_groups_flags_and_textures(clean, tmp_path):
    for f in ("mp5_sil.3ds", "mp5sil.bmp"):
        shutil.copy(ASSETS / f, tmp_path / f)
    (ob,) = [o for o in _import(tmp_path / "mp5_sil.3ds") if o.type == "MESH"]
    me = ob.data
    assert me.attributes["smoothing_groups"].domain == "FACE"
    assert "face_flags" not in me.attributes                        # every face has the default flags
    (cube,) = [o for o in _import(ASSETS / "cube_with_materials.3ds") if o.type == "MESH" and o != ob]
    assert cube.data.attributes["face_flags"].domain == "FACE"      # some face has other flags
    assert not me.has_custom_normals and me.attributes["sharp_edge"].domain == "EDGE"   # native smoothing
    mat = me.materials[0]
    images = [n.image for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    assert images and images[0].filepath.lower().endswith("mp5sil.bmp")


def test_rotating_cube_matches_lib3ds_at_frame_100(clean):
    (ob,) = [o for o in _import(ASSETS / "RotatingCube.3DS") if o.type == "MESH"]
    assert ob.animation_data is not None and ob.animation_data.action is not None
    bpy.context.scene.frame_set(100)
    m = np.array(ob.matrix_world)
    # lib3ds_file_eval(file, 100) node matrix (column-major print of tests/codec/lib3ds_place_3ds.c)
    lib3ds = np.array([0.45353, 0, -0.891241, 0.655615, 0.677394, 0.333626, 0.603721, -0.735621, 0.307218])
    np.testing.assert_allclose(m[:3, :3].T.ravel(), lib3ds, atol=1e-4)
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (0, 300)


def test_target_camera_gets_a_track_to_its_target(clean):
    objs = _import(ASSETS / "TargetCameraAnim.3ds")
    (cam,) = [o for o in objs if o.type == "CAMERA"]
    con = [c for c in cam.constraints if c.type == "TRACK_TO"]
    assert con and con[0].target.name == f"{cam.name}.Target"


def test_object_type_filter_and_new_collection(clean):
    objs = _import(ASSETS / "TargetCameraAnim.3ds", object_types={"MESH"}, use_new_collection=True)
    assert [o.type for o in objs] == ["MESH"]
    assert "TargetCameraAnim" in bpy.data.collections


@pytest.mark.parametrize("name", ["cube_hierarchy.3ds", "cart_wheel.3DS", "cubes_with_alpha.3DS"])
def test_export_then_import_gives_the_same_world_bounds(clean, tmp_path, name):
    _import(ASSETS / name)
    before = _all_bounds()
    out = tmp_path / "out.3ds"
    _export(out)
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(out)
    # (pytest.approx does not nest into tuples: compare as arrays)
    np.testing.assert_allclose(np.array(_all_bounds()), np.array(before), atol=2e-3)


def test_export_from_a_blender_scene_with_modifiers(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=2, location=(1, 2, 3))
    cube = bpy.context.object
    cube.modifiers.new("Sub", "SUBSURF").levels = 1
    out = tmp_path / "mod.3ds"
    _export(out, apply_modifiers=True)
    from addon.codec.formats.studio3ds.read import parse
    from addon.codec.formats.studio3ds import ids
    tri = parse(out.read_bytes()).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    assert len(tri.value(ids.FACE_ARRAY)) == 24 * 2            # 24 quads after one subdivision level
    _export(out, apply_modifiers=False)
    tri = parse(out.read_bytes()).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    assert len(tri.value(ids.FACE_ARRAY)) == 12
    pts = tri.value(ids.POINT_ARRAY)
    np.testing.assert_allclose([pts.min(0), pts.max(0)], [[0, 1, 2], [2, 3, 4]], atol=1e-5)


def test_export_animation_cameras_and_lights_from_blender(clean, tmp_path):
    import subprocess
    import re
    from addon.codec.formats.studio3ds.read import parse
    from addon.codec.formats.studio3ds import ids
    from addon.codec.formats.studio3ds.keyframer import rotation_keys
    sc = bpy.context.scene
    sc.frame_start, sc.frame_end = 0, 10
    bpy.ops.mesh.primitive_cube_add(size=1)
    cube = bpy.context.object
    cube.rotation_mode = "XYZ"
    cube.rotation_euler = (0, 0, 0)
    cube.keyframe_insert("rotation_euler", frame=0)
    cube.rotation_euler = (0, 0, np.radians(90))
    cube.keyframe_insert("rotation_euler", frame=10)
    bpy.ops.object.camera_add(location=(0, -10, 0))
    bpy.ops.object.light_add(type="SPOT", location=(3, 3, 3))
    out = tmp_path / "anim.3ds"
    _export(out)
    m = parse(out.read_bytes())
    kinds = sorted(c.cid for c in m.keyframer().children if c.cid in ids.NODE_TAGS)
    assert kinds.count(ids.OBJECT_NODE_TAG) == 1 and ids.CAMERA_NODE_TAG in kinds and ids.SPOTLIGHT_NODE_TAG in kinds
    node = next(c for c in m.keyframer().children if c.cid == ids.OBJECT_NODE_TAG)
    rot = node.value(ids.ROT_TRACK)
    q = rotation_keys(rot)[list(rot.frames).index(10)]
    # +90 degrees about Z at frame 10 (3DS stores the deltas with the angle inverted)
    np.testing.assert_allclose(q * np.sign(q[0]), [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], atol=1e-4)
    assert rot.values[list(rot.frames).index(10), 0] < 0 or rot.values[list(rot.frames).index(10), 3] < 0
    assert m.keyframer().value(ids.KFSEG) == (0, 10)
    info = subprocess.run(["assimp", "info", str(out)], capture_output=True, text=True, timeout=60).stdout
    assert int(re.search(r"Faces:\s+(\d+)", info).group(1)) == 12
    assert int(re.search(r"Cameras:\s+(\d+)", info).group(1)) == 1
    assert int(re.search(r"Lights:\s+(\d+)", info).group(1)) == 1


def test_camera_lens_and_visibility_animation_export(clean, tmp_path):
    cam = lens_animated_camera(clean.scene)
    box = bpy.data.objects.new("Flag", None)
    clean.scene.collection.objects.link(box)
    box.keyframe_insert("hide_viewport", frame=0)
    box.hide_viewport = True
    box.keyframe_insert("hide_viewport", frame=5)
    clean.scene.frame_start, clean.scene.frame_end = 0, 10
    assert bpy.ops.export_scene.studio3ds(filepath=str(tmp_path / "a.3ds")) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(tmp_path / "a.3ds"))
    cam, flag = bpy.data.objects["Cam"], bpy.data.objects["Flag"]
    for frame, lens, hidden in ((0, 20, False), (4, None, False), (10, 80, True)):
        bpy.context.scene.frame_set(frame)
        if lens is not None:
            assert cam.data.lens == pytest.approx(lens, rel=1e-3)
        assert flag.hide_viewport == hidden


def _roll_view(path):
    """Independent of the importer: the camera's (forward, up) per frame from CameraRollAnim.3ds's
    keys. Both positions are single keys; two default (TCB 0) roll keys are a straight line; the
    roll turns the roll-free up vector about the view, as lib3ds' lib3ds_matrix_camera does."""
    from addon.codec.formats.studio3ds.read import parse
    from tests.codec.fixtures_3ds import ids
    root = parse(path.read_bytes()).root
    cam = next(c for c in root.walk() if c.cid == ids.CAMERA_NODE_TAG)
    tgt = next(c for c in root.walk() if c.cid == ids.TARGET_NODE_TAG)
    p, t = cam.find(ids.POS_TRACK).data.values[0], tgt.find(ids.POS_TRACK).data.values[0]
    roll = cam.find(ids.ROLL_TRACK).data
    d = (t - p) / np.linalg.norm(t - p)
    up0 = np.array([0.0, 0.0, 1.0]) - d[2] * d
    up0 /= np.linalg.norm(up0)
    right = np.cross(d, up0)

    def at(frame):
        a = np.radians(np.interp(frame, roll.frames, roll.values[:, 0]))
        return d, np.cos(a) * up0 - np.sin(a) * right
    return at


def test_camera_roll_animation_shows_the_rolled_view(clean, tmp_path):
    path = ASSETS / "CameraRollAnim.3ds"
    expected = _roll_view(path)
    objs = _import(path)
    (cam,) = [o for o in objs if o.type == "CAMERA"]
    con = next(c for c in cam.constraints if c.type == "TRACK_TO")
    assert con.use_target_z and con.target.name == f"{cam.name}.Target"

    def check(frames):
        for f in frames:
            bpy.context.scene.frame_set(f)
            m = np.array(cam.matrix_world)
            fwd, up = expected(f)
            np.testing.assert_allclose(-m[:3, 2], fwd, atol=1e-4, err_msg=f"frame {f}")
            np.testing.assert_allclose(m[:3, 1] / np.linalg.norm(m[:3, 1]), up, atol=1e-4, err_msg=f"frame {f}")
    check([0, 15, 40, 60, 99, 120])
    # about 77 degrees of roll between the first and last frame
    assert np.degrees(np.arccos(expected(0)[1] @ expected(120)[1])) == pytest.approx(77.25, abs=0.01)
    # exported from Blender (target orientation sampled per frame) and read back: the same view
    _export(tmp_path / "roll.3ds")
    bpy.ops.wm.read_homefile(use_empty=True)
    (cam,) = [o for o in _import(tmp_path / "roll.3ds") if o.type == "CAMERA"]
    check([0, 33, 77, 120])


def test_tcb_keys_give_the_hermite_curve(clean, tmp_path):
    from addon.codec.formats.studio3ds.tcb import track_curve
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, ids, kf_node, obj, track, trimesh
    tcb = np.full((3, 5), np.nan, np.float32)
    tcb[1, :3] = (0.3, -0.2, 0.5)                 # middle key: tension, continuity, bias
    pos = track(ids.POS_TRACK, [0, 10, 30], [[0, 0, 0], [10, 2, -1], [40, -3, 4]], key_flags=[0, 7, 0], tcb=tcb)
    node = kf_node(0, "Box")
    node.children[2] = pos
    (tmp_path / "tcb.3ds").write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node]))
    (ob,) = [o for o in _import(tmp_path / "tcb.3ds") if o.type == "MESH"]
    for frame, sub in ((4, 0.0), (13, 0.5), (20, 0.0), (27, 0.25)):
        bpy.context.scene.frame_set(frame, subframe=sub)
        np.testing.assert_allclose(np.array(ob.location), track_curve(pos.data, frame + sub), atol=1e-4,
                                   err_msg=f"frame {frame + sub}")
    # a curve, not a straight line: at frame 20 the Hermite value is off the chord by about 2 in X
    bpy.context.scene.frame_set(20)
    assert abs(ob.location.x - 25.0) > 1.0


# -- flags, materials, frame range and mirrors through Blender -----------------------------
def _parse(path):
    from addon.codec.formats.studio3ds.read import parse
    return parse(path.read_bytes())


def _flag_file(tmp_path):
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, ids, kf_node, obj, trimesh
    from addon.codec.formats.studio3ds.model import Chunk
    vflags = np.array([0, 1, 2, 0x8000, 5, 0, 7, 9], np.uint16)
    tri = trimesh(CUBE_POINTS, CUBE_TRIS, vertex_flags=vflags)
    tri.add(ids.MESH_COLOR, 5)
    box = obj("Box", Chunk(ids.OBJ_HIDDEN), Chunk(ids.OBJ_DOESNT_CAST), Chunk(ids.OBJ_DONT_RCVSHADOW), tri)
    plain = obj("Plain", trimesh(CUBE_POINTS + 3, CUBE_TRIS))
    path = tmp_path / "flags.3ds"
    path.write_bytes(build([box, plain], kf_nodes=[kf_node(0, "Box"), kf_node(1, "Plain")]))
    return path, vflags


def test_shadow_and_visibility_flags(clean, tmp_path):
    from tests.codec.fixtures_3ds import ids
    path, _ = _flag_file(tmp_path)
    _import(path)
    box, plain = bpy.data.objects["Box"], bpy.data.objects["Plain"]
    assert box.hide_viewport and box.hide_render and not plain.hide_render
    assert not box.visible_shadow and plain.visible_shadow
    assert box.get("3ds_no_receive_shadows") == 1 and "3ds_no_receive_shadows" not in plain
    out = tmp_path / "out.3ds"
    _export(out)
    objs = {o.data: o for o in _parse(out).editor().find_all(ids.OBJECT)}
    assert objs["Box"].has(ids.OBJ_HIDDEN) and objs["Box"].has(ids.OBJ_DONT_RCVSHADOW)
    assert not any(objs["Plain"].has(c) for c in (ids.OBJ_HIDDEN, ids.OBJ_DONT_RCVSHADOW, ids.OBJ_DOESNT_CAST))
    # changed in Blender: shown again, so no hidden flag
    box.hide_render = False
    _export(out)
    assert not {o.data: o for o in _parse(out).editor().find_all(ids.OBJECT)}["Box"].has(ids.OBJ_HIDDEN)


def test_doesnt_cast_shadow_survives_export_from_blender(clean, tmp_path):
    from tests.codec.fixtures_3ds import ids
    path, _ = _flag_file(tmp_path)
    _import(path)
    out = tmp_path / "out.3ds"
    _export(out)
    objs = {o.data: o for o in _parse(out).editor().find_all(ids.OBJECT)}
    assert objs["Box"].has(ids.OBJ_DOESNT_CAST)


def test_vertex_flags_and_object_colour_survive_blender(clean, tmp_path):
    from tests.codec.fixtures_3ds import ids
    path, vflags = _flag_file(tmp_path)
    _import(path)
    out = tmp_path / "out.3ds"
    _export(out)
    tri = {o.data: o for o in _parse(out).editor().find_all(ids.OBJECT)}["Box"].find(ids.N_TRI_OBJECT)
    # Blender may reorder nothing here: 8 vertices, no UV seams
    np.testing.assert_array_equal(tri.value(ids.POINT_FLAG_ARRAY).flags, vflags)
    assert tri.value(ids.MESH_COLOR) == 5


def test_material_fields_survive_a_round_trip_through_blender(clean, tmp_path):
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, ids, obj, trimesh
    from tests.codec.test_3ds_materials import full_material
    src = tmp_path / "mat.3ds"
    src.write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Full", range(12))]))],
                          materials=[full_material()]))
    _import(src)
    mat = bpy.data.objects["Box"].data.materials[0]
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    assert bsdf.inputs["Emission Strength"].default_value == pytest.approx(0.5)      # 0xA084 50%
    out = tmp_path / "out.3ds"
    _export(out)
    a = _parse(src).editor().find(ids.MAT_ENTRY)
    b = _parse(out).editor().find(ids.MAT_ENTRY)
    pct = {ids.MAT_SHININESS: 40, ids.MAT_SHIN2PCT: 30, ids.MAT_TRANSPARENCY: 25, ids.MAT_XPFALL: 10,
           ids.MAT_SELF_ILPCT: 50}
    for cid, v in pct.items():
        assert b.find(cid).value(ids.INT_PERCENT) == v, ids.name_of(cid)
    for cid in (ids.MAT_TWO_SIDE, ids.MAT_ADDITIVE, ids.MAT_WIRE):
        assert b.has(cid), ids.name_of(cid)
    assert b.value(ids.MAT_SHADING) == 2
    assert b.find(ids.MAT_DIFFUSE).value(ids.COLOR_24) == (255, 0, 51)
    for cid in ids.MAPS:
        if a.find(cid) is None:
            continue
        ma, mb = a.find(cid), b.find(cid)
        assert mb is not None, hex(cid)
        assert mb.value(ids.MAT_MAPNAME) == ma.value(ids.MAT_MAPNAME)
        assert mb.value(ids.INT_PERCENT) == ma.value(ids.INT_PERCENT)
        for f in (ids.MAT_MAP_TILING, ids.MAT_MAP_USCALE, ids.MAT_MAP_VSCALE, ids.MAT_MAP_UOFFSET,
                  ids.MAT_MAP_VOFFSET, ids.MAT_MAP_ANG):
            if ma.value(f) is not None:
                assert mb.value(f) == pytest.approx(ma.value(f), abs=1e-5), (hex(cid), hex(f))


def test_self_illumination_from_a_blender_material(clean, tmp_path):
    from tests.codec.fixtures_3ds import ids
    bpy.ops.mesh.primitive_cube_add()
    mat = bpy.data.materials.new("Glow")
    if bpy.app.version < (5, 0, 0):      # 5.0 materials always use nodes (use_nodes is deprecated)
        mat.use_nodes = True
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    bsdf.inputs["Emission Color"].default_value = (1, 1, 1, 1)
    bsdf.inputs["Emission Strength"].default_value = 0.3
    bpy.context.object.data.materials.append(mat)
    out = tmp_path / "glow.3ds"
    _export(out)
    assert _parse(out).editor().find(ids.MAT_ENTRY).find(ids.MAT_SELF_ILPCT).value(ids.INT_PERCENT) == 30


def test_implausible_frame_range_imports_with_the_keys_span(clean, tmp_path):
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, ids, kf_node, obj, track, trimesh
    node = kf_node(0, "Box")
    node.children[2] = track(ids.POS_TRACK, [0, 10], [[0, 0, 0], [1, 1, 1]])
    path = tmp_path / "seg.3ds"
    path.write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node], seg=(0, 0xFFFFFFFF)))
    _import(path)
    assert (bpy.context.scene.frame_start, bpy.context.scene.frame_end) == (0, 10)


def test_mirrored_object_exports_where_assimp_places_it_and_comes_back_outward(clean, tmp_path):
    from tests.codec.fixtures_3ds import assimp_objects, outward
    import mathutils
    bpy.ops.mesh.primitive_cube_add(size=1, location=(5, 0, 0))
    bpy.context.object.data.transform(mathutils.Matrix.Translation((0.5, 0.5, 0.5)))   # local 0..1: not symmetric
    bpy.context.object.scale = (-1, 1, 1)
    bpy.context.view_layer.update()
    before = _all_bounds()
    out = tmp_path / "mir.3ds"
    _export(out)
    ((_, p, tris, box),) = assimp_objects(out, tmp_path)
    np.testing.assert_allclose(box, before[0], atol=1e-4)
    assert outward(p, tris).all()
    bpy.ops.wm.read_homefile(use_empty=True)
    (ob,) = _import(out)
    np.testing.assert_allclose(np.array(_all_bounds()), np.array(before), atol=1e-4)
    assert np.linalg.det(np.array(ob.matrix_world)[:3, :3]) > 0
    np.testing.assert_allclose(before[0], (4, 0, 0, 5, 1, 1), atol=1e-5)
    m = np.array(ob.matrix_world)
    centre = np.array([4.5, 0.5, 0.5])
    for poly in ob.data.polygons:
        n = np.linalg.inv(m[:3, :3]).T @ np.array(poly.normal)
        c = m[:3, :3] @ np.array(poly.center) + m[:3, 3]
        assert n @ (c - centre) > 0
