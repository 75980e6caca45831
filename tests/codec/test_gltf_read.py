"""The glTF reader on hand-built files (tests/codec/gltf_read_fixtures.py): .glb, .gltf with a data:
URI or a .bin beside it, sparse / normalized / strided accessors, skins, morph targets and
animations checked against glTF's own skinning done here, and lying files that must give a
FormatError before any allocation."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from addon.codec import animation
from addon.codec.errors import FormatError, Warnings
from addon.codec.formats.gltf import read, to_scene, write
from addon.codec.formats.gltf.options import ImportOptions
from tests.codec import gltf_read_fixtures as F


def scene_of(data: bytes, resources=None, warnings=None):
    w = Warnings() if warnings is None else warnings
    return to_scene.to_scene(read.parse(data, w, resources), ImportOptions(), w)


def blender(p) -> np.ndarray:
    """glTF (x, y, z) -> Blender (x, -z, y), written out here rather than taken from conventions.py."""
    p = np.asarray(p, np.float64).reshape(-1, 3)
    return np.stack([p[:, 0], -p[:, 2], p[:, 1]], 1)


def test_glb_quad_positions_uvs_material_and_node():
    s = scene_of(F.quad().glb())
    (node,) = s.nodes
    mesh = s.meshes[node.data]
    assert node.kind == "MESH" and node.name == "QuadNode"
    np.testing.assert_allclose(node.matrix[:3, 3], [0, 0, 2])          # glTF +Y up is Blender +Z
    np.testing.assert_allclose(mesh.positions, blender(F.QUAD), atol=0)
    assert mesh.corners.tolist() == [0, 1, 2, 0, 2, 3]
    np.testing.assert_allclose(mesh.uv_layers["UVMap"], [[0, 0], [1, 0], [1, 1], [0, 0], [1, 1], [0, 1]])
    np.testing.assert_allclose(mesh.normals, np.tile([0, -1, 0], (6, 1)), atol=1e-7)
    (mat,) = s.materials
    assert (mat.name, mat.base_color, mat.alpha, mat.roughness, mat.blend, mat.two_sided) == \
        ("Red", (1.0, 0.0, 0.0), 0.5, 0.25, "BLEND", True)
    assert mesh.materials == [0] and mesh.face_material.tolist() == [0, 0]
    assert s.source_format == "glb"


def test_gltf_with_data_uri_and_with_a_bin_beside_it_read_as_the_glb(tmp_path):
    glb = scene_of(F.quad().glb())
    text, _ = F.quad().gltf()
    assert scene_of(text).meshes[0].positions.tobytes() == glb.meshes[0].positions.tobytes()
    text, files = F.quad().gltf("quad data.bin")
    (tmp_path / "q.gltf").write_bytes(text.replace(b"quad data.bin", b"quad%20data.bin"))
    (tmp_path / "quad data.bin").write_bytes(files["quad data.bin"])
    w = Warnings()
    doc = read.read_path(tmp_path / "q.gltf", ImportOptions(), w)
    s = to_scene.to_scene(doc, ImportOptions(), w)
    assert not w and s.source_format == "gltf"
    np.testing.assert_array_equal(s.meshes[0].positions, glb.meshes[0].positions)
    (tmp_path / "quad data.bin").unlink()
    w = Warnings()
    doc = read.read_path(tmp_path / "q.gltf", ImportOptions(), w)
    assert any("quad%20data.bin" in t for t in w.as_list())
    with pytest.raises(FormatError, match="buffer 0, which holds 0"):
        to_scene.to_scene(doc, ImportOptions(), w)


def test_a_read_file_writes_back_byte_for_byte():
    for data in (F.quad().glb(), F.skinned().glb(), F.quad().gltf()[0]):
        assert write.encode_bytes(read.parse(data, Warnings())) == data


def test_sparse_normalized_and_interleaved_accessors():
    b = F.Builder()
    # positions as normalized int16 (KHR_mesh_quantization), the node scales them back
    q = np.round(F.QUAD * 32767).astype(np.int16)
    quant = b.accessor(q, normalized=True, minmax=True)
    # UVs and colours interleaved in one view: 8 bytes of UV + 4 of RGBA8 every 12 bytes
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    rgba = np.array([[255, 0, 0, 255], [0, 255, 0, 255], [0, 0, 255, 255], [255, 255, 255, 0]], np.uint8)
    rec = np.zeros(4, [("uv", "<f4", 2), ("c", "u1", 4)])
    rec["uv"], rec["c"] = uv, rgba
    view = b.view(rec.tobytes(), stride=12)
    b.tree["accessors"] += [{"bufferView": view, "componentType": 5126, "count": 4, "type": "VEC2"},
                            {"bufferView": view, "byteOffset": 8, "componentType": 5121, "normalized": True,
                             "count": 4, "type": "VEC4"}]
    # a morph target with no buffer view: zeros, then one sparse value (vertex 2 moves up by 1)
    idx = b.view(np.array([2], np.uint16).tobytes())
    val = b.view(np.array([0, 0, 1], np.float32).tobytes())
    b.tree["accessors"].append({"componentType": 5126, "count": 4, "type": "VEC3", "sparse": {
        "count": 1, "indices": {"bufferView": idx, "componentType": 5123}, "values": {"bufferView": val}}})
    n = len(b.tree["accessors"])
    prim = {"attributes": {"POSITION": quant, "TEXCOORD_0": n - 3, "COLOR_0": n - 2},
            "targets": [{"POSITION": n - 1}], "indices": b.accessor(np.array([0, 1, 2, 0, 2, 3], np.uint8))}
    b.add("meshes", {"primitives": [prim], "weights": [0.5]})
    b.add("nodes", {"mesh": 0})
    b.tree["extensionsUsed"] = ["KHR_mesh_quantization"]
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    mesh = s.meshes[0]
    assert not w
    np.testing.assert_allclose(mesh.positions, blender(F.QUAD), atol=1e-4)
    assert mesh.corners.tolist() == [0, 1, 2, 0, 2, 3]
    np.testing.assert_allclose(mesh.uv_layers["UVMap"][:3], [[0, 0], [1, 0], [1, 1]])
    np.testing.assert_allclose(mesh.colors["Color"][:3], rgba[:3] / 255.0)
    lift = mesh.shape_keys[1].positions - mesh.shape_keys[0].positions
    np.testing.assert_allclose(lift, blender([[0, 0, 0], [0, 0, 0], [0, 0, 1], [0, 0, 0]]), atol=1e-6)
    assert mesh.shape_keys[1].value == 0.5


def _gltf_skinned_positions(times: list[float], armature: np.ndarray) -> np.ndarray:
    """The skinned fixture deformed as glTF defines it, computed here from its numbers (the joints'
    world matrices take the armature node's)."""
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 2, 0], [1, 2, 0]], float)
    w1 = np.array([0, 0, .5, .5, 1, 1])
    out = []
    for t in times:
        angle = np.pi / 2 * min(t, 2) / 1 if t <= 1 else np.pi / 2 + np.pi / 2 * (t - 1)
        c, s = np.cos(angle), np.sin(angle)
        root = np.eye(4)
        root[2, 3] = float(np.floor(t))                        # STEP translation (0, 0, k)
        tip = root @ np.array([[c, -s, 0, 0], [s, c, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1.]])
        ibm1 = np.linalg.inv(np.array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1.]]))
        h = np.c_[pos, np.ones(6)]
        p0 = h @ (armature @ root).T
        p1 = h @ (armature @ tip @ ibm1).T
        out.append(((1 - w1)[:, None] * p0 + w1[:, None] * p1)[:, :3])
    return np.array(out)


