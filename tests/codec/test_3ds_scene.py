"""3DS -> Scene: geometry, smoothing, placement, hierarchy, instances, animation."""
import math

import numpy as np
import pytest

from addon.codec import axes
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ImportOptions, ids
from addon.codec.formats.studio3ds.read import read
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.formats.studio3ds.read import parse

from .fixtures_3ds import (ASSETS, CUBE_POINTS, CUBE_TRIS, GOOD, assimp_objects, build, build_lib3ds_placer, kf_node,
                           material, obj, outward, track, trimesh)


def load(data: bytes, **opts):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(**opts), w), w


def load_file(name: str, **opts):
    w = Warnings()
    return to_scene(read(ASSETS / name, None, w), ImportOptions(**opts), w), w


def world_points(sc, i):
    return axes.apply_points(sc.world_matrix(i), sc.meshes[sc.nodes[i].data].positions)


# -- smoothing groups ------------------------------------------------------------
def test_group_zero_is_flat_and_distinct_groups_do_not_share():
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, groups=np.zeros(12)))]), normals="EXACT")
    m = sc.meshes[0]
    tri = m.positions[m.corners.reshape(-1, 3)]
    face_n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    face_n /= np.linalg.norm(face_n, axis=1, keepdims=True)
    np.testing.assert_allclose(m.normals, np.repeat(face_n, 3, axis=0), atol=1e-6)


def test_normals_are_shared_only_within_a_group():
    # bottom (faces 0-1) and front (4-5) in group 1, every other side in group 2
    groups = np.full(12, 2)
    groups[[0, 1, 4, 5]] = 1
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, groups=groups))]), normals="EXACT")
    m = sc.meshes[0]
    corners = m.corners.reshape(-1, 3)
    # corner of vertex 0 in face 0 (bottom, group 1): bottom (0,0,-1) and front (0,-1,0) equally -> (0,-1,-1)/sqrt2
    k = 0 * 3 + list(corners[0]).index(0)
    np.testing.assert_allclose(m.normals[k], [0, -math.sqrt(0.5), -math.sqrt(0.5)], atol=1e-6)
    # corner of vertex 0 in face 10 (left side, group 2): only the left face touches it in group 2
    k = 10 * 3 + list(corners[10]).index(0)
    np.testing.assert_allclose(m.normals[k], [-1, 0, 0], atol=1e-6)


def test_smoothing_crosses_uv_seams_and_masks_share_by_bit():
    # three triangles fanned round the origin, each with its own copy of the origin vertex (a UV seam)
    pts = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 1], [0, 0, 0], [0, 1, 1], [-1, 0, 0], [0, 0, 0], [-1, 0, 0],
                    [0, -1, 1]], np.float32)
    tris = np.array([[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    sc, _ = load(build([obj("Fan", trimesh(pts, tris, groups=[1, 3, 2]))]), normals="KEEP")
    m = sc.meshes[0]
    p = pts[tris]
    fn = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])          # area weighted
    unit = lambda v: v / np.linalg.norm(v)
    # at the origin: face 0 (mask 1) shares with face 1 (mask 3) only; face 1 with both; face 2 with face 1
    np.testing.assert_allclose(m.normals[0], unit(fn[0] + fn[1]), atol=1e-6)
    np.testing.assert_allclose(m.normals[3], unit(fn[0] + fn[1] + fn[2]), atol=1e-6)
    np.testing.assert_allclose(m.normals[6], unit(fn[1] + fn[2]), atol=1e-6)


def test_groups_flags_vertex_flags_and_colour_are_kept():
    tri = trimesh(CUBE_POINTS, CUBE_TRIS, flags=np.arange(12) | 0x8000, groups=np.r_[np.arange(11), 0x80000000],
                  vertex_flags=np.arange(8) + 0x100)
    tri.add(ids.MESH_COLOR, 7)
    sc, _ = load(build([obj("Box", tri)]))
    m = sc.meshes[0]
    assert m.face_attributes["smoothing_groups"].dtype == np.int32
    np.testing.assert_array_equal(m.face_attributes["smoothing_groups"].view(np.uint32), np.r_[np.arange(11), 0x80000000])
    np.testing.assert_array_equal(m.face_attributes["face_flags"], np.arange(12) | 0x8000)
    np.testing.assert_array_equal(m.vertex_attributes["vertex_flags"], np.arange(8) + 0x100)
    assert m.extras["3ds_color"] == 7


def test_default_face_flags_need_no_attribute_and_export_writes_them_back():
    from addon.codec.formats.studio3ds.from_scene import from_scene
    from addon.codec.formats.studio3ds.options import ExportOptions
    from addon.codec.formats.studio3ds.write import encode_bytes

    def flags_after_round_trip(flags):
        sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, flags=flags))]))
        kept = "face_flags" in sc.meshes[0].face_attributes
        back = parse(encode_bytes(from_scene(sc, ExportOptions(), Warnings())), Warnings())
        (fc,) = [c for c in back.root.walk() if c.cid == ids.FACE_ARRAY]
        return kept, fc.data[:, 3].tolist()

    assert flags_after_round_trip(7) == (False, [7] * 12)             # every face the default: no attribute
    odd = np.r_[np.full(11, 7), 3]
    assert flags_after_round_trip(odd) == (True, odd.tolist())        # one face not: all kept


