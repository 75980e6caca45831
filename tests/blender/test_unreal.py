"""Unreal Engine 1 vertex meshes through the real operators, in real Blender."""
import shutil
import struct

import numpy as np
import pytest

import bpy
from tests.blender.helpers import cube_with_rising_key, evaluated_positions
from tests.codec.unreal_fixtures import (ASSETS, PCX_SKIN_ROWS, TETRA, a_file, d_file, pack_word, pcx_skin, tetra_pair,
                                         tri, write_set)


def _import(path, **kw):
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(path), **kw) == {"FINISHED"}
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(meshes) == 1
    return meshes[0]


def _export(path, **kw):
    assert bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(path), **kw) == {"FINISHED"}


def _bmp(path, w=2, h=2):
    """A tiny 24-bit BMP, written by hand."""
    row = (b"\x00\x00\xff" * w).ljust((w * 3 + 3) & ~3, b"\0")
    pixels = row * h
    header = struct.pack("<2sIHHI", b"BM", 54 + len(pixels), 0, 0, 54)
    info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    path.write_bytes(header + info + pixels)


@pytest.mark.parametrize("pick", ["box_d.3d", "box_a.3d"])
def test_import_corpus_box(clean, tmp_path, pick):
    for f in ("box_d.3d", "box_a.3d"):
        shutil.copy(ASSETS / f, tmp_path / f)
    ob = _import(tmp_path / pick)
    me = ob.data
    assert (len(me.vertices), len(me.polygons)) == (8, 12)
    keys = me.shape_keys.key_blocks
    assert len(keys) == 30 and keys[0].name == "Frame 0000"
    for name in ("ue_type", "ue_flags", "ue_color", "ue_texture", "ue_flags_byte"):
        assert me.attributes[name].domain == "FACE"
    tex = np.empty(12, np.int32)
    me.attributes["ue_texture"].data.foreach_get("value", tex)
    assert tex.tolist() == [1] * 12
    assert (clean.scene.frame_start, clean.scene.frame_end) == (0, 29)


def test_blender_frame_i_shows_file_frame_i(clean, tmp_path):
    d, a = tetra_pair(frames=5)                     # vertex 3 rises 1.0 (4 raw Z) per frame
    ob = _import(write_set(tmp_path, "tet", d, a))
    for frame in range(5):
        clean.scene.frame_set(frame)
        pos = evaluated_positions(ob)
        assert pos[3, 2] == pytest.approx(1.0 + frame)
        assert pos[1].tolist() == pytest.approx([1.0, 0.0, 0.0])
    assert me_action_name(ob) == "All"


def me_action_name(ob):
    ad = ob.data.shape_keys.animation_data
    return ad.action.name if ad and ad.action else ""


UC = r"""#exec MESH IMPORT MESH=anim ANIVFILE=MODELS\anim_a.3d DATAFILE=MODELS\anim_d.3d X=0 Y=0 Z=0
#exec MESH ORIGIN MESH=anim X=0 Y=0 Z=0 YAW=64
#exec MESH SEQUENCE MESH=anim SEQ=All STARTFRAME=0 NUMFRAMES=6
#exec MESH SEQUENCE MESH=anim SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving
#exec MESH NOTIFY MESH=anim SEQ=Walk TIME=0.5 FUNCTION=Footstep
#exec MESHMAP NEW MESHMAP=anim MESH=anim
#exec MESHMAP SCALE MESHMAP=anim X=0.25 Y=0.25 Z=0.5
#exec TEXTURE IMPORT NAME=Jskin FILE=Textures\skin.pcx GROUP=Skins
#exec MESHMAP SETTEXTURE MESHMAP=anim NUM=1 TEXTURE=Jskin
"""


