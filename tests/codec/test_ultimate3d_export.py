"""Scene -> .u3d -> Scene: what an export keeps, in v2.0 and v1.0, and what it refuses."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import load, save
from addon.codec.axes import axis_angle_to_quat, compose, quat_to_matrix
from addon.codec.errors import UnsupportedFeature, Warnings
from addon.codec.formats.ultimate3d.read import parse
from addon.codec.scene import (Animation, Armature, Bone, Channel, Image, Marker, Material, Mesh, Node, Scene,
                               ShapeKey, Skin, TextureSlot)
from tests.codec import u3d_fixtures as fx


def grid(name="Grid", n=6, z=0.0) -> Mesh:
    """A smooth bumpy grid: one normal per vertex, so no vertex is split."""
    x, y = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n))
    pos = np.stack([x.ravel(), y.ravel(), z + 0.2 * np.sin(3 * x.ravel()) * np.cos(2 * y.ravel())], 1)
    quads = [[i * n + j, i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j] for i in range(n - 1) for j in range(n - 1)]
    m = Mesh(name=name, positions=pos.astype(np.float32), corners=np.array(quads, np.uint32).ravel(),
             faces=np.arange(0, 4 * len(quads), 4, dtype=np.uint32))
    rng = np.random.default_rng(1)
    vn = rng.normal(size=(len(pos), 3))
    vn /= np.linalg.norm(vn, axis=1, keepdims=True)
    m.normals = vn[m.corners].astype(np.float32)
    m.uv_layers["UVMap"] = (pos[:, :2] * 0.5 + 0.5)[m.corners].astype(np.float32)
    return m


def one_mesh_scene(m: Mesh, **node_kw) -> Scene:
    sc = Scene(meshes=[m], materials=[Material("M")])
    m.materials, m.face_material = [0], np.zeros(len(m.faces), np.int32)
    sc.add_node(Node(m.name, kind="MESH", data=0, **node_kw))
    return sc


def angle_deg(a, b):
    a = a / np.linalg.norm(a, axis=1, keepdims=True)
    b = b / np.linalg.norm(b, axis=1, keepdims=True)
    return np.degrees(np.arccos(np.clip(np.sum(a * b, 1), -1, 1)))


@pytest.mark.parametrize("version,max_deg", [("2.0", 0.01), ("1.0", 3.5)])
def test_positions_normals_uvs_round_trip(tmp_path, version, max_deg):
    m = grid()
    save(one_mesh_scene(m), tmp_path / "g.u3d", version=version)
    back = load(tmp_path / "g.u3d").meshes[0]
    assert np.array_equal(back.positions, m.positions)          # float32, exactly, same vertex order
    # triangles of the quads, same orientation: every Blender corner triple is a fan of the quad
    tris = back.corners.reshape(-1, 3)
    q = m.corners.reshape(-1, 4)
    expect = np.concatenate([q[:, [0, 1, 2]], q[:, [0, 2, 3]]])
    assert sorted(map(tuple, tris.tolist())) == sorted(map(tuple, expect.tolist()))
    vn_in = np.zeros((len(m.positions), 3))
    vn_in[m.corners] = m.normals
    vn_out = np.zeros((len(back.positions), 3))
    vn_out[back.corners] = back.normals
    assert angle_deg(vn_in, vn_out).max() < max_deg
    uv_in = np.zeros((len(m.positions), 2))
    uv_in[m.corners] = m.uv_layers["UVMap"]
    uv_out = np.zeros((len(back.positions), 2))
    uv_out[back.corners] = back.uv_layers["UVMap"]
    assert np.abs(uv_in - uv_out).max() < 1e-6


def test_cube_export_is_outward_and_up_in_the_file(tmp_path):
    pos = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], np.float32)
    quads = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    m = Mesh(name="Cube", positions=pos, corners=np.array(quads, np.uint32).ravel(),
             faces=np.arange(0, 24, 4, dtype=np.uint32))
    save(one_mesh_scene(m), tmp_path / "c.u3d")
    model = parse((tmp_path / "c.u3d").read_bytes(), Warnings())
    u = model.meshes[0]
    p = u.positions.astype(np.float64)
    t = u.triangles.astype(np.int64)
    # the notes: in U3D's own space the plain cross product of a front face points outward
    n = np.cross(p[t[:, 1]] - p[t[:, 0]], p[t[:, 2]] - p[t[:, 0]])
    centre = p[t].mean(1)
    assert np.all(np.sum(n * centre, 1) > 0)
    # Blender +Z (the top) is U3D +Y
    top = [i for i, tri in enumerate(t) if np.all(p[tri, 1] == 1)]
    assert len(top) == 2 and all(n[i, 1] > 0 for i in top)


def _rig_scene():
    pos = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (0, 1, 2)], np.float32)
    m = grid("Body", 4)
    m.positions[:, 2] += 1
    j = np.tile([0, 1, 2, 3, 4], (len(m.positions), 1)).astype(np.int32)
    w = np.tile([0.4, 0.3, 0.15, 0.1, 0.05], (len(m.positions), 1)).astype(np.float32)
    m.skin = Skin(0, j, w)
    bones = [Bone("root", -1, compose([0, 0, 0], [1, 0, 0, 0], [1, 1, 1])),
             Bone("spine", 0, compose([0, 0, 1], axis_angle_to_quat([1, 0, 0], 0.3), [1, 1, 1])),
             Bone("head", 1, compose([0, 0.2, 2], axis_angle_to_quat([0, 0, 1], -0.4), [1, 1, 1])),
             Bone("arm", 1, compose([1, 0, 1.5], [1, 0, 0, 0], [1, 1, 1])),
             Bone("tail", 0, compose([0, -1, 0.5], [1, 0, 0, 0], [1, 1, 1]))]
    sc = Scene(meshes=[m], armatures=[Armature("Rig", bones)], materials=[Material("Skin")])
    m.materials, m.face_material = [0], np.zeros(len(m.faces), np.int32)
    arm = sc.add_node(Node("Rig", kind="ARMATURE", data=0))
    sc.add_node(Node("Body", kind="MESH", data=0, parent=arm))
    f = np.arange(0, 12, dtype=np.float64)
    q = axis_angle_to_quat(np.tile([0, 1, 0], (12, 1)), f * 0.15)
    loc = np.stack([f * 0.1, 0 * f, np.sin(f)], 1)
    sc.animations = [
        Animation("walk", 0, 5, channels=[Channel(arm, "rotation_quaternion", f[:6], q[:6], bone="spine"),
                                          Channel(arm, "location", f[:6], loc[:6], bone="root")]),
        Animation("wave", 6, 11, channels=[Channel(arm, "rotation_quaternion", f[6:], q[6:], bone="arm"),
                                           Channel(arm, "scale", f[6:], np.tile([1, 1.5, 1], (6, 1)), bone="head")])]
    del pos
    return sc, m, q, loc


def _channel(sc, anim, bone, path):
    a = next(a for a in sc.animations if a.name == anim)
    return next(c for c in a.channels if c.bone == bone and c.path == path)


@pytest.mark.parametrize("version", ["2.0", "1.0"])
def test_rig_round_trip(tmp_path, version):
    sc, m, q, loc = _rig_scene()
    warnings = save(sc, tmp_path / "r.u3d", version=version)
    assert any("more than 4" in w for w in warnings)
    assert any("no action ranges" in w for w in warnings) == (version == "1.0")
    back = load(tmp_path / "r.u3d")
    arm = back.armatures[0]
    assert [(b.name, b.parent) for b in arm.bones] == [(b.name, b.parent) for b in sc.armatures[0].bones]
    for b0, b1 in zip(sc.armatures[0].bones, arm.bones):
        assert b1.matrix == pytest.approx(b0.matrix, abs=1e-5)
    skin = back.meshes[0].skin
    # the four strongest influences, renormalised: 0.4, 0.3, 0.15, 0.1 of 0.95
    assert skin.weights[0] == pytest.approx(np.array([0.4, 0.3, 0.15, 0.1]) / 0.95, abs=1e-6)
    assert skin.joints[0].tolist() == [0, 1, 2, 3]
    assert np.array_equal(back.meshes[0].positions, m.positions)
    if version == "2.0":
        assert [(a.name, a.frame_start, a.frame_end) for a in back.animations] == [("walk", 0, 5), ("wave", 6, 11)]
        spine = _channel(back, "walk", "spine", "rotation_quaternion")
        got = spine.values * np.sign(spine.values[:, :1])
        assert got == pytest.approx(q[:6], abs=1e-5)
        root = _channel(back, "walk", "root", "location")
        assert root.values == pytest.approx(loc[:6], abs=1e-5)
        head = _channel(back, "wave", "head", "scale")
        assert head.frames.min() == 6 and head.frames.max() == 11      # a constant key, held over the range
        assert head.values == pytest.approx(np.tile([1, 1.5, 1], (len(head.values), 1)), abs=1e-5)
    else:   # v1 has no action ranges: one animation over every frame
        assert [(a.frame_start, a.frame_end) for a in back.animations] == [(0, 11)]
        spine = _channel(back, back.animations[0].name, "spine", "rotation_quaternion")
        assert np.abs(spine.values * np.sign(spine.values[:, :1]))[:6] == pytest.approx(q[:6], abs=1e-5)


def test_ranges_from_markers_and_collected_ranges(tmp_path):
    sc, *_ = _rig_scene()
    channels = [c for a in sc.animations for c in a.channels]
    # the one animation of a file without ranges: the timeline markers name the ranges
    sc.animations = [Animation("all", 0, 11, channels=channels, extras={"u3d_whole": True})]
    sc.markers = [Marker("idle", 0), Marker("idle_end", 3), Marker("jump", 4)]
    save(sc, tmp_path / "m.u3d")
    model = parse((tmp_path / "m.u3d").read_bytes(), Warnings())
    assert model.actions == [("idle", 0, 3), ("jump", 4, 11)]
    # animations of their own: one range each, laid one after another where they overlap and differ
    sc.animations = [Animation("A", 0, 5, channels=channels), Animation("B", 6, 11, channels=channels),
                     Animation("C", 2, 4, channels=channels[:1])]
    save(sc, tmp_path / "m.u3d")
    model = parse((tmp_path / "m.u3d").read_bytes(), Warnings())
    assert model.actions == [("A", 0, 5), ("B", 6, 11), ("C", 12, 14)]
    assert model.header.n_frame == 15
    # ranges cut from one track share their frames, as the file wrote them
    sc.animations = [Animation("A", 0, 6, channels=channels), Animation("B", 6, 11, channels=channels),
                     Animation("C", 2, 4, channels=channels)]
    save(sc, tmp_path / "m.u3d")
    model = parse((tmp_path / "m.u3d").read_bytes(), Warnings())
    assert model.actions == [("A", 0, 6), ("B", 6, 11), ("C", 2, 4)]
    assert model.header.n_frame == 12


def test_skinning_demands_one_mesh(tmp_path):
    sc, *_ = _rig_scene()
    sc.meshes.append(grid("Loose"))
    sc.add_node(Node("Loose", kind="MESH", data=1))
    with pytest.raises(UnsupportedFeature, match="exactly one mesh"):
        save(sc, tmp_path / "x.u3d")
    assert not (tmp_path / "x.u3d").exists()
    # parented to a bone instead, it is merged with weight 1 on that bone
    sc.nodes[-1].parent, sc.nodes[-1].parent_bone = 0, "head"
    warnings = save(sc, tmp_path / "x.u3d")
    assert any("merged" in w for w in warnings)
    model = parse((tmp_path / "x.u3d").read_bytes(), Warnings())
    assert model.header.n_mesh == 1 and model.header.n_skin_weight == 3
    tail = model.meshes[0].bone_indices[-1]
    assert tail[0] == 2 and model.meshes[0].skin_weights[-1, 0] == 1.0


def test_bone_parented_meshes_become_appended(tmp_path):
    sc = Scene(meshes=[grid("Sword", 3)], armatures=[Armature("A", [Bone("hand", -1, compose([0, 0, 1], [1, 0, 0, 0],
                                                                                             [1, 1, 1]))])])
    arm = sc.add_node(Node("A", kind="ARMATURE", data=0))
    place = compose([0.5, 0, 0], [1, 0, 0, 0], [1, 1, 1])    # in the bone's frame
    sc.add_node(Node("Sword", kind="MESH", data=0, parent=arm, parent_bone="hand", matrix=place))
    save(sc, tmp_path / "s.u3d")
    model = parse((tmp_path / "s.u3d").read_bytes(), Warnings())
    b = model.bones[0]
    assert b.meshes.tolist() == [0]
    # MeshToBone (row vectors) is the placement in the bone's frame: Blender x 0.5 = U3D X 0.5
    assert b.mesh_to_bone[0][3, :3] == pytest.approx([0.5, 0, 0])
    back = load(tmp_path / "s.u3d")
    node = next(n for n in back.nodes if n.name == "Sword")
    assert node.parent_bone == "hand" and node.matrix == pytest.approx(place)


def test_frame_animation_from_shape_keys(tmp_path):
    m = grid("Wave", 3)
    k1 = m.positions + np.float32([0, 0, 1])
    k2 = m.positions * np.float32(2)
    m.shape_keys = [ShapeKey("Basis", m.positions), ShapeKey("up", k1), ShapeKey("big", k2)]
    sc = one_mesh_scene(m)
    f = np.array([0.0, 1.0, 2.0])
    sc.animations = [Animation("A", 0, 2, channels=[
        Channel(0, 'key_blocks["up"].value', f, np.array([[0.0], [1.0], [0.0]])),
        Channel(0, 'key_blocks["big"].value', f, np.array([[0.0], [0.0], [1.0]]))])]
    save(sc, tmp_path / "w.u3d")
    model = parse((tmp_path / "w.u3d").read_bytes(), Warnings())
    assert model.header.n_frame == 3 and [x.i_frame for x in model.meshes] == [0, 1, 2]
    assert [x.triangles_owned for x in model.meshes] == [1, 0, 0]
    back = load(tmp_path / "w.u3d").meshes[0]
    assert np.array_equal(back.shape_keys[1].positions, k1) and np.array_equal(back.shape_keys[2].positions, k2)


def test_frame_objects_go_back_as_frames_with_their_own_triangles(tmp_path):
    from tests.codec.test_ultimate3d_model import FRAME_POS, frames_topology_v2
    (tmp_path / "f.u3d").write_bytes(frames_topology_v2())
    save(load(tmp_path / "f.u3d"), tmp_path / "out.u3d")
    model = parse((tmp_path / "out.u3d").read_bytes(), Warnings())
    h = model.header
    assert (h.n_mesh, h.n_mesh_per_frame, h.n_frame) == (3, 1, 3)
    assert [(m.name, m.i_mesh_per_frame, m.i_frame) for m in model.meshes] == [("a", 0, 0), ("a", 0, 1), ("a", 0, 2)]
    f0, f1, f2 = model.meshes
    assert f0.triangles.tolist() == [[0, 1, 2]] and f0.triangle_material.tolist() == [0]
    assert f1.triangles_owned == 1 and f1.triangles.tolist() == [[1, 3, 2]] and f1.triangle_material.tolist() == [1]
    assert [m.name for m in model.materials] == ["mat", "m1"]
    assert f2.triangles_owned == 1 and f2.triangles.tolist() == [[0, 1, 2]]
    assert f0.positions.tolist() == [list(p) for p in FRAME_POS]
    assert f2.positions[:, 2].tolist() == [2.0] * 4


def test_repeated_bones_of_a_vertex_are_summed(tmp_path):
    sc, m, _, _ = _rig_scene()
    n = len(m.positions)
    m.skin = Skin(0, np.tile([0, 1, 0], (n, 1)).astype(np.int32),
                  np.tile([0.5, 0.25, 0.25], (n, 1)).astype(np.float32))
    warnings = save(sc, tmp_path / "r.u3d")
    mesh = parse((tmp_path / "r.u3d").read_bytes(), Warnings()).meshes[0]
    # one influence per bone: root 0.75 stored, child 0.25 implied
    assert mesh.skin_weights.tolist() == [[0.75]] * n and mesh.bone_indices[:, :2].tolist() == [[0, 1]] * n
    assert not any("more than" in w for w in warnings)


@pytest.mark.parametrize("names", [("", ""), ("same", "same")])
def test_renamed_bones_are_written_with_the_file_names(tmp_path, names):
    from tests.codec.test_ultimate3d_model import nameless_bones_v2
    (tmp_path / "n.u3d").write_bytes(nameless_bones_v2(*names))
    sc = load(tmp_path / "n.u3d")
    save(sc, tmp_path / "out.u3d")
    assert [b.name for b in parse((tmp_path / "out.u3d").read_bytes(), Warnings()).bones] == list(names)
    sc.armatures[0].bones[1].name = "Tail"          # renamed by the user since: the new name wins
    save(sc, tmp_path / "out2.u3d")
    assert [b.name for b in parse((tmp_path / "out2.u3d").read_bytes(), Warnings()).bones] == [names[0], "Tail"]


def test_object_animation_is_reported_and_ranges_stay_inside_the_frames(tmp_path):
    sc = one_mesh_scene(grid("Cube", 3))
    f = np.arange(0.0, 11.0)
    sc.animations = [Animation("CubeAction", 0, 10, channels=[
        Channel(0, "location", f, np.stack([f * 0.3, 0 * f, 0 * f], 1))])]
    sc.markers = [Marker("idle", 0), Marker("move", 5)]
    warnings = save(sc, tmp_path / "c.u3d")
    assert any("'Cube'" in w and "location" in w and "not exported" in w for w in warnings)
    model = parse((tmp_path / "c.u3d").read_bytes(), Warnings())
    assert model.header.n_frame == 1
    # the animation's range ran to frame 10: cut to the one frame the file holds
    assert model.actions == [("CubeAction", 0, 0)]
    assert any("'CubeAction'" in w and "cut" in w for w in warnings)
    sc.animations[0].frame_start = sc.animations[0].frame_end = 5      # one starting after it: dropped
    warnings = save(sc, tmp_path / "c.u3d")
    assert parse((tmp_path / "c.u3d").read_bytes(), Warnings()).actions == []
    assert any("'CubeAction'" in w and "not exported" in w for w in warnings)


@pytest.mark.parametrize("which", ["skinned", "frame objects", "shape keys"])
def test_what_a_file_animates_exports_without_animation_warnings(tmp_path, which):
    from tests.codec.test_ultimate3d_model import frames_topology_v2, frames_v2, full_skinned_v2
    data = {"skinned": full_skinned_v2, "frame objects": frames_topology_v2, "shape keys": frames_v2}[which]()
    (tmp_path / "a.u3d").write_bytes(data)
    warnings = save(load(tmp_path / "a.u3d"), tmp_path / "b.u3d")
    assert not [w for w in warnings if "not exported" in w or "action range" in w]
    a = parse(data, Warnings())
    b = parse((tmp_path / "b.u3d").read_bytes(), Warnings())
    assert (b.header.n_frame, b.actions) == (a.header.n_frame, a.actions)


def test_baked_frames_from_the_bridge(tmp_path):
    m = grid("Baked", 3)
    frames = [m.positions + np.float32([0, 0, i]) for i in range(1, 4)]
    m.shape_keys = [ShapeKey(f"Frame {i}", p) for i, p in zip(range(1, 4), frames)]
    m.baked_frames = [1, 2, 3]
    sc = one_mesh_scene(m)
    sc.animations = [Animation("Scene", 1, 3, channels=[Channel(0, "location", np.array([1.0, 3.0]),
                                                                np.zeros((2, 3)))])]
    save(sc, tmp_path / "b.u3d")
    model = parse((tmp_path / "b.u3d").read_bytes(), Warnings())
    assert model.header.n_frame == 4
    assert model.meshes[3].positions[:, 1] == pytest.approx(frames[2][:, 2])     # Blender z = U3D Y


def test_lods_from_collections(tmp_path):
    sc = Scene(meshes=[grid("Hi", 6), grid("Lo", 3)], materials=[Material("M")])
    sc.add_node(Node("Hi", kind="MESH", data=0, extras={"u3d_lod_max_camera_distance": 25.0}))
    sc.add_node(Node("Lo", kind="MESH", data=1, collection="LOD1"))
    save(sc, tmp_path / "l.u3d")
    model = parse((tmp_path / "l.u3d").read_bytes(), Warnings())
    assert [(x.name, x.i_lod, x.i_mesh_per_frame) for x in model.meshes] == [("Hi", 0, 0), ("Lo", 1, 0)]
    assert model.header.lod_max_camera_distance.tolist()[0] == 25.0
    back = load(tmp_path / "l.u3d")
    assert [(n.name, n.collection) for n in back.nodes] == [("Hi", ""), ("Lo", "LOD1")]


def test_materials_and_stages_round_trip(tmp_path):
    m = grid()
    sc = one_mesh_scene(m)
    sc.images = [Image("*stone.png"), Image("bump.bmp")]
    mat = sc.materials[0]
    mat.base_color, mat.alpha = (0.25, 0.5, 0.75), 0.5
    mat.extras.update({"u3d_specular_power": 33.0, "u3d_material_depth": 0.125})
    mat.textures = [TextureSlot("base_color", 0, "UVMap"),
                    TextureSlot("bump", 1, "UVMap", extras={"u3d_stage": 3, "u3d_height_scalar": 4.0})]
    save(sc, tmp_path / "t.u3d")
    u = parse((tmp_path / "t.u3d").read_bytes(), Warnings()).materials[0]
    assert u.diffuse == pytest.approx((0.25, 0.5, 0.75, 0.5)) and u.specular_power == 33.0
    assert u.material_depth == 0.125
    assert u.textures[0].files == ["*stone.png"] and u.color_op[0] == 5
    assert u.textures[3].is_normal_map == 1 and u.textures[3].height_scalar == 4.0 and u.color_op[3] == 4
    assert [t.holds_texture for t in u.textures] == [1, 0, 0, 1, 0, 0, 0, 0]
    back = load(tmp_path / "t.u3d").materials[0]
    assert back.base_color == pytest.approx((0.25, 0.5, 0.75)) and back.alpha == 0.5
    assert [t.kind for t in back.textures] == ["base_color", "bump"]


def test_password_encrypts_and_atomic_write(tmp_path):
    sc = one_mesh_scene(grid())
    target = tmp_path / "e.u3d"
    save(sc, target, password="hunter2")
    data = target.read_bytes()
    assert data.startswith(b"$U3D_FILE_HEADER\0") and b"$U3D_MESH" not in data
    assert parse(data, Warnings(), "hunter2").file_header.encryption == 2
    # a refused export leaves the existing file as it was
    big = one_mesh_scene(grid(n=260))
    with pytest.raises(UnsupportedFeature, match="at most 65535"):
        save(big, target, version="1.0")
    assert target.read_bytes() == data
    with pytest.raises(UnsupportedFeature, match="v2.0"):
        save(sc, target, version="1.0", password="x")


def test_export_password_is_utf8_and_checked_first(tmp_path):
    from Crypto.Cipher import AES
    sc = one_mesh_scene(grid())
    for bad in ("a" * 17, "é" * 9):
        with pytest.raises(UnsupportedFeature, match="at most 16 bytes"):
            save(sc, tmp_path / "long.u3d", password=bad)
    assert not (tmp_path / "long.u3d").exists()
    word = "ключ"                                        # 4 characters, 8 UTF-8 bytes
    save(sc, tmp_path / "k.u3d", password=word)
    data = (tmp_path / "k.u3d").read_bytes()
    body = data[len(fx.file_header(enc=2)):]
    plain = AES.new(word.encode("utf-8").ljust(16, b"\0"), AES.MODE_ECB).decrypt(body)
    assert plain.startswith(b"$U3D_MODEL_HEADER\0")


def test_rest_matrix_helpers_agree_with_axes():
    # sanity for the fixtures above: compose uses (w, x, y, z)
    r = quat_to_matrix(axis_angle_to_quat([0, 0, 1], np.pi / 2))
    assert r @ np.array([1, 0, 0]) == pytest.approx([0, 1, 0])


def test_model_wide_values_ride_on_the_mesh_objects(tmp_path):
    from tests.codec.test_ultimate3d_model import v1_full
    (tmp_path / "a.u3d").write_bytes(v1_full())
    sc = load(tmp_path / "a.u3d")
    warnings = save(sc, tmp_path / "b.u3d", version="1.0")
    assert any("LoD object 'lo' skipped" in w for w in warnings)
    h = parse((tmp_path / "b.u3d").read_bytes(), Warnings()).header
    assert h.cel_shading_strength == 0.5 and h.cel_shading_color == (1.0, 0.0, 0.0, 1.0) and h.alpha_blending == 0


def test_file_scene_file_keeps_what_the_file_said(tmp_path):
    from tests.codec.test_ultimate3d_model import full_skinned_v2
    (tmp_path / "a.u3d").write_bytes(full_skinned_v2())
    save(load(tmp_path / "a.u3d"), tmp_path / "b.u3d")
    a = parse((tmp_path / "a.u3d").read_bytes(), Warnings())
    b = parse((tmp_path / "b.u3d").read_bytes(), Warnings())
    ma, mb = a.meshes[0], b.meshes[0]
    assert np.array_equal(ma.positions, mb.positions)

    def unpack(n):   # the notes' formulas
        lat, lon = n[:, 0] / 20860.12008, n[:, 1] / 10430.06004
        return np.stack([np.cos(lat) * np.sin(lon), -np.sin(lat), np.cos(lat) * np.cos(lon)], 1)
    assert angle_deg(unpack(ma.normals), unpack(mb.normals)).max() < 0.01   # the poles may change longitude
    assert (mb.normal_scalar, mb.valid_tangent_frames, mb.extra) == (-1.0, 1, b"MESHTAIL")
    for ta, tb in zip(ma.texcoords, mb.texcoords):
        assert (ta is None and tb is None) or np.abs(ta - tb).max() < 1e-6
    assert np.array_equal(ma.triangles, mb.triangles) and np.array_equal(ma.triangle_material, mb.triangle_material)
    # the file lists bone 0 twice (indices 0, 1, 0; weights 0.5, 0.25 and the implied 0.25): the export
    # writes one summed influence, root 0.75 and child 0.25 (the implied last weight)
    assert ma.bone_indices[:, :3].tolist() == [[0, 1, 0]] * 4 and ma.skin_weights.tolist() == [[0.5, 0.25]] * 4
    assert b.header.n_skin_weight == 1
    assert mb.skin_weights.tolist() == [[0.75]] * 4 and mb.bone_indices[:, :2].tolist() == [[0, 1]] * 4
    assert b.actions == a.actions and b.header.shader_pack_template == b"TPL"
    for x, y in zip(a.materials, b.materials):
        assert (x.name, x.ambient, x.diffuse, x.specular, x.emissive, x.specular_power, x.color_op, x.tex_coord_set,
                x.shader_pack, x.extra) == (y.name, y.ambient, y.diffuse, y.specular, y.emissive, y.specular_power,
                                            y.color_op, y.tex_coord_set, y.shader_pack, y.extra)
        assert [(t.holds_texture, t.files, t.is_cube, t.is_normal_map, t.height_scalar, t.width) for t in x.textures] \
            == [(t.holds_texture, t.files, t.is_cube, t.is_normal_map, t.height_scalar, t.width) for t in y.textures]
    for x, y in zip(a.bones, b.bones):
        assert (x.name, x.i_parent, x.bone_frame, x.pass_on_bone_frame, x.extra) == \
            (y.name, y.i_parent, y.bone_frame, y.pass_on_bone_frame, y.extra)
        assert y.mesh_to_bone == pytest.approx(x.mesh_to_bone, abs=1e-6)


def test_shape_keys_over_a_range_longer_than_the_bake_limit_are_refused(tmp_path):
    """U3D holds vertex animation as one mesh per frame: a claimed 262,150-frame range is an error, not
    262,150 meshes (tests/fuzz_cases/u3d-d67a03b37e has such a range on bones)."""
    from addon.codec.errors import UnsupportedFeature
    m = grid("Wave", 3)
    m.shape_keys = [ShapeKey("Basis", m.positions), ShapeKey("up", m.positions + np.float32([0, 0, 1]))]
    sc = one_mesh_scene(m)
    f = np.array([0.0, 1.0, 262_149.0])
    sc.animations = [Animation("A", 0, 262_149, channels=[
        Channel(0, 'key_blocks["up"].value', f, np.array([[0.0], [1.0], [0.0]]))])]
    with pytest.raises(UnsupportedFeature, match="U3D stores a mesh per frame"):
        save(sc, tmp_path / "w.u3d")
    assert not (tmp_path / "w.u3d").exists()


def test_ranges_sharing_a_frame_come_back_with_their_frames(tmp_path):
    """"bend" [0, 10] and "unbend" [10, 20] share frame 10: the export writes them and the keys where the
    file had them, not "unbend" one frame later."""
    (tmp_path / "in.u3d").write_bytes(fx.bend_file())
    save(load(tmp_path / "in.u3d"), tmp_path / "out.u3d")
    model = parse((tmp_path / "out.u3d").read_bytes(), Warnings())
    assert model.actions == [("bend", 0, 10), ("unbend", 10, 20)]
    assert model.header.n_frame == 21
    keys = model.bones[0].translation_keys
    y = np.interp(np.arange(21), *zip(*fx.BEND_KEYS))
    at = np.interp(np.arange(21), keys["frame"].astype(float), keys["value"][:, 1].astype(float))
    assert at == pytest.approx(y, abs=1e-5)


def test_stages_are_written_as_the_slots_show_them(tmp_path):
    """An unchanged slot writes the file's own colour operation (several show alike); a changed combine,
    UV layer or cube face writes what it now says."""
    t = fx.texture(["t.png"], 8, 8)
    cube = fx.texture([f"c{i}.dds" for i in range(6)], 8, 0, cube=1)
    (tmp_path / "in.u3d").write_bytes(fx.stage_quad(ops=(5, 14, 7, 16) + (1,) * 4, tcs=(0, 1, 0x30000, 0) + (0,) * 4,
                                                    textures=[t, t, cube, t]))
    sc = load(tmp_path / "in.u3d")
    save(sc, tmp_path / "same.u3d")
    m = parse((tmp_path / "same.u3d").read_bytes(), Warnings()).materials[0]
    assert m.color_op[:4] == (5, 14, 7, 16) and m.tex_coord_set[:4] == (0, 1, 0x30000, 0)
    assert list(m.textures[2].files) == [f"c{i}.dds" for i in range(6)] and m.textures[2].is_cube
    _, light, env, blend = sc.materials[0].textures
    light.combine, light.uv_layer = "MULTIPLY_2X", "UVMap"
    env.combine, blend.combine = "SUBTRACT", "MIX_MAP_ALPHA"
    sc.images.append(Image(name="other.dds"))
    env.cube_faces = env.cube_faces[:5] + (len(sc.images) - 1,)
    save(sc, tmp_path / "edited.u3d")
    m = parse((tmp_path / "edited.u3d").read_bytes(), Warnings()).materials[0]
    assert m.color_op[:4] == (5, 5, 10, 13) and m.tex_coord_set[:2] == (0, 0)
    assert list(m.textures[2].files) == [f"c{i}.dds" for i in range(5)] + ["other.dds"]