def test_uvs_become_a_corner_layer():
    uv = np.column_stack([np.arange(8) / 8, np.arange(8) / 16]).astype(np.float32)
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, uv=uv))]))
    m = sc.meshes[0]
    np.testing.assert_allclose(m.uv_layers["UVMap"], uv[CUBE_TRIS.ravel()])


def test_several_materials_per_object():
    tri = trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Blue", range(6, 12)), ("Red", range(6))])
    sc, _ = load(build([obj("Box", tri)], materials=[material("Red"), material("Blue")]))
    m = sc.meshes[0]
    assert [sc.materials[s].name for s in m.materials] == ["Blue", "Red"]
    np.testing.assert_array_equal(m.face_material, [1] * 6 + [0] * 6)


def test_hidden_and_shadow_flags():
    o = obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))
    o.children[:0] = [Chunk(ids.OBJ_HIDDEN), Chunk(ids.OBJ_DOESNT_CAST), Chunk(ids.OBJ_DONT_RCVSHADOW)]
    sc, _ = load(build([o, obj("Other", trimesh(CUBE_POINTS, CUBE_TRIS))]))
    assert sc.nodes[0].hide and not sc.nodes[0].cast_shadow and sc.nodes[0].extras["3ds_no_receive_shadows"] == 1
    assert not sc.nodes[1].hide and sc.nodes[1].cast_shadow


# -- placement -------------------------------------------------------------------
def test_without_keyframer_the_stored_points_are_the_placement():
    m = np.eye(4)
    m[:3, 3] = (5, 6, 7)
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS + [5, 6, 7], CUBE_TRIS, matrix=m))]))
    np.testing.assert_allclose(sc.nodes[0].matrix, m)
    np.testing.assert_allclose(sc.meshes[0].positions, CUBE_POINTS, atol=1e-6)   # made local by inverse(M)
    np.testing.assert_allclose(world_points(sc, 0), CUBE_POINTS + [5, 6, 7], atol=1e-5)


def test_pivot_is_applied_as_the_notes_say():
    # node at (5,0,0), pivot (1,0,0), M identity: placed = T(5,0,0) T(-1,0,0) v
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[kf_node(0, "Box", pos=(5, 0, 0),
                                                                                    pivot=(1, 0, 0))])
    sc, _ = load(data)
    np.testing.assert_allclose(world_points(sc, 0), CUBE_POINTS + [4, 0, 0], atol=1e-6)


def test_parent_by_node_id_not_by_position_and_dummies_are_empties():
    nodes = [kf_node(20, "Box", parent=10, pos=(0, 0, 1)), kf_node(10, "$$$DUMMY", instance="Holder", pos=(3, 0, 0))]
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=nodes))
    holder = next(i for i, n in enumerate(sc.nodes) if n.name == "Holder")
    box = next(i for i, n in enumerate(sc.nodes) if n.name == "Box")
    assert sc.nodes[holder].kind == "EMPTY" and sc.nodes[box].parent == holder
    np.testing.assert_allclose(world_points(sc, box), CUBE_POINTS + [3, 0, 1], atol=1e-6)