def test_import_script_sequences_markers_transform_skin(clean, tmp_path):
    d, a = tetra_pair(frames=6)
    write_set(tmp_path / "Models", "anim", d, a, UC, uc_folder=tmp_path / "Classes")
    (tmp_path / "Textures").mkdir()
    _bmp(tmp_path / "Textures" / "SKIN.bmp")
    ob = _import(tmp_path / "Classes" / "anim.uc")
    # MESHMAP SCALE 0.25/0.25/0.5 over the default 1/8, 1/8, 1/4: x2; YAW=64 turns a quarter
    np.testing.assert_allclose(np.array(ob.scale), [2, 2, 2], atol=1e-6)
    np.testing.assert_allclose(np.array(ob.matrix_world)[:3, 0], [0, -2, 0], atol=1e-6)
    ad = ob.data.shape_keys.animation_data
    assert ad.action.name == "All"
    strips = [s for t in ad.nla_tracks for s in t.strips]
    walk = next(s for s in strips if s.name == "Walk")
    assert (walk.frame_start, walk.action.get("fps"), walk.action.get("ue_group")) == (1, 15.0, "Moving")
    assert [(m.name, m.frame) for m in walk.action.pose_markers] == [("Footstep", 3)]
    assert {(m.name, m.frame) for m in clean.scene.timeline_markers} == {("All", 0), ("Walk", 1)}
    mat = ob.material_slots[0].material
    assert mat.name == "Jskin"
    images = [n.image for n in mat.node_tree.nodes if n.type == "TEX_IMAGE"]
    assert images and images[0].filepath.lower().endswith("skin.bmp")


def test_corpus_round_trip_is_byte_identical(clean, tmp_path):
    for name in ("box", "mar_rifle"):
        bpy.ops.wm.read_homefile(use_empty=True)
        _import(ASSETS / f"{name}_d.3d")
        _export(tmp_path / f"{name}_d.3d")
        assert (tmp_path / f"{name}_d.3d").read_bytes() == (ASSETS / f"{name}_d.3d").read_bytes()
        assert (tmp_path / f"{name}_a.3d").read_bytes() == (ASSETS / f"{name}_a.3d").read_bytes()
        assert (tmp_path / f"{name}.uc").exists()


def test_weapon_triangle_round_trip(clean, tmp_path):
    tris = [tri(f, tex=1) for f in ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))] + [tri((3, 1, 0), type_=8, tex=1)]
    d = d_file(tris, 4)
    a = a_file([TETRA])
    ob = _import(write_set(tmp_path / "in", "w", d, a))
    assert [s.material.name for s in ob.material_slots][-1] == "UE1 weapon triangle"
    assert [p.hide for p in ob.data.polygons] == [False] * 4 + [True]
    _export(tmp_path / "out" / "w_d.3d")
    assert (tmp_path / "out" / "w_d.3d").read_bytes() == d


def test_export_bakes_shape_keys_and_object_animation(clean, tmp_path):
    ob = cube_with_rising_key(clean, 3)
    ob.location = (0, 0, 0)
    ob.keyframe_insert("location", frame=1)
    ob.location = (2, 0, 0)
    ob.keyframe_insert("location", frame=3)
    for fc in ob.animation_data.action.fcurves if hasattr(ob.animation_data.action, "fcurves") else []:
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"
    clean.scene.frame_start, clean.scene.frame_end = 1, 3
    clean.scene.frame_set(1)
    _export(tmp_path / "cube_d.3d", sequence_source="ALL")
    a = (tmp_path / "cube_a.3d").read_bytes()
    assert a[:4] == struct.pack("<HH", 3, 8 * 4)
    words = np.frombuffer(a, "<u4", offset=4).reshape(3, 8)
    v = next(i for i, p in enumerate(ob.data.vertices) if tuple(p.co) == (1.0, 1.0, 1.0))
    # frame 1: (1, 1, 1); frame 3: moved +2 X and +1 Z -> raw (x*8, -y*8, z*4)
    assert words[0, v] == pack_word(8, -8, 4)
    assert words[2, v] == pack_word(24, -8, 8)
    assert "SEQ=All STARTFRAME=0 NUMFRAMES=3" in (tmp_path / "cube.uc").read_text()


def test_export_refuses_too_many_vertices(clean, tmp_path):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=130, y_subdivisions=130)
    with pytest.raises(RuntimeError, match="at most 16383"):
        bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(tmp_path / "big_d.3d"))
    assert not list(tmp_path.iterdir())


