"""Scene -> 3DS: round trips through our reader, lib3ds and assimp; limits, names, smoothing."""
import re
import subprocess

import numpy as np
import pytest

from addon.codec import axes, save
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ExportOptions, ImportOptions, ids
from addon.codec.formats.studio3ds import from_scene as export_mod
from addon.codec.formats.studio3ds.read import read
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.from_scene import from_scene
from addon.codec.formats.studio3ds.keyframer import sample
from addon.codec.formats.studio3ds.read import parse
from addon.codec.formats.studio3ds.write import encode_bytes

from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.scene import Animation, Camera, Channel, Image, Light, Material, Mesh, Node, Scene, TextureSlot, World

from .fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, GOOD


def export(sc, **opts):
    w = Warnings()
    return encode_bytes(from_scene(sc, ExportOptions(**opts), w)), w


def reimport(data, **opts):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(**opts), w)


def load_file(path, **opts):
    return to_scene(read(path, None, Warnings()), ImportOptions(**opts), Warnings())


def local_at(sc, i, t):
    """A node's local matrix at frame t from its channels (linear), else its static matrix."""
    n = sc.nodes[i]
    chans = {c.path: c for a in sc.animations for c in a.channels if c.target == i}
    if not chans:
        return n.matrix
    loc, rot, scl = axes.decompose(n.matrix)
    if "location" in chans:
        loc = sample(chans["location"].frames, chans["location"].values, t)
    if "rotation_quaternion" in chans:
        rot = sample(chans["rotation_quaternion"].frames, chans["rotation_quaternion"].values, t)
    if "scale" in chans:
        scl = sample(chans["scale"].frames, chans["scale"].values, t)
    return axes.compose(loc, rot, scl)


def mesh_bounds(sc, t=0.0):
    out = []
    for i, n in enumerate(sc.nodes):
        if n.kind != "MESH":
            continue
        m, j = np.eye(4), i
        while j >= 0:
            m = local_at(sc, j, t) @ m
            j = sc.nodes[j].parent
        p = axes.apply_points(m, sc.meshes[n.data].positions)
        out.append(np.round(np.r_[p.min(0), p.max(0)], 3))
    return sorted(map(tuple, out))


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_corpus_round_trip_keeps_world_bounds_and_animation(path):
    sc = load_file(path)
    data, _ = export(sc, name_limit=16)
    sc2 = reimport(data)
    assert len(sc2.nodes) == len(sc.nodes)
    assert sum(len(m.faces) for m in sc2.meshes) == sum(len(m.faces) for m in sc.meshes)
    frames = [0.0]
    if sc.animations:
        a = sc.animations[0]
        frames += [float(f) for f in np.linspace(a.frame_start, a.frame_end, 7)]
    for t in frames:
        assert mesh_bounds(sc2, t) == pytest.approx(mesh_bounds(sc, t), abs=2e-3), t
        np.testing.assert_allclose(node_positions(sc2, t), node_positions(sc, t), atol=2e-3)


def node_positions(sc, t):
    """World position of every node (meshes, empties, cameras, lights) at frame t, sorted."""
    out = []
    for i in range(len(sc.nodes)):
        m, j = np.eye(4), i
        while j >= 0:
            m = local_at(sc, j, t) @ m
            j = sc.nodes[j].parent
        out.append(tuple(np.round(m[:3, 3], 3)))
    return np.array(sorted(out))


def _assimp_counts(path):
    out = subprocess.run(["assimp", "info", str(path)], capture_output=True, text=True, timeout=60).stdout
    counts = {}
    for key in ("Nodes", "Meshes", "Faces", "Cameras", "Lights"):
        m = re.search(key + r":\s+(\d+)", out)
        counts[key] = int(m.group(1)) if m else None
    return counts


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_assimp_reads_our_export_as_it_reads_the_original(path, tmp_path):
    data, _ = export(load_file(path), name_limit=16)
    out = tmp_path / "out.3ds"
    out.write_bytes(data)
    ours, original = _assimp_counts(out), _assimp_counts(path)
    assert ours["Nodes"] is not None and ours["Faces"] > 0
    assert ours == original


