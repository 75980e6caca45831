"""UNIGINE import: file model -> neutral Scene, with expectations worked out by hand from the notes."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import axes
from addon.codec.errors import Warnings
from addon.codec.formats.unigine import FORMAT, read
from addon.codec.formats.unigine.options import AnimImportOptions, ImportOptions
from addon.codec.formats.unigine.conventions import SIGN_ATTR, TANGENT_ATTR
from addon.codec.formats.unigine.to_scene import anim_to_scene, mesh_to_scene, rebase_animations
from tests.codec.unigine_fixtures import (IDENT, Q_IDENTITY, anim_file, anim_record, floats, mesh_file, mesh_record,
                                          quad_surface, surface_geometry, surface_header)

S45 = 0.70710678
Q45 = 23170                        # round(0.70710678 * 32767)


def _scene(data: bytes, **opts):
    w = Warnings()
    m = read.read_mesh(data, w)
    return mesh_to_scene(m, ImportOptions(**opts), w), w.as_list()


def test_quad_positions_corners_uvs_normals():
    sc, _ = _scene(mesh_file(surfaces=[quad_surface("floor", z=2.0)]))
    (mesh,) = sc.meshes
    assert mesh.positions.tolist() == [[0, 0, 2], [1, 0, 2], [1, 1, 2], [0, 1, 2]]
    assert mesh.corners.tolist() == [0, 1, 2, 0, 2, 3]      # counter-clockwise: imported unflipped
    assert mesh.faces.tolist() == [0, 3]
    # file V runs down: Blender v = 1 - v
    assert mesh.uv_layers["UVMap"].tolist() == [[0, 1], [1, 1], [1, 0], [0, 1], [1, 0], [0, 0]]
    assert list(mesh.uv_layers) == ["UVMap"]               # no UV set 2 in the file
    assert mesh.colors == {}
    np.testing.assert_allclose(mesh.normals, [[0, 0, 1]] * 6, atol=1e-6)
    assert [sc.materials[i].name for i in mesh.materials] == ["floor"]


@pytest.mark.parametrize("quat,normal,tangent,sign", [
    ((Q45, 0, 0, Q45), (0, -1, 0), (1, 0, 0), 1),        # 90 degrees about X
    ((-Q45, 0, 0, -Q45), (0, -1, 0), (1, 0, 0), -1),     # the same rotation, w < 0: binormal flipped
    ((0, Q45, 0, Q45), (1, 0, 0), (0, 0, -1), 1),        # 90 degrees about Y
    ((0, 0, 32767, 0), (0, 0, 1), (-1, 0, 0), 1),        # 180 about Z, w = 0 counts as +
])
def test_tangent_quaternion_decoding(quat, normal, tangent, sign):
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    geo = surface_geometry([(pos, [quat])], uv0=[(0, 0)], coord=[0, 1, 2], tri=[0, 0, 0])
    sc, _ = _scene(mesh_file(surfaces=[(surface_header("s"), geo)]))
    mesh = sc.meshes[0]
    np.testing.assert_allclose(mesh.normals, [normal] * 3, atol=1e-4)
    np.testing.assert_allclose(mesh.corner_attributes[TANGENT_ATTR], [tangent] * 3, atol=1e-4)
    assert mesh.corner_attributes[SIGN_ATTR].tolist() == [sign] * 3


def _two_surfaces():
    a = quad_surface("wood", z=0.0)
    pos = [(0, 0, 5), (1, 0, 5), (0, 1, 5)]
    geo = surface_geometry([(pos, [Q_IDENTITY] * 3)], uv0=[(0, 0), (1, 0), (0, 1)],
                           uv1=[(0.25, 0.5), (0.5, 0.5), (0.75, 0.5)],
                           colors=[(255, 0, 0, 255), (0, 255, 0, 255), (0, 0, 255, 51)], coord=[0, 1, 2], tri=[2, 1, 0])
    return mesh_file(surfaces=[a, (surface_header("metal"), geo)])


def test_surfaces_become_material_slots():
    sc, _ = _scene(_two_surfaces())
    (mesh,) = sc.meshes
    assert [sc.materials[i].name for i in mesh.materials] == ["wood", "metal"]
    assert mesh.face_material.tolist() == [0, 0, 1]
    assert len(mesh.positions) == 7
    assert mesh.corners[6:].tolist() == [4, 5, 6]           # second surface's vertices follow the first's
    # UV set 2 and colours exist in one surface: the other gets zeros
    assert mesh.uv_layers["UVMap2"][6:].tolist() == [[0.75, 0.5], [0.5, 0.5], [0.25, 0.5]]
    assert mesh.uv_layers["UVMap2"][:6].tolist() == [[0, 1]] * 6
    np.testing.assert_allclose(mesh.colors["Color"][6], [0, 0, 1, 0.2])


def test_one_object_per_surface():
    sc, _ = _scene(_two_surfaces(), one_object_per_surface=True)
    assert [m.name for m in sc.meshes] == ["wood", "metal"]
    assert [len(m.positions) for m in sc.meshes] == [4, 3]
    assert [sc.materials[m.materials[0]].name for m in sc.meshes] == ["wood", "metal"]
    assert [n.kind for n in sc.nodes] == ["MESH", "MESH"]
    assert "UVMap2" not in sc.meshes[0].uv_layers and "UVMap2" in sc.meshes[1].uv_layers


def test_morph_targets_become_shape_keys():
    pos0 = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    pos1 = [(0, 0, 1), (1, 0, 1), (0, 1, 1)]
    geo = surface_geometry([(pos0, [Q_IDENTITY]), (pos1, [Q_IDENTITY])], coord=[0, 1, 2], tri=[0, 0, 0])
    sc, _ = _scene(mesh_file(surfaces=[(surface_header("s", targets=("rest", "smile")), geo)]))
    keys = sc.meshes[0].shape_keys
    assert [k.name for k in keys] == ["rest", "smile"]
    assert keys[0].positions.tolist() == [list(p) for p in pos0]
    assert keys[1].positions.tolist() == [list(p) for p in pos1]


def _rig(anims=(), weights=None):
    # listed child first: hand -> arm -> root
    bones = [("hand", 2), ("root", -1), ("arm", 1)]
    poses = [((0, 0, 1), (0, 0, 0, 1), (1, 1, 1)), IDENT, ((0, 2, 0), (0, 0, S45, S45), (2, 2, 2))]
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    geo = surface_geometry([(pos, [Q_IDENTITY])], weights=weights, coord=[0, 1, 2], tri=[0, 0, 0])
    return mesh_file(bones=bones, poses=poses, anims=anims, surfaces=[(surface_header("body"), geo)])


def test_bones_become_an_armature_in_armature_space():
    sc, w = _scene(_rig())
    (arm,) = sc.armatures
    assert [(b.name, b.parent) for b in arm.bones] == [("hand", 2), ("root", -1), ("arm", 1)]
    # arm: T(0,2,0) Rz(90) S(2); hand: arm * T(0,0,1) -> origin (0,2,2). Blender bones rest unscaled:
    # the rest keeps the bind's rotation and translation only
    np.testing.assert_allclose(arm.bones[2].matrix, [[0, -1, 0, 0], [1, 0, 0, 2], [0, 0, 1, 0], [0, 0, 0, 1]],
                               atol=1e-6)
    np.testing.assert_allclose(arm.bones[0].matrix, [[0, -1, 0, 0], [1, 0, 0, 2], [0, 0, 1, 2], [0, 0, 0, 1]],
                               atol=1e-6)
    np.testing.assert_allclose(arm.bones[1].matrix, np.eye(4))
    kinds = {n.kind: i for i, n in enumerate(sc.nodes)}
    assert sc.nodes[kinds["MESH"]].parent == kinds["ARMATURE"]
    assert not any("unevenly" in x for x in w)        # a uniform scale: nothing approximate


def test_weights_become_skin():
    sc, _ = _scene(_rig(weights=[[(2, 65535)], [(0, 30000), (2, 35535)], []]))
    skin = sc.meshes[0].skin
    assert skin.armature == 0
    assert skin.joints.tolist() == [[2, -1, -1, -1], [0, 2, -1, -1], [-1, -1, -1, -1]]
    np.testing.assert_allclose(skin.weights[1], [30000 / 65535, 35535 / 65535, 0, 0])


def test_embedded_animation_is_relative_to_rest():
    # hand: bind T(0,0,1) under arm's scale 2, so its rigid rest sits 2 above arm: (0,2,2).
    # frame 0 key T(0,0,3) puts the hand at arm * (0,0,3) = (0,2,6): basis location 6 - 2 = 4 along z;
    # frame 1 rotates 90 about X; frame 2 key T(0,0,1) is the bind height again: location 0
    recs = (mesh_record(0x0F, (0, 0, 3), (0, 0, 0, 32767))
            + mesh_record(0x08, q=(Q45, 0, 0, Q45))
            + mesh_record(0x04, (0, 0, 1)))
    sc, w = _scene(_rig(anims=[("wave", [0], 0x0F, 3, recs)]), fps=24.0)
    (anim,) = sc.animations
    assert (anim.name, anim.frame_start, anim.frame_end, anim.fps) == ("wave", 0.0, 2.0, 24.0)
    ch = {c.path: c for c in anim.channels}
    assert set(ch) == {"location", "rotation_quaternion", "scale"}
    assert all(c.bone == "hand" and c.target == [i for i, n in enumerate(sc.nodes) if n.kind == "ARMATURE"][0]
               for c in anim.channels)
    assert ch["location"].frames.tolist() == [0, 1, 2]
    np.testing.assert_allclose(ch["location"].values, [[0, 0, 4], [0, 0, 4], [0, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(ch["rotation_quaternion"].values, [[1, 0, 0, 0], [S45, S45, 0, 0], [S45, S45, 0, 0]],
                               atol=1e-4)
    # the hand's world scale is 2 in the bind and 2 in every frame: no pose scale
    np.testing.assert_allclose(ch["scale"].values, np.ones((3, 3)), atol=1e-6)
    assert (sc.frame_start, sc.frame_end) == (0, 2)
    assert not any("unevenly" in x for x in w)


def test_rotated_rest_pose_basis():
    # arm: rest T(0,2,0) Rz(90) (scale 2 dropped); key T(1,2,0) Rz(90) S(2) moves its head by +1 along x:
    # basis location Rz(-90) (1,0,0) = (0,-1,0), in the unscaled rest's frame
    recs = mesh_record(0x01, (1, 0, 0))
    sc, _ = _scene(_rig(anims=[("slide", [2], 0x01, 1, recs)]))
    ch = {c.path: c for c in sc.animations[0].channels}
    np.testing.assert_allclose(ch["location"].values, [[0, -1, 0]], atol=1e-6)
    np.testing.assert_allclose(ch["rotation_quaternion"].values, [[1, 0, 0, 0]], atol=1e-6)
    np.testing.assert_allclose(ch["scale"].values, [[1, 1, 1]], atol=1e-6)


def _trs(t, q_xyzw, s):
    """T @ R @ S from a quaternion in the file's x, y, z, w order."""
    x, y, z, w = q_xyzw
    return axes.compose(t, [w, x, y, z], s)