def test_export_types_from_materials(clean, tmp_path):
    bpy.ops.mesh.primitive_plane_add()
    ob = clean.active_object
    solid, cloth = bpy.data.materials.new("solid"), bpy.data.materials.new("cloth")
    solid.use_backface_culling, cloth.use_backface_culling = True, False
    ob.data.materials.append(solid)
    ob.data.materials.append(cloth)
    ob.data.polygons[0].material_index = 1
    _export(tmp_path / "p_d.3d")
    d = (tmp_path / "p_d.3d").read_bytes()
    recs = np.frombuffer(d, np.uint8, 2 * 16, 48).reshape(2, 16)
    assert recs[:, 6].tolist() == [1, 1]            # the plane's face uses 'cloth': two-sided
    assert recs[:, 14].tolist() == [1, 1]           # texture number = material slot 1


def test_script_round_trip_keeps_sequences_rate_group_notifies(clean, tmp_path):
    d, a = tetra_pair(frames=6)
    write_set(tmp_path / "Models", "anim", d, a, UC, uc_folder=tmp_path / "Classes")
    _import(tmp_path / "Classes" / "anim.uc")
    _export(tmp_path / "Out" / "Classes" / "anim.uc")
    text = (tmp_path / "Out" / "Classes" / "anim.uc").read_text()
    assert "#exec MESH SEQUENCE MESH=anim SEQ=All STARTFRAME=0 NUMFRAMES=6" in text
    assert "#exec MESH SEQUENCE MESH=anim SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving" in text
    assert "#exec MESH NOTIFY MESH=anim SEQ=Walk TIME=0.5 FUNCTION=Footstep" in text
    assert "#exec MESH ORIGIN MESH=anim X=0 Y=0 Z=0 YAW=64\n" in text
    assert "#exec MESHMAP SCALE MESHMAP=anim X=0.25 Y=0.25 Z=0.5" in text
    assert "#exec TEXTURE IMPORT NAME=Jskin FILE=Textures\\skin.pcx GROUP=Skins" in text     # not found: kept as named
    assert (tmp_path / "Out" / "Models" / "anim_d.3d").read_bytes() == d
    assert (tmp_path / "Out" / "Models" / "anim_a.3d").read_bytes() == a


def test_export_bakes_an_armature(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=2.0, location=(0, 0, 1))
    cube = clean.active_object
    bpy.ops.object.armature_add(location=(0, 0, 0))
    arm = clean.active_object
    cube.parent = arm
    mod = cube.modifiers.new("Armature", "ARMATURE")
    mod.object = arm
    group = cube.vertex_groups.new(name=arm.data.bones[0].name)
    group.add(list(range(len(cube.data.vertices))), 1.0, "REPLACE")
    pb = arm.pose.bones[0]
    pb.location = (0, 0, 0)
    pb.keyframe_insert("location", frame=1)
    pb.location = (0, 1, 0)                         # bone Y is world Z for the default bone: up 1
    pb.keyframe_insert("location", frame=2)
    clean.scene.frame_start, clean.scene.frame_end = 1, 2
    clean.scene.frame_set(1)
    for ob in clean.scene.objects:
        ob.select_set(ob == cube)
    _export(tmp_path / "arm_d.3d", use_selection=True, sequence_source="ALL")
    a = (tmp_path / "arm_a.3d").read_bytes()
    assert a[:4] == struct.pack("<HH", 2, 8 * 4)
    words = np.frombuffer(a, "<u4", offset=4).reshape(2, 8)
    z = ((words.astype(np.int64) >> 22) & 0x3FF)
    z = z - ((z & 0x200) << 1)
    # mesh space (the object's own placement goes to the script): Z -1..1 at frame 1,
    # 0..2 at frame 2 once the bone lifts it (raw = z * 4)
    assert sorted(set(z[0].tolist())) == [-4, 4]
    assert sorted(set(z[1].tolist())) == [0, 8]