TURNED = np.array([[np.cos(0.7), 0, np.sin(0.7), 1], [0, 1, 0, 2], [-np.sin(0.7), 0, np.cos(0.7), 3], [0, 0, 0, 1]])


@pytest.mark.parametrize("armature", [np.eye(4), TURNED @ np.diag([2.0, 2.0, 2.0, 1.0])], ids=["plain", "turned"])
def test_skin_plays_as_gltf_skins_it_at_every_key_and_between(armature):
    s = scene_of(F.skinned(armature=armature).glb())
    (arm,) = s.armatures
    assert [b.name for b in arm.bones] == ["Root", "Tip"] and arm.bones[1].parent == 0
    assert [a.name for a in s.animations] == ["Bend", "Morph"]
    bend = s.animations[0]
    assert (bend.frame_start, bend.frame_end, bend.fps) == (0.0, 48.0, 24.0)
    node = next(i for i, n in enumerate(s.nodes) if n.kind == "MESH")
    frames = [0, 12, 24, 36, 48]
    got = animation.mesh_frames(s, bend, node, frames)
    want = np.stack([blender(p) for p in _gltf_skinned_positions([f / 24 for f in frames], armature)])
    # welded: the file's vertices map to the Scene's one to one here (nothing shared a point)
    np.testing.assert_allclose(got, want, atol=1e-5)
    interp = {c.bone: c.interpolation for c in bend.channels if len(c.frames) == 3}
    assert interp == {"Tip": "LINEAR", "Root": "CONSTANT"}


