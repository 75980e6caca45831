"""Hand-built glTF files for the reader's tests and the fuzzer's seeds, written here byte by byte
(not by our writer), so that the reader is checked against the standard's layout itself."""
from __future__ import annotations

import base64
import json
import struct

import numpy as np

TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}
CTYPES = {np.dtype("f4"): 5126, np.dtype("u1"): 5121, np.dtype("u2"): 5123, np.dtype("u4"): 5125,
          np.dtype("i1"): 5120, np.dtype("i2"): 5122}


class Builder:
    def __init__(self):
        self.bin = bytearray()
        self.tree: dict = {"asset": {"version": "2.0"}, "buffers": [{"byteLength": 0}], "bufferViews": [],
                           "accessors": []}

    def view(self, data: bytes, stride: int | None = None) -> int:
        self.bin += b"\0" * (-len(self.bin) % 4)
        v = {"buffer": 0, "byteOffset": len(self.bin), "byteLength": len(data)}
        if stride:
            v["byteStride"] = stride
        self.bin += data
        self.tree["bufferViews"].append(v)
        return len(self.tree["bufferViews"]) - 1

    def accessor(self, array, normalized: bool = False, minmax: bool = False, **extra) -> int:
        a = np.asarray(array)
        a = a.reshape(len(a), -1)
        acc = {"bufferView": self.view(np.ascontiguousarray(a).tobytes()), "componentType": CTYPES[a.dtype],
               "count": len(a), "type": TYPES[a.shape[1]], **extra}
        if normalized:
            acc["normalized"] = True
        if minmax:
            acc["min"] = a.min(0).tolist()
            acc["max"] = a.max(0).tolist()
        self.tree["accessors"].append(acc)
        return len(self.tree["accessors"]) - 1

    def add(self, key: str, item: dict) -> int:
        self.tree.setdefault(key, []).append(item)
        return len(self.tree[key]) - 1

    def glb(self) -> bytes:
        self.tree["buffers"][0]["byteLength"] = len(self.bin)
        js = json.dumps(self.tree).encode()
        js += b" " * (-len(js) % 4)
        bn = bytes(self.bin) + b"\0" * (-len(self.bin) % 4)
        body = struct.pack("<II", len(js), 0x4E4F534A) + js + struct.pack("<II", len(bn), 0x004E4942) + bn
        return struct.pack("<4sII", b"glTF", 2, 12 + len(body)) + body

    def gltf(self, uri: str | None = None) -> tuple[bytes, dict[str, bytes]]:
        """The JSON, with the buffer as a data: URI, or as the file `uri` (returned beside it)."""
        self.tree["buffers"][0]["byteLength"] = len(self.bin)
        if uri is None:
            self.tree["buffers"][0]["uri"] = "data:application/octet-stream;base64," + \
                base64.b64encode(bytes(self.bin)).decode()
            return json.dumps(self.tree, indent=1).encode(), {}
        self.tree["buffers"][0]["uri"] = uri
        return json.dumps(self.tree, indent=1).encode(), {uri: bytes(self.bin)}


QUAD = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]], np.float32)


def quad(b: Builder | None = None, material: bool = True) -> Builder:
    """One node with a two-triangle quad in the glTF XY plane (normal +Z), UVs, a material."""
    b = b or Builder()
    prim = {"attributes": {"POSITION": b.accessor(QUAD, minmax=True),
                           "NORMAL": b.accessor(np.tile([0, 0, 1], (4, 1)).astype(np.float32)),
                           "TEXCOORD_0": b.accessor(np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32))},
            "indices": b.accessor(np.array([0, 1, 2, 0, 2, 3], np.uint16))}
    if material:
        prim["material"] = b.add("materials", {"name": "Red", "pbrMetallicRoughness": {
            "baseColorFactor": [1, 0, 0, 0.5], "roughnessFactor": 0.25}, "alphaMode": "BLEND", "doubleSided": True})
    mesh = b.add("meshes", {"name": "Quad", "primitives": [prim]})
    node = b.add("nodes", {"name": "QuadNode", "mesh": mesh, "translation": [0, 2, 0]})
    b.tree["scenes"] = [{"nodes": [node]}]
    b.tree["scene"] = 0
    return b