def test_blender_to_file_to_blender_keeps_frames_uvs_attributes(clean, tmp_path):
    bpy.ops.mesh.primitive_ico_sphere_add(subdivisions=1, radius=3.0)
    ob = clean.active_object
    me = ob.data
    rng = np.random.default_rng(3)
    n = len(me.polygons)
    want_attrs = {"ue_type": rng.integers(0, 5, n), "ue_flags": rng.integers(0, 16, n) * 16,
                  "ue_color": np.arange(n), "ue_texture": rng.integers(0, 4, n), "ue_flags_byte": rng.integers(0, 256, n)}
    for name, values in want_attrs.items():
        me.attributes.new(name, "INT", "FACE").data.foreach_set("value", values.astype(np.int32))
    uv = rng.uniform(0, 1, len(me.loops) * 2).astype(np.float32)
    me.uv_layers[0].uv.foreach_set("vector", uv)
    ob.shape_key_add(name="Basis")
    bumped = ob.shape_key_add(name="Bumped")
    co = np.empty(len(me.vertices) * 3, np.float32)
    me.vertices.foreach_get("co", co)
    bumped.data.foreach_set("co", co * 1.25)
    bumped.value = 0.0
    bumped.keyframe_insert("value", frame=0)
    bumped.value = 1.0
    bumped.keyframe_insert("value", frame=1)
    clean.scene.frame_start, clean.scene.frame_end = 0, 1
    want = []
    for f in (0, 1):
        clean.scene.frame_set(f)
        want.append(evaluated_positions(ob).copy())
    clean.scene.frame_set(0)
    _export(tmp_path / "ico_d.3d")
    bpy.ops.wm.read_homefile(use_empty=True)
    back = _import(tmp_path / "ico_d.3d")
    step = np.array([1 / 8, 1 / 8, 1 / 4])
    for f in (0, 1):
        bpy.context.scene.frame_set(f)
        assert (np.abs(evaluated_positions(back) - want[f]) <= step / 2 + 1e-5).all()
    got = np.empty(len(back.data.polygons), np.int32)
    for name, values in want_attrs.items():
        back.data.attributes[name].data.foreach_get("value", got)
        assert got.tolist() == values.tolist(), name
    uv_back = np.empty(len(back.data.loops) * 2, np.float32)
    back.data.uv_layers[0].uv.foreach_get("vector", uv_back)
    assert np.abs(uv_back - uv).max() <= 1 / 256 + 1e-6



def _raw(path):
    """(F, V, 3) signed raw coordinates of a standard _a.3d (the notes' unpacking)."""
    a = path.read_bytes()
    n, size = struct.unpack("<HH", a[:4])
    w = np.frombuffer(a, "<u4", n * size // 4, 4).reshape(n, -1).astype(np.int64)
    x, y, z = w & 0x7FF, (w >> 11) & 0x7FF, (w >> 22) & 0x3FF
    return np.stack([x - ((x & 0x400) << 1), y - ((y & 0x400) << 1), z - ((z & 0x200) << 1)], axis=-1)


def _seq_lines(path):
    return [line for line in path.read_text().splitlines() if "MESH SEQUENCE" in line]


def test_import_decodes_a_pcx_skin_and_export_names_it_again(clean, tmp_path):
    uc = ("#exec MESH IMPORT MESH=t ANIVFILE=MODELS\\t_a.3d DATAFILE=MODELS\\t_d.3d X=0 Y=0 Z=0\n"
          "#exec TEXTURE IMPORT NAME=Sk FILE=Textures\\skin.pcx GROUP=Skins\n"
          "#exec MESHMAP SETTEXTURE MESHMAP=t NUM=1 TEXTURE=Sk\n")
    d, a = tetra_pair(frames=1)
    write_set(tmp_path / "Models", "t", d, a, uc, uc_folder=tmp_path / "Classes")
    (tmp_path / "Textures").mkdir()
    (tmp_path / "Textures" / "skin.pcx").write_bytes(pcx_skin())
    ob = _import(tmp_path / "Classes" / "t.uc")
    image = next(n.image for n in ob.material_slots[0].material.node_tree.nodes if n.type == "TEX_IMAGE")
    assert tuple(image.size) == (3, 2)
    px = np.empty(3 * 2 * 4, np.float32)
    image.pixels.foreach_get(px)
    top_first = np.rint(px.reshape(2, 3, 4)[::-1, :, :3] * 255).astype(int)
    assert top_first.tolist() == [[list(c) for c in row] for row in PCX_SKIN_ROWS]
    _export(tmp_path / "Out" / "Classes" / "t.uc")
    text = (tmp_path / "Out" / "Classes" / "t.uc").read_text()
    assert "#exec TEXTURE IMPORT NAME=Sk FILE=Textures\\skin.pcx GROUP=Skins" in text


def _sliding_cube(clean):
    """A cube whose object X is the frame number (linear keys at 0 and 10), in a scene at 4..10."""
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    ob = clean.active_object
    for f in (0, 10):
        ob.location = (f, 0, 0)
        ob.keyframe_insert("location", index=0, frame=f)
    for c in _fcurves(ob):
        for k in c.keyframe_points:
            k.interpolation = "LINEAR"
    clean.scene.frame_start, clean.scene.frame_end = 4, 10
    clean.scene.frame_set(4)
    return ob


def _fcurves(ob):
    action = ob.animation_data.action
    if hasattr(action, "fcurves"):
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]


