"""Scene -> glTF, checked by decoding what is written as the specification says (tests/gltf_write_samples.Gltf)
against the source read by our importers and posed by the codec's one animation evaluator."""
from __future__ import annotations

import json
import math
import struct
import zlib

import numpy as np
import pytest

from addon.codec import animation, encode, load, save
from addon.codec.cli import main
from addon.codec.errors import Warnings
from addon.codec.fileio import write_atomically
from addon.codec.formats.gltf import morph_out, read, write
from addon.codec.scene import Armature, Bone, Mesh, Node, Scene, Skin
from tests.conftest import ASSETS
from tests.gltf_write_samples import Gltf, made, to_gltf_axes


def source_corners(scene: Scene, node: int, anim=None, frame: float = 0.0) -> np.ndarray:
    """World positions of each triangle corner of a scene mesh node, in glTF axes."""
    mesh = scene.meshes[scene.nodes[node].data]
    at = [frame]
    pts = animation.mesh_frames(scene, anim, node, at)[0] if anim is not None else \
        np.asarray((mesh.shape_keys[0].positions if mesh.shape_keys else mesh.positions), float)
    world = scene.world_matrix(node)
    p = np.c_[pts, np.ones(len(pts))] @ world.T
    from addon.codec.meshops import triangulate
    tris, _ = triangulate(mesh.faces, len(mesh.corners))
    return to_gltf_axes(p[:, :3][mesh.corners[tris].reshape(-1)])


def gltf_corners(g: Gltf, node: int, anim=None, time: float = 0.0) -> np.ndarray:
    pts = g.mesh_points(node, anim, time)
    mesh = g.json["meshes"][g.json["nodes"][node]["mesh"]]
    idx = np.concatenate([g.accessor(p["indices"])[:, 0].astype(int) for p in mesh["primitives"]])
    return pts[idx]


def same_shape(a: np.ndarray, b: np.ndarray, tol: float) -> None:
    """The same corners, order aside: each axis's sorted values agree (and so does the box)."""
    assert a.shape == b.shape
    for k in range(3):
        np.testing.assert_allclose(np.sort(a[:, k]), np.sort(b[:, k]), atol=tol)


def node_by_name(g: Gltf, name: str) -> int:
    return next(i for i, n in enumerate(g.json["nodes"]) if n.get("name") == name)


def node_of(g: Gltf, scene: Scene, i: int) -> int:
    """The glTF node of scene node i: the k-th of its name (the writer keeps the scene's order)."""
    name = scene.nodes[i].name
    k = sum(n.name == name for n in scene.nodes[:i])
    return [j for j, n in enumerate(g.json["nodes"]) if n.get("name") == name][k]


def size_of(scene: Scene) -> float:
    return max(float(np.ptp(np.asarray(m.positions), axis=0).max()) for m in scene.meshes if len(m.positions))


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return {p.name: p for p in made(tmp_path_factory.mktemp("made"))}


# -- vertex animation: the UT99 use case -------------------------------------------------------------------
def test_unreal_sequences_are_morph_animations_that_replay_every_frame(samples, tmp_path):
    scene = load(samples["mar_rifle_d.3d"])
    out = tmp_path / "rifle.glb"
    save(scene, out)
    g = Gltf(out)
    assert [a["name"] for a in g.json["animations"]] == [a.name for a in scene.animations] == ["All", "Fire", "Reload"]
    node = node_by_name(g, "mar_rifle")
    prim = g.json["meshes"][g.json["nodes"][node]["mesh"]]["primitives"][0]
    assert len(prim["targets"]) == len(scene.meshes[0].shape_keys) - 1 == 29
    tol = 1e-5 * size_of(scene)
    for a in scene.animations:
        ga = g.animation(a.name)
        rate = a.fps or scene.fps or 24.0
        for f in range(int(a.frame_start), int(a.frame_end) + 1):
            t = (f - a.frame_start) / rate
            same_shape(gltf_corners(g, node, ga, t), source_corners(scene, 0, a, f), tol)
    # each sequence plays at its own rate from time 0, and says where it came from
    fire = g.animation("Fire")
    times = g.accessor(fire["samplers"][0]["input"])[:, 0]
    assert times[0] == 0.0 and times[-1] == pytest.approx(9 / 15)
    assert fire["extras"] == {"frame_start": 0, "frame_end": 9, "fps": 15.0}
    assert {s["interpolation"] for s in fire["samplers"]} == {"STEP"}


