"""Ultimate 3D -> Scene: axes, winding, normals, UVs, LoDs, frames, bones, skin, actions, materials.

Expected values come from the documents and the notes (hand computed), never from the codec.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from addon.codec import load
from addon.codec.errors import Warnings
from addon.codec.formats.ultimate3d.read import parse
from addon.codec.formats.ultimate3d.to_scene import to_scene
from addon.codec.formats.ultimate3d.options import ImportOptions
from tests.codec import u3d_fixtures as fx
from tests.codec.test_ultimate3d_model import (frames_topology_v2, frames_v2, full_skinned_v2, nameless_bones_v2,
                                               v1_full)


def _scene(data: bytes, **kw):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(**kw), w)


def _node(sc, name):
    return next(n for n in sc.nodes if n.name == name)


def test_cube_comes_back_outward_with_its_top_up():
    sc = _scene(fx.cube_file())
    m = sc.meshes[0]
    p = m.positions.astype(np.float64)
    t = m.corners.reshape(-1, 3)
    volume = np.einsum("ij,ij->i", p[t[:, 0]], np.cross(p[t[:, 1]], p[t[:, 2]])).sum() / 6
    assert volume == pytest.approx(8.0)         # a 2x2x2 cube, positive = outward in right-handed Blender
    # the U3D +Y face (y = 1 for every corner) must be Blender's z = 1 face and face +Z
    top = [tri for tri in t if np.all(p[tri, 2] == 1.0)]
    assert len(top) == 2
    for tri in top:
        n = np.cross(p[tri[1]] - p[tri[0]], p[tri[2]] - p[tri[0]])
        assert n[2] > 0 and n[0] == 0 and n[1] == 0


def test_positions_swap_y_and_z_exactly():
    sc = _scene(fx.file_header() + fx.model_header() + fx.mesh(positions=[(1.5, 2.25, -3.125), (0, 0, 0), (1, 1, 1)])
                + fx.material())
    assert sc.meshes[0].positions[0].tolist() == [1.5, -3.125, 2.25]
    assert sc.meshes[0].corners.tolist() == [0, 2, 1]    # Blender corners = i0, i2, i1


def test_compressed_normals_v2_with_normal_scalar():
    sc = _scene(full_skinned_v2())
    m = sc.meshes[0]
    by_vertex = {int(v): m.normals[c] for c, v in enumerate(m.corners)}
    # (0, 0): lat 0, lon 0 -> U3D (0, 0, 1) -> Blender (0, 1, 0), times NormalScalar -1
    assert by_vertex[0] == pytest.approx([0, -1, 0], abs=1e-6)
    # (32767, 0): lat = 32767 / 20860.12008 -> U3D y = -sin(lat) -> Blender z, times -1
    lat = 32767 / 20860.12008
    assert by_vertex[2] == pytest.approx([0, -math.cos(lat), math.sin(lat)], abs=1e-6)
    lat, lon = 100 / 20860.12008, -200 / 10430.06004
    u3d = [math.cos(lat) * math.sin(lon), -math.sin(lat), math.cos(lat) * math.cos(lon)]
    assert by_vertex[1] == pytest.approx([-u3d[0], -u3d[2], -u3d[1]], abs=1e-6)


def test_compressed_normals_v1():
    sc = _scene(v1_full())
    m = sc.meshes[0]
    by_vertex = {int(v): m.normals[c] for c, v in enumerate(m.corners)}
    lat, lon = 31 * 0.0494739, -127 * 0.02473695
    u3d = [math.cos(lat) * math.sin(lon), -math.sin(lat), math.cos(lat) * math.cos(lon)]
    assert by_vertex[1] == pytest.approx([u3d[0], u3d[2], u3d[1]], abs=1e-6)


def test_texture_coordinate_sets():
    sc = _scene(full_skinned_v2())
    m = sc.meshes[0]
    assert list(m.uv_layers) == ["UVMap"]
    corner_of_1 = int(np.nonzero(m.corners == 1)[0][0])
    assert m.uv_layers["UVMap"][corner_of_1] == pytest.approx([0.1, 1 - 0.2])   # V flipped
    assert m.corner_attributes["u3d_texcoord1"].shape == (len(m.corners), 3)
    # ValidMeshToTangentSpaceMatrices: the last two sets (2 and 3) are tangent frames, not UVs
    assert m.corner_attributes["u3d_tangent_frame2"].shape == (len(m.corners), 1)
    assert m.corner_attributes["u3d_tangent_frame3"].shape == (len(m.corners), 4)


def test_lods_go_to_collections_with_their_distances():
    sc = _scene(frames_v2())
    hi, lo = _node(sc, "hi"), _node(sc, "lo")
    assert (hi.collection, hi.hide) == ("", False) and (lo.collection, lo.hide) == ("LOD1", True)
    assert hi.extras["u3d_lod_max_camera_distance"] == 10.0
    assert lo.extras["u3d_lod_max_camera_distance"] == pytest.approx(fx.FLT_MAX)


def test_frames_become_shape_keys_keyed_frame_for_frame():
    sc = _scene(frames_v2())
    hi = _node(sc, "hi")
    m = sc.meshes[hi.data]
    assert [k.name for k in m.shape_keys] == ["Basis", "frame_1"]
    assert m.shape_keys[1].positions[1].tolist() == [2, 0, 0] and m.shape_keys[1].positions[2].tolist() == [0, 0, 2]
    assert len(m.corners) == 3          # TrianglesOwned = false: the frame-0 indices
    ch = [c for a in sc.animations for c in a.channels if c.target == sc.nodes.index(hi)]
    assert len(ch) == 1 and ch[0].path == 'key_blocks["frame_1"].value'
    assert dict(zip(ch[0].frames.tolist(), ch[0].values[:, 0].tolist())) == {0.0: 0.0, 1.0: 1.0}
    assert ch[0].interpolation == "LINEAR" and m.extras["u3d_vertex_tweening"] is True
    assert (sc.frame_start, sc.frame_end) == (0, 1)


def test_frames_with_their_own_triangles_become_one_object_per_frame():
    w = Warnings()
    sc = to_scene(parse(frames_topology_v2(), w), ImportOptions(), w)
    assert any("one object per frame" in x for x in w.as_list())
    names = [n.name for n in sc.nodes]
    assert names == ["a", "a_frame1", "a_frame2"]
    a, a1, a2 = (sc.meshes[_node(sc, n).data] for n in names)
    assert not a.shape_keys
    # file triangles (0, 1, 2) and (1, 3, 2), reversed into Blender corners i0, i2, i1
    assert a.corners.tolist() == [0, 2, 1] and a1.corners.tolist() == [1, 2, 3]
    # frame 1 uses the second material, frame 0 the first
    assert sc.materials[a.materials[a.face_material[0]]].name == "mat"
    assert sc.materials[a1.materials[a1.face_material[0]]].name == "m1"
    # frame 2 shares frame 0's indices but has its own positions (U3D Z 2 = Blender y 2)
    assert a2.corners.tolist() == [0, 2, 1] and a2.positions[:, 1].tolist() == [2.0] * 4
    groups = {_node(sc, n).extras["u3d_frame_group"] for n in names}
    assert len(groups) == 1 and [_node(sc, n).extras["u3d_frame"] for n in names] == [0, 1, 2]
    # each object is shown at its own frame only, with no key past the last frame (2)
    for i, n in enumerate(names):
        ch = [c for an in sc.animations for c in an.channels if c.target == i and c.path == "hide_render"]
        assert len(ch) == 1 and ch[0].interpolation == "CONSTANT"
        hidden = dict(zip(ch[0].frames.tolist(), ch[0].values[:, 0].tolist()))
        assert max(hidden) <= 2
        shown = [f for f in range(3) if not hidden[max(k for k in hidden if k <= f)]]
        assert shown == [i], n


def test_frames_sharing_topology_still_become_shape_keys():
    # frame 1 owns indices equal to frame 0's: nothing is lost as a shape key
    pos1 = [(0, 0, 1), (1, 0, 1), (0, 1, 1)]
    data = (fx.file_header() + fx.model_header(n_mesh=2, n_frame=2) + fx.mesh("k")
            + fx.mesh("k", pos1, frame=1) + fx.material())
    w = Warnings()
    sc = to_scene(parse(data, w), ImportOptions(), w)
    assert len(sc.meshes) == 1 and [k.name for k in sc.meshes[0].shape_keys] == ["Basis", "frame_1"]
    assert not w.as_list()


def test_bones_rest_skin_and_keys():
    sc = _scene(full_skinned_v2())
    arm = sc.armatures[0]
    assert [(b.name, b.parent) for b in arm.bones] == [("root", -1), ("child", 0)]
    # MeshToBone of "child" translates by U3D (0, -1, 0): its rest is the inverse, U3D (0, 1, 0) = Blender (0, 0, 1)
    assert arm.bones[1].matrix[:3, 3] == pytest.approx([0, 0, 1])
    assert arm.bones[1].extras == {"u3d_bone_frame": 3.0, "u3d_pass_on_bone_frame": False,
                                   "u3d_extra": b"BX".hex()}   # unknown chunk tail kept for the round trip
    skin = sc.meshes[0].skin
    # indices 0, 1, 0 with weights 0.5, 0.25 and the implied 1 - 0.75: bone 0 twice, its weights summed
    assert skin.weights[0].tolist() == [0.75, 0.25, 0.0] and skin.joints[0].tolist() == [0, 1, -1]
    body = _node(sc, "skin")
    assert sc.nodes[body.parent].kind == "ARMATURE" and body.parent_bone == ""
    chans = {(c.path, a.name): c for a in sc.animations for c in a.channels if c.bone == "child"}
    run_rot = chans[("rotation_quaternion", "run")]
    at5 = run_rot.values[list(run_rot.frames).index(5.0)]
    # key (x, y, z, w) = (0, .7071, 0, .7071) -> Blender (w, -x, -z, -y); rest_local is a pure translation
    assert np.sign(at5[0]) * at5 == pytest.approx([0.70710677, 0, 0, -0.70710677], abs=1e-6)
    run_scale = chans[("scale", "run")]
    assert run_scale.values[list(run_scale.frames).index(5.0)] == pytest.approx([2, 2, 2])
    walk_loc = chans[("location", "walk")]
    assert walk_loc.values[0] == pytest.approx([0, 0, 0], abs=1e-6)      # the key equals the rest


@pytest.mark.parametrize("names,expect", [(("", ""), ["bone0", "bone1"]), (("same", "same"), ["same", "same.1"]),
                                          (("", "bone0"), ["bone0", "bone0.1"])])
def test_empty_and_repeated_bone_names_become_unique(names, expect):
    w = Warnings()
    sc = to_scene(parse(nameless_bones_v2(*names), w), ImportOptions(), w)
    bones = sc.armatures[0].bones
    assert [b.name for b in bones] == expect and [b.parent for b in bones] == [-1, 0]
    # the file's name is kept where it changed
    assert [b.extras.get("u3d_name") for b in bones] == [n if n != e else None for n, e in zip(names, expect)]
    assert any("renamed" in x for x in w.as_list())
    # no channel of bone "" (that would be the armature object itself): the keys go to the second bone
    arm = next(i for i, n in enumerate(sc.nodes) if n.kind == "ARMATURE")
    bone_chans = [c for a in sc.animations for c in a.channels if c.target == arm]
    assert bone_chans and {c.bone for c in bone_chans} <= set(expect) and expect[1] in {c.bone for c in bone_chans}


PROJECTIVE = (1, 0, 0, 0.5, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 3, 2)    # element 3 = 0.5, element 15 = 2


@pytest.mark.parametrize("version", ["2.0", "1.0"])
def test_matrices_that_are_not_affine_are_reported(version):
    if version == "2.0":
        data = (fx.file_header() + fx.model_header(n_bone=2) + fx.mesh("a") + fx.material()
                + fx.bone(0, "bad", meshes=[0], matrices=[PROJECTIVE])
                + fx.bone(1, "far", meshes=[0], matrices=[fx.translation(1e4, -2e3, 5e3)]))
    else:
        data = (fx.v1_header(n_bone=2) + fx.v1_mesh("a") + fx.v1_material()
                + fx.v1_bone("bad", meshes=[0], matrices=[PROJECTIVE])
                + fx.v1_bone("far", meshes=[0], matrices=[fx.translation(1e4, -2e3, 5e3)]))
    w = Warnings()
    model = parse(data, w)
    assert [x for x in w.as_list() if "not affine" in x and "'bad'" in x]
    assert not [x for x in w.as_list() if "'far'" in x]            # a large translation is fine
    sc = to_scene(model, ImportOptions(), w)
    # the appended mesh is placed by the affine part only: U3D translation (0, 0, 3) = Blender (0, 3, 0)
    bad = next(n for n in sc.nodes if n.parent_bone == "bad")
    assert bad.matrix == pytest.approx(np.array([[1, 0, 0, 0], [0, 1, 0, 3], [0, 0, 1, 0], [0, 0, 0, 1]]))


def test_bone_parented_mesh_follows_a_renamed_bone():
    data = (fx.file_header() + fx.model_header(n_mesh=1, n_bone=2) + fx.mesh("blade") + fx.material()
            + fx.bone(0, "") + fx.bone(1, "", parent=0, meshes=[0], matrices=[fx.translation(0, 0, 2)]))
    sc = _scene(data)
    assert _node(sc, "blade").parent_bone == "bone1"


def test_action_ranges_make_animations_and_markers():
    sc = _scene(full_skinned_v2())
    assert [(a.name, a.frame_start, a.frame_end) for a in sc.animations] == [("walk", 0, 2), ("run", 3, 5)]
    assert [(m.name, m.frame) for m in sc.markers] == [("walk", 0), ("walk_end", 2), ("run", 3), ("run_end", 5)]
    walk = [c for c in sc.animations[0].channels if c.bone == "child" and c.path == "scale"][0]
    assert walk.frames.min() >= 0 and walk.frames.max() <= 2
    # linear scale key 1 -> 2 over frames 0..5, evaluated at the range end 2
    assert walk.values[list(walk.frames).index(2.0)] == pytest.approx([1.4, 1.4, 1.4])


def test_reversed_or_too_long_action_ranges_are_reported():
    data = (fx.file_header() + fx.model_header(n_frame=6) + fx.mesh() + fx.material()
            + fx.actions([("bad", 5, 2), ("long", 3, 9), ("ok", 0, 3)]))
    w = Warnings()
    to_scene(parse(data, w), ImportOptions(), w)
    assert [x for x in w.as_list() if "action range" in x and "'bad'" in x]
    assert [x for x in w.as_list() if "action range" in x and "'long'" in x]
    assert not [x for x in w.as_list() if "'ok'" in x]


def test_meshes_appended_to_bones_are_bone_parented():
    data = (fx.file_header() + fx.model_header(n_mesh=2, n_mpf=2, n_bone=1) + fx.mesh("a") + fx.mesh("b", mpf=1)
            + fx.material() + fx.bone(0, "arm", meshes=[1], matrices=[fx.translation(0, 0, 2)],
                                      tkeys=[(0, (0, 0, -2))]))
    sc = _scene(data)
    a, b = _node(sc, "a"), _node(sc, "b")
    assert a.parent == -1 and sc.nodes[b.parent].kind == "ARMATURE" and b.parent_bone == "arm"
    bone = sc.armatures[0].bones[0]
    # MeshToBone moves U3D z by 2 (Blender y 2): the bone's rest is the inverse, and the mesh, placed in the
    # bone's frame by MeshToBone, sits at the origin at rest
    assert bone.matrix[:3, 3] == pytest.approx([0, -2, 0])
    assert b.matrix[:3, 3] == pytest.approx([0, 2, 0])
    assert bone.matrix @ b.matrix == pytest.approx(np.eye(4))
    # a posed bone carries the mesh: MeshToWorld = MeshToBone * BoneToWorld
    posed = np.eye(4)
    posed[:3, 3] = [5, 0, 0]
    assert (posed @ b.matrix)[:3, 3] == pytest.approx([5, 2, 0])


def test_materials_and_textures(tmp_path):
    (tmp_path / "gfx").mkdir()
    (tmp_path / "gfx" / "WALL.PNG").write_bytes(b"png")
    (tmp_path / "m.u3d").write_bytes(full_skinned_v2())
    sc = load(tmp_path / "m.u3d")
    first, second = sc.materials
    assert first.name == "first" and first.base_color == pytest.approx((0.8, 0.6, 0.4))
    assert first.extras["u3d_specular_power"] == 16.0 and first.extras["u3d_ambient"] == pytest.approx([.1, .1, .1, 1])
    assert first.textures[0].kind == "bump" and first.textures[0].extras["u3d_height_scalar"] == 2.5
    wall, cube = second.textures
    assert sc.images[wall.image].filepath == str(tmp_path / "gfx" / "WALL.PNG")   # "*" = gfx/, any case
    assert wall.kind == "base_color" and wall.uv_layer == "UVMap" and wall.extras["u3d_color_op"] == 5
    assert cube.kind == "environment" and len(cube.extras["u3d_files"]) == 6
    assert cube.extras["u3d_generated_coordinates"] == 0x10000 and cube.uv_layer == ""
    assert second.extras["u3d_shader_pack"] == "010203"
    assert any("c0.dds" in w for w in sc.warnings)           # missing textures are reported


def test_stages_combine_as_their_colour_operations_say():
    """Direct3D's D3DTEXTUREOP numbers (the document: "a value from the D3DTEXTUREOP enumerated type"):
    stages 1-7 combine with the colour below; a DISABLE ends the chain; a height map stays a bump map."""
    t = fx.texture(["t.png"], 8, 8)
    ops = (5, 4, 6, 7, 8, 10, 13, 26)
    w = Warnings()
    sc = to_scene(parse(fx.stage_quad(ops=ops, tcs=(0, 1, 0, 1, 0, 0, 0, 0), textures=[t] * 8), w), ImportOptions(), w)
    slots = sc.materials[0].textures
    assert [s.combine for s in slots] == ["", "MULTIPLY", "MULTIPLY_4X", "ADD", "ADD_SIGNED", "SUBTRACT",
                                          "MIX_MAP_ALPHA", ""]
    assert [s.kind for s in slots] == ["base_color"] * 7 + ["other"]           # LERP (26): kept, not shown
    assert [s.uv_layer for s in slots[:4]] == ["UVMap", "UVMap_1", "UVMap", "UVMap_1"]
    assert [x for x in w.as_list() if "colour operation 26" in x]
    # DISABLE (1) in stage 2, even without a texture, switches off the stages after it
    sc = _scene(fx.stage_quad(ops=(5, 4, 1, 7) + (1,) * 4, textures=[t, t, fx.texture(), t]))
    assert [s.combine for s in sc.materials[0].textures] == ["", "MULTIPLY", ""]
    # a cube map's six faces are images of their own; a height map is a bump map, out of the chain
    cube = fx.texture([f"c{i}.dds" for i in range(6)], 8, 0, cube=1)
    sc = _scene(fx.stage_quad(ops=(5, 7, 4) + (1,) * 5, textures=[t, cube, fx.texture(["h.png"], normal=1)]))
    _, env, bump = sc.materials[0].textures
    assert env.kind == "environment" and env.combine == "ADD" and env.image == env.cube_faces[0]
    assert [sc.images[i].name for i in env.cube_faces] == [f"c{i}.dds" for i in range(6)]
    assert bump.kind == "bump" and bump.combine == "" and bump.cube_faces == ()
    # DOTPRODUCT3 (24): per-pixel lighting with a normal map
    sc = _scene(fx.stage_quad(ops=(5, 24) + (1,) * 6, tcs=(0, 1) + (0,) * 6, textures=[t, t]))
    normal = sc.materials[0].textures[1]
    assert (normal.kind, normal.combine, normal.uv_layer) == ("normal", "", "UVMap_1")


def test_texture_search_folder_is_the_third_place(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "wall.png").write_bytes(b"png")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.u3d").write_bytes(full_skinned_v2())
    sc = load(tmp_path / "models" / "m.u3d", texture_search_folder=str(tmp_path / "lib"))
    assert sc.images[sc.materials[1].textures[0].image].filepath == str(tmp_path / "lib" / "wall.png")


def test_v1_lods_metadata_and_bones():
    sc = _scene(v1_full())
    hi, lo = _node(sc, "hi"), _node(sc, "lo")
    assert lo.collection == "LOD1" and hi.collection == ""
    assert hi.extras["u3d_lod_max_camera_distance"] == pytest.approx(10.0)   # sqrt of the squared 100
    for n in (hi, lo):                                    # model-wide: on every mesh object
        assert n.extras["u3d_v1_cel_shading_strength"] == 0.5 and n.extras["u3d_v1_alpha_blending"] is False
    assert [b.name for b in sc.armatures[0].bones] == ["root", "child"]
    assert sc.meshes[0].skin.weights[0].tolist() == [0.75, 0.25]
