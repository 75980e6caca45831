"""Ultimate 3D (.u3d) through the real operators, in real Blender."""
import numpy as np
import pytest

import bpy
from tests.blender.helpers import evaluated_positions
from tests.codec import u3d_fixtures as fx
from tests.codec.test_ultimate3d_model import frames_v2, full_skinned_v2


def _import(path, **kw):
    assert bpy.ops.import_scene.ultimate3d(filepath=str(path), **kw) == {"FINISHED"}


def _export(path, **kw):
    assert bpy.ops.export_scene.ultimate3d(filepath=str(path), **kw) == {"FINISHED"}


def test_cube_imports_outward_and_up(clean, tmp_path):
    (tmp_path / "cube.u3d").write_bytes(fx.cube_file())
    _import(tmp_path / "cube.u3d")
    ob = bpy.data.objects["cube"]
    me = ob.data
    normals = np.empty(len(me.polygons) * 3, np.float32)
    me.polygons.foreach_get("normal", normals)
    centres = np.empty(len(me.polygons) * 3, np.float32)
    me.polygons.foreach_get("center", centres)
    assert np.all(np.sum(normals.reshape(-1, 3) * centres.reshape(-1, 3), 1) > 0)     # outward
    top = [p for p in me.polygons if p.center.z > 0.99]
    assert len(top) == 2 and all(p.normal.z > 0.99 for p in top)


def test_frames_lods_and_shape_keys(clean, tmp_path):
    (tmp_path / "f.u3d").write_bytes(frames_v2())
    _import(tmp_path / "f.u3d")
    hi, lo = bpy.data.objects["hi"], bpy.data.objects["lo"]
    assert "LOD1" in [c.name for c in lo.users_collection] and lo.hide_render
    assert lo["u3d_lod"] == 1 and hi["u3d_lod_max_camera_distance"] == 10.0
    keys = hi.data.shape_keys.key_blocks
    assert [k.name for k in keys] == ["Basis", "frame_1"]
    sc = bpy.context.scene
    for f, scale in ((0, 1.0), (1, 2.0)):
        sc.frame_set(f)
        assert evaluated_positions(hi, world=True)[1] == pytest.approx([scale, 0, 0])


def test_skinned_model_with_actions(clean, tmp_path):
    (tmp_path / "s.u3d").write_bytes(full_skinned_v2())
    _import(tmp_path / "s.u3d")
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    assert [b.name for b in arm.data.bones] == ["root", "child"]
    assert arm.data.bones["child"].parent.name == "root"
    assert arm.data.bones["child"]["u3d_bone_frame"] == 3.0
    body = bpy.data.objects["skin"]
    assert {g.name for g in body.vertex_groups} == {"root", "child"}
    assert any(m.type == "ARMATURE" and m.object == arm for m in body.modifiers)
    assert {a.name for a in bpy.data.actions} >= {"walk", "run"}
    walk = bpy.data.actions["walk"]
    assert walk.use_frame_range and tuple(walk.frame_range) == (0.0, 2.0)
    assert {m.name for m in bpy.context.scene.timeline_markers} == {"walk", "walk_end", "run", "run_end"}
    mat = bpy.data.materials["second"]
    assert mat["u3d_shader_pack"] == "010203"


def test_export_round_trip_keeps_positions_and_ranges(clean, tmp_path):
    (tmp_path / "s.u3d").write_bytes(full_skinned_v2())
    _import(tmp_path / "s.u3d")
    sc = bpy.context.scene
    before = {}
    for f in range(6):
        sc.frame_set(f)
        before[f] = evaluated_positions(bpy.data.objects["skin"], world=True)
    _export(tmp_path / "out.u3d")
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(tmp_path / "out.u3d")
    ob = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    for f in range(6):
        bpy.context.scene.frame_set(f)
        got = evaluated_positions(ob, world=True)
        assert np.sort(got, 0) == pytest.approx(np.sort(before[f], 0), abs=1e-4), f
    assert {a.name for a in bpy.data.actions} >= {"walk", "run"}


