"""Scene -> Blender -> Scene, field by field, in real Blender."""
import numpy as np
import pytest

import bpy
from addon.codec import axes
from addon.codec.scene import (Animation, Armature, Bone, Camera, Channel, Image, Light, Marker, Material, Mesh,
                               Node, Scene, ShapeKey, Skin, TextureSlot)


def cube_mesh(name="Cube"):
    p = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
    quads = np.array([[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]])
    tris = np.concatenate([quads[:, [0, 1, 2]], quads[:, [0, 2, 3]]])
    m = Mesh.from_triangles(name, p, tris)
    C = len(m.corners)
    m.uv_layers["UVMap"] = (np.arange(C * 2, dtype=np.float32).reshape(-1, 2) % 7) / 7
    m.uv_layers["Second"] = np.full((C, 2), 0.25, np.float32)
    m.colors["Col"] = np.tile(np.array([[1, 0.5, 0.25, 1]], np.float32), (C, 1))
    # flat normals per face
    v = p[m.corners].reshape(-1, 3, 3)
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    m.normals = np.repeat(n, 3, axis=0).astype(np.float32)
    m.face_material = np.array([0] * 6 + [1] * 6, np.int32)
    m.materials = [0, 1]
    m.face_attributes["smoothing_groups"] = np.arange(12, dtype=np.int32) * 3
    m.vertex_attributes["vertex_flags"] = np.arange(8, dtype=np.int32)
    m.shape_keys = [ShapeKey("Basis", p.copy()), ShapeKey("Up", p + [0, 0, 1], value=0.5)]
    return m


def rich_scene() -> Scene:
    s = Scene()
    s.images.append(Image("MISSING.PNG"))
    s.materials.append(Material("Red", base_color=(1, 0, 0), alpha=0.5, two_sided=False, blend="BLEND",
                                textures=[TextureSlot("base_color", 0, scale=(2, 3), offset=(0.1, 0.2),
                                                      rotation=0.5, strength=0.75, extras={"map_flags": 16})],
                                extras={"shininess": 0.25}))
    s.materials.append(Material("Green", base_color=(0, 1, 0)))
    s.meshes.append(cube_mesh())
    s.meshes[0].skin = Skin(0, np.array([[0, 1]] * 8, np.int32), np.array([[0.75, 0.25]] * 8, np.float32))
    s.cameras.append(Camera("Cam", lens=35.0, clip_start=0.5, clip_end=500.0))
    s.lights.append(Light("Lamp", "SPOT", color=(1, 0.5, 0), energy=200, spot_size=1.0, spot_blend=0.3))
    s.armatures.append(Armature("Rig", [Bone("root", -1, axes.compose([0, 0, 0], [1, 0, 0, 0], [1, 1, 1])),
                                        Bone("child", 0, axes.compose([0, 1, 0], [1, 0, 0, 0], [1, 1, 1]))]))
    rig = s.add_node(Node("Rig", "ARMATURE", 0))
    s.add_node(Node("Cube", "MESH", 0, parent=rig, matrix=axes.compose([1, 2, 3], [1, 0, 0, 0], [1, 1, 1]),
                    extras={"object_colour": 7}))
    s.add_node(Node("Cube.inst", "MESH", 0, matrix=axes.compose([5, 0, 0], [1, 0, 0, 0], [2, 2, 2])))
    target = s.add_node(Node("Cam.Target", "EMPTY", matrix=axes.compose([0, 10, 0], [1, 0, 0, 0], [1, 1, 1])))
    s.add_node(Node("Cam", "CAMERA", 0, target=target, matrix=axes.compose([0, -10, 2], [1, 0, 0, 0], [1, 1, 1])))
    s.add_node(Node("Lamp", "LIGHT", 0, matrix=axes.compose([3, 3, 3], [1, 0, 0, 0], [1, 1, 1]), hide=True))
    frames = np.arange(0, 11, dtype=np.float32)
    s.animations.append(Animation("Move", 0, 10, channels=[
        Channel(target, "location", frames, np.stack([frames, frames * 0, frames * 0 + 10], 1)),
        Channel(rig, "rotation_quaternion", frames, axes.axis_angle_to_quat([[0, 0, 1]] * 11, frames * 0.1),
                bone="child"),
    ], markers=[Marker("hit", 5)]))
    s.frame_start, s.frame_end = 0, 10
    s.markers = [Marker("start", 0)]
    return s