@pytest.mark.parametrize("chunk", [0, 1])
def test_unreal_frames_on_their_grid_are_quantized_and_replay_exactly(samples, tmp_path, monkeypatch, chunk):
    """Unreal's packed frames are whole steps of a grid: positions and deltas are written as shorts and bytes
    (KHR_mesh_quantization, required), the node scales them back, every frame replays to float precision;
    a frame that moves one vertex is a sparse target. chunk=1: the writer takes one key at a time, on two
    threads."""
    if chunk:
        monkeypatch.setattr(morph_out, "CHUNK", chunk)
        monkeypatch.setattr(morph_out, "PARALLEL_CORNERS", 0)
    scene = load(samples["wave_d.3d"])
    save(scene, tmp_path / "w.glb")
    g = Gltf(tmp_path / "w.glb")
    assert g.json["extensionsRequired"] == ["KHR_mesh_quantization"]
    prim = g.json["meshes"][0]["primitives"][0]
    acc = g.json["accessors"]
    assert acc[prim["attributes"]["POSITION"]]["componentType"] == 5122
    kinds = [acc[t["POSITION"]]["componentType"] for t in prim["targets"]]
    assert 5120 in kinds and 5122 in kinds                     # bytes where a frame fits them, else shorts
    assert "sparse" in acc[prim["targets"][-1]["POSITION"]]    # frame 11: one corner lifts
    assert [a["name"] for a in g.json["animations"]] == ["All", "Wave", "Twitch"]
    tol = 1e-6 * size_of(scene)
    for a in scene.animations:
        ga = g.animation(a.name)
        for f in range(int(a.frame_start), int(a.frame_end) + 1):
            got = gltf_corners(g, 0, ga, (f - a.frame_start) / (a.fps or 24.0))
            np.testing.assert_allclose(got, source_corners(scene, 0, a, f), atol=tol, err_msg=f"{a.name} {f}")


@pytest.mark.parametrize("quantize", [True, False])
def test_target_bounds_leave_out_a_vertex_no_face_uses(tmp_path, quantize):
    """A vertex no face uses is no glTF vertex: its far move is in no target's data nor in its min/max
    (the writer reuses a used vertex's deltas there rather than copy every frame's used rows)."""
    from addon.codec.scene import ShapeKey
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [9, 9, 9]], np.float32) * np.float32(0.5)
    up, down = pos.copy(), pos.copy()
    up[:4] += (0, 0, 1)
    up[4] += (0, 0, 50)
    down[:4] -= (0.5, 0, 0)
    down[4] -= (0, 0, 50)
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2], [1, 3, 2]], shape_keys=[
        ShapeKey("Basis", pos), ShapeKey("Up", up), ShapeKey("Down", down)])
    save(Scene(nodes=[Node("m", "MESH", 0)], meshes=[mesh]), tmp_path / "m.glb", quantize=quantize)
    g = Gltf(tmp_path / "m.glb")
    targets = g.json["meshes"][0]["primitives"][0]["targets"]
    scale = np.array(g.json["nodes"][0].get("scale", [1.0, 1.0, 1.0]))
    want = {0: to_gltf_axes(np.array([[0, 0, 1.0]])), 1: to_gltf_axes(np.array([[-0.5, 0, 0]]))}
    for k, t in enumerate(targets):
        acc = g.json["accessors"][t["POSITION"]]
        data = g.accessor(t["POSITION"])
        assert len(data) == 4
        np.testing.assert_allclose(data * scale, np.repeat(want[k], 4, 0), atol=1e-6)
        assert acc["min"] == data.min(0).tolist() and acc["max"] == data.max(0).tolist()