def three_cubes() -> Scene:
    sc = Scene()
    sc.meshes.append(Mesh.from_triangles("Cube", CUBE_POINTS, CUBE_TRIS))
    for k in range(3):
        m = np.eye(4)
        m[:3, 3] = (3 * k, 0, 0)
        sc.nodes.append(Node(name=f"Cube{k}", kind="MESH", data=0, matrix=m))
    return sc


def test_assimp_counts_objects_and_triangles_of_a_generated_scene(tmp_path):
    sc = three_cubes()
    sc.meshes.append(Mesh.from_triangles("Other", CUBE_POINTS * 2, CUBE_TRIS[:5]))
    sc.nodes.append(Node(name="Other", kind="MESH", data=1))
    data, _ = export(sc)
    (tmp_path / "g.3ds").write_bytes(data)
    c = _assimp_counts(tmp_path / "g.3ds")
    assert c["Nodes"] == 4 + 1                 # assimp adds a root node
    assert c["Faces"] == 12 + 5                # instances share the cube's 12 faces


def test_meshes_converted_two_at_a_time_write_the_bytes_one_at_a_time_writes(monkeypatch):
    sc = Scene()
    for k in range(5):                        # distinct meshes, one of them under a mirroring node
        m = Mesh.from_triangles(f"Part{k}", CUBE_POINTS * (k + 1), CUBE_TRIS[: 12 - k])
        m.uv_layers["UVMap"] = np.random.default_rng(k).random((len(m.corners), 2)).astype(np.float32)
        sc.meshes.append(m)
        sc.nodes.append(Node(name=f"Part{k}", kind="MESH", data=k, matrix=np.diag([-1.0 if k == 2 else 1.0, 1, 1, 1])))
    monkeypatch.setattr(export_mod, "PARALLEL_CORNERS", 10 ** 12)
    alone, _ = export(sc)
    monkeypatch.setattr(export_mod, "PARALLEL_CORNERS", 0)
    calls = []
    real = export_mod.map_two
    monkeypatch.setattr(export_mod, "map_two", lambda fn, items, threaded=True: calls.append(threaded) or real(fn, items, threaded))
    together, _ = export(sc)
    assert calls == [True] and together == alone
    objects = parse(together).editor().find_all(ids.OBJECT)
    assert [(o.data, len(o.find(ids.N_TRI_OBJECT).find(ids.FACE_ARRAY).data)) for o in objects] == \
        [(f"Part{k}", 12 - k) for k in range(5)]


def test_instances_are_written_once_with_instance_names():
    data, _ = export(three_cubes())
    m = parse(data)
    assert len(m.editor().find_all(ids.OBJECT)) == 1
    nodes = m.keyframer().find_all(ids.OBJECT_NODE_TAG)
    assert [n.value(ids.NODE_HDR)[0] for n in nodes] == ["Cube0"] * 3
    assert [n.value(ids.INSTANCE_NAME) for n in nodes] == [None, "Cube1", "Cube2"]
    sc2 = reimport(data)
    assert len(sc2.meshes) == 1 and [n.data for n in sc2.nodes] == [0, 0, 0]


def test_hierarchy_is_written_with_node_ids():
    sc = load_file(ASSETS / "cube_hierarchy.3ds")
    m = parse(export(sc)[0])
    nodes = m.keyframer().find_all(ids.OBJECT_NODE_TAG)
    id_of = {n.value(ids.NODE_ID): n for n in nodes}
    assert sorted(id_of) == list(range(10))
    dummies = [n.value(ids.NODE_ID) for n in nodes if n.value(ids.NODE_HDR)[0] == "$$$DUMMY"]
    assert len(dummies) == 2
    for d in dummies:
        assert sum(n.value(ids.NODE_HDR)[3] == d for n in nodes) == 4