def test_blender_style_deformation_matches_the_files_skinning():
    # Blender: pose = parent_pose * rest_local * basis; vertex' = pose * rest^-1 * vertex.
    # The file: vertex' = anim_world * bind_world^-1 * vertex. Both written out here by hand.
    keys = [((0, 0, 3), (0, 0, 0, 1)), ((0, 0, 3), (S45, 0, 0, S45)), ((0, 0, 1), (S45, 0, 0, S45))]
    recs = (mesh_record(0x0F, (0, 0, 3), (0, 0, 0, 32767)) + mesh_record(0x08, q=(Q45, 0, 0, Q45))
            + mesh_record(0x04, (0, 0, 1)))
    sc, _ = _scene(_rig(anims=[("wave", [0], 0x0F, 3, recs)]))
    bones = sc.armatures[0].bones
    # what a Blender bone can rest at: the matrix without scale (as the bridge builds edit bones)
    rest = {b.name: np.asarray(b.matrix, float) for b in bones}
    for m in rest.values():
        m[:3, :3] /= np.linalg.norm(m[:3, :3], axis=0)
    ch = {c.path: c.values for c in sc.animations[0].channels}
    arm_bind = _trs((0, 2, 0), (0, 0, S45, S45), (2, 2, 2))
    hand_bind = arm_bind @ _trs((0, 0, 1), (0, 0, 0, 1), (1, 1, 1))
    for f, (t, q) in enumerate(keys):
        w, x, y, z = ch["rotation_quaternion"][f]
        basis = _trs(ch["location"][f], (x, y, z, w), ch["scale"][f])
        # root and arm are not animated: identity basis, so the arm's pose is its rest
        pose_hand = rest["arm"] @ (np.linalg.inv(rest["arm"]) @ rest["hand"]) @ basis
        anim_world = arm_bind @ _trs(t, q, (1, 1, 1))
        np.testing.assert_allclose(pose_hand[:3, 3], anim_world[:3, 3], atol=1e-5)
        for v in ([0, 0, 0, 1.0], [0.3, -1, 2, 1.0]):
            np.testing.assert_allclose(pose_hand @ np.linalg.inv(rest["hand"]) @ v,
                                       anim_world @ np.linalg.inv(hand_bind) @ v, atol=1e-5)
    np.testing.assert_allclose(rest["hand"][:3, 3] + [0, 0, 4], [0, 2, 6])     # frame 0: hand head at (0,2,6)