def test_explicit_frame_range_below_the_scene_start(clean, tmp_path):
    _sliding_cube(clean)
    _export(tmp_path / "a_d.3d", sequence_source="ALL", use_scene_range=False, frame_start=2, frame_end=6)
    raw = _raw(tmp_path / "a_a.3d")
    # frames 2..6; the object's place at the current frame 4 goes to the script, the rest to the vertices
    assert raw.shape[0] == 5
    assert [int(raw[i, :, 0].min()) for i in range(5)] == [8 * (-1 + f - 4) for f in range(2, 7)]
    _export(tmp_path / "b_d.3d", sequence_source="ALL", use_scene_range=False, frame_start=0, frame_end=2)
    assert [int(m) for m in _raw(tmp_path / "b_a.3d")[:, :, 0].min(axis=1)] == [8 * (-1 + f - 4) for f in range(3)]
    _export(tmp_path / "c_d.3d", sequence_source="ALL")                 # the scene's range
    assert _raw(tmp_path / "c_a.3d").shape[0] == 7
    assert "NUMFRAMES=7" in _seq_lines(tmp_path / "c.uc")[0]
    with pytest.raises(RuntimeError, match="before the start"):
        bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(tmp_path / "d_d.3d"), use_scene_range=False,
                                                frame_start=6, frame_end=2)
    with pytest.raises(RuntimeError, match="at most 65535 frames"):
        bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(tmp_path / "d_d.3d"), use_scene_range=False,
                                                frame_start=0, frame_end=70000)
    assert not (tmp_path / "d_d.3d").exists()