def test_rotation_is_written_as_inverted_deltas():
    sc = three_cubes()
    h = np.sqrt(0.5)
    quats = np.array([[1, 0, 0, 0], [h, 0, 0, h], [0, 0, 0, 1]], float)      # 0, +90, +180 about Z
    sc.animations.append(Animation("A", 0, 20, channels=[Channel(0, "rotation_quaternion", np.array([0., 10, 20]),
                                                                 quats)]))
    m = parse(export(sc)[0])
    rot = m.keyframer().find(ids.OBJECT_NODE_TAG).value(ids.ROT_TRACK)
    np.testing.assert_allclose(rot.values[:, 0], [0, -np.pi / 2, -np.pi / 2], atol=1e-6)   # each key +90, inverted
    np.testing.assert_allclose(np.abs(rot.values[1:, 3]), [1, 1], atol=1e-6)


def big_grid(n=260):
    """A (n+1) x (n+1) grid: 68121 vertices and 135200 triangles for n = 260."""
    g = np.stack(np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"), -1).reshape(-1, 2)
    pts = np.column_stack([g, np.zeros(len(g))]).astype(np.float32)
    idx = np.arange((n + 1) ** 2).reshape(n + 1, n + 1)
    a, b, c, d = idx[:-1, :-1].ravel(), idx[1:, :-1].ravel(), idx[1:, 1:].ravel(), idx[:-1, 1:].ravel()
    return pts, np.concatenate([np.column_stack([a, b, c]), np.column_stack([a, c, d])])


def test_split_part_names_skip_names_other_objects_have():
    pts, tris = big_grid()
    far = np.eye(4)
    far[:3, 3] = (1000, 0, 0)
    sc = Scene(meshes=[Mesh.from_triangles("Grid", pts, tris), Mesh.from_triangles("c", CUBE_POINTS, CUBE_TRIS)],
               nodes=[Node("Grid", "MESH", 0), Node("GRID.001", "MESH", 1, matrix=far)])
    data, w = export(sc)
    m = parse(data)
    names = [o.data for o in m.editor().find_all(ids.OBJECT)]
    assert len({x.lower() for x in names}) == len(names) == 5
    assert names[0] == "Grid" and names[-1] == "GRID.001"            # the cube keeps its own name
    assert names[1:4] == ["Grid.002", "Grid.003", "Grid.004"]
    assert any("'Grid.001'" in x and "another object" in x for x in w.as_list())
    assert [k.value(ids.NODE_HDR)[0] for k in m.keyframer().find_all(ids.OBJECT_NODE_TAG)] == names
    w2 = Warnings()
    back = to_scene(m, ImportOptions(), w2)
    assert not w2.as_list()
    cube = next(n for n in back.nodes if n.name == "GRID.001")
    assert len(back.meshes[cube.data].faces) == 12
    assert sum(len(back.meshes[n.data].faces) for n in back.nodes if n.name != "GRID.001") == len(tris)


def test_big_meshes_are_split_with_a_warning():
    n = 260
    pts, tris = big_grid(n)
    sc = Scene(meshes=[Mesh.from_triangles("Grid", pts, tris)], nodes=[Node("Grid", "MESH", 0)])
    data, w = export(sc)
    objs = parse(data).editor().find_all(ids.OBJECT)
    assert len(objs) >= 3                                        # 135200 faces need at least three parts
    assert [o.data for o in objs[:2]] == ["Grid", "Grid.001"]
    for o in objs:
        tri = o.find(ids.N_TRI_OBJECT)
        assert len(tri.value(ids.POINT_ARRAY)) <= 65535 and len(tri.value(ids.FACE_ARRAY)) <= 65535
    assert any("more than 65535" in x for x in w.as_list())
    sc2 = reimport(data)
    assert sum(len(m.faces) for m in sc2.meshes) == len(tris)
    assert mesh_bounds(sc2)[0][:3] == (0, 0, 0) and max(b[3] for b in mesh_bounds(sc2)) == n


def test_names_are_made_unique_within_the_limit():
    sc = three_cubes()
    sc.meshes += [Mesh.from_triangles("m", CUBE_POINTS, CUBE_TRIS) for _ in range(2)]
    sc.nodes = [Node("VeryLongObjectName1", "MESH", 1), Node("VeryLongObjectName2", "MESH", 2)]
    data, w = export(sc, name_limit=10)
    names = [o.data for o in parse(data).editor().find_all(ids.OBJECT)]
    assert names == ["VeryLongOb", "VeryLo.001"]
    assert sum("unique within 10" in x for x in w.as_list()) == 2
    data16, _ = export(sc, name_limit=16)
    assert [o.data for o in parse(data16).editor().find_all(ids.OBJECT)] == ["VeryLongObjectNa", "VeryLongObje.001"]


def test_texture_names_can_be_83():
    sc = three_cubes()
    sc.images.append(Image("my long texture.png", "/x/my long texture.png"))
    sc.materials.append(Material("M", textures=[TextureSlot("base_color", 0, rotation=np.pi / 2, scale=(2, 3))]))
    sc.meshes[0].materials = [0]
    sc.meshes[0].face_material = np.zeros(12, np.int32)
    data, w = export(sc, texture_names_83=True)
    mat = parse(data).editor().find(ids.MAT_ENTRY)
    tex = mat.find(0xA200)
    assert tex.value(ids.MAT_MAPNAME) == "MYLONGTE.PNG" and any("8.3" in x for x in w.as_list())
    assert tex.value(ids.MAT_MAP_ANG) == pytest.approx(90.0)
    assert (tex.value(ids.MAT_MAP_USCALE), tex.value(ids.MAT_MAP_VSCALE)) == (2.0, 3.0)
    data2, _ = export(sc)
    assert parse(data2).editor().find(ids.MAT_ENTRY).find(0xA200).value(ids.MAT_MAPNAME) == "my long texture.png"


def test_smoothing_groups_are_built_from_normals_and_uv_seams_split_vertices():
    # a flat-shaded cube: every corner carries its face normal -> group 0 everywhere
    sc = three_cubes()
    m = sc.meshes[0]
    p = CUBE_POINTS[CUBE_TRIS]
    fn = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    m.normals = np.repeat(fn / np.linalg.norm(fn, axis=1, keepdims=True), 3, axis=0).astype(np.float32)
    m.uv_layers["UVMap"] = np.zeros((36, 2), np.float32)
    tri = parse(export(sc)[0]).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    assert (tri.find(ids.FACE_ARRAY).value(ids.SMOOTH_GROUP) == 0).all()
    assert len(tri.value(ids.POINT_ARRAY)) == 8                         # one UV per vertex: no split
    # a smooth cube (corner normals = vertex direction) -> one group; a UV seam on one corner -> one more vertex
    m.normals = ((CUBE_POINTS - 0.5) / np.linalg.norm(CUBE_POINTS - 0.5, axis=1, keepdims=True))[m.corners]
    m.uv_layers["UVMap"][0] = (0.5, 0.5)
    tri = parse(export(sc)[0]).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    groups = tri.find(ids.FACE_ARRAY).value(ids.SMOOTH_GROUP)
    assert len(set(groups.tolist())) == 1 and groups[0] != 0
    assert len(tri.value(ids.POINT_ARRAY)) == 9
    # the flat cube comes back with exactly its face normals
    m.normals = np.repeat(fn / np.linalg.norm(fn, axis=1, keepdims=True), 3, axis=0).astype(np.float32)
    back = reimport(export(sc)[0], normals="EXACT").meshes[0]
    np.testing.assert_allclose(back.normals, m.normals, atol=1e-6)


def test_imported_groups_are_written_back_unchanged():
    path = ASSETS / "mar_rifle.3ds"
    orig = read(path, None, Warnings()).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    data, _ = export(load_file(path))
    new = parse(data).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    np.testing.assert_array_equal(new.find(ids.FACE_ARRAY).value(ids.SMOOTH_GROUP),
                                  orig.find(ids.FACE_ARRAY).value(ids.SMOOTH_GROUP))
    np.testing.assert_array_equal(new.find(ids.FACE_ARRAY).data[:, 3], orig.find(ids.FACE_ARRAY).data[:, 3])


def test_materials_cameras_and_lights_survive_a_round_trip():
    src = ASSETS / "CameraRollAnim.3ds"
    sc = load_file(src)
    sc2 = reimport(export(sc)[0])
    assert len(sc2.cameras) == 1 and sc2.cameras[0].lens == pytest.approx(sc.cameras[0].lens, rel=1e-5)
    cam = next(n for n in sc2.nodes if n.kind == "CAMERA")
    assert sc2.nodes[cam.target].name.endswith(".Target")


def test_a_failed_export_leaves_the_existing_file_alone(tmp_path, monkeypatch):
    target = tmp_path / "keep.3ds"
    target.write_bytes(b"old contents")

    def boom(*a, **k):
        raise RuntimeError("export failed half way")
    monkeypatch.setattr(export_mod, "mesh_chunks", boom)
    with pytest.raises(RuntimeError):
        save(three_cubes(), target)
    assert target.read_bytes() == b"old contents"
    monkeypatch.undo()
    save(three_cubes(), target)
    assert target.read_bytes()[:2] == b"\x4d\x4d"


def full_scene() -> Scene:
    """Meshes, hierarchy, a target camera, a spot with target, an omni, a textured material, animation."""
    sc = three_cubes()
    sc.nodes[1].parent = 0
    sc.meshes.append(Mesh.from_triangles("Own", CUBE_POINTS, CUBE_TRIS))
    sc.nodes[2].data = 1                      # its own object: shadow flags are per object, not per instance
    sc.nodes[2].hide = True
    sc.nodes[2].cast_shadow = False
    sc.images.append(Image("WOOD.PNG", ""))
    sc.materials.append(Material("Wood", base_color=(0.5, 0.25, 0.125), alpha=0.5, two_sided=True, roughness=0.3,
                                 textures=[TextureSlot("base_color", 0, scale=(2, 4), offset=(0.5, 0.25),
                                                       rotation=np.radians(30), strength=0.6),
                                           TextureSlot("bump", 0)]))
    sc.meshes[0].materials = [0]
    sc.meshes[0].face_material = np.zeros(12, np.int32)
    sc.cameras.append(Camera("Cam", lens=35.0, clip_start=0.5, clip_end=250.0))
    sc.lights += [Light("Spot", "SPOT", (1.0, 0.5, 0.0), 2000.0, np.radians(40), 0.25, True, True, 5.0, 50.0),
                  Light("Omni", "POINT", (0.0, 1.0, 0.0), 500.0, cast_shadow=False)]
    tgt = sc.add_node(Node("Cam.Target", "EMPTY", matrix=_at(0, 0, 0)))
    sc.add_node(Node("Cam", "CAMERA", 0, matrix=_at(0, -10, 2), target=tgt))
    stgt = sc.add_node(Node("Spot.Target", "EMPTY", matrix=_at(1, 1, 0)))
    sc.add_node(Node("Spot", "LIGHT", 0, matrix=_at(5, 5, 5), target=stgt))
    sc.add_node(Node("Omni", "LIGHT", 1, matrix=_at(-5, 0, 3)))
    sc.world = World(ambient=(0.1, 0.1, 0.1), background="SOLID", color=(0.0, 0.0, 0.5))
    sc.frame_start, sc.frame_end = 0, 20
    frames = np.array([0.0, 10.0, 20.0])
    sc.animations.append(Animation("Anim", 0, 20, channels=[
        Channel(0, "location", frames, np.array([[0, 0, 0], [0, 5, 0], [0, 5, 5]], float)),
        Channel(0, "scale", frames, np.array([[1, 1, 1], [2, 2, 2], [1, 1, 1]], float))]))
    return sc


def _at(x, y, z):
    m = np.eye(4)
    m[:3, 3] = (x, y, z)
    return m


def test_full_scene_round_trip():
    sc = full_scene()
    data, w = export(sc)
    back = reimport(data)
    assert [n.kind for n in back.nodes].count("MESH") == 3
    assert sorted(n.name for n in back.nodes if n.kind == "EMPTY") == ["Cam.Target", "Spot.Target"]
    # instances read back as "<object>.<instance>"
    hidden = next(n for n in back.nodes if n.name == "Cube2")
    assert hidden.hide and not hidden.cast_shadow
    child = next(n for n in back.nodes if n.name == "Cube0.Cube1")
    assert back.nodes[child.parent].name == "Cube0"
    m = back.materials[0]
    assert m.name == "Wood" and m.two_sided and m.alpha == pytest.approx(0.5)
    np.testing.assert_allclose(m.base_color, (128 / 255, 64 / 255, 32 / 255), atol=1e-6)  # 8-bit colours
    t = m.textures[0]
    assert (t.kind, t.scale, t.offset, t.strength) == ("base_color", (2.0, 4.0), (0.5, 0.25), 0.6)
    assert t.rotation == pytest.approx(np.radians(30), abs=1e-6)
    assert m.textures[1].kind == "bump"
    cam = back.cameras[0]
    assert cam.lens == pytest.approx(35.0, rel=1e-4) and (cam.clip_start, cam.clip_end) == (0.5, 250.0)
    spot, omni = back.lights
    assert spot.type == "SPOT" and spot.spot_size == pytest.approx(np.radians(40), abs=1e-6)
    assert spot.spot_blend == pytest.approx(0.25, abs=1e-6) and spot.energy == pytest.approx(2000.0)
    assert spot.use_attenuation and (spot.attenuation_start, spot.attenuation_end) == (5.0, 50.0)
    assert omni.type == "POINT" and omni.color == (0.0, 1.0, 0.0) and not omni.cast_shadow
    for kind in ("CAMERA", "LIGHT"):
        for n in (n for n in back.nodes if n.kind == kind and n.name != "Omni"):
            assert back.nodes[n.target].name == n.name + ".Target"
    assert back.world.ambient == pytest.approx((0.1, 0.1, 0.1)) and back.world.color == (0.0, 0.0, 0.5)
    assert back.world.background == "SOLID"
    assert (back.frame_start, back.frame_end) == (0, 20)
    for t in (0.0, 5.0, 10.0, 15.0, 20.0):
        assert mesh_bounds(back, t) == pytest.approx(mesh_bounds(sc, t), abs=1e-4), t


@pytest.mark.parametrize("path", GOOD, ids=lambda p: p.name)
def test_lib3ds_places_our_export_where_we_do(path, tmp_path):
    from .fixtures_3ds import build_lib3ds_placer
    sc = load_file(path, use_keyframes=False)
    out = tmp_path / "out.3ds"
    out.write_bytes(export(sc, name_limit=16)[0])
    rows = build_lib3ds_placer(tmp_path)(out)
    ours = mesh_bounds(reimport(out.read_bytes(), use_keyframes=False))
    theirs = sorted(tuple(np.round(b, 3)) for bs in rows.values() for b in bs)
    assert len(theirs) == len(ours)
    if path.name != "CameraRollAnimWithChildObject.3ds":        # lib3ds misplaces a camera's child
        np.testing.assert_allclose(np.array(theirs), np.array(ours), atol=2e-3 * max(1.0, np.abs(ours).max()))


def test_rotating_cube_keys_survive_import_and_export():
    path = ASSETS / "RotatingCube.3DS"
    orig = read(path, None, Warnings()).keyframer().find(ids.OBJECT_NODE_TAG).value(ids.ROT_TRACK)
    new = parse(export(load_file(path))[0]).keyframer().find(ids.OBJECT_NODE_TAG).value(ids.ROT_TRACK)
    np.testing.assert_array_equal(new.frames, orig.frames)
    # the same turn per key (angle x axis), including the 357-degree key at frame 146
    np.testing.assert_allclose(new.values[:, :1] * new.values[:, 1:], orig.values[:, :1] * orig.values[:, 1:],
                               atol=1e-5)
    assert abs(new.values[146, 0]) > 6.2


# -- mirrored objects -------------------------------------------------------------------
def _rz(angle, at=(0, 0, 0)):
    m = axes.to4(axes.quat_to_matrix(axes.axis_angle_to_quat([0, 0, 1], angle)))
    m[:3, 3] = at
    return m


def mirrored_scene() -> Scene:
    """Mirrored nodes (det < 0), their children (mirrored by inheritance), an unmirrored instance of a
    mirrored mesh, a mirror through an empty, and animated mirrored nodes."""
    cube = CUBE_POINTS - np.float32(0.5)
    sc = Scene(meshes=[Mesh.from_triangles(f"M{k}", cube * (1 + 0.25 * k), CUBE_TRIS) for k in range(5)])
    mir = np.diag([-1.0, 1.0, 1.0, 1.0])
    mir[:3, 3] = (5, 0, 0)
    sc.nodes += [Node("Mir", "MESH", 0, matrix=mir),
                 Node("Kid", "MESH", 1, parent=0, matrix=_rz(0.3, (0, 3, 0))),
                 Node("Inst", "MESH", 0, matrix=_rz(0.0, (0, -5, 0))),
                 Node("Dum", "EMPTY", parent=0, matrix=_rz(0.0, (0, 0, 4))),
                 Node("Sub", "MESH", 2, parent=3, matrix=_rz(-0.4, (1, 1, 0))),
                 Node("Anim", "MESH", 3, matrix=np.diag([-1.0, 1.0, 1.0, 1.0])),
                 Node("AKid", "MESH", 4, parent=5, matrix=_rz(0.0, (2, 0, 0)))]
    f = np.array([0.0, 10.0, 20.0])
    h = np.sqrt(0.5)
    sc.frame_start, sc.frame_end = 0, 20
    sc.animations.append(Animation("A", 0, 20, channels=[
        Channel(5, "location", f, np.array([[0, 0, -6], [3, 1, -6], [3, 4, -4]], float)),
        Channel(5, "rotation_quaternion", f, np.array([[1, 0, 0, 0], [h, 0, 0, h], [h, h, 0, 0]], float)),
        Channel(5, "scale", f, np.array([[-1, 1, 1], [-2, 1, 1], [-1, 1.5, 1]], float)),
        Channel(6, "location", f, np.array([[2, 0, 0], [2, 2, 0], [0, 2, 1]], float)),
        Channel(6, "rotation_quaternion", f, np.array([[1, 0, 0, 0], [h, 0, h, 0], [h, 0, 0, -h]], float))]))
    return sc


def test_mirrored_nodes_export_where_lib3ds_and_assimp_place_them(tmp_path):
    from .fixtures_3ds import assimp_objects, build_lib3ds_placer, outward
    sc = mirrored_scene()
    data, _ = export(sc)
    out = tmp_path / "mirror.3ds"
    out.write_bytes(data)
    place = build_lib3ds_placer(tmp_path)
    for t in (0.0, 10.0, 20.0):
        theirs = sorted(tuple(np.round(b, 3)) for bs in place(out, t).values() for b in bs)
        np.testing.assert_allclose(np.array(theirs), np.array(mesh_bounds(sc, t)), atol=2e-3, err_msg=f"frame {t}")
    objs = assimp_objects(out, tmp_path)
    theirs = sorted(tuple(np.round(b, 3)) for _, _, _, b in objs)
    np.testing.assert_allclose(np.array(theirs), np.array(mesh_bounds(sc, 0.0)), atol=2e-3)
    # faces point outward in assimp (the instance's node mirrors there: its winding turns with it)
    for name, p, tris, _ in objs:
        assert outward(p, tris).all() != ("_inst_" in name), name
    # and in our reader, without negative scales except for the instance of a mirrored mesh
    back = reimport(data)
    for t in (0.0, 10.0, 20.0):
        assert mesh_bounds(back, t) == pytest.approx(mesh_bounds(sc, t), abs=2e-3), t
    for i, n in enumerate(back.nodes):
        if n.kind == "MESH":
            m = back.meshes[n.data]
            assert outward(m.positions, m.corners.reshape(-1, 3)).all(), n.name
            assert (np.linalg.det(back.world_matrix(i)[:3, :3]) < 0) == ("Inst" in n.name), n.name


def test_mirrored_faces_keep_their_edge_flags():
    sc = Scene(meshes=[Mesh.from_triangles("M", CUBE_POINTS, CUBE_TRIS)],
               nodes=[Node("M", "MESH", 0, matrix=np.diag([1.0, -1.0, 1.0, 1.0]))])
    flags = np.array([1, 2, 4, 3, 5, 6] * 2, np.int32)          # edge CA = bit 0, BC = bit 1, AB = bit 2
    sc.meshes[0].face_attributes["face_flags"] = flags | 0x10
    faces = parse(export(sc)[0]).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT).value(ids.FACE_ARRAY)
    np.testing.assert_array_equal(faces[:, :3], CUBE_TRIS[:, [0, 2, 1]])
    # (a, c, b): its CA edge is the old AB and its AB the old CA; BC and other bits stay
    np.testing.assert_array_equal(faces[:, 3], np.array([4, 2, 1, 6, 5, 3] * 2) | 0x10)