def test_non_uniform_bind_scale_warns_once():
    bones = [("root", -1), ("a", 0), ("b", 1)]
    poses = [((0, 0, 0), (0, 0, 0, 1), (1, 2, 1)), IDENT, IDENT]
    recs = mesh_record(0x01, (1, 0, 0), None) * 2 + mesh_record(0x01, (2, 0, 0)) * 2
    geo = surface_geometry([([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [Q_IDENTITY])], coord=[0, 1, 2], tri=[0, 0, 0])
    data = mesh_file(bones=bones, poses=poses, anims=[("x", [1, 2], 0x01, 2, recs), ("y", [1, 2], 0x01, 2, recs)],
                     surfaces=[(surface_header("s"), geo)])
    _, w = _scene(data)
    assert sum("unevenly" in x for x in w) == 1
    still = mesh_file(bones=bones, poses=poses, surfaces=[(surface_header("s"), geo)])
    _, w = _scene(still)                               # no animation: the rest pose itself is exact
    assert not any("unevenly" in x for x in w)


def test_anim_decodes_boxes():
    recs = (anim_record(0x7F, (0, 65535, 100), (0, 0, 0, 32767), (0, 0, 0))
            + anim_record(0x01, (65535, 0, 0)))
    data = anim_file(bones=[("hip", -1)], poses=[IDENT],
                     anims=[("run", [0], ((-1, -2, -3), (2, 4, 6)), ((1, 1, 1), (0, 0, 0)), 0x7F, 2, recs)])
    w = Warnings()
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w)
    assert sc.armatures == [] and sc.meshes == []
    ch = {c.path: c for c in sc.animations[0].channels}
    assert all(c.target == -1 and c.bone == "hip" for c in sc.animations[0].channels)
    # min + size * u / 65535
    np.testing.assert_allclose(ch["location"].values, [[-1, 2, -3 + 6 * 100 / 65535], [1, 2, -3 + 6 * 100 / 65535]],
                               atol=1e-6)
    np.testing.assert_allclose(ch["scale"].values, [[1, 1, 1]] * 2)
    assert sc.animations[0].fps == 30.0