def test_instances_share_one_mesh():
    sc, _ = load_file("cube_four_instances.3ds")
    meshes = [n.data for n in sc.nodes if n.kind == "MESH"]
    assert len(meshes) == 4 and len(set(meshes)) == 1 and len(sc.meshes) == 1


def test_cube_hierarchy_has_two_dummies_with_four_children_each():
    sc, _ = load_file("cube_hierarchy.3ds")
    dummies = [i for i, n in enumerate(sc.nodes) if n.kind == "EMPTY"]
    assert len(dummies) == 2
    for d in dummies:
        assert len(sc.children(d)) == 4


X_FLIP = np.diag([-1.0, 1.0, 1.0, 1.0])


def _at(x, y, z) -> np.ndarray:
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def mirrored_files() -> dict[str, bytes]:
    """Files with a mirrored 0x4160 (det < 0). The stored points are world space; in A and C their
    winding (CUBE_TRIS) faces outward there, as the 3D editor shows them."""
    cube = CUBE_POINTS - 0.5
    files = {}
    # A: as lib3ds and assimp expect 3ds to write it: positive node scale, 0x4160 = node @ X_FLIP
    m = _at(3, 0, 0) @ X_FLIP
    files["A"] = build([obj("Box", trimesh(axes.apply_points(_at(3, 0, 0), cube), CUBE_TRIS, matrix=m))],
                       kf_nodes=[kf_node(0, "Box", pos=(3, 0, 0))])
    # B: a negative node scale as well (the two mirrors cancel in lib3ds and assimp)
    files["B"] = build([obj("Box", trimesh(axes.apply_points(m, cube), CUBE_TRIS, matrix=m))],
                       kf_nodes=[kf_node(0, "Box", pos=(3, 0, 0), scl=(-1, 1, 1))])
    # C: mirrored in Y and turned, with a pivot and a parent; readers flip X all the same
    w = _at(1, 2, 3) @ axes.to4(axes.quat_to_matrix(axes.axis_angle_to_quat([0, 0, 1], 0.5)))
    m = w @ np.diag([1.0, -1.0, 1.0, 1.0])
    files["C"] = build([obj("Box", trimesh(axes.apply_points(w, cube), CUBE_TRIS, matrix=m)),
                        obj("Base", trimesh(cube, CUBE_TRIS))],
                       kf_nodes=[kf_node(0, "Base", pos=(0, 0, -2)),
                                 kf_node(1, "Box", parent=0, pos=(1, 2, 5), rot=(0.5, 0, 0, 1), pivot=(0.5, 0.25, 0))])
    # D: no keyframer: the stored points are the placement
    files["D"] = build([obj("Box", trimesh(axes.apply_points(w, cube), CUBE_TRIS, matrix=m))])
    return files