def test_morph_weights_cubic_spline():
    s = scene_of(F.skinned().glb())
    morph = s.animations[1]
    (ch,) = morph.channels
    assert ch.path == 'key_blocks["Lift"].value' and ch.interpolation == "BEZIER"
    np.testing.assert_allclose(ch.values[:, 0], [0, 1, 0])
    node = next(i for i, n in enumerate(s.nodes) if n.kind == "MESH")
    top = animation.mesh_frames(s, morph, node, [24])[0]
    np.testing.assert_allclose(top[4:] - s.meshes[0].positions[4:], blender([[0, 0, 1], [0, 0, 1]]), atol=1e-6)
    # zero tangents: flat handles a third of the way to the neighbours
    np.testing.assert_allclose(ch.handles[1, 0], [[16, 1], [32, 1]])


def _with(tree_edit, builder=None) -> bytes:
    b = builder or F.quad()
    tree_edit(b.tree)
    return b.glb()


LIARS = {
    "accessor count past its view": (lambda t: t["accessors"][0].update(count=1000), r"accessors\[0\]\.count"),
    "view past its buffer": (lambda t: t["bufferViews"][0].update(byteLength=1 << 40), r"bufferViews\[0\]"),
    "1 KB asking for GBs": (lambda t: t["accessors"][0].update(count=1 << 31, bufferView=None) or
                            t["accessors"][0].pop("bufferView"), r"accessors\[0\]\.count"),
    "index out of range": (lambda t: t["nodes"][0].update(mesh=7), r"nodes\[0\]|meshes"),
    "node cycle": (lambda t: t["nodes"].append({"children": [1]}) or t["nodes"].append({"children": [1]}),
                   "two parents|cycle"),
    "self child": (lambda t: t["nodes"][0].update(children=[0]), "two parents|own child"),
    "bad component type": (lambda t: t["accessors"][0].update(componentType=5130), "componentType"),
    "misaligned float": (lambda t: t["accessors"][0].update(byteOffset=2), "aligned"),
    "bad stride": (lambda t: t["bufferViews"][0].update(byteStride=6), "byteStride"),
    "glTF 1.0": (lambda t: t["asset"].update(version="1.0"), "asset.version"),
}


@pytest.mark.parametrize("name", sorted(LIARS))
def test_lying_json_is_a_format_error(name):
    edit, where = LIARS[name]
    with pytest.raises(FormatError, match=where):
        scene_of(_with(edit))


def test_vertex_index_past_the_vertices():
    b = F.quad()
    b.tree["meshes"][0]["primitives"][0]["indices"] = b.accessor(np.array([0, 1, 9], np.uint16))
    with pytest.raises(FormatError, match="index 9 is past the 4 vertices"):
        scene_of(b.glb())


def test_a_real_cycle_among_nodes():
    b = F.quad()
    b.tree["nodes"] += [{"children": [2]}, {"children": [1]}]
    with pytest.raises(FormatError, match="cycle"):
        scene_of(b.glb())


def test_lying_glb_chunks():
    data = F.quad().glb()
    with pytest.raises(FormatError, match="header.length"):
        read.parse(data[:-8], Warnings())
    bad = bytearray(data)
    struct.pack_into("<I", bad, 12, 1 << 30)
    with pytest.raises(FormatError, match=r"chunks\[0\]\.chunkLength"):
        read.parse(bytes(bad), Warnings())
    bad = bytearray(data)
    bad[20] = ord("[")
    with pytest.raises(FormatError, match="JSON"):
        read.parse(bytes(bad), Warnings())
    with pytest.raises(FormatError, match="JSON"):
        read.parse(b"[" * 100000 + b"]" * 100000, Warnings())