def test_anim_onto_an_armature_matched_by_name_warns_on_missing_bones():
    recs = anim_record(0x01, (65535, 0, 0)) * 2
    data = anim_file(bones=[("hip", -1), ("tail", 0)], poses=[IDENT, IDENT],
                     anims=[("run", [1, 0], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    w = Warnings()
    rest = {"spine": np.eye(4), "hip": np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])}
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w, rest_local=rest)
    text = " ".join(w.as_list())
    assert "'tail' is not in the armature" in text and "'spine' is not in the animation" in text
    (loc,) = [c for c in sc.animations[0].channels if c.path == "location"]
    assert loc.bone == "hip"
    np.testing.assert_allclose(loc.values, [[3, 0, 0]], atol=1e-6)     # key x = 4, rest x = 1


def test_anim_rest_from_a_mesh_file(tmp_path):
    mesh = tmp_path / "hero.mesh"
    mesh.write_bytes(mesh_file(bones=[("hip", -1)], poses=[((2, 0, 0), (0, 0, 0, 1), (1, 1, 1))],
                               surfaces=[quad_surface()]))
    anim = tmp_path / "run.anim"
    anim.write_bytes(anim_file(bones=[("hip", -1)], poses=[IDENT],
                               anims=[("run", [0], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1,
                                       anim_record(0x01, (65535, 0, 0)))]))
    spec = FORMAT[1]
    w = Warnings()
    sc = spec.to_scene(spec.read(anim, AnimImportOptions(), w), AnimImportOptions(rest_mesh=str(mesh)), w)
    (loc,) = [c for c in sc.animations[0].channels if c.path == "location"]
    np.testing.assert_allclose(loc.values, [[2, 0, 0]], atol=1e-6)