def test_password(clean, tmp_path):
    (tmp_path / "c.u3d").write_bytes(fx.cube_file())
    _import(tmp_path / "c.u3d")
    _export(tmp_path / "e.u3d", password="sesame")
    assert b"$U3D_MESH" not in (tmp_path / "e.u3d").read_bytes()
    bpy.ops.wm.read_homefile(use_empty=True)
    with pytest.raises(RuntimeError, match="wrong password"):
        bpy.ops.import_scene.ultimate3d(filepath=str(tmp_path / "e.u3d"), password="nope")
    _import(tmp_path / "e.u3d", password="sesame")
    assert len([o for o in bpy.context.scene.objects if o.type == "MESH"]) == 1


def test_v1_export_and_import(clean, tmp_path):
    (tmp_path / "c.u3d").write_bytes(fx.cube_file())
    _import(tmp_path / "c.u3d")
    _export(tmp_path / "v1.u3d", version="1.0")
    assert (tmp_path / "v1.u3d").read_bytes().startswith(b"U3DModelFile\0")
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(tmp_path / "v1.u3d")
    ob = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    assert len(ob.data.polygons) == 12


def test_lod_collections_export(clean, tmp_path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    bpy.ops.mesh.primitive_cube_add()
    hi = bpy.context.active_object
    hi.name = "Hi"
    bpy.ops.mesh.primitive_cube_add()
    lo = bpy.context.active_object
    lo.name = "Lo"
    coll = bpy.data.collections.new("LOD1")
    bpy.context.scene.collection.children.link(coll)
    for c in lo.users_collection:
        c.objects.unlink(lo)
    coll.objects.link(lo)
    _export(tmp_path / "l.u3d")
    model = parse((tmp_path / "l.u3d").read_bytes(), Warnings())
    assert sorted((m.name, m.i_lod) for m in model.meshes) == [("Hi", 0), ("Lo", 1)]
    assert model.header.n_lod == 2


def test_frame_animation_export_round_trip(clean, tmp_path):
    (tmp_path / "f.u3d").write_bytes(frames_v2())
    _import(tmp_path / "f.u3d")
    _export(tmp_path / "out.u3d")
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    model = parse((tmp_path / "out.u3d").read_bytes(), Warnings())
    hi = [m for m in model.meshes if m.name == "hi"]
    assert [m.i_frame for m in hi] == [0, 1] and model.header.n_lod == 2
    # frame 1 doubles the triangle (U3D X 2 at vertex 1)
    assert sorted(hi[1].positions[:, 0].tolist()) == [0.0, 0.0, 2.0]


def test_bone_parented_mesh_follows_its_bone(clean, tmp_path):
    data = (fx.file_header() + fx.model_header(n_mesh=1, n_bone=1, n_frame=2) + fx.mesh("blade")
            + fx.material() + fx.bone(0, "hand", meshes=[0], matrices=[fx.translation(0, 0, 2)],
                                      tkeys=[(0, (0, 0, -2)), (1, (3, 0, -2))]))
    (tmp_path / "b.u3d").write_bytes(data)
    _import(tmp_path / "b.u3d")
    ob = bpy.data.objects["blade"]
    assert ob.parent_type == "BONE" and ob.parent_bone == "hand"
    sc = bpy.context.scene
    sc.frame_set(0)
    # MeshToWorld = MeshToBone * BoneToWorld: at frame 0 the mesh sits where the file put it
    assert evaluated_positions(ob, world=True)[1] == pytest.approx([1, 0, 0], abs=1e-5)
    sc.frame_set(1)
    # the bone moved by U3D X 3 = Blender x 3
    assert evaluated_positions(ob, world=True)[1] == pytest.approx([4, 0, 0], abs=1e-5)


def _corner_table(ob):
    """Per corner: world position, normal and UV, sorted for comparison."""
    me = ob.data
    n_l = len(me.loops)
    vi = np.empty(n_l, np.int32)
    me.loops.foreach_get("vertex_index", vi)
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    nrm = np.empty(n_l * 3, np.float32)
    me.corner_normals.foreach_get("vector", nrm)
    uv = np.empty(n_l * 2, np.float32)
    me.uv_layers[0].uv.foreach_get("vector", uv)
    rows = np.concatenate([co.reshape(-1, 3)[vi], nrm.reshape(-1, 3), np.round(uv.reshape(-1, 2), 5)], 1)
    # export triangulates: compare the distinct corners, not their count
    _, first = np.unique(rows[:, [0, 1, 2, 6, 7]], axis=0, return_index=True)
    rows = rows[first]
    return rows[np.lexsort(rows[:, [7, 6, 2, 1, 0]].T)]


@pytest.mark.parametrize("version,max_deg", [("2.0", 0.01), ("1.0", 3.5)])
def test_blender_round_trip_positions_normals_uvs(clean, tmp_path, version, max_deg):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=12, ring_count=8, location=(0, 0, 0))
    ob = bpy.context.active_object
    bpy.ops.object.shade_smooth()
    mat = bpy.data.materials.new("Red")
    mat.diffuse_color = (1, 0, 0, 1)
    ob.data.materials.append(mat)
    before = _corner_table(ob)
    _export(tmp_path / "s.u3d", version=version)
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(tmp_path / "s.u3d")
    ob = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    after = _corner_table(ob)
    assert after.shape == before.shape
    assert np.array_equal(after[:, :3], before[:, :3])                       # float32 positions, exactly
    a, b = after[:, 3:6].astype(np.float64), before[:, 3:6].astype(np.float64)
    angle = np.degrees(np.arctan2(np.linalg.norm(np.cross(a, b), axis=1), np.sum(a * b, 1)))
    assert angle.max() < max_deg
    assert after[:, 6:] == pytest.approx(before[:, 6:], abs=1e-5)
    assert ob.active_material is not None and ob.active_material.name.startswith("Red")