def test_unmapped_extensions_warn_once_each_and_nothing_readable_fails():
    b = F.quad()
    b.tree["extensionsUsed"] = ["KHR_materials_sheen", "KHR_draco_mesh_compression"]
    b.tree["meshes"][0]["primitives"].append(dict(b.tree["meshes"][0]["primitives"][0],
                                                  extensions={"KHR_draco_mesh_compression": {}}))
    # a meshopt-compressed primitive: its view on a fallback buffer that holds no bytes
    b.tree["extensionsUsed"].append("EXT_meshopt_compression")
    b.tree["buffers"].append({"byteLength": 48, "extensions": {"EXT_meshopt_compression": {"fallback": True}}})
    b.tree["bufferViews"].append({"buffer": 1, "byteLength": 48, "extensions": {"EXT_meshopt_compression": {
        "buffer": 0, "byteLength": 10, "byteStride": 12, "mode": "ATTRIBUTES", "count": 4}}})
    b.tree["accessors"].append({"bufferView": len(b.tree["bufferViews"]) - 1, "componentType": 5126, "count": 4,
                                "type": "VEC3"})
    b.tree["meshes"][0]["primitives"].append({"attributes": {"POSITION": len(b.tree["accessors"]) - 1}})
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    assert len(s.meshes[0].faces) == 2
    text = "\n".join(w.as_list())
    assert text.count("KHR_materials_sheen") == 1 and text.count("compressed primitives are not read") == 2
    assert "KHR_draco_mesh_compression: compressed" in text and "EXT_meshopt_compression: compressed" in text
    assert len(w) == 3                  # one warning each
    with pytest.raises(FormatError, match="nothing in the file can be read"):
        scene_of(json.dumps({"asset": {"version": "2.0"}}).encode())
    b.tree["meshes"][0]["primitives"] = b.tree["meshes"][0]["primitives"][1:]      # only compressed ones
    with pytest.raises(FormatError, match="nothing in the file can be read.*compressed primitives"):
        scene_of(b.glb())