def test_anim_against_a_scaled_mesh_rest(tmp_path):
    # the mesh: arm scaled 2, hand T(0,0,1) under it; the .anim keys the hand to T(0,0,3): world height 6,
    # which is 4 above the hand's unscaled rest at 2 (as in test_embedded_animation_is_relative_to_rest)
    mesh = tmp_path / "hero.mesh"
    mesh.write_bytes(mesh_file(bones=[("arm", -1), ("hand", 0)],
                               poses=[((0, 0, 0), (0, 0, 0, 1), (2, 2, 2)), ((0, 0, 1), (0, 0, 0, 1), (1, 1, 1))],
                               surfaces=[quad_surface()]))
    anim = tmp_path / "run.anim"
    anim.write_bytes(anim_file(bones=[("hand", -1)], poses=[IDENT],
                               anims=[("run", [0], ((0, 0, 0), (0, 0, 3)), ((1, 1, 1), (0, 0, 0)), 0x04, 1,
                                       anim_record(0x04, (0, 0, 65535)))]))
    spec = FORMAT[1]
    w = Warnings()
    sc = spec.to_scene(spec.read(anim, AnimImportOptions(), w), AnimImportOptions(rest_mesh=str(mesh)), w)
    (loc,) = [c for c in sc.animations[0].channels if c.path == "location"]
    np.testing.assert_allclose(loc.values, [[0, 0, 4]], atol=1e-5)
    # the rest kept for writing the keys back is the unscaled one: hand 2 above arm, scale 1
    rest = sc.rest_pose
    assert rest.bones == ["hand"]                      # the .anim's bones only; arm, its parent, is not one
    assert rest.parents == [-1] and rest.translation.tolist() == [[0, 0, 2]] and rest.scale.tolist() == [[1, 1, 1]]


def test_surface_bounds_mismatch_warns():
    h, g = quad_surface("q")
    bad = surface_header("q", floats(0, 0, 0, 1, 1, 0, 0.5, 0.5, 0, 0.1))   # radius too small
    _, warnings = _scene(mesh_file(surfaces=[(bad, g)], bounds=floats(0, 0, 0, 1, 1, 0, 0.5, 0.5, 0, 0.75)))
    assert any("surface 'q'" in x and "radius" in x for x in warnings)
    _, warnings = _scene(mesh_file(surfaces=[(h, g)], bounds=floats(0, 0, 0, 1, 1, 0, 0.5, 0.5, 0, 0.75)))
    assert warnings == []