@pytest.mark.parametrize("case", "ABCD")
def test_mirrored_objects_are_placed_as_lib3ds_and_assimp_place_them(case, lib3ds_place, tmp_path):
    data = mirrored_files()[case]
    path = tmp_path / f"{case}.3ds"
    path.write_bytes(data)
    sc, _ = load(data, normals="EXACT")   # the normals are checked below
    ours = {n.name: i for i, n in enumerate(sc.nodes) if n.kind == "MESH"}
    theirs = {name: (p, tris, box) for name, p, tris, box in assimp_objects(path, tmp_path)}
    ref = lib3ds_place(path)
    if case == "D":                                      # no hierarchy: assimp names the mesh nodes itself
        theirs = {"Box": theirs.pop("3DSMesh_0")}
    assert sorted(theirs) == sorted(ours)
    for name, i in ours.items():
        w = world_points(sc, i)
        box = np.r_[w.min(0), w.max(0)]
        np.testing.assert_allclose(box, theirs[name][2], atol=1e-5, err_msg=f"{case} {name}: assimp")
        if case != "D":                                  # lib3ds makes no nodes without a keyframer
            np.testing.assert_allclose(box, ref[name][0], atol=1e-5, err_msg=f"{case} {name}: lib3ds")
        # the same placed triangles, corner for corner (assimp keeps the face order: one material)
        m = sc.meshes[sc.nodes[i].data]
        np.testing.assert_allclose(w[m.corners].reshape(-1, 3, 3), theirs[name][0][theirs[name][1]], atol=1e-5)
    if case in "ACD":
        # stored outward in world: outward in Blender too, with no negative scale
        i = ours["Box"]
        m = sc.meshes[sc.nodes[i].data]
        tris = m.corners.reshape(-1, 3)
        assert outward(m.positions, tris).all()
        assert np.linalg.det(sc.world_matrix(i)[:3, :3]) > 0
        geo = np.cross(*(m.positions[tris[:, k]] - m.positions[tris[:, 0]] for k in (1, 2)))
        assert (np.einsum("ij,ij->i", m.normals.reshape(-1, 3, 3)[:, 0], geo) > 0).all()
        assert outward(theirs["Box"][0], theirs["Box"][1]).all()             # assimp agrees
    if case in "AD":                                     # the placement is the stored points
        stored = parse(data).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT).value(ids.POINT_ARRAY)
        np.testing.assert_allclose(world_points(sc, ours["Box"]), stored, atol=1e-5)


@pytest.fixture(scope="module")
def lib3ds_place(tmp_path_factory):
    """The placement lib3ds computes, from a small C program built against Debian's lib3ds-dev."""
    return build_lib3ds_placer(tmp_path_factory.mktemp("lib3ds"))


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_every_corpus_object_is_placed_where_lib3ds_places_it(path, lib3ds_place):
    sc, _ = load_file(path.name, use_keyframes=False)
    ref = lib3ds_place(path)
    model = read(path, None, Warnings())
    stored = {o.data: o.find(ids.N_TRI_OBJECT).value(ids.POINT_ARRAY) for o in model.editor().find_all(ids.OBJECT)
              if o.find(ids.N_TRI_OBJECT) is not None}
    checked = 0
    for i, n in enumerate(sc.nodes):
        if n.kind != "MESH":
            continue
        w = world_points(sc, i)
        box = np.r_[w.min(0), w.max(0)]
        if path.name == "CameraRollAnimWithChildObject.3ds" and n.name == "Box02":
            # lib3ds gives a camera node a translation only, so a child of the camera misses the
            # camera's aim; 3ds Max stored the frame-0 world points (0x4110, current frame 0),
            # and our placement, which inherits the camera's full transform, lands exactly on them.
            s = stored["Box02"]
            np.testing.assert_allclose(box, np.r_[s.min(0), s.max(0)], atol=1e-3)
            assert not np.allclose(box, ref["Box02"][0], atol=1.0)
        elif ref:
            assert any(np.allclose(box, r, atol=1e-3 * max(1.0, np.abs(r).max())) for r in ref[n.name]), n.name
        else:
            # no keyframer: lib3ds makes no nodes and draws the stored points as they are
            s = stored[n.source_name or n.name]
            np.testing.assert_allclose(box, np.r_[s.min(0), s.max(0)], atol=1e-4)
        checked += 1
    assert checked == len([n for n in sc.nodes if n.kind == "MESH"]) > 0