def test_texture_coordinate_sets_survive_blender(clean, tmp_path):
    (tmp_path / "s.u3d").write_bytes(full_skinned_v2())
    _import(tmp_path / "s.u3d")
    me = bpy.data.objects["skin"].data
    assert [uv.name for uv in me.uv_layers] == ["UVMap"]
    assert me.attributes["u3d_texcoord1"].data_type == "FLOAT_VECTOR"
    _export(tmp_path / "out.u3d")
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    model = parse((tmp_path / "out.u3d").read_bytes(), Warnings())
    # the same 2, 3, 1 and 4 dimensional sets, in the same slots
    assert model.header.tex_coord_dimension == (2, 3, 1, 4, 0, 0, 0, 0)
    assert model.meshes[0].valid_tangent_frames == 1


def test_operator_properties_are_the_codec_options(clean):
    import dataclasses
    from addon.codec.formats.ultimate3d.options import ExportOptions, ImportOptions
    for op, cls in ((bpy.ops.import_scene.ultimate3d, ImportOptions), (bpy.ops.export_scene.ultimate3d, ExportOptions)):
        props = op.get_rna_type().properties
        for f in dataclasses.fields(cls):
            assert f.name in props and props[f.name].default == f.default, f.name
    assert bpy.ops.import_scene.ultimate3d.get_rna_type().properties["password"].subtype == "PASSWORD"


def test_bone_parented_export_from_a_posed_frame(clean, tmp_path):
    data = (fx.file_header() + fx.model_header(n_mesh=1, n_bone=1, n_frame=2) + fx.mesh("blade")
            + fx.material() + fx.bone(0, "hand", meshes=[0], matrices=[fx.translation(0, 0, 2)],
                                      tkeys=[(0, (0, 0, -2)), (1, (3, 0, -2))]))
    (tmp_path / "b.u3d").write_bytes(data)
    _import(tmp_path / "b.u3d")
    bpy.context.scene.frame_set(1)            # posed: the bone is 3 units away from its rest
    _export(tmp_path / "out.u3d")
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(tmp_path / "out.u3d")
    ob = bpy.data.objects["blade"]
    for frame, x in ((0, 1.0), (1, 4.0)):
        bpy.context.scene.frame_set(frame)
        assert evaluated_positions(ob, world=True)[1] == pytest.approx([x, 0, 0], abs=1e-5)


