"""UNIGINE export: neutral Scene -> file, and round trips within each quantization step."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import scene as S
from addon.codec.errors import Warnings
from addon.codec.fileio import write_atomically
from addon.codec.formats.unigine import FORMAT, read, write
from tests import unigine_samples as samples
from addon.codec.formats.unigine.from_scene import scene_to_mesh
from addon.codec.formats.unigine.options import AnimExportOptions, AnimImportOptions, ExportOptions, ImportOptions
from addon.codec.formats.unigine.to_scene import mesh_to_scene

MESH, ANIM = FORMAT
S45 = 0.70710678


def _quad_scene(materials=("wood", "metal")) -> S.Scene:
    """Two triangles at z = 1, one per material, with custom normals +Z and a UV map."""
    sc = S.Scene(materials=[S.Material(n) for n in materials])
    m = S.Mesh.from_triangles("quad", [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], [[0, 1, 2], [0, 2, 3]])
    m.uv_layers["UVMap"] = np.array([[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]], np.float32)
    m.normals = np.tile(np.float32([0, 0, 1]), (6, 1))
    m.face_material = np.array([0, 1], np.int32)
    m.materials = list(range(len(materials)))
    sc.meshes.append(m)
    sc.add_node(S.Node("quad", "MESH", 0))
    return sc


def _export(sc, **opts):
    w = Warnings()
    return scene_to_mesh(sc, ExportOptions(**opts), w), w.as_list()


def test_surfaces_per_material():
    m, _ = _export(_quad_scene())
    assert [s.name for s in m.surfaces] == ["wood", "metal"]
    wood = m.surfaces[0]
    assert wood.targets[0].positions.tolist() == [[0, 0, 1], [1, 0, 1], [1, 1, 1]]
    assert wood.coord_indices.tolist() == [0, 1, 2]
    # V flips back to the file's top-down V
    assert wood.uv0.tolist() == [[0, 1], [1, 1], [1, 0]]
    # normal +Z with tangent +U = +X and a right-handed binormal: the identity quaternion
    assert wood.targets[0].tangents.tolist() == [[0, 0, 0, 32767]] * 3


def test_surfaces_per_object():
    sc = _quad_scene()
    sc.meshes.append(S.Mesh.from_triangles("tri", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]]))
    sc.add_node(S.Node("triangle", "MESH", 1, matrix=np.diag([2.0, 2.0, 2.0, 1.0])))
    m, _ = _export(sc, surfaces_from="OBJECT")
    assert [s.name for s in m.surfaces] == ["quad", "triangle"]
    assert m.surfaces[1].targets[0].positions.tolist() == [[0, 0, 0], [2, 0, 0], [0, 2, 0]]   # world placement
    assert len(m.surfaces[0].coord_indices) == 6


def test_bounds_as_the_notes_define_them():
    m, _ = _export(_quad_scene(materials=("one",)))
    # box of the four corners, centre at its middle, radius to a corner
    np.testing.assert_allclose(m.surfaces[0].bounds.values, [0, 0, 1, 1, 1, 1, 0.5, 0.5, 1, np.sqrt(0.5)], rtol=1e-6)
    np.testing.assert_allclose(m.bounds.values, m.surfaces[0].bounds.values)


def test_mirrored_uvs_flip_the_binormal_sign():
    sc = _quad_scene(materials=("one",))
    sc.meshes[0].uv_layers["UVMap"][:, 0] *= -1          # U runs along -X: mirrored
    m, _ = _export(sc)
    q = m.surfaces[0].targets[0].tangents
    assert (q[:, 3] < 0).all() and len(q) == 4
    from addon.codec.formats.unigine import tangent
    n, t, s = tangent.decode(q)
    np.testing.assert_allclose(n, [[0, 0, 1]] * len(q), atol=1e-4)
    np.testing.assert_allclose(t, [[-1, 0, 0]] * len(q), atol=1e-4)


def test_w_keeps_its_sign_when_it_would_round_to_zero():
    from addon.codec.formats.unigine import tangent
    # normal -Z, tangent +X: a 180-degree turn about X, w = 0
    q = tangent.encode(np.array([[0, 0, -1.0]] * 2), np.array([[1, 0, 0.0]] * 2), np.array([1.0, -1.0]))
    assert q[0].tolist() == [32767, 0, 0, 1] and q[1].tolist() == [-32767, 0, 0, -1]


def test_index_widths_are_chosen_per_list():
    # 300 vertices, one shared split record: coordinate indices need 16 bits, triangle indices 8
    pos = np.stack([np.arange(300.0), np.zeros(300), np.zeros(300)], 1)
    tris = np.stack([np.zeros(298), np.arange(1, 299), np.arange(2, 300)], 1)
    sc = S.Scene(meshes=[S.Mesh.from_triangles("fan", pos, tris)])
    sc.meshes[0].normals = np.tile(np.float32([0, 0, 1]), (len(tris) * 3, 1))
    sc.meshes[0].uv_layers["UVMap"] = np.zeros((len(tris) * 3, 2), np.float32)
    m, _ = _export(sc)
    s = m.surfaces[0]
    assert s.coordinate_count == 300 and s.triangle_count == 1
    data = write.write_mesh(m)
    # the file ends with: count, 894 uint16 coordinate indices, count, 894 uint8 triangle indices, magic
    assert data[-4 - 894:-4] == bytes(894)
    assert data[-4:] == b"ms11"
    back = read.read_mesh(data, Warnings())
    assert back.surfaces[0].coord_indices.tolist() == s.coord_indices.tolist()


def _rigged_scene(frames=6) -> S.Scene:
    """root at the origin, 'tip' 1 above it; a triangle skinned to both; an action bending 'tip'."""
    sc = S.Scene()
    arm = S.Armature("rig", [S.Bone("root", -1, np.eye(4)),
                             S.Bone("tip", 0, np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1.0]]))])
    sc.armatures.append(arm)
    a = sc.add_node(S.Node("rig", "ARMATURE", 0))
    m = S.Mesh.from_triangles("tri", [[0, 0, 0], [1, 0, 0], [0, 0, 2]], [[0, 1, 2]])
    m.skin = S.Skin(0, np.array([[0, -1, -1, -1, -1], [0, 1, -1, -1, -1], [1, 0, 0, 1, 0]]),
                    np.array([[1, 0, 0, 0, 0], [0.25, 0.25, 0, 0, 0], [0.4, 0.3, 0.2, 0.05, 0.05]], np.float32))
    sc.meshes.append(m)
    sc.add_node(S.Node("tri", "MESH", 0, parent=a))
    f = np.arange(frames, dtype=np.float64)
    half = np.where(f >= 3, np.pi / 8, 0.0)                # 45 degrees about X from frame 3 on
    rot = np.stack([np.cos(half), np.sin(half), 0 * f, 0 * f], 1)
    loc = np.zeros((frames, 3))
    loc[:, 2] = np.where(f >= 2, 0.5, 0.0)
    sc.animations.append(S.Animation("bend", 0, frames - 1, 30, [
        S.Channel(a, "rotation_quaternion", f, rot, bone="tip"),
        S.Channel(a, "location", f, loc, bone="tip"),
        S.Channel(a, "scale", f, np.ones((frames, 3)), bone="tip")]))
    return sc


def test_weights_renormalised_quantized_and_dropped_with_a_warning():
    m, warnings = _export(_rigged_scene())
    wt = m.surfaces[0].weights
    assert wt.counts.tolist() == [1, 2, 4]
    assert wt.weights[0].tolist() == [65535, 0, 0, 0]
    # 0.5 each: 32767.5 rounds (to even) to 32768 twice; the surplus 1 comes off the first
    assert wt.weights[1].tolist() == [32767, 32768, 0, 0]
    # 0.4 0.3 0.2 0.05 of 0.95, rounded: 27594 + 20695 + 13797 + 3449 = 65535
    assert wt.weights[2].tolist() == [27594, 20695, 13797, 3449]
    assert wt.bones[2].tolist() == [1, 0, 0, 1]
    assert (wt.weights.astype(int).sum(1) == 65535).all()
    assert any("more than 4 weights" in x for x in warnings)


def test_bind_pose_is_local_to_the_parent():
    m, _ = _export(_rigged_scene())
    assert [(b.name, b.parent) for b in m.bones] == [("root", -1), ("tip", 0)]
    assert m.bind["t"].tolist() == [[0, 0, 0], [0, 0, 1]]
    assert m.bind["r"].tolist() == [[0, 0, 0, 1]] * 2
    assert m.bind["s"].tolist() == [[1, 1, 1]] * 2


def test_components_are_stored_only_when_they_change():
    m, _ = _export(_rigged_scene(), embed_animations=True)
    (t,) = m.animations
    assert t.bones.tolist() == [1]
    # tz moves at frame 2, the rotation at frame 3; scale never leaves the bind pose
    assert t.flag == 0x04 | 0x08
    assert t.flags[:, 0].tolist() == [0x0C, 0, 0x04, 0x08, 0, 0]
    assert t.translation[:, 0, 2].tolist() == [1, 1, 1.5, 1.5, 1.5, 1.5]   # rest z 1 + basis 0.5
    assert t.rotation[3, 0].tolist() == [round(np.sin(np.pi / 8) * 32767), 0, 0, round(np.cos(np.pi / 8) * 32767)]


def test_actions_beside_the_mesh_as_anim(tmp_path):
    model = MESH.from_scene(_rigged_scene(), ExportOptions(), Warnings())
    files = MESH.encode(model, tmp_path / "hero.mesh")
    assert set(files) == {tmp_path / "hero.mesh", tmp_path / "hero.anim"}
    assert files[tmp_path / "hero.anim"][:4] == b"an10"
    a = read.read_anim(files[tmp_path / "hero.anim"], Warnings())
    (t,) = a.animations
    assert t.flags[:, 0].tolist() == [0x0C, 0, 0x04, 0x08, 0, 0]
    # placeholders in the file-level bounds, as real .anim files have
    assert a.bounds.values.tolist()[-1] == -1.0
    mesh = read.read_mesh(files[tmp_path / "hero.mesh"], Warnings())
    assert mesh.animations == []


def test_blender_to_file_to_blender_round_trip(tmp_path):
    sc = _rigged_scene()
    w = Warnings()
    files = MESH.encode(MESH.from_scene(sc, ExportOptions(embed_animations=True), w), tmp_path / "r.mesh")
    write_atomically(files)
    back = MESH.to_scene(MESH.read(tmp_path / "r.mesh", ImportOptions(), w), ImportOptions(), w)
    mesh = back.meshes[0]
    np.testing.assert_array_equal(mesh.positions, sc.meshes[0].positions)
    assert mesh.corners.tolist() == [0, 1, 2]
    for b0, b1 in zip(sc.armatures[0].bones, back.armatures[0].bones):
        np.testing.assert_allclose(b1.matrix, b0.matrix, atol=1e-6)
    np.testing.assert_allclose(mesh.skin.weights[2], [0.4 / 0.95, 0.3 / 0.95, 0.2 / 0.95, 0.05 / 0.95], atol=1 / 65535)
    got = {c.path: c.values for c in back.animations[0].channels}
    want = {c.path: c.values for c in sc.animations[0].channels}
    np.testing.assert_allclose(got["location"], want["location"], atol=1e-6)
    np.testing.assert_allclose(got["rotation_quaternion"], want["rotation_quaternion"], atol=2 / 32767)
    np.testing.assert_allclose(got["scale"], want["scale"], atol=1e-6)


def test_anim_round_trip_within_the_box_step(tmp_path):
    sc = _rigged_scene(frames=10)
    w = Warnings()
    anim = ANIM.from_scene(sc, AnimExportOptions(), w)
    write_atomically(ANIM.encode(anim, tmp_path / "bend.anim"))
    model = ANIM.read(tmp_path / "bend.anim", AnimImportOptions(), w)
    back = ANIM.to_scene(model, AnimImportOptions(), w)
    box = model.animations[0].translation_box
    got = {c.path: c.values for c in back.animations[0].channels if c.bone == "tip"}
    want = {c.path: c.values for c in sc.animations[0].channels}
    np.testing.assert_allclose(got["location"], want["location"], atol=float(box[1].max()) / 65535 + 1e-6)
    np.testing.assert_allclose(got["rotation_quaternion"], want["rotation_quaternion"], atol=2 / 32767)
    # and the codec-only round trip (.anim -> scene -> .anim) gives the same bytes back
    again = ANIM.encode(ANIM.from_scene(back, AnimExportOptions(), w), tmp_path / "again.anim")
    assert again[tmp_path / "again.anim"] == (tmp_path / "bend.anim").read_bytes()


def test_shape_keys_become_morph_targets():
    sc = _quad_scene(materials=("one",))
    base = sc.meshes[0].positions
    sc.meshes[0].shape_keys = [S.ShapeKey("Basis", base.copy()), S.ShapeKey("up", base + [0, 0, 1])]
    m, _ = _export(sc)
    assert [t.name for t in m.surfaces[0].targets] == ["Basis", "up"]
    assert m.surfaces[0].targets[1].positions[:, 2].tolist() == [2, 2, 2, 2]
    back = mesh_to_scene(read.read_mesh(write.write_mesh(m), Warnings()), ImportOptions(), Warnings())
    assert [k.name for k in back.meshes[0].shape_keys] == ["Basis", "up"]


def test_a_surface_of_several_objects_takes_each_ones_used_vertices_and_keys():
    # "one" holds the quad's first triangle and all of a lifted triangle; "two" the quad's second
    sc = _quad_scene(materials=("one", "two"))
    sc.meshes[0].shape_keys = [S.ShapeKey("Basis", sc.meshes[0].positions.copy())]
    tri = S.Mesh.from_triangles("tri", [[0, 0, 5], [1, 0, 5], [0, 1, 5]], [[0, 1, 2]])
    tri.materials, tri.face_material = [0], np.zeros(1, np.int32)
    tri.shape_keys = [S.ShapeKey("Basis", tri.positions.copy()), S.ShapeKey("lift", tri.positions + [0, 0, 1])]
    sc.meshes.append(tri)
    sc.add_node(S.Node("tri", "MESH", 1))
    m, _ = _export(sc)
    one, two = m.surfaces
    assert [t.name for t in one.targets] == ["Basis", "lift"]
    assert one.targets[0].positions.tolist() == [[0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 0, 5], [1, 0, 5], [0, 1, 5]]
    # the quad has no "lift": its vertices keep their rest place in that target
    assert one.targets[1].positions[:, 2].tolist() == [1, 1, 1, 6, 6, 6]
    assert one.coord_indices.tolist() == [0, 1, 2, 3, 4, 5]
    assert [t.name for t in two.targets] == ["Basis"]
    assert two.targets[0].positions.tolist() == [[0, 0, 1], [1, 1, 1], [0, 1, 1]]
    assert two.coord_indices.tolist() == [0, 1, 2]


@pytest.mark.parametrize("build", [lambda: samples.static_mesh(3000), lambda: samples.skinned_mesh(2000, 10, 40)])
def test_file_to_blender_to_file_keeps_topology_and_values(build):
    original = build()
    w = Warnings()
    again = scene_to_mesh(mesh_to_scene(original, ImportOptions(), w), ExportOptions(embed_animations=True), w)
    for s0, s1 in zip(original.surfaces, again.surfaces):
        assert s1.name == s0.name
        assert s1.coord_indices.tolist() == s0.coord_indices.tolist()
        assert s1.tri_indices.tolist() == s0.tri_indices.tolist()
        np.testing.assert_array_equal(s1.targets[0].positions, s0.targets[0].positions)
        np.testing.assert_array_equal(s1.targets[0].tangents, s0.targets[0].tangents)
        np.testing.assert_allclose(s1.uv0, s0.uv0, atol=1e-7)
        np.testing.assert_array_equal(s1.colors, s0.colors)
        np.testing.assert_array_equal(s1.weights.weights, s0.weights.weights)
        np.testing.assert_array_equal(s1.weights.bones, s0.weights.bones)
    for t0, t1 in zip(original.animations, again.animations):
        assert t1.flag == t0.flag
        np.testing.assert_array_equal(t1.flags, t0.flags)
        assert np.abs(t1.rotation.astype(int) - t0.rotation).max() <= 1
        np.testing.assert_allclose(t1.translation, t0.translation, atol=1e-6)
    assert len(original.animations) == len(again.animations)


def test_a_scaled_bind_is_written_unscaled_with_the_scale_in_the_keys():
    from tests.codec.unigine_fixtures import IDENT, Q_IDENTITY, mesh_file, mesh_record, surface_geometry, surface_header
    # arm: T(0,2,0) Rz(90) S(2); hand: T(0,0,1) under it, keyed to T(0,0,3) then T(0,0,1) (world z 6, then 2)
    bones = [("hand", 2), ("root", -1), ("arm", 1)]
    poses = [((0, 0, 1), (0, 0, 0, 1), (1, 1, 1)), IDENT, ((0, 2, 0), (0, 0, S45, S45), (2, 2, 2))]
    geo = surface_geometry([([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [Q_IDENTITY])], coord=[0, 1, 2], tri=[0, 0, 0])
    recs = mesh_record(0x0F, (0, 0, 3), (0, 0, 0, 32767)) + mesh_record(0x04, (0, 0, 1))
    data = mesh_file(bones=bones, poses=poses, anims=[("wave", [0], 0x0F, 2, recs)],
                     surfaces=[(surface_header("body"), geo)])
    w = Warnings()
    m = scene_to_mesh(mesh_to_scene(read.read_mesh(data, w), ImportOptions(), w), ExportOptions(embed_animations=True), w)
    assert [b.name for b in m.bones] == ["hand", "root", "arm"]
    np.testing.assert_allclose(m.bind["s"], np.ones((3, 3)), atol=1e-6)      # Blender's rest is unscaled
    np.testing.assert_allclose(m.bind["t"], [[0, 0, 2], [0, 0, 0], [0, 2, 0]], atol=1e-6)
    np.testing.assert_allclose(np.abs(m.bind["r"][2]), [0, 0, S45, S45], atol=1e-6)
    (t,) = m.animations
    assert t.bones.tolist() == [0]
    # the arm's scale 2 now lives in the hand's keys: world z 6 and 2 above the unscaled arm at z 0
    np.testing.assert_allclose(t.translation[:, 0], [[0, 0, 6], [0, 0, 2]], atol=1e-5)
    np.testing.assert_allclose(t.scale[:, 0], np.ones((2, 3)), atol=1e-6)


def test_bad_surfaces_option():
    from addon.codec.errors import FormatError
    with pytest.raises(FormatError, match="surfaces_from"):
        _export(_quad_scene(), surfaces_from="LAYER")


def test_each_animation_becomes_its_own_track_over_its_own_frames():
    sc = _rigged_scene(frames=6)
    bend = sc.animations[0]
    sc.animations = [S.Animation("still", 0, 1, channels=bend.channels), S.Animation("move", 2, 5, channels=bend.channels)]
    m, _ = _export(sc, embed_animations=True)
    assert [(t.name, t.frame_count) for t in m.animations] == [("still", 2), ("move", 4)]
    assert m.animations[1].translation[:, 0, 2].tolist() == [1.5] * 4


def test_split_data_is_written_only_when_present():
    sc = S.Scene(meshes=[S.Mesh.from_triangles("bare", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])])
    m, _ = _export(sc)
    s = m.surfaces[0]
    assert (len(s.uv0), len(s.uv1), len(s.colors)) == (0, 0, 0)
    assert s.triangle_count == 1     # a flat triangle: its three corners share one normal and tangent frame
    assert s.name == "bare"


def test_uv_set_2_and_colours_are_written_per_corner():
    sc = _quad_scene(materials=("one",))
    mesh = sc.meshes[0]
    uv2 = np.array([[0.1, 0.2], [0.3, 0.4], [0.5, 0.6], [0.7, 0.8], [0.5, 0.6], [0.9, 0.25]], np.float32)
    mesh.uv_layers["UVMap2"] = uv2
    # corner 3 shares vertex 0 with corner 0 but not its colour; out-of-range values clamp
    cols = np.array([[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 0.2], [0.4, 0.6, 0.8, 1], [0, 0, 1, 0.2], [1.5, -0.1, 0, 1]],
                    np.float32)
    mesh.colors["Color"] = cols
    m, _ = _export(sc)
    back = read.read_mesh(write.write_mesh(m), Warnings())
    (srf,) = back.surfaces
    corner_uv2 = srf.uv1[srf.tri_indices]
    np.testing.assert_allclose(corner_uv2[:, 0], uv2[:, 0])
    np.testing.assert_allclose(corner_uv2[:, 1], 1 - uv2[:, 1], atol=1e-7)   # V runs down in the file
    assert srf.colors[srf.tri_indices].tolist() == [[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 51],
                                                   [102, 153, 204, 255], [0, 0, 255, 51], [255, 0, 0, 255]]
    # corners 2 and 4 agree on everything: one triangle vertex; corner 3 differs from 0 in colour and UV 2
    assert srf.tri_indices[2] == srf.tri_indices[4] and srf.tri_indices[0] != srf.tri_indices[3]
    assert srf.triangle_count == 5


def test_a_third_uv_layer_is_dropped_with_a_warning():
    sc = _quad_scene(materials=("one",))
    for name in ("UV2", "UV3"):
        sc.meshes[0].uv_layers[name] = np.full((6, 2), 0.5, np.float32)
    m, w = _export(sc)
    assert any("only 2 of its 3 UV layers" in x for x in w)
    np.testing.assert_allclose(m.surfaces[0].uv1, 0.5)


def test_tangents_follow_u_within_each_uv_island():
    # two triangles share the edge 0-2; their UV islands run U along +X and along +Y
    sc = S.Scene(meshes=[S.Mesh.from_triangles("seam", [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
                                               [[0, 1, 2], [0, 2, 3]])])
    mesh = sc.meshes[0]
    mesh.uv_layers["UVMap"] = np.array([[0, 0], [1, 0], [1, 1],          # U = x
                                        [4, 1], [5, 0], [5, 1]], np.float32)   # U = y + 4, V = 1 - x
    m, _ = _export(sc)
    from addon.codec.formats.unigine import tangent
    s = m.surfaces[0]
    _, t, sign = tangent.decode(s.targets[0].tangents)
    corner_t = t[s.tri_indices]
    np.testing.assert_allclose(corner_t[:3], [[1, 0, 0]] * 3, atol=1e-4)
    np.testing.assert_allclose(corner_t[3:], [[0, 1, 0]] * 3, atol=1e-4)
    assert sign.tolist() == [1.0] * len(sign)


def test_triangle_vertices_match_a_plain_de_duplication_on_a_mesh_with_seams():
    from tests.codec.test_meshops import _plain_split
    from addon.codec.formats.unigine import from_scene as export, tangent
    rng = np.random.default_rng(11)
    pos = rng.integers(0, 4, (60, 3)).astype(np.float32)
    tris = np.array([rng.choice(60, 3, replace=False) for _ in range(150)])
    mesh = S.Mesh.from_triangles("seams", pos, tris)
    uv = np.round(pos[mesh.corners, :2] / 2, 1)
    uv[rng.random(len(uv)) < 0.3] += 0.5                # UV seams: one vertex, several UVs
    mesh.uv_layers["UVMap"] = uv.astype(np.float32)
    mesh.normals = np.round(pos[mesh.corners] - 1.5).astype(np.float32)   # shared by some, split at others
    mesh.colors["Color"] = rng.integers(0, 2, (len(uv), 4)).astype(np.float32)
    sc = S.Scene(meshes=[mesh])
    sc.add_node(S.Node("seams", "MESH", 0))
    m, _ = _export(sc)
    s = m.surfaces[0]
    from addon.codec.formats.unigine.geometry import corner_frames
    vertex = mesh.corners.astype(np.int64)
    # what the file holds per corner, as bytes: the quaternion, the UV (V flipped), the colour
    quat = tangent.encode(*corner_frames(mesh, mesh.positions, np.arange(len(vertex)).reshape(-1, 3), np.eye(4)))
    rgba = np.clip(np.round(mesh.colors["Color"] * 255), 0, 255).astype(np.uint8)
    flipped = np.stack([uv[:, 0], 1 - uv[:, 1]], 1).astype(np.float32)
    record = np.concatenate([quat.view(np.uint8), flipped.view(np.uint8), rgba], 1)
    first, tri = _plain_split(record, vertex, within_vertex=False)
    assert s.tri_indices.tolist() == tri
    assert s.coord_indices.tolist() == vertex.tolist()       # every vertex used: the file keeps their numbers
    np.testing.assert_array_equal(s.targets[0].tangents, quat[first])
    np.testing.assert_array_equal(s.colors, rgba[first])
    np.testing.assert_array_equal(s.uv0[:, 0], uv[first, 0])
    np.testing.assert_array_equal(s.uv0[:, 1], np.float32(1) - uv[first, 1].astype(np.float32))
    assert s.triangle_count < len(mesh.corners)            # some corners did merge
    assert len(s.uv0) > len(np.unique(vertex))              # and the seams did split


def test_export_refuses_more_bones_than_shorts_can_index():
    from addon.codec.errors import FormatError
    sc = _quad_scene(materials=("one",))
    sc.armatures.append(S.Armature("big", [S.Bone(f"b{i}") for i in range(32768)]))
    with pytest.raises(FormatError, match="32768 bones"):
        _export(sc)


def test_tangent_quaternions_survive_decode_and_encode():
    # any quaternion (up to its sign, which encodes the binormal sign) comes back within one step
    from addon.codec.formats.unigine import tangent
    rng = np.random.default_rng(3)
    q = rng.normal(size=(20000, 4))
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    shorts = np.round(q * 32767).astype(np.int16)
    again = tangent.encode(*tangent.decode(shorts)).astype(int)
    step = np.minimum(np.abs(again - shorts).max(1), np.abs(-again - shorts).max(1))
    assert step.max() <= 1
    assert ((again[:, 3] < 0) == (shorts[:, 3] < 0)).all()


def test_frames_without_a_second_normalization_match_within_one_step():
    """corner_frames hands custom normals and kept tangents to tangent.encode as they are (encode
    normalizes); normalizing them first as well, as export once did, gives the same quaternions
    but for rounding: at most one 1/32767 step in a component."""
    from addon.codec.formats.unigine import tangent
    from addon.codec.formats.unigine.conventions import SIGN_ATTR, TANGENT_ATTR
    from addon.codec.formats.unigine.geometry import corner_frames
    rng = np.random.default_rng(3)
    n_tri = 20_000
    mesh = S.Mesh.from_triangles("m", rng.random((3 * n_tri, 3)).astype(np.float32),
                                 np.arange(3 * n_tri).reshape(-1, 3))
    normal = rng.normal(size=(3 * n_tri, 3)).astype(np.float32)
    tan = rng.normal(size=(3 * n_tri, 3)).astype(np.float32)
    unit = normal / np.linalg.norm(normal, axis=1, keepdims=True)
    mesh.normals = unit * rng.uniform(0.999, 1.001, (3 * n_tri, 1)).astype(np.float32)   # unit, but for rounding
    mesh.corner_attributes[TANGENT_ATTR] = tan
    mesh.corner_attributes[SIGN_ATTR] = np.where(rng.random(3 * n_tri) < 0.5, -1, 1).astype(np.float32)
    n, t, sign = corner_frames(mesh, mesh.positions, np.arange(3 * n_tri).reshape(-1, 3), np.eye(4))
    assert n is not None and np.array_equal(n, mesh.normals)                  # handed on as they are
    now = tangent.encode(n, t, sign)

    def unit_rows(v):
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    before = tangent.encode(unit_rows(n), unit_rows(t), sign)
    step = np.abs(now.astype(int) - before).max(axis=1)
    assert step.max() <= 1 and (step == 0).mean() > 0.99