def test_export_to_a_name_with_spaces_writes_identifiers(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    _export(tmp_path / "my gun_d.3d")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["my gun.uc", "my gun_a.3d", "my gun_d.3d"]
    text = (tmp_path / "my gun.uc").read_text()
    assert "class my_gun extends Actor;" in text and "MESH=my gun" not in text
    bpy.ops.wm.read_homefile(use_empty=True)
    assert _import(tmp_path / "my gun.uc").data.shape_keys.key_blocks[0].name == "Frame 0000"


def test_user_action_sequence_gets_the_scene_rate(clean, tmp_path):
    ob = cube_with_rising_key(clean, 10)
    ob.data.shape_keys.animation_data.action.name = "Raise"
    clean.scene.frame_start, clean.scene.frame_end = 1, 10
    clean.scene.render.fps, clean.scene.render.fps_base = 30, 1.0
    _export(tmp_path / "seq_d.3d")
    assert _seq_lines(tmp_path / "seq.uc") == ["#exec MESH SEQUENCE MESH=seq SEQ=Raise STARTFRAME=0 NUMFRAMES=10 RATE=30"]


def test_imported_sequence_without_rate_exports_without_rate(clean, tmp_path):
    d, a = tetra_pair(frames=6)
    write_set(tmp_path / "Models", "anim", d, a, UC, uc_folder=tmp_path / "Classes")
    _import(tmp_path / "Classes" / "anim.uc")
    clean.scene.render.fps = 30
    _export(tmp_path / "Out" / "Classes" / "anim.uc")
    lines = _seq_lines(tmp_path / "Out" / "Classes" / "anim.uc")
    assert "#exec MESH SEQUENCE MESH=anim SEQ=All STARTFRAME=0 NUMFRAMES=6" in lines          # no RATE added
    assert "#exec MESH SEQUENCE MESH=anim SEQ=Walk STARTFRAME=1 NUMFRAMES=4 RATE=15 GROUP=Moving" in lines


def test_export_bakes_a_keyed_modifier(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    ob = clean.active_object
    md = ob.modifiers.new("push", "DISPLACE")             # no texture: every vertex moves (1 - 0.5) * strength
    md.direction = "Z"
    md.strength = 0.0
    md.keyframe_insert("strength", frame=1)
    md.strength = 2.0
    md.keyframe_insert("strength", frame=3)
    clean.scene.frame_start, clean.scene.frame_end = 1, 3
    want = []
    for f in (1, 2, 3):
        clean.scene.frame_set(f)
        want.append(evaluated_positions(ob).copy())
    clean.scene.frame_set(1)
    _export(tmp_path / "mod_d.3d", sequence_source="ALL")
    raw = _raw(tmp_path / "mod_a.3d")
    assert raw.shape == (3, 8, 3)
    assert raw[0, :, 2].tolist() == [int(z) for z in np.sign(want[0][:, 2]) * 4]    # z = +-1 at strength 0
    assert (raw[2, :, 2] - raw[0, :, 2]).tolist() == [4] * 8                           # up 1 at strength 2
    for f in range(3):
        np.testing.assert_allclose(raw[f] * [1 / 8, -1 / 8, 1 / 4], want[f], atol=0.07)


def test_export_bakes_a_constraint_to_an_animated_empty(clean, tmp_path):
    bpy.ops.object.empty_add(location=(0, 0, 0))
    target = clean.active_object
    target.keyframe_insert("location", frame=1)
    target.location = (0, 0, 2)
    target.keyframe_insert("location", frame=3)
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    cube = clean.active_object
    cube.constraints.new("COPY_LOCATION").target = target
    clean.scene.frame_start, clean.scene.frame_end = 1, 3
    clean.scene.frame_set(1)
    for ob in clean.scene.objects:
        ob.select_set(ob == cube)
    _export(tmp_path / "con_d.3d", use_selection=True, sequence_source="ALL")
    raw = _raw(tmp_path / "con_a.3d")
    # z = -1..1 at frame 1, 1..3 at frame 3 when the empty has risen 2 (raw = z * 4)
    assert sorted(set(raw[0, :, 2].tolist())) == [-4, 4]
    assert sorted(set(raw[2, :, 2].tolist())) == [4, 12]
    assert set(raw[:, :, 0].ravel().tolist()) == {-8, 8}


def test_mesh_origin_pitch_and_roll(clean, tmp_path):
    d, a = tetra_pair(frames=1)
    head = "#exec MESH IMPORT MESH=r ANIVFILE=r_a.3d DATAFILE=r_d.3d X=0 Y=0 Z=0\n"
    # PITCH=64 turns engine X toward Z: vertex 1 (raw X 8 = Blender (1, 0, 0)) ends up at +Z
    write_set(tmp_path / "p", "r", d, a, head + "#exec MESH ORIGIN MESH=r X=0 Y=0 Z=0 PITCH=64\n")
    ob = _import(tmp_path / "p" / "r_d.3d")
    np.testing.assert_allclose(evaluated_positions(ob, world=True)[1], [0, 0, 1], atol=1e-6)
    # ROLL=64 turns engine Z toward Y (the engine's roll matrix): vertex 2 (raw Y 8 = Blender
    # (0, -1, 0)) ends up at engine -Z
    bpy.ops.wm.read_homefile(use_empty=True)
    write_set(tmp_path / "q", "r", d, a, head + "#exec MESH ORIGIN MESH=r X=0 Y=0 Z=0 ROLL=64\n")
    ob = _import(tmp_path / "q" / "r_d.3d")
    np.testing.assert_allclose(evaluated_positions(ob, world=True)[2], [0, 0, -1], atol=1e-6)
    # all three written back as read
    bpy.ops.wm.read_homefile(use_empty=True)
    write_set(tmp_path / "s", "r", d, a, head + "#exec MESH ORIGIN MESH=r X=8 Y=-16 Z=4 YAW=16 PITCH=32 ROLL=-16\n")
    _import(tmp_path / "s" / "r_d.3d")
    _export(tmp_path / "out" / "r_d.3d")
    assert "#exec MESH ORIGIN MESH=r X=8 Y=-16 Z=4 YAW=16 PITCH=32 ROLL=-16" in (tmp_path / "out" / "r.uc").read_text()
    assert (tmp_path / "out" / "r_a.3d").read_bytes() == a