def test_rebase_onto_another_armature():
    # keys relative to the .anim's own bind (hip at x = 0): key x = 4; the armature's hip rests at x = 1
    recs = anim_record(0x01, (65535, 0, 0)) * 2
    data = anim_file(bones=[("hip", -1), ("tail", 0)], poses=[IDENT, IDENT],
                     anims=[("run", [0, 1], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    w = Warnings()
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w)
    loc = [c for c in sc.animations[0].channels if c.path == "location" and c.bone == "hip"][0]
    np.testing.assert_allclose(loc.values, [[4, 0, 0]], atol=1e-6)
    turned = np.array([[0, -1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])     # Rz(90) at x = 1
    rebase_animations(sc, {"hip": turned, "spine": np.eye(4)}, w)
    chans = {c.path: c for c in sc.animations[0].channels}
    assert {c.bone for c in sc.animations[0].channels} == {"hip"}
    # basis = Rz(-90) (4 - 1, 0, 0) = (0, -3, 0); the file never stores the rotation, so the bone
    # keeps the armature's rest rotation: identity basis
    np.testing.assert_allclose(chans["location"].values, [[0, -3, 0]], atol=1e-6)
    np.testing.assert_allclose(chans["rotation_quaternion"].values, [[1, 0, 0, 0]], atol=1e-6)
    text = " ".join(w.as_list())
    assert "'tail' is not in the armature" in text and "'spine' is not in the animation" in text


def test_rebase_keeps_stored_rotations():
    # the rotation is stored (identity): on an armature resting at Rz(90) it must undo that turn
    recs = anim_record(0x09, (65535, 0, 0), (0, 0, 0, 32767))
    data = anim_file(bones=[("hip", -1)], poses=[IDENT],
                     anims=[("run", [0], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x09, 1, recs)])
    w = Warnings()
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w)
    turned = np.array([[0, -1, 0, 1], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])
    rebase_animations(sc, {"hip": turned}, w)
    chans = {c.path: c for c in sc.animations[0].channels}
    np.testing.assert_allclose(chans["rotation_quaternion"].values, [[S45, 0, 0, -S45]], atol=1e-6)
    np.testing.assert_allclose(chans["location"].values, [[0, -3, 0]], atol=1e-6)


def test_unstored_components_take_the_given_rest_not_the_anim_bind():
    # the .anim's bind block says hip rests at z = 7; the mesh rest (given) says z = 1; only x is stored
    recs = anim_record(0x01, (65535, 0, 0))
    data = anim_file(bones=[("hip", -1)], poses=[((0, 0, 7), (0, 0, 0, 1), (1, 1, 1))],
                     anims=[("run", [0], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    w = Warnings()
    rest = {"hip": np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1.0]])}
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w, rest_local=rest)
    (loc,) = [c for c in sc.animations[0].channels if c.path == "location"]
    np.testing.assert_allclose(loc.values, [[4, 0, 0]], atol=1e-6)     # z stays at the rest's 1: basis 0


def test_repeated_bone_names_cannot_make_a_parent_cycle():
    # by index the parents are fine (A <- B <- A'); by name, "A" (the last one) has parent B and B has parent A
    recs = anim_record(0x01, (65535, 0, 0))
    data = anim_file(bones=[("A", -1), ("B", 0), ("A", 1)], poses=[IDENT, ((0, 0, 1), (0, 0, 0, 1), (1, 1, 1)), IDENT],
                     anims=[("run", [1], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1, recs)])
    w = Warnings()
    sc = anim_to_scene(read.read_anim(data, w), AnimImportOptions(), w)
    (loc,) = [c for c in sc.animations[0].channels if c.path == "location"]
    np.testing.assert_allclose(loc.values, [[4, 0, 0]], atol=1e-6)       # B's key x = 4 over its rest (0, 0, 1)