def test_build_then_collect_keeps_fields(clean, lgf):
    bridge = lgf.bridge
    scene = rich_scene()
    res = bridge.build_scene(scene, bridge.BuildOptions(), clean)
    assert [o.name for o in res.objects] == [n.name for n in scene.nodes]
    cube = bpy.data.objects["Cube"]
    inst = bpy.data.objects["Cube.inst"]
    assert cube.data == inst.data, "two nodes of one mesh must share the datablock"
    assert cube.parent == bpy.data.objects["Rig"]
    np.testing.assert_allclose(np.array(cube.matrix_world)[:3, 3], [1, 2, 3], atol=1e-6)
    assert len(cube.data.polygons) == 12 and len(cube.data.vertices) == 8
    assert [s.name for s in cube.material_slots] == ["Red", "Green"]
    assert bpy.data.objects["Lamp"].hide_render
    assert cube.data.shape_keys.key_blocks["Up"].value == pytest.approx(0.5)
    assert sorted(g.name for g in cube.vertex_groups) == ["child", "root"]
    assert cube.modifiers[0].type == "ARMATURE"
    assert bpy.data.objects["Cam"].constraints[0].target.name == "Cam.Target"
    clean.scene.frame_set(10)
    np.testing.assert_allclose(bpy.data.objects["Cam.Target"].location, [10, 0, 10], atol=1e-5)
    assert [m.name for m in clean.scene.timeline_markers] == ["start"]

    back = bridge.collect_scene(clean, bridge.CollectOptions(triangulate=True, use_keyframes=True))
    names = [n.name for n in back.nodes]
    assert sorted(names) == sorted(n.name for n in scene.nodes)
    bc = back.meshes[back.nodes[names.index("Cube")].data]
    src = scene.meshes[0]
    assert back.nodes[names.index("Cube")].data == back.nodes[names.index("Cube.inst")].data
    np.testing.assert_allclose(bc.positions, src.positions)
    np.testing.assert_array_equal(bc.corners, src.corners)
    for name in src.uv_layers:
        np.testing.assert_allclose(bc.uv_layers[name], src.uv_layers[name], atol=1e-6)
    np.testing.assert_allclose(bc.normals, src.normals, atol=1e-4)
    np.testing.assert_allclose(bc.colors["Col"], src.colors["Col"], atol=1e-6)
    np.testing.assert_array_equal(bc.face_material, src.face_material)
    np.testing.assert_array_equal(bc.face_attributes["smoothing_groups"], src.face_attributes["smoothing_groups"])
    np.testing.assert_array_equal(bc.vertex_attributes["vertex_flags"], src.vertex_attributes["vertex_flags"])
    assert [k.name for k in bc.shape_keys] == ["Basis", "Up"]
    np.testing.assert_allclose(bc.shape_keys[1].positions, src.shape_keys[1].positions)
    np.testing.assert_array_equal(np.sort(bc.skin.joints, 1), [[0, 1]] * 8)
    np.testing.assert_allclose(np.sort(bc.skin.weights, 1), [[0.25, 0.75]] * 8, atol=1e-6)

    red = next(m for m in back.materials if m.name == "Red")
    assert red.base_color == pytest.approx((1, 0, 0)) and red.alpha == pytest.approx(0.5)
    assert not red.two_sided and red.blend == "BLEND" and red.extras["shininess"] == pytest.approx(0.25)
    slot = red.textures[0]
    assert slot.kind == "base_color" and slot.scale == pytest.approx((2, 3)) and slot.offset == pytest.approx((0.1, 0.2))
    assert slot.rotation == pytest.approx(0.5) and slot.strength == pytest.approx(0.75)
    assert slot.extras["map_flags"] == 16 and back.images[slot.image].name == "MISSING.PNG"

    assert back.cameras[0].lens == pytest.approx(35) and back.cameras[0].clip_end == pytest.approx(500)
    assert back.lights[0].type == "SPOT" and back.lights[0].spot_size == pytest.approx(1.0)
    assert back.nodes[names.index("Cam")].target == names.index("Cam.Target")
    assert [b.name for b in back.armatures[0].bones] == ["root", "child"]
    assert back.armatures[0].bones[1].parent == 0
    np.testing.assert_allclose(back.armatures[0].bones[1].matrix[:3, 3], [0, 1, 0], atol=1e-6)
    assert back.nodes[names.index("Cube")].extras["object_colour"] == 7

    anim = back.animations[0]
    loc = next(c for c in anim.channels if c.target == names.index("Cam.Target") and c.path == "location")
    np.testing.assert_allclose(loc.values[:, 0], np.arange(11), atol=1e-5)
    rot = next(c for c in anim.channels if c.bone == "child" and c.path == "rotation_quaternion")
    np.testing.assert_allclose(rot.values, axes.axis_angle_to_quat([[0, 0, 1]] * 11, np.arange(11) * 0.1), atol=1e-5)
    assert [a.name for a in back.animations] == ["Move"]     # its two actions, one per object, baked together