@pytest.mark.parametrize("relative", [True, False])
@pytest.mark.parametrize("chunk", [0, 1])
def test_each_target_replays_its_key_on_a_grid_finer_than_the_first_gap(tmp_path, monkeypatch, chunk, relative):
    """x takes 0, 2, 4, 7, 10 and 12: the smallest gap (2) is no step of 7 (in the fourth key), half of it is.
    Every target (relative: one relative to another key; the vertex no face uses moves far) replays its key
    exactly, in whole steps of 1 on x and 2 on y and z, whichever key comes first (chunk=1: one key at a time,
    on two threads). Without a relative key, the grid's own pass finds the targets' bounds."""
    from addon.codec.scene import ShapeKey
    if chunk:
        monkeypatch.setattr(morph_out, "CHUNK", chunk)
        monkeypatch.setattr(morph_out, "PARALLEL_CORNERS", 0)
    pos = np.array([[0, 0, 0], [2, 0, 0], [0, 2, 0], [2, 2, 0], [10, 10, 10]], np.float32)
    shapes = [pos + np.float32(v) for v in ([0, 0, 2], [2, 0, 0], [0, 0, 0])]
    shapes[2][3] = (7, 2, 0)                                 # key 3: off the grid of 2, on the grid of 1
    shapes[1][4] = (10, 10, 400)                             # the unused vertex: past a byte, in no bound
    keys = [ShapeKey("Basis", pos)] + [ShapeKey(f"K{i}", p) for i, p in enumerate(shapes)]
    if relative:
        keys.append(ShapeKey("Rel", shapes[0] + np.float32([0, 0, 4]), relative_to=1))
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2], [1, 3, 2]], shape_keys=keys)
    save(Scene(nodes=[Node("m", "MESH", 0)], meshes=[mesh]), tmp_path / "m.glb")
    g = Gltf(tmp_path / "m.glb")
    assert g.json["extensionsRequired"] == ["KHR_mesh_quantization"]
    assert g.json["nodes"][0]["scale"] == [1.0, 2.0, 2.0]     # glTF (x, z, -y)
    shown = g.json["meshes"][0]
    for k in range(len(keys) - 1):
        shown["weights"] = [float(j == k) for j in range(len(keys) - 1)]
        want = pos + (keys[k + 1].positions - keys[keys[k + 1].relative_to].positions)
        np.testing.assert_array_equal(gltf_corners(g, 0), to_gltf_axes(want[mesh.corners]), err_msg=str(k))
        t = shown["primitives"][0]["targets"][k]["POSITION"]
        acc, data = g.json["accessors"][t], g.accessor(t)
        assert (acc["min"], acc["max"]) == (data.min(0).tolist(), data.max(0).tolist())


def test_stepped_shape_key_weights_are_the_evaluators(tmp_path):
    """Stepped (CONSTANT) shape-key channels, as Unreal's frames are, are sampled in bulk: the weights
    written at each key time are what the codec's evaluator gives there, for keys before, inside and past
    the range, two keys before it, a channel of one key and a shape key no channel animates."""
    from addon.codec.scene import Animation, Channel, ShapeKey
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    keys = [ShapeKey("Basis", pos)] + [ShapeKey(f"K{i}", pos + np.float32(i + 1), value=0.25 * i)
                                       for i in range(5)]
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2]], shape_keys=keys)
    ch = lambda name, f, v: Channel(0, f'key_blocks["{name}"].value', np.array(f, float),   # noqa: E731
                                    np.array(v, float)[:, None], interpolation="CONSTANT")
    anim = Animation("A", 2.0, 9.0, 24.0, channels=[
        ch("K0", [0, 3, 4], [0.5, 1, 0]), ch("K1", [5], [0.7]), ch("K2", [1, 6, 12], [0.2, 0.9, 0.4]),
        ch("K3", [0, 1, 7], [0.3, 0.6, 1])])
    scene = Scene(nodes=[Node("m", "MESH", 0)], meshes=[mesh], animations=[anim])
    save(scene, tmp_path / "m.glb")
    g = Gltf(tmp_path / "m.glb")
    s = g.animation("A")["samplers"][0]
    times = g.accessor(s["input"])[:, 0]
    frames = 2.0 + times * 24.0
    np.testing.assert_allclose(frames, [2, 3, 4, 5, 6, 7, 9], atol=1e-5)
    got = g.accessor(s["output"]).reshape(len(times), -1)
    want = animation.shape_key_weights(anim, 0, mesh, [2, 3, 4, 5, 6, 7, 9])[:, 1:]
    np.testing.assert_array_equal(got, want.astype(np.float32))
    assert s["interpolation"] == "STEP"


def test_targets_are_sparse_where_most_vertices_stay(tmp_path):
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [2, 0, 0], [2, 1, 0]], np.float32)
    moved = pos.copy()
    moved[5] += (0, 0, 1)
    from addon.codec.scene import ShapeKey
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2], [1, 3, 2], [1, 4, 3], [4, 5, 3]],
                               shape_keys=[ShapeKey("Basis", pos), ShapeKey("Up", moved, value=0.5),
                                           ShapeKey("Same", pos.copy())])
    scene = Scene(nodes=[Node("m", "MESH", 0)], meshes=[mesh])
    save(scene, tmp_path / "m.glb")
    g = Gltf(tmp_path / "m.glb")
    mesh_json = g.json["meshes"][0]
    up, same = (g.json["accessors"][t["POSITION"]] for t in mesh_json["primitives"][0]["targets"])
    assert up["sparse"]["count"] == 1 and "bufferView" not in up
    assert "bufferView" not in same and "sparse" not in same
    assert mesh_json["weights"] == [0.5, 0.0] and mesh_json["extras"]["targetNames"] == ["Up", "Same"]
    same_shape(gltf_corners(g, 0), to_gltf_axes(
        np.where(np.arange(6)[:, None] == 5, pos + (0, 0, 0.5), pos)[mesh.corners]), 1e-6)