def test_vertex_flags_and_object_colour_are_written_back():
    from addon.codec.formats.studio3ds.model import VertexFlags
    from .fixtures_3ds import build, obj, trimesh
    vflags = np.array([0, 1, 2, 0x8000, 5, 0, 7, 9], np.uint16)
    tri = trimesh(CUBE_POINTS, CUBE_TRIS, vertex_flags=vflags)
    tri.add(ids.MESH_COLOR, 5)
    uncounted = trimesh(CUBE_POINTS + 3, CUBE_TRIS)
    uncounted.children.insert(1, Chunk(ids.POINT_FLAG_ARRAY, VertexFlags(vflags[::-1].copy(), False)))
    data = build([obj("Box", tri), obj("Two", uncounted)])
    out = parse(export(reimport(data))[0])
    a, b = (o.find(ids.N_TRI_OBJECT) for o in out.editor().find_all(ids.OBJECT))
    np.testing.assert_array_equal(a.value(ids.POINT_FLAG_ARRAY).flags, vflags)
    assert a.value(ids.POINT_FLAG_ARRAY).counted and a.value(ids.MESH_COLOR) == 5
    np.testing.assert_array_equal(b.value(ids.POINT_FLAG_ARRAY).flags, vflags[::-1])
    assert not b.value(ids.POINT_FLAG_ARRAY).counted and b.value(ids.MESH_COLOR) is None
    # a vertex split at a UV seam takes its source vertex's flags
    sc = reimport(data)
    uv = np.zeros((36, 2), np.float32)
    uv[0] = (0.5, 0.5)                                    # corner 0 (vertex 0) gets its own UV
    sc.meshes[0].uv_layers["UVMap"] = uv
    tri = parse(export(sc)[0]).editor().find(ids.OBJECT).find(ids.N_TRI_OBJECT)
    assert len(tri.value(ids.POINT_ARRAY)) == 9
    np.testing.assert_array_equal(tri.value(ids.POINT_FLAG_ARRAY).flags, np.insert(vflags, 1, vflags[0]))   # the copy follows it


def test_a_3ds_read_for_native_smoothing_converts_with_its_groups_normals(tmp_path):
    """Read with groups and no normals (the default), another format still gets the groups' normals."""
    from addon import codec
    from addon.codec.formats.studio3ds.options import ImportOptions as Opts
    src = ASSETS / "mp5_sil.3ds"
    sc = codec.load(src)
    assert sc.meshes[0].normals is None and sc.meshes[0].smoothing is not None
    codec.save(sc, tmp_path / "gun.u3d")
    back = codec.load(tmp_path / "gun.u3d", normals="EXACT").meshes[0]
    exact = codec.load(src, normals="EXACT").meshes[0]
    # per corner, in the same order: each triangle's corners keep their places through U3D
    pos_b = back.positions[back.corners].reshape(-1, 3)
    key = {tuple(np.round(p, 4)) + tuple(np.round(n, 2)) for p, n in zip(pos_b, back.normals)}
    pos_e = exact.positions[exact.corners].reshape(-1, 3)
    hits = [tuple(np.round(p, 4)) + tuple(np.round(n, 2)) in key for p, n in zip(pos_e, exact.normals)]
    assert np.mean(hits) > 0.95