def skinned(b: Builder | None = None, armature: np.ndarray | None = None) -> Builder:
    """A 2-bone rig under an "Armature" node (with the 4x4 `armature` as its matrix, when given), a strip
    of 6 vertices skinned to it, a morph target, and two animations: "Bend" (LINEAR rotation of bone 1
    plus STEP translation of bone 0) and "Morph" (CUBICSPLINE weights)."""
    b = b or Builder()
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 2, 0], [1, 2, 0]], np.float32)
    tris = np.array([0, 1, 3, 0, 3, 2, 2, 3, 5, 2, 5, 4], np.uint16)
    joints = np.array([[0, 0, 0, 0], [0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]], np.uint8)
    weights = np.array([[1, 0, 0, 0], [1, 0, 0, 0], [.5, .5, 0, 0], [.5, .5, 0, 0], [1, 0, 0, 0], [1, 0, 0, 0]],
                       np.float32)
    delta = np.zeros((6, 3), np.float32)
    delta[4:, 2] = 1.0
    prim = {"attributes": {"POSITION": b.accessor(pos, minmax=True), "JOINTS_0": b.accessor(joints),
                           "WEIGHTS_0": b.accessor(weights)},
            "indices": b.accessor(tris), "targets": [{"POSITION": b.accessor(delta, minmax=True)}]}
    mesh = b.add("meshes", {"name": "Strip", "primitives": [prim], "weights": [0.0],
                            "extras": {"targetNames": ["Lift"]}})
    # joints: bone0 at the origin, bone1 at y=1 (its child)
    ibm = np.stack([np.eye(4), np.linalg.inv(np.array([[1, 0, 0, 0], [0, 1, 0, 1], [0, 0, 1, 0], [0, 0, 0, 1.]]))])
    ibm_acc = b.accessor(ibm.transpose(0, 2, 1).reshape(2, 16).astype(np.float32))
    b.tree["nodes"] = b.tree.get("nodes", [])
    n0 = len(b.tree["nodes"])
    b.tree["nodes"] += [
        {"name": "Armature", "children": [n0 + 1, n0 + 3]},
        {"name": "Root", "children": [n0 + 2]},
        {"name": "Tip", "translation": [0, 1, 0]},
        {"name": "Strip", "mesh": mesh, "skin": 0},
    ]
    if armature is not None:
        b.tree["nodes"][n0]["matrix"] = np.asarray(armature, float).T.reshape(-1).tolist()
    b.tree["skins"] = [{"joints": [n0 + 1, n0 + 2], "inverseBindMatrices": ibm_acc}]
    t = b.accessor(np.array([0, 1, 2], np.float32), minmax=True)
    half = np.sqrt(0.5)
    rot = b.accessor(np.array([[0, 0, 0, 1], [0, 0, half, half], [0, 0, 1, 0]], np.float32))
    move = b.accessor(np.array([[0, 0, 0], [0, 0, 1], [0, 0, 2]], np.float32))
    w = b.accessor(np.array([0, 0, 0, 0, 1, 0, 0, 0, 0], np.float32))     # (in, value, out) per key
    b.tree["animations"] = [
        {"name": "Bend", "samplers": [{"input": t, "output": rot}, {"input": t, "output": move,
                                                                      "interpolation": "STEP"}],
         "channels": [{"sampler": 0, "target": {"node": n0 + 2, "path": "rotation"}},
                      {"sampler": 1, "target": {"node": n0 + 1, "path": "translation"}}]},
        {"name": "Morph", "samplers": [{"input": t, "output": w, "interpolation": "CUBICSPLINE"}],
         "channels": [{"sampler": 0, "target": {"node": n0 + 3, "path": "weights"}}]},
    ]
    b.tree["scenes"] = [{"nodes": [n0]}]
    return b


def full() -> Builder:
    """The quad with a textured material (a PNG data: URI, a sampler, KHR_texture_transform), a camera and a
    spot light."""
    b = quad()
    pic = png_bytes(np.arange(3 * 4 * 4, dtype=np.uint8).reshape(3, 4, 4) * 5, [1, 4, 3])
    b.tree["images"] = [{"uri": "data:image/png;base64," + base64.b64encode(pic).decode(), "name": "tex"}]
    b.tree["samplers"] = [{"wrapS": 33648, "wrapT": 33648}]
    b.tree["textures"] = [{"source": 0, "sampler": 0}]
    b.tree["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"] = {
        "index": 0, "extensions": {"KHR_texture_transform": {"offset": [0.5, 0], "scale": [2, 2]}}}
    b.tree["cameras"] = [{"type": "perspective", "perspective": {"yfov": 0.6, "znear": 0.1, "zfar": 100}}]
    b.tree["extensions"] = {"KHR_lights_punctual": {"lights": [{"type": "spot", "spot": {"outerConeAngle": 0.5}}]}}
    b.tree["extensionsUsed"] = ["KHR_lights_punctual", "KHR_texture_transform"]
    b.tree["nodes"][0]["children"] = [1, 2]
    b.tree["nodes"] += [{"camera": 0, "translation": [0, 0, 5]},
                        {"extensions": {"KHR_lights_punctual": {"light": 0}}, "rotation": [0, 0.6, 0, 0.8]}]
    return b


def png_bytes(rgba: np.ndarray, filters: list[int]) -> bytes:
    """An 8-bit RGBA PNG of `rgba` (H, W, 4) uint8, top row first, row y filtered with filters[y]
    (0 none, 1 sub, 2 up, 3 average, 4 paeth), written here byte by byte."""
    import zlib
    h, w, _ = rgba.shape
    img = rgba.astype(np.int64)
    raw = bytearray()
    for y in range(h):
        raw.append(filters[y])
        for x in range(w):
            for ch in range(4):
                cur = img[y, x, ch]
                a = img[y, x - 1, ch] if x else 0
                b = img[y - 1, x, ch] if y else 0
                c = img[y - 1, x - 1, ch] if x and y else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                paeth = a if pa <= pb and pa <= pc else b if pb <= pc else c
                pred = [0, a, b, (a + b) // 2, paeth][filters[y]]
                raw.append((cur - pred) % 256)

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(raw))) + chunk(b"IEND", b""))