# -- skins and bone animation --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["skinned_v2.u3d", "tube.mesh"])
def test_skinned_meshes_replay_every_key_frame(name, samples, tmp_path):
    src = samples.get(name) or ASSETS / "ultimate3d" / name
    scene = load(src, with_companions=True)
    out = tmp_path / "s.glb"
    save(scene, out)
    g = Gltf(out)
    assert scene.animations and [a["name"] for a in g.json["animations"]] == [a.name for a in scene.animations]
    tol = 1e-4 * size_of(scene)
    skinned = [i for i, n in enumerate(scene.nodes) if n.kind == "MESH" and not n.hide
               and scene.meshes[n.data].skin is not None]
    assert skinned
    for a in scene.animations:
        ga = g.animation(a.name)
        rate = a.fps or scene.fps or 24.0
        keys = np.unique(np.concatenate([c.frames for c in a.channels]))
        keys = keys[(keys >= a.frame_start) & (keys <= a.frame_end)]
        for f in keys[:: max(1, len(keys) // 6)]:
            for i in skinned:
                gi = node_of(g, scene, i)
                same_shape(gltf_corners(g, gi, ga, (f - a.frame_start) / rate), source_corners(scene, i, a, f), tol)


def test_more_than_four_influences_are_folded_and_reported(tmp_path):
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    joints = np.array([[0, 1, 2, 3, 4, 5]] * 3, np.int32)
    weights = np.array([[0.05, 0.3, 0.1, 0.2, 0.25, 0.1]] * 3, np.float32)
    bones = [Bone(f"b{i}", -1 if i == 0 else 0) for i in range(6)]
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2]], skin=Skin(0, joints, weights))
    scene = Scene(nodes=[Node("arm", "ARMATURE", 0), Node("m", "MESH", 0, parent=0)], meshes=[mesh],
                  armatures=[Armature("arm", bones)])
    files, warnings = encode(scene, tmp_path / "m.glb")
    assert any("more than 4 bone influences" in w for w in warnings)
    write_atomically(files)
    g = Gltf(tmp_path / "m.glb")
    attrs = g.json["meshes"][0]["primitives"][0]["attributes"]
    w = g.accessor(attrs["WEIGHTS_0"])
    skin = g.json["skins"][0]
    named = [g.json["nodes"][skin["joints"][int(j)]]["name"] for j in g.accessor(attrs["JOINTS_0"])[0]]
    assert named == ["b1", "b4", "b3", "b2"]                      # the four largest, largest first
    np.testing.assert_allclose(w.sum(1), 1.0, atol=1e-6)
    np.testing.assert_allclose(w[0], np.array([0.3, 0.25, 0.2, 0.1]) / 0.85, atol=1e-6)


# -- nodes, instances, cameras, lights, object animation ------------------------------------------------------
@pytest.mark.parametrize("name", ["cube_four_instances.3ds", "cube_hierarchy.3ds", "cube_instance_scale_rotation.3ds",
                                  "jeep1.3ds", "test1.3ds", "CameraRollAnimWithChildObject.3ds", "RotatingCube.3DS"])
def test_3ds_nodes_place_every_mesh(name, tmp_path):
    scene = load(ASSETS / "3ds" / name)
    out = tmp_path / "n.gltf"
    save(scene, out)
    g = Gltf(out)
    tol = 1e-5 * size_of(scene)
    meshes = [i for i, n in enumerate(scene.nodes) if n.kind == "MESH"]
    for i in meshes:
        gi = node_of(g, scene, i)
        assert g.triangles(gi) == len(source_corners(scene, i)) // 3
        same_shape(gltf_corners(g, gi), source_corners(scene, i), tol)
    # instances share their mesh
    uses = [n.data for n in scene.nodes if n.kind == "MESH"]
    assert len({g.json["nodes"][node_of(g, scene, i)]["mesh"] for i in meshes}) == len(set(uses))
    def aimed(i):          # under a camera that looks at its target: the codec's evaluator has no Track To
        while i >= 0:      # (tests/blender/test_gltf_blender_reads.py checks those against Blender)
            if scene.nodes[i].target >= 0:
                return True
            i = scene.nodes[i].parent
        return False

    for a in scene.animations:
        ga = g.animation(a.name)
        rate = a.fps or scene.fps or 24.0
        for f in np.linspace(a.frame_start, a.frame_end, 5):
            for i in [i for i in meshes if not aimed(i)]:
                got = gltf_corners(g, node_of(g, scene, i), ga, (f - a.frame_start) / rate)
                same_shape(got, source_corners(scene, i, a, f), 1e-4 * size_of(scene))