# Objects where we knowingly differ from assimp (and lib3ds): why, with the numbers, in
# test_assets/3ds/PLACEMENT.md.
ASSIMP_EXCEPTIONS = {"CameraRollAnimWithChildObject.3ds": ["Box02"]}


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_every_corpus_object_is_placed_where_assimp_places_it(path, tmp_path):
    sc, _ = load_file(path.name, use_keyframes=False, normals="KEEP")   # the stored vertices, compared below
    theirs = [box for _, _, _, box in assimp_objects(path, tmp_path)]
    ours = [(n.name, world_points(sc, i)) for i, n in enumerate(sc.nodes) if n.kind == "MESH"]
    assert len(ours) == len(theirs) > 0
    differ = []
    for name, w in ours:
        box = np.r_[w.min(0), w.max(0)]
        tol = 1e-3 * max(1.0, np.abs(box).max())
        k = next((k for k, b in enumerate(theirs) if np.allclose(box, b, atol=tol)), None)
        if k is None:
            differ.append(name)
        else:
            theirs.pop(k)                        # each assimp object matches one of ours
    assert differ == ASSIMP_EXCEPTIONS.get(path.name, [])
    if differ:
        # Box02: ours is where 3ds Max stored it (0x4110 points, written at frame 0)
        model = read(path, None, Warnings())
        stored = next(o for o in model.editor().find_all(ids.OBJECT) if o.data == "Box02")
        pts = stored.find(ids.N_TRI_OBJECT).value(ids.POINT_ARRAY)
        np.testing.assert_allclose(dict(ours)["Box02"], pts, atol=1e-3)


# -- animation -------------------------------------------------------------------
def test_rotation_keys_are_deltas_with_the_angle_inverted():
    rot = track(ids.ROT_TRACK, [0, 10, 20], [[0, 0, 0, 1], [math.pi / 2, 0, 0, 1], [math.pi / 2, 0, 0, 1]])
    node = kf_node(0, "Box")
    node.children[3] = rot
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node]))
    ch = next(c for c in sc.animations[0].channels if c.path == "rotation_quaternion")
    np.testing.assert_allclose(ch.frames, [0, 10, 20])
    h = math.sqrt(0.5)
    # key 1: -90 deg about Z; key 2: another -90 (accumulated): -180 deg about Z
    np.testing.assert_allclose(ch.values[1], [h, 0, 0, -h], atol=1e-6)
    np.testing.assert_allclose(np.abs(ch.values[2]), [0, 0, 0, 1], atol=1e-6)


def test_rotating_cube_spins_about_629_degrees():
    sc, _ = load_file("RotatingCube.3DS")
    q = next(c for c in sc.animations[0].channels if c.path == "rotation_quaternion").values
    first = math.degrees(2 * math.acos(min(1.0, abs(q[0, 0]))))
    steps = np.degrees(2 * np.arccos(np.clip(np.abs(np.einsum("ij,ij->i", q[1:], q[:-1])), 0, 1)))
    assert abs(first + steps.sum() - 629) < 1.0
    assert steps.max() < 91                          # the 357-degree key turns the long way, in steps


def test_frame_range_tracks_and_tcb():
    tcb = np.full((2, 5), np.nan, np.float32)
    tcb[1, 0] = 0.5
    node = kf_node(0, "Box", extra=[track(ids.HIDE_TRACK, [5, 9], np.zeros((2, 0)))])
    node.children[2] = track(ids.POS_TRACK, [0, 10], [[0, 0, 0], [1, 2, 3]], key_flags=[0, 1], tcb=tcb)
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=[node], seg=(3, 42)))
    assert (sc.frame_start, sc.frame_end) == (3, 42)
    a = sc.animations[0]
    assert (a.frame_start, a.frame_end) == (3, 42)
    loc = next(c for c in a.channels if c.path == "location")
    np.testing.assert_allclose(loc.values, [[0, 0, 0], [1, 2, 3]])
    assert loc.interpolation == "BEZIER"
    assert sc.nodes[0].extras["3ds_track_pos_key_flags"] == [0, 1]
    assert sc.nodes[0].extras["3ds_track_pos_tcb"][5] == 0.5
    hide = next(c for c in a.channels if c.path == "hide_viewport")
    # toggles at 5 and 9, visible before the first one
    np.testing.assert_allclose(hide.frames, [0, 5, 9])
    np.testing.assert_allclose(hide.values[:, 0], [0, 1, 0])
    assert hide.interpolation == "CONSTANT"


def test_use_keyframes_off_gives_no_actions():
    sc, _ = load_file("RotatingCube.3DS", use_keyframes=False)
    assert sc.animations == []