def test_global_matrix_applies_to_roots_and_their_animation(clean, lgf):
    bridge = lgf.bridge
    s = Scene()
    n = s.add_node(Node("E", "EMPTY", matrix=axes.compose([1, 0, 0], [1, 0, 0, 0], [1, 1, 1])))
    s.animations.append(Animation("A", 0, 1, channels=[
        Channel(n, "location", np.array([0, 1], np.float32), np.array([[1, 0, 0], [2, 0, 0]], np.float32))]))
    G = np.diag([2.0, 2.0, 2.0, 1.0])
    G[:3, :3] = axes.quat_to_matrix(axes.axis_angle_to_quat([0, 0, 1], np.pi / 2)) * 2
    bridge.build_scene(s, bridge.BuildOptions(global_matrix=tuple(map(tuple, G))), clean)
    e = bpy.data.objects["E"]
    clean.scene.frame_set(1)
    np.testing.assert_allclose(np.array(e.matrix_world)[:3, 3], [0, 4, 0], atol=1e-5)
    assert e.scale[0] == pytest.approx(2)


def test_explicit_bezier_handles_and_target_up(clean, lgf):
    bridge = lgf.bridge
    s = Scene()
    target = s.add_node(Node("T", "EMPTY", matrix=axes.compose([0, 5, 0], [1, 0, 0, 0], [1, 1, 1])))
    s.cameras.append(Camera("C"))
    s.add_node(Node("C", "CAMERA", 0, target=target, target_up=True))
    frames = np.array([0, 10], np.float32)
    # a curve that overshoots: handles pull it up to well above both keys at the middle
    handles = np.array([[[[-3, 50], [3, 59]]], [[[7, 59], [13, 50]]]], np.float32)   # (N=2, D=1, left/right, xy)
    s.animations.append(Animation("A", 0, 10, channels=[
        Channel(target, "location", frames, np.array([[0, 5, 0], [0, 5, 0]], np.float32)),
        Channel(1, "data.lens", frames, np.array([[50], [50]], np.float32), interpolation="BEZIER",
                handles=handles)]))
    bridge.build_scene(s, bridge.BuildOptions(), clean)
    cam = bpy.data.objects["C"]
    assert cam.constraints[0].use_target_z
    clean.scene.frame_set(5)
    assert cam.data.lens == pytest.approx(50 + 9 * 0.75, abs=0.05)   # cubic Bezier at t = 1/2: 3/4 of the handle lift
    back = bridge.collect_scene(clean, bridge.CollectOptions(use_keyframes=False))
    assert back.nodes[[n.name for n in back.nodes].index("C")].target_up


def test_handles_follow_the_global_matrix(clean, lgf):
    bridge = lgf.bridge
    s = Scene()
    n = s.add_node(Node("E", "EMPTY"))
    frames = np.array([0, 10], np.float32)
    values = np.array([[0, 0, 0], [0, 0, 0]], np.float32)
    handles = np.zeros((2, 3, 2, 2), np.float32)
    handles[:, :, 0, 0], handles[:, :, 1, 0] = [[-3], [7]], [[3], [13]]
    handles[0, 0, 1, 1] = handles[1, 0, 0, 1] = 4.0          # x bulges to 3.0 mid-way
    s.animations.append(Animation("A", 0, 10, channels=[Channel(n, "location", frames, values, "",
                                                                "BEZIER", handles)]))
    G = np.eye(4)
    G[:3, :3] = axes.quat_to_matrix(axes.axis_angle_to_quat([0, 0, 1], np.pi / 2)) * 2   # turn x into y, double
    bridge.build_scene(s, bridge.BuildOptions(global_matrix=tuple(map(tuple, G))), clean)
    clean.scene.frame_set(5)
    np.testing.assert_allclose(bpy.data.objects["E"].location, [0, 6, 0], atol=1e-4)