def test_cameras_and_lights_look_where_the_source_does(samples, tmp_path):
    for src in (ASSETS / "3ds" / "TargetCameraAnim.3ds", samples["lamps.3ds"]):
        scene = load(src)
        out = tmp_path / "c.glb"
        save(scene, out)
        g = Gltf(out)
        for i, n in enumerate(scene.nodes):
            if n.kind not in ("CAMERA", "LIGHT"):
                continue
            gi = node_of(g, scene, i)
            w, gw = scene.world_matrix(i), g.world(gi)
            for axis in (1, 2):       # up (+Y) and back (+Z) of the camera or lamp
                np.testing.assert_allclose(to_gltf_axes(w[:3, axis] / np.linalg.norm(w[:3, axis])),
                                           gw[:3, axis] / np.linalg.norm(gw[:3, axis]), atol=1e-6)
            np.testing.assert_allclose(to_gltf_axes(w[:3, 3]), gw[:3, 3], atol=1e-5 * max(1, np.abs(w[:3, 3]).max()))
            if n.kind == "CAMERA":
                cam = g.json["cameras"][g.json["nodes"][gi]["camera"]]["perspective"]
                lens = scene.cameras[n.data].lens
                assert math.tan(cam["yfov"] / 2) * cam["aspectRatio"] == pytest.approx(18 / lens)
            else:
                light = g.json["extensions"]["KHR_lights_punctual"]["lights"][
                    g.json["nodes"][gi]["extensions"]["KHR_lights_punctual"]["light"]]
                li = scene.lights[n.data]
                assert light["type"] == {"POINT": "point", "SPOT": "spot", "SUN": "directional"}[li.type]
                # Blender's exporter's units: 683 lm/W, over 4 pi sr for a point or spot
                assert light["intensity"] == pytest.approx(li.energy * 683 / (1 if li.type == "SUN" else 4 * math.pi))
    assert "KHR_lights_punctual" in g.json["extensionsUsed"]


# -- materials and images --------------------------------------------------------------------------------------
def png_pixels(data: bytes) -> np.ndarray:
    """RGBA rows of an 8-bit RGBA PNG with filter 0 (what the writer makes), top row first."""
    w, h = struct.unpack(">II", data[16:24])
    at, idat = 8, b""
    while at < len(data):
        n = struct.unpack(">I", data[at:at + 4])[0]
        if data[at + 4:at + 8] == b"IDAT":
            idat += data[at + 8:at + 8 + n]
        at += 12 + n
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 4 * w)
    assert not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, 4)


def test_masked_skin_is_alpha_mask_with_its_holes(samples, tmp_path):
    scene = load(samples["mar_rifle_d.3d"])
    out = tmp_path / "rifle.gltf"
    save(scene, out)
    g = Gltf(out)
    mat = g.json["materials"][0]
    assert mat["alphaMode"] == "MASK" and mat["alphaCutoff"] == 0.5
    assert mat.get("doubleSided", False) == scene.materials[0].two_sided
    image = g.json["images"][g.json["textures"][mat["pbrMetallicRoughness"]["baseColorTexture"]["index"]]["source"]]
    assert image["mimeType"] == "image/png"
    pixels = png_pixels((out.parent / image["uri"]).read_bytes())
    source = scene.images[0].pixels[::-1]                            # top row first, as PNG holds it
    np.testing.assert_array_equal(pixels[..., 3] == 0, source[..., 3] == 0)
    assert (pixels[..., 3] == 0).any()
    # the .glb holds the same picture inside
    save(scene, tmp_path / "rifle.glb")
    gb = Gltf(tmp_path / "rifle.glb")
    view = gb.json["bufferViews"][gb.json["images"][0]["bufferView"]]
    embedded = gb.bin[view["byteOffset"]:view["byteOffset"] + view["byteLength"]]
    assert embedded == (out.parent / image["uri"]).read_bytes()


def test_jpeg_textures_travel_as_they_are(tmp_path):
    scene = load(ASSETS / "3ds" / "jeep1.3ds")
    save(scene, tmp_path / "j.gltf")
    g = Gltf(tmp_path / "j.gltf")
    assert [i["mimeType"] for i in g.json["images"]] == ["image/jpeg"]
    assert (tmp_path / g.json["images"][0]["uri"]).read_bytes() == (ASSETS / "3ds" / "jeep1.jpg").read_bytes()