def _parse(path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    return parse(path.read_bytes(), Warnings())


def _weights(ob) -> list[dict[str, float]]:
    """Per vertex: {vertex group name: weight}, read from Blender."""
    names = [g.name for g in ob.vertex_groups]
    return [{names[g.group]: round(g.weight, 5) for g in v.groups if g.weight > 0} for v in ob.data.vertices]


def _fcurve_paths(action) -> set[str]:
    if hasattr(action, "layers") and len(action.layers):
        return {fc.data_path for layer in action.layers for strip in layer.strips
                for bag in strip.channelbags for fc in bag.fcurves}
    return {fc.data_path for fc in action.fcurves}


def _material_state(mat) -> dict:
    """What the importer put in a material: colours, specular power, and each texture stage."""
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    stages = sorted((int(n["u3d_stage"]), n.label, n.image.name if n.image else "", int(n["u3d_color_op"]),
                     int(n["u3d_tex_coord_set"]), list(n["u3d_files"]))
                    for n in mat.node_tree.nodes if n.type == "TEX_IMAGE" and "u3d_stage" in n)
    return {"base": tuple(round(c, 5) for c in bsdf.inputs["Base Color"].default_value[:3]),
            "ambient": [round(c, 5) for c in mat["u3d_ambient"]],
            "specular": [round(c, 5) for c in mat["u3d_specular"]],
            "power": mat["u3d_specular_power"], "stages": stages}


def test_skin_weights_materials_and_stages_after_import_and_round_trip(clean, tmp_path):
    (tmp_path / "s.u3d").write_bytes(full_skinned_v2())
    _import(tmp_path / "s.u3d")
    ob = bpy.data.objects["skin"]
    # indices 0, 1, 0 with weights 0.5, 0.25 and the implied 0.25: root 0.5 + 0.25, child 0.25
    assert _weights(ob) == [{"root": 0.75, "child": 0.25}] * 4
    assert [s.material.name for s in ob.material_slots] == ["first", "second"]
    assert [p.material_index for p in ob.data.polygons] == [0, 1, 1]
    first, second = (_material_state(bpy.data.materials[n]) for n in ("first", "second"))
    assert first["base"] == (0.8, 0.6, 0.4) and first["ambient"] == [0.1, 0.1, 0.1, 1.0]
    assert first["specular"] == [0.5, 0.5, 0.5, 1.0] and first["power"] == 16.0
    assert first["stages"] == [(0, "bump", "h.bmp", 1, 0, ["h.bmp"])]
    assert second["stages"] == [(0, "base_color", "*wall.png", 5, 0, ["*wall.png"]),
                                (1, "environment", "c0.dds", 4, 0x10000, [f"c{i}.dds" for i in range(6)])]
    before = {"first": first, "second": second}
    _export(tmp_path / "out.u3d")
    mesh = _parse(tmp_path / "out.u3d").meshes[0]
    # the summed influence in the file: root 0.75 stored, child 0.25 implied
    assert mesh.skin_weights.tolist() == [[0.75]] * 4 and mesh.bone_indices[:, :2].tolist() == [[0, 1]] * 4
    bpy.ops.wm.read_homefile(use_empty=True)
    _import(tmp_path / "out.u3d")
    ob = bpy.data.objects["skin"]
    assert _weights(ob) == [{"root": 0.75, "child": 0.25}] * 4
    assert [s.material.name for s in ob.material_slots] == ["first", "second"]
    assert sorted(p.material_index for p in ob.data.polygons) == [0, 1, 1]
    assert {n: _material_state(bpy.data.materials[n]) for n in ("first", "second")} == before


def test_frames_with_their_own_triangles_import_and_export(clean, tmp_path, capsys):
    from tests.codec.test_ultimate3d_model import frames_topology_v2
    (tmp_path / "f.u3d").write_bytes(frames_topology_v2())
    _import(tmp_path / "f.u3d")
    obs = [bpy.data.objects[n] for n in ("a", "a_frame1", "a_frame2")]
    assert [[s.material.name for s in o.material_slots] for o in obs] == [["mat"], ["m1"], ["mat"]]
    assert sorted(obs[1].data.polygons[0].vertices) == [1, 2, 3]
    sc = bpy.context.scene
    for f in range(3):
        sc.frame_set(f)
        assert [o.hide_render for o in obs] == [i != f for i in range(3)], f
    sc.frame_set(0)
    capsys.readouterr()
    _export(tmp_path / "out.u3d")
    assert "not exported" not in capsys.readouterr().out      # the visibility keys are the frames themselves
    model = _parse(tmp_path / "out.u3d")
    assert model.header.n_frame == 3 and model.header.n_mesh_per_frame == 1
    assert [(m.name, m.i_frame, m.triangles_owned) for m in model.meshes] == [("a", 0, 1), ("a", 1, 1), ("a", 2, 1)]
    assert model.meshes[1].triangles.tolist() == [[1, 3, 2]] and model.meshes[1].triangle_material.tolist() == [1]
    assert model.meshes[2].positions[:, 2].tolist() == [2.0] * 4


@pytest.mark.parametrize("names,expect", [(("", ""), ["bone0", "bone1"]), (("same", "same"), ["same", "same.1"])])
def test_empty_and_repeated_bone_names(clean, tmp_path, names, expect):
    from tests.codec.test_ultimate3d_model import nameless_bones_v2
    (tmp_path / "n.u3d").write_bytes(nameless_bones_v2(*names))
    _import(tmp_path / "n.u3d")
    arm = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    assert [b.name for b in arm.data.bones] == expect
    assert arm.data.bones[expect[1]].parent.name == expect[0]
    # weight 0.25 on the first bone, the implied 0.75 on the second
    assert _weights(bpy.data.objects["s"]) == [{expect[0]: 0.25, expect[1]: 0.75}] * 3
    paths = _fcurve_paths(arm.animation_data.action)
    assert all(p.startswith("pose.bones[") for p in paths)          # no channel of the armature object
    assert f'pose.bones["{expect[1]}"].location' in paths
    bpy.context.scene.frame_set(1)
    # the key moves the second bone by U3D X 5 - 0
    assert arm.pose.bones[expect[1]].location.length > 1
    bpy.context.scene.frame_set(0)
    _export(tmp_path / "out.u3d")
    assert [b.name for b in _parse(tmp_path / "out.u3d").bones] == list(names)


def test_password_bytes(clean, tmp_path):
    (tmp_path / "c.u3d").write_bytes(fx.cube_file())
    _import(tmp_path / "c.u3d")
    with pytest.raises(RuntimeError, match="at most 16 bytes"):
        bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "long.u3d"), password="é" * 9)
    assert not (tmp_path / "long.u3d").exists()
    _export(tmp_path / "k.u3d", password="ключ")
    bpy.ops.wm.read_homefile(use_empty=True)
    with pytest.raises(RuntimeError, match="at most 16 bytes"):
        bpy.ops.import_scene.ultimate3d(filepath=str(tmp_path / "k.u3d"), password="x" * 17)
    _import(tmp_path / "k.u3d", password="ключ")
    assert len([o for o in bpy.context.scene.objects if o.type == "MESH"]) == 1