def test_camera_and_light_look_down_their_minus_z():
    b = F.quad()
    b.tree["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.6, "aspectRatio": 1.5, "znear": 0.5}}]
    b.tree["extensions"] = {"KHR_lights_punctual": {"lights": [{"type": "spot", "intensity": 683 / (4 * np.pi),
                                                                "spot": {"outerConeAngle": 0.5}}]}}
    b.tree["extensionsUsed"] = ["KHR_lights_punctual"]
    # a glTF camera turned to look along glTF -X (90 degrees about +Y)
    h = np.sqrt(0.5)
    b.tree["nodes"] += [{"camera": 0, "rotation": [0, h, 0, h]},
                        {"extensions": {"KHR_lights_punctual": {"light": 0}}}]
    b.tree["scenes"][0]["nodes"] += [1, 2]
    s = scene_of(b.glb())
    cam = next(n for n in s.nodes if n.kind == "CAMERA")
    np.testing.assert_allclose(cam.matrix[:3, :3] @ [0, 0, -1], [-1, 0, 0], atol=1e-7)     # still -X
    np.testing.assert_allclose(cam.matrix[:3, :3] @ [0, 1, 0], [0, 0, 1], atol=1e-7)       # up is +Z
    np.testing.assert_allclose(s.cameras[0].lens, 18 / (np.tan(0.3) * 1.5))
    light = next(n for n in s.nodes if n.kind == "LIGHT")
    np.testing.assert_allclose(light.matrix[:3, :3] @ [0, 0, -1], [0, 1, 0], atol=1e-7)    # glTF -Z is Blender +Y
    assert s.lights[0].type == "SPOT" and s.lights[0].energy == pytest.approx(1.0) and s.lights[0].spot_size == 1.0


def test_texture_slot_comes_back_through_the_writer(tmp_path):
    """A material's texture with its Mapping-node transform and extension, written by our writer and read
    back: the same slot (KHR_texture_transform both ways, the V flip undone)."""
    from addon import codec
    from addon.codec.scene import Image, Material, Node, Scene, TextureSlot
    from pathlib import Path
    png = Path(__file__).resolve().parents[2] / "test_assets" / "3ds" / "texture.png"
    s = Scene(images=[Image("texture.png", str(png))])
    slot = TextureSlot("base_color", 0, "UVMap", scale=(2.0, 3.0), offset=(0.25, -0.5), rotation=0.3,
                       extension="MIRROR")
    s.materials = [Material("Tex", textures=[slot])]
    quad = scene_of(F.quad(material=False).glb()).meshes[0]
    quad.materials, quad.face_material = [0], np.zeros(2, np.int32)
    s.meshes = [quad]
    s.nodes = [Node("Quad", "MESH", 0)]
    for ext in (".glb", ".gltf"):
        codec.save(s, tmp_path / f"t{ext}")
        back = codec.load(tmp_path / f"t{ext}")
        (got,) = back.materials[0].textures
        assert (got.kind, got.uv_layer, got.extension) == ("base_color", "UVMap", "MIRROR")
        np.testing.assert_allclose([*got.scale, *got.offset, got.rotation], [2, 3, 0.25, -0.5, 0.3], atol=1e-6)
    found = Path(back.images[0].filepath)            # the picture the .gltf names, beside it
    assert found.parent == tmp_path and found.read_bytes() == png.read_bytes()


def test_joints_resting_off_their_bind_pose():
    """glTF poses a skin by its joints' node transforms: where they differ from the bind, an animation
    that does not key those joints still shows them (a warning when no animation can)."""
    b = F.skinned()
    tip = next(n for n in b.tree["nodes"] if n.get("name") == "Tip")
    tip["translation"] = [0, 1.5, 0]
    s = scene_of(b.glb())
    morph = s.animations[1]
    node = next(i for i, n in enumerate(s.nodes) if n.kind == "MESH")
    got = animation.mesh_frames(s, morph, node, [0])[0]
    w1 = np.array([0, 0, .5, .5, 1, 1])[:, None]
    want = s.meshes[0].positions + w1 * blender([[0, 0.5, 0]])
    np.testing.assert_allclose(got, want, atol=1e-6)
    del b.tree["animations"]
    w = Warnings()
    scene_of(b.glb(), warnings=w)
    assert any("other than its bind pose" in t for t in w.as_list())


def test_welding_joins_only_vertices_that_hold_the_same():
    """Two triangles meeting at an edge, stored with their own vertices: the shared corners join where
    their morph offsets and UVs' vertices agree, and stay apart where a morph moves only one of them."""
    b = F.Builder()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)
    delta = np.zeros((6, 3), np.float32)
    delta[5] = [0, 0, 1]                 # vertex 5 (the second copy of (0, 1, 0)) moves alone
    prim = {"attributes": {"POSITION": b.accessor(pos, minmax=True)},
            "targets": [{"POSITION": b.accessor(delta, minmax=True)}]}
    b.add("meshes", {"primitives": [prim]})
    b.add("nodes", {"mesh": 0})
    mesh = scene_of(b.glb()).meshes[0]
    assert len(mesh.positions) == 5                  # (1, 0, 0) joined; (0, 1, 0) twice
    assert mesh.corners[1] == mesh.corners[3] and mesh.corners[2] != mesh.corners[5]
    moved = np.abs(mesh.shape_keys[1].positions - mesh.positions).max(1)
    assert moved.tolist().count(1.0) == 1 and moved[mesh.corners[5]] == 1.0


def test_primitives_sharing_vertices_and_aliasing_accessors():
    """Primitives that name the same vertex accessors (one per material) share their vertices; many
    accessors that alias the same few bytes cannot multiply them past what the buffers hold."""
    b = F.quad()
    prim = b.tree["meshes"][0]["primitives"][0]
    b.tree["materials"].append({"name": "Blue"})
    b.tree["meshes"][0]["primitives"].append(dict(prim, material=1))
    mesh = scene_of(b.glb()).meshes[0]
    assert len(mesh.positions) == 4 and len(mesh.faces) == 4 and mesh.face_material.tolist() == [0, 0, 1, 1]
    b = F.quad(material=False)
    pos = b.tree["accessors"][0]
    # 64 KB of positions read as more than 2^22 vertices and corners, by 96 accessors over the same bytes
    view = b.view(b"\0" * (16400 * 4), stride=4)
    copies = [dict(pos, bufferView=view, count=16400, componentType=5121, normalized=True, type="VEC3")
              for _ in range(96)]
    first = len(b.tree["accessors"])
    b.tree["accessors"] += copies
    b.tree["meshes"][0]["primitives"] = [{"attributes": {"POSITION": first + k}} for k in range(96)]
    with pytest.raises(FormatError, match=r"vertices and corners from .* bytes of buffers"):
        scene_of(b.glb())