def test_texture_transform_shows_the_same_texel(tmp_path):
    """Blender's picture lookup (offset, rotation, scale about the pivot, V up) and glTF's
    KHR_texture_transform on V-down coordinates agree at every point."""
    scene = load(ASSETS / "3ds" / "cube_with_texture_transformations.3ds")
    save(scene, tmp_path / "t.glb")
    g = Gltf(tmp_path / "t.glb")
    slots = [s for m in scene.materials for s in m.textures if s.kind == "base_color"]
    infos = [m["pbrMetallicRoughness"]["baseColorTexture"] for m in g.json["materials"]
             if "baseColorTexture" in m.get("pbrMetallicRoughness", {})]
    assert len(slots) == len(infos) and any("extensions" in i for i in infos)
    uv = np.random.default_rng(1).random((20, 2))
    for slot, info in zip(slots, infos):
        c = np.asarray(slot.pivot if slot.pivot is not None else (0, 0), float)
        r = -slot.rotation
        turn = np.array([[math.cos(r), -math.sin(r)], [math.sin(r), math.cos(r)]])
        sc, off = np.asarray(slot.scale), np.asarray(slot.offset)
        if slot.pivot is None:
            want = (uv * sc) @ np.array([[math.cos(slot.rotation), math.sin(slot.rotation)],
                                         [-math.sin(slot.rotation), math.cos(slot.rotation)]]) + off
        else:
            want = c + ((uv - c - off) * sc) @ turn.T
        tr = info.get("extensions", {}).get("KHR_texture_transform", {})
        rot = tr.get("rotation", 0.0)
        gl = np.c_[uv[:, 0], 1 - uv[:, 1]] * tr.get("scale", [1, 1])
        gl = gl @ np.array([[math.cos(rot), math.sin(rot)], [-math.sin(rot), math.cos(rot)]]).T + tr.get("offset", [0, 0])
        np.testing.assert_allclose(np.c_[gl[:, 0], 1 - gl[:, 1]], want, atol=1e-9)
        assert g.json["samplers"][g.json["textures"][info["index"]]["sampler"]]["wrapS"] == \
            {"REPEAT": 10497, "MIRROR": 33648, "CLIP": 33071}[slot.extension]


# -- the file itself -------------------------------------------------------------------------------------------
def test_indices_take_the_smallest_type_and_scale_applies(tmp_path):
    scene = load(ASSETS / "unreal" / "box_d.3d")
    save(scene, tmp_path / "b.glb")
    save(scene, tmp_path / "b2.glb", scale=2.0)
    g, g2 = Gltf(tmp_path / "b.glb"), Gltf(tmp_path / "b2.glb")
    prim = g.json["meshes"][0]["primitives"][0]
    assert g.json["accessors"][prim["indices"]]["componentType"] == 5121
    same_shape(gltf_corners(g2, 0), 2 * gltf_corners(g, 0), 1e-5)
    big = load(ASSETS / "3ds" / "jeep1.3ds")
    save(big, tmp_path / "j.glb")
    gj = Gltf(tmp_path / "j.glb")
    counts = {a["componentType"] for m in gj.json["meshes"] for p in m["primitives"]
              for a in [gj.json["accessors"][p["indices"]]]}
    assert 5123 in counts


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
def test_what_we_write_reads_back_byte_for_byte(ext, samples, tmp_path):
    for src in (samples["mar_rifle_d.3d"], ASSETS / "3ds" / "jeep1.3ds", samples["tube.mesh"]):
        out = tmp_path / src.stem / f"x{ext}"
        save(load(src, with_companions=True), out)
        files = {p: p.read_bytes() for p in out.parent.iterdir()}
        doc = read.parse(files[out], Warnings(), {p.name: b for p, b in files.items() if p != out}) \
            if ext == ".gltf" else read.parse(files[out], Warnings())
        again = write.encode(doc, out)
        assert again[out] == files[out]
        assert all(files[p] == b for p, b in again.items())


def test_json_chunk_is_padded_with_spaces_and_bin_with_zeros(tmp_path):
    save(load(ASSETS / "unreal" / "box_d.3d"), tmp_path / "b.glb")
    data = (tmp_path / "b.glb").read_bytes()
    magic, version, length = struct.unpack_from("<4sII", data)
    assert (magic, version, length) == (b"glTF", 2, len(data))
    n, kind = struct.unpack_from("<II", data, 12)
    assert kind == 0x4E4F534A and n % 4 == 0 and data[20:20 + n].decode().rstrip(" ").endswith("}")
    json.loads(data[20:20 + n])
    m, kind2 = struct.unpack_from("<II", data, 20 + n)
    assert kind2 == 0x004E4942 and m % 4 == 0 and 28 + n + m == len(data)