def test_object_animation_is_reported_and_ranges_fit(clean, tmp_path, capsys):
    bpy.ops.mesh.primitive_cube_add()
    ob = bpy.context.active_object
    ob.keyframe_insert("location", frame=0)
    ob.location.x = 3
    ob.keyframe_insert("location", frame=10)
    sc = bpy.context.scene
    sc.timeline_markers.new("idle", frame=0)
    sc.timeline_markers.new("move", frame=5)
    capsys.readouterr()
    _export(tmp_path / "c.u3d")
    out = capsys.readouterr().out
    assert "'Cube'" in out and "not exported" in out
    model = _parse(tmp_path / "c.u3d")
    assert all(0 <= a <= b < model.header.n_frame for _, a, b in model.actions)


def test_default_import_welds_a_hard_cube_with_sharp_edges(clean, tmp_path):
    """U3D stores a vertex per (point, normal, UV): a hard-edged cube becomes 8 vertices, its edges sharp edges."""
    import numpy as np
    from addon import codec
    from addon.codec.scene import Mesh, Node, Scene
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS
    pts = CUBE_POINTS[CUBE_TRIS.ravel()]
    m = Mesh.from_triangles("Cube", pts, np.arange(36).reshape(-1, 3))
    p = pts.reshape(-1, 3, 3)
    fn = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    m.normals = np.repeat(fn / np.linalg.norm(fn, axis=1, keepdims=True), 3, axis=0).astype(np.float32)
    path = tmp_path / "cube.u3d"
    codec.save(Scene(meshes=[m], nodes=[Node("Cube", "MESH", 0)]), path)
    counts = {}
    for mode in ("KEEP", "EXACT", "SHARP_EDGES"):
        bpy.ops.wm.read_homefile(use_empty=True)
        assert bpy.ops.import_scene.ultimate3d(filepath=str(path), normals=mode) == {"FINISHED"}
        (ob,) = [o for o in bpy.context.scene.objects if o.type == "MESH"]
        me = ob.data
        counts[mode] = (len(me.vertices), me.has_custom_normals)
        n = np.empty(len(me.loops) * 3, np.float32)
        me.corner_normals.foreach_get("vector", n)
        f = np.empty(len(me.polygons) * 3, np.float32)
        me.polygon_normals.foreach_get("vector", f)
        # a hard-edged cube every way: each corner carries its face's normal
        np.testing.assert_allclose(n.reshape(-1, 3), np.repeat(f.reshape(-1, 3), 3, axis=0), atol=1e-3)
    assert counts == {"KEEP": (36, True), "EXACT": (8, True), "SHARP_EDGES": (8, False)}   # stored: 3 per face
    sharp = np.empty(len(me.edges), bool)
    me.attributes["sharp_edge"].data.foreach_get("value", sharp)
    assert int(sharp.sum()) == 12                    # the cube's edges; the faces' diagonals stay smooth
    out = tmp_path / "back.u3d"
    assert bpy.ops.export_scene.ultimate3d(filepath=str(out)) == {"FINISHED"}
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.ultimate3d(filepath=str(out), normals="KEEP")
    (ob,) = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(ob.data.vertices) == 24 and len(ob.data.polygons) == 12     # split again where the file needs it