def test_repeated_influences_add_up_and_odd_bone_names_survive(clean, lgf):
    bridge = lgf.bridge
    s = Scene()
    s.armatures.append(Armature("Rig", [Bone("", -1), Bone("same", 0, axes.compose([0, 1, 0], [1, 0, 0, 0], [1, 1, 1])),
                                        Bone("same", 1, axes.compose([0, 2, 0], [1, 0, 0, 0], [1, 1, 1]))]))
    m = cube_mesh()
    m.shape_keys, m.materials, m.face_material = [], [], None
    # bone 1 twice for every vertex: 0.25 + 0.25 must come out as 0.5
    m.skin = Skin(0, np.array([[1, 0, 1, 2]] * 8, np.int32), np.array([[0.25, 0.4, 0.25, 0.1]] * 8, np.float32))
    s.meshes.append(m)
    rig = s.add_node(Node("Rig", "ARMATURE", 0))
    s.add_node(Node("Cube", "MESH", 0, parent=rig))
    frames = np.array([0, 1], np.float32)
    s.animations.append(Animation("A", 0, 1, channels=[
        Channel(rig, "location", frames, np.array([[0, 0, 0], [0, 0, 3]], np.float32), bone="same")]))
    bridge.build_scene(s, bridge.BuildOptions(), clean)
    arm = bpy.data.objects["Rig"]
    names = [b.name for b in arm.data.bones]
    assert len(set(names)) == 3 and all(names)
    cube = bpy.data.objects["Cube"]
    w = {cube.vertex_groups[g.group].name: g.weight for g in cube.data.vertices[0].groups}
    assert w[names[1]] == pytest.approx(0.5) and w[names[0]] == pytest.approx(0.4) and w[names[2]] == pytest.approx(0.1)
    clean.scene.frame_set(1)
    assert arm.pose.bones[names[1]].location[2] == pytest.approx(3)     # the first bone of that name
    back = bridge.collect_scene(clean, bridge.CollectOptions(use_keyframes=False))
    assert [b.name for b in back.armatures[0].bones] == ["", "same", "same"]
    bc = back.meshes[back.nodes[[n.name for n in back.nodes].index("Cube")].data]
    np.testing.assert_allclose(bc.skin.weights[0][:3], [0.5, 0.4, 0.1], atol=1e-6)
    np.testing.assert_array_equal(bc.skin.joints[0][:3], [1, 0, 2])


def test_decoded_pixels_become_a_packed_image(clean, lgf):
    s = Scene()
    px = np.zeros((2, 3, 4), np.float32)
    px[..., 3] = 1
    px[0, 0, 0] = 1.0                       # bottom-left red
    s.images.append(Image("SKIN.PCX", "/somewhere/skin.pcx", pixels=px))
    s.materials.append(Material("M", textures=[TextureSlot("base_color", 0)]))
    m = cube_mesh()
    m.materials, m.face_material, m.shape_keys = [0], None, []
    s.meshes.append(m)
    s.add_node(Node("Cube", "MESH", 0))
    lgf.bridge.build_scene(s, lgf.bridge.BuildOptions(), clean)
    image = bpy.data.images[0]
    assert tuple(image.size) == (3, 2) and image.packed_file is not None
    np.testing.assert_allclose(np.array(image.pixels[:4]), [1, 0, 0, 1])
    back = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions(use_keyframes=False))
    assert back.images[0].name == "SKIN.PCX" and back.images[0].filepath == "/somewhere/skin.pcx"


def test_absurd_frame_ranges_are_clamped_to_blenders_limits(clean, lgf):
    s = Scene(frame_start=0, frame_end=0xFFFFFFFF)
    lgf.bridge.build_scene(s, lgf.bridge.BuildOptions(), clean)
    assert clean.scene.frame_start == 0 and clean.scene.frame_end == 1_048_574