def test_one_document_encodes_the_same_each_time_whatever_came_before(tmp_path):
    """Encoding a written document changes nothing in it: a .glb embeds the picture that a .gltf names."""
    from addon.codec.formats.gltf.from_scene import from_scene
    from addon.codec.formats.gltf.options import ExportOptions
    doc = from_scene(load(ASSETS / "3ds" / "jeep1.3ds"), ExportOptions(), Warnings())
    glb, gltf = tmp_path / "a.glb", tmp_path / "a.gltf"
    first = b"".join(write.encode(doc, glb)[glb])
    assert b"".join(write.encode(doc, glb)[glb]) == first
    beside = write.encode(doc, gltf)
    assert [i["uri"] for i in json.loads(beside[gltf])["images"]] == ["a_jeep1.jpg"]
    assert b"".join(write.encode(doc, glb)[glb]) == first == write.encode_bytes(doc)


def test_lgf_converts_to_and_from_gltf(samples, tmp_path):
    out = tmp_path / "rifle.glb"
    assert main(["convert", str(samples["mar_rifle_d.3d"]), str(out)]) == 0
    assert [a["name"] for a in Gltf(out).json["animations"]] == ["All", "Fire", "Reload"]
    tree = tmp_path / "tree"
    assert main(["convert", str(ASSETS / "ultimate3d"), str(ASSETS / "unreal"), "--to", "glb", "-d", str(tree),
                 "-j", "2", "-q"]) == 0
    assert sorted(p.name for p in tree.rglob("*.glb")) == ["box.glb", "cube_v2.glb", "mar_rifle.glb", "skinned_v2.glb"]
    assert main(["convert", str(ASSETS / "3ds"), "--to", "gltf", "-d", str(tmp_path / "g"), "-q"]) != 0   # wrong.3ds
    assert (tmp_path / "g" / "jeep1.gltf").is_file() and (tmp_path / "g" / "jeep1.bin").is_file()
    # models whose textures have one name (texture.png), side by side: each keeps its own picture
    assert {p.name for p in (tmp_path / "g").glob("*.png")} >= {
        f"{m}_texture.png" for m in ("cube_two_instances", "cube_with_materials", "cube_with_texture_transformations")}
    back = tmp_path / "rifle.u3d"
    assert main(["convert", str(out), str(back)]) == 0
    assert [a.name for a in load(back).animations] == ["All", "Fire", "Reload"]
    assert main(["formats"]) == 0


def test_bmp_textures_become_png(tmp_path):
    """A 24-bit BMP (bottom-up rows of BGR, padded to 4 bytes) reaches glTF as a PNG of the same pixels."""
    top_first = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255]], [[10, 20, 30], [40, 50, 60], [70, 80, 90]]],
                         np.uint8)
    rows = b"".join(r[:, ::-1].tobytes() + b"\0\0\0" for r in top_first[::-1])
    bmp = b"BM" + struct.pack("<IHHI", 54 + len(rows), 0, 0, 54) + struct.pack("<IiiHHIIiiII", 40, 3, 2, 1, 24, 0,
                                                                                 len(rows), 0, 0, 0, 0) + rows
    (tmp_path / "t.bmp").write_bytes(bmp)
    from addon.codec.scene import Image, Material, TextureSlot
    scene = Scene(nodes=[Node("m", "MESH", 0)], images=[Image("t.bmp", str(tmp_path / "t.bmp"))],
                  materials=[Material("m", textures=[TextureSlot("base_color", 0)])],
                  meshes=[Mesh.from_triangles("m", np.eye(3, dtype=np.float32), [[0, 1, 2]], materials=[0],
                                              uv_layers={"UVMap": np.zeros((3, 2), np.float32)})])
    save(scene, tmp_path / "t.gltf")
    g = Gltf(tmp_path / "t.gltf")
    assert g.json["images"][0]["mimeType"] == "image/png"
    got = png_pixels((tmp_path / g.json["images"][0]["uri"]).read_bytes())
    np.testing.assert_array_equal(got[..., :3], top_first)
    assert (got[..., 3] == 255).all()


def test_quantize_off_writes_floats_that_replay_the_same(samples, tmp_path):
    scene = load(samples["wave_d.3d"])
    save(scene, tmp_path / "q.glb")
    save(scene, tmp_path / "f.glb", quantize=False)
    q, f = Gltf(tmp_path / "q.glb"), Gltf(tmp_path / "f.glb")
    assert "extensionsRequired" not in f.json and "scale" not in f.json["nodes"][0]
    prim = f.json["meshes"][0]["primitives"][0]
    assert {f.json["accessors"][t["POSITION"]]["componentType"] for t in prim["targets"]} == {5126}
    wave = scene.animations[1]
    for frame in range(10):
        t = frame / wave.fps
        np.testing.assert_allclose(gltf_corners(f, 0, f.animation("Wave"), t), gltf_corners(q, 0, q.animation("Wave"), t),
                                   atol=1e-5)
    assert (tmp_path / "q.glb").stat().st_size < (tmp_path / "f.glb").stat().st_size