def test_ranges_sharing_a_frame_play_the_files_frames(clean, tmp_path):
    """"bend" [0, 10] and "unbend" [10, 20] share frame 10: Blender frame f shows the file's frame f
    (the bone's translation keys, interpolated linearly, as the document says), and the ranges go back
    out as they came."""
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    (tmp_path / "b.u3d").write_bytes(fx.bend_file())
    _import(tmp_path / "b.u3d")
    sc = bpy.context.scene
    assert (sc.frame_start, sc.frame_end) == (0, 20)
    leaf = bpy.data.objects["leaf"]
    rest = np.array([(0, 0, 0), (1, 0, 0), (0, 0, 1)], np.float64)     # the file's triangle, Blender axes
    up = np.interp(np.arange(21), *zip(*fx.BEND_KEYS))                  # U3D Y is Blender z
    for f in range(21):
        sc.frame_set(f)
        got = evaluated_positions(leaf, world=True)
        assert np.sort(got, 0) == pytest.approx(np.sort(rest + [0, 0, up[f]], 0), abs=1e-5), f
    _export(tmp_path / "out.u3d")
    model = parse((tmp_path / "out.u3d").read_bytes(), Warnings())
    assert model.actions == [("bend", 0, 10), ("unbend", 10, 20)] and model.header.n_frame == 21


def test_frame_ranges_sharing_a_frame_show_each_file_frame(clean, tmp_path):
    """Frame animation (no bones, one mesh per frame) with "open" [0, 1] and "close" [1, 2]: Blender
    frame f shows the file's mesh of frame f."""
    tri = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    scales = (1.0, 2.0, 3.0)
    meshes = b"".join(fx.mesh("door", [(x * k, y, z) for x, y, z in tri], frame=f, owned=int(f == 0))
                      for f, k in enumerate(scales))
    (tmp_path / "d.u3d").write_bytes(fx.file_header() + fx.model_header(n_mesh=3, n_frame=3) + meshes
                                     + fx.material() + fx.actions([("open", 0, 1), ("close", 1, 2)]))
    _import(tmp_path / "d.u3d")
    sc = bpy.context.scene
    assert sc.frame_end == 2
    door = bpy.data.objects["door"]
    for f, k in enumerate(scales):
        sc.frame_set(f)
        assert evaluated_positions(door, world=True)[:, 0].max() == pytest.approx(k), f