def _big_strip(b, vertices: int) -> tuple[int, int]:
    """(POSITION, indices) accessors of `vertices` points and as many indices."""
    pos = np.zeros((vertices, 3), np.float32)
    pos[:, 0] = np.arange(vertices)
    pos[1::2, 1] = 1.0
    return b.accessor(pos, minmax=True), b.accessor(np.arange(vertices, dtype=np.uint32))


def _refused_with_peak_mb(data: bytes, match: str) -> float:
    """The FormatError `match` from reading `data`; -> the peak MB that reading allocated."""
    import tracemalloc
    tracemalloc.start()
    try:
        with pytest.raises(FormatError, match=match):
            scene_of(data)
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def test_primitives_naming_one_index_accessor_over_and_over_are_refused_before_they_are_built():
    """A 2 MB file whose 200 primitives all name the same 250k indices would build 50M corners
    (GBs): refused, with memory of the order of the file's own."""
    b = F.Builder()
    pos, idx = _big_strip(b, 250_000)
    b.add("meshes", {"primitives": [{"attributes": {"POSITION": pos}, "indices": idx}] * 200})
    b.add("nodes", {"mesh": 0})
    b.tree["scenes"] = [{"nodes": [0]}]
    data = b.glb()
    assert _refused_with_peak_mb(data, r"vertices and corners from \d+ bytes of buffers.*primitives\[") < 8 * len(data) / 2 ** 20
    b.tree["meshes"][0]["primitives"] = b.tree["meshes"][0]["primitives"][:2]   # honest: two materials' worth
    assert len(scene_of(b.glb()).meshes[0].faces) == 2 * 250_000 // 3


def test_morph_targets_without_data_cannot_ask_for_gigabytes():
    """Targets with no POSITION are zero offsets, each as many vertices as the mesh: 300 of them on
    200k vertices would be 60M target vertices from a 3 MB file; refused before any is built."""
    b = F.Builder()
    pos, idx = _big_strip(b, 200_000)
    b.add("meshes", {"primitives": [{"attributes": {"POSITION": pos}, "indices": idx, "targets": [{}] * 300}]})
    b.add("nodes", {"mesh": 0})
    b.tree["scenes"] = [{"nodes": [0]}]
    data = b.glb()
    assert _refused_with_peak_mb(data, r"morph-target vertices from \d+ bytes") < 8 * len(data) / 2 ** 20
    b.tree["meshes"][0]["primitives"][0]["targets"] = [{}] * 3
    assert len(scene_of(b.glb()).meshes[0].shape_keys) == 4


def test_a_quantized_mesh_takes_its_nodes_scale():
    """KHR_mesh_quantization: integer positions given their size by a leaf node's scale arrive at that
    size in the mesh, the object unscaled (a float mesh keeps its object's scale); normals stay unit."""
    def world(s):
        i = next(k for k, n in enumerate(s.nodes) if n.kind == "MESH")
        w = s.world_matrix(i)
        return s.meshes[s.nodes[i].data].positions @ w[:3, :3].T + w[:3, 3], s.nodes[i].matrix
    for quantized in (True, False):
        b = F.Builder()
        q = (F.QUAD * 4).astype(np.int16 if quantized else np.float32)
        n = np.tile([0, 0, 1], (4, 1)).astype(np.float32)
        b.add("meshes", {"primitives": [{"attributes": {"POSITION": b.accessor(q, minmax=True),
                                                        "NORMAL": b.accessor(n)}}]})
        b.add("nodes", {"mesh": 0, "translation": [1, 2, 3], "scale": [0.25, 0.5, 2.0]})
        b.tree["extensionsUsed"] = ["KHR_mesh_quantization"]
        s = scene_of(b.glb())
        points, matrix = world(s)
        want = blender(F.QUAD * 4 * [0.25, 0.5, 2.0] + [1, 2, 3])
        np.testing.assert_allclose(points[s.meshes[0].corners[:3]], want[[0, 1, 2]], atol=1e-6)
        scale = np.linalg.norm(matrix[:3, :3], axis=0)
        np.testing.assert_allclose(scale, [1, 1, 1] if quantized else [0.25, 2.0, 0.5], atol=1e-9)
        np.testing.assert_allclose(np.linalg.norm(s.meshes[0].normals, axis=1), 1.0, atol=1e-6)