def test_lgf_check_compares_a_gltf_and_the_files_beside_it(tmp_path, capsys):
    save(load(ASSETS / "3ds" / "jeep1.3ds"), tmp_path / "j.gltf")
    assert main(["check", str(tmp_path / "j.gltf")]) == 0
    out = capsys.readouterr().out
    assert all(f"{tmp_path / name}: " in out for name in ("j.gltf", "j.bin", "j_jeep1.jpg"))


def test_a_delta_past_a_short_is_a_float_of_whole_steps(tmp_path):
    """Keys on a grid from -30000 to 30000 steps (each fits a short; the move between them does not)."""
    from addon.codec.scene import ShapeKey
    pos = np.array([[-30000, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    far = pos.copy()
    far[0, 0] = 30000
    near = pos.copy()
    near[1, 2] = 0.5
    mesh = Mesh.from_triangles("m", pos, [[0, 1, 2]], shape_keys=[ShapeKey("Basis", pos), ShapeKey("Far", far, value=1.0),
                                                                     ShapeKey("Near", near, value=1.0)])
    save(Scene(nodes=[Node("m", "MESH", 0)], meshes=[mesh]), tmp_path / "m.glb")
    g = Gltf(tmp_path / "m.glb")
    prim = g.json["meshes"][0]["primitives"][0]
    assert g.json["accessors"][prim["attributes"]["POSITION"]]["componentType"] == 5122
    assert [g.json["accessors"][t["POSITION"]]["componentType"] for t in prim["targets"]] == [5126, 5120]
    want = to_gltf_axes(np.where(np.arange(3)[:, None] == 0, far, near)[mesh.corners])
    np.testing.assert_allclose(gltf_corners(g, 0), want, atol=1e-6)


def test_every_uv_map_and_colour_set_travels_per_vertex(tmp_path):
    """Two UV maps (V flipped: glTF's origin is the top left) and a colour set, split where corners differ."""
    scene = load(ASSETS / "unigine" / "grid_static.mesh")
    mesh = scene.meshes[0]
    mesh.uv_layers["Second"] = mesh.uv_layers["UVMap"][:, ::-1] * np.float32(0.5)
    save(scene, tmp_path / "c.gltf")
    g = Gltf(tmp_path / "c.gltf")
    node = next(i for i, n in enumerate(g.json["nodes"]) if "mesh" in n)
    prim = g.json["meshes"][g.json["nodes"][node]["mesh"]]["primitives"][0]
    assert {"TEXCOORD_0", "TEXCOORD_1", "COLOR_0"} <= set(prim["attributes"])
    idx = np.concatenate([g.accessor(p["indices"])[:, 0].astype(int)
                          for p in g.json["meshes"][g.json["nodes"][node]["mesh"]]["primitives"]])
    from addon.codec.meshops import triangulate
    tris, _ = triangulate(mesh.faces, len(mesh.corners))
    rows = tris.reshape(-1)
    for attr, want in (("TEXCOORD_0", mesh.uv_layers["UVMap"][rows]), ("TEXCOORD_1", mesh.uv_layers["Second"][rows]),
                       ("COLOR_0", mesh.colors["Color"][rows])):
        got = g.accessor(prim["attributes"][attr])[idx]
        if attr.startswith("TEXCOORD"):
            got[:, 1] = 1.0 - got[:, 1]
        np.testing.assert_allclose(got, want, atol=1e-6, err_msg=attr)


def test_a_placed_armature_and_the_scale_option_keep_the_skinned_pose(tmp_path):
    """The armature object turned and moved, the file written at twice the size: every key's pose is the
    source's, doubled (inverse bind matrices, joints and keys all in one frame)."""
    from addon.codec import axes
    scene = load(ASSETS / "ultimate3d" / "skinned_v2.u3d")
    arm = next(i for i, n in enumerate(scene.nodes) if n.kind == "ARMATURE")
    scene.nodes[arm].matrix = axes.compose([1.0, -2.0, 0.5], axes.axis_angle_to_quat([0, 0, 1], 0.7), [1, 1, 1])
    save(scene, tmp_path / "s.glb", scale=2.0)
    g = Gltf(tmp_path / "s.glb")
    skinned = [i for i, n in enumerate(scene.nodes) if n.kind == "MESH" and not n.hide
               and scene.meshes[n.data].skin is not None]
    tol = 1e-4 * size_of(scene)
    for a in scene.animations:
        for f in np.unique(np.concatenate([c.frames for c in a.channels])):
            if a.frame_start <= f <= a.frame_end:
                for i in skinned:
                    got = gltf_corners(g, node_of(g, scene, i), g.animation(a.name), (f - a.frame_start) / (a.fps or 24.0))
                    same_shape(got, 2 * source_corners(scene, i, a, f), 2 * tol)