def test_only_the_default_scene_is_read():
    b = F.quad()
    b.tree["nodes"].append({"name": "Elsewhere", "mesh": 0})
    b.tree["scenes"].insert(0, {"nodes": [1]})
    b.tree["scene"] = 1
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    assert [n.name for n in s.nodes] == ["QuadNode"]
    assert any("2 scenes: only its default one (scene 1)" in t for t in w.as_list())


def test_skins_sharing_some_joints_each_get_their_keys():
    b = F.skinned()
    tip, root = (next(i for i, n in enumerate(b.tree["nodes"]) if n.get("name") == k) for k in ("Tip", "Root"))
    # the same joints listed the other way round: another armature
    ibm = np.stack([np.linalg.inv(np.array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1.]])), np.eye(4)])
    acc = b.accessor(ibm.transpose(0, 2, 1).reshape(2, 16).astype(np.float32))
    b.tree["skins"].append({"joints": [tip, root], "inverseBindMatrices": acc})
    b.tree["nodes"].append({"name": "Other", "mesh": 0, "skin": 1})
    b.tree["nodes"][0]["children"].append(len(b.tree["nodes"]) - 1)
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    assert len(s.armatures) == 2 and any("separate armatures" in t for t in w.as_list())
    arms = [i for i, n in enumerate(s.nodes) if n.kind == "ARMATURE"]
    keyed = {c.target for c in s.animations[0].channels if c.bone == "Tip" and len(c.frames) == 3}
    assert keyed == set(arms)


@pytest.mark.parametrize("filters", [[0, 1, 2, 0, 1, 2], [0, 1, 2, 3, 4, 4], [4, 3, 3, 4, 1, 0]])
def test_an_embedded_png_comes_as_pixels(filters):
    """A .glb's picture (a buffer view) arrives as the Scene image's pixels, bottom row first, whatever
    scanline filters the PNG used; a JPEG one is named."""
    rgba = np.random.default_rng(7).integers(0, 256, (6, 5, 4), dtype=np.uint8)
    b = F.quad()
    b.tree["images"] = [{"bufferView": b.view(F.png_bytes(rgba, filters)), "mimeType": "image/png", "name": "pic"},
                        {"bufferView": b.view(b"\xff\xd8\xff\xe0 not really a jpeg"), "mimeType": "image/jpeg"}]
    b.tree["textures"] = [{"source": 0}, {"source": 1}]
    b.tree["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"] = {"index": 0}
    b.tree["materials"][0]["emissiveTexture"] = {"index": 1}
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    np.testing.assert_array_equal(np.round(s.images[0].pixels * 255).astype(np.uint8), rgba[::-1])
    assert s.images[1].pixels is None and s.images[1].name == "image1.jpg"
    assert any("other than PNG" in t for t in w.as_list())


def test_a_small_png_cannot_unpack_into_gigabytes():
    import zlib
    rows = zlib.compress(b"\0" * (4096 * (4096 * 4 + 1)), 9)          # 64 MB of scanlines in ~65 KB
    head = struct.pack(">IIBBBBB", 4096, 4096, 8, 6, 0, 0, 0)
    png = b"\x89PNG\r\n\x1a\n" + b"".join(struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"
                                          for kind, body in ((b"IHDR", head), (b"IDAT", rows), (b"IEND", b"")))
    b = F.quad()
    b.tree["images"] = [{"bufferView": b.view(png), "mimeType": "image/png"}]
    w = Warnings()
    s = scene_of(b.glb(), warnings=w)
    assert s.images[0].pixels is None and any("4096 x 4096 pixels" in t for t in w.as_list())


def test_a_skinned_meshs_own_node_keys_do_not_move_it():
    """glTF ignores a skinned mesh node's transform: keys on it are not played."""
    b = F.skinned()
    strip = next(i for i, n in enumerate(b.tree["nodes"]) if n.get("name") == "Strip")
    t = b.tree["animations"][0]["samplers"][1]["input"]
    out = b.accessor(np.array([[0, 0, 0], [5, 0, 0], [9, 0, 0]], np.float32))
    b.tree["animations"][0]["samplers"].append({"input": t, "output": out})
    b.tree["animations"][0]["channels"].append({"sampler": 2, "target": {"node": strip, "path": "translation"}})
    s = scene_of(b.glb())
    node = next(i for i, n in enumerate(s.nodes) if n.kind == "MESH")
    assert not any(c.target == node and not c.bone for c in s.animations[0].channels)
