"""Every sample of every format, as the glTF writer's tests take them: each valid file in test_assets,
and what those files lack made from them (an Unreal pair with a script: sequences and a masked
PCX skin; a UNIGINE mesh with its animation beside it; a .3ds with lights of each kind; a waving Unreal grid)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from addon.codec import load, save
from addon.codec.scene import Light, Node
from tests.codec.unreal_fixtures import a_file, d_file, masked_pcx, tri
from tests.conftest import ASSETS

UC = ("class mar_rifle extends Actor;\r\n"
      "#exec MESH IMPORT MESH=mar_rifle ANIVFILE=mar_rifle_a.3d DATAFILE=mar_rifle_d.3d\r\n"
      "#exec MESH ORIGIN MESH=mar_rifle X=0 Y=0 Z=0 YAW=64\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=All STARTFRAME=0 NUMFRAMES=30\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=Fire STARTFRAME=0 NUMFRAMES=10 RATE=15\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=Reload STARTFRAME=10 NUMFRAMES=20 RATE=30\r\n"
      "#exec TEXTURE IMPORT NAME=Jm_rifl FILE=m_rifl.pcx GROUP=Skins FLAGS=2\r\n"
      "#exec MESHMAP SETTEXTURE MESHMAP=mar_rifle NUM=1 TEXTURE=Jm_rifl\r\n")

FILES = sorted([p for p in (ASSETS / "3ds").iterdir() if p.suffix.lower() == ".3ds" and p.name != "wrong.3ds"]
               + list((ASSETS / "unreal").glob("*_d.3d")) + list((ASSETS / "unigine").glob("*.mesh"))
               + list((ASSETS / "ultimate3d").glob("*.u3d")))


WAVE_UC = ("class wave extends Actor;\r\n"
           "#exec MESH IMPORT MESH=wave ANIVFILE=wave_a.3d DATAFILE=wave_d.3d\r\n"
           "#exec MESH SEQUENCE MESH=wave SEQ=All STARTFRAME=0 NUMFRAMES=12\r\n"
           "#exec MESH SEQUENCE MESH=wave SEQ=Wave STARTFRAME=0 NUMFRAMES=10 RATE=10\r\n"
           "#exec MESH SEQUENCE MESH=wave SEQ=Twitch STARTFRAME=10 NUMFRAMES=2 RATE=5\r\n")


def wave_pair() -> tuple[bytes, bytes]:
    """A 5 x 5 grid of packed vertices that waves for 10 frames (every vertex moves, by more than a byte
    holds in one frame), then 2 frames of the first where one corner alone lifts."""
    grid = [(x * 40, y * 40) for y in range(5) for x in range(5)]
    faces = []
    for y in range(4):
        for x in range(4):
            a = y * 5 + x
            faces += [(a, a + 1, a + 6), (a, a + 6, a + 5)]
    frames = [[(x, y, int(round((250 if f == 9 else 20) * np.sin(0.7 * f + x / 40.0)))) for x, y in grid]
              for f in range(10)]
    frames += [[(x, y, z + (30 if (i == 0 and f == 11) else 0)) for i, (x, y, z) in enumerate(frames[0])]
               for f in (10, 11)]
    tris = [tri(v, uv=((v[0] * 10 % 256, 0), (v[1] * 10 % 256, 40), (v[2] * 10 % 256, 80))) for v in faces]
    return d_file(tris, len(grid)), a_file(frames)


def made(folder: Path) -> list[Path]:
    """The made samples, written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("mar_rifle_d.3d", "mar_rifle_a.3d"):
        shutil.copy(ASSETS / "unreal" / name, folder / name)
    (folder / "m_rifl.pcx").write_bytes(masked_pcx())      # index 0 is a hole
    (folder / "mar_rifle.uc").write_bytes(UC.encode("latin-1"))
    shutil.copy(ASSETS / "unigine" / "tube_skinned.mesh", folder / "tube.mesh")
    shutil.copy(ASSETS / "unigine" / "tube_bend.anim", folder / "tube.anim")
    scene = load(ASSETS / "3ds" / "cube_hierarchy.3ds")
    for kind in ("POINT", "SPOT", "SUN"):
        scene.lights.append(Light(f"{kind.title()}Lamp", kind, color=(1.0, 0.8, 0.5), energy=500.0))
        m = np.eye(4)
        m[:3, 3] = (len(scene.lights) * 3.0, -4.0, 5.0)
        scene.add_node(Node(f"{kind.title()}Lamp", "LIGHT", len(scene.lights) - 1, matrix=m))
    save(scene, folder / "lamps.3ds")
    d, a = wave_pair()
    (folder / "wave_d.3d").write_bytes(d)
    (folder / "wave_a.3d").write_bytes(a)
    (folder / "wave.uc").write_bytes(WAVE_UC.encode("latin-1"))
    return [folder / "mar_rifle_d.3d", folder / "tube.mesh", folder / "lamps.3ds", folder / "wave_d.3d"]


def samples(folder: Path) -> list[Path]:
    return FILES + made(folder)


def sample_id(p: Path) -> str:
    return p.name


# -- glTF as the standard reads it, written out here (neither our writer nor our reader) ----------------
class Gltf:
    """A written .glb or .gltf, decoded by the specification: accessors, node transforms, animation
    samplers, skinning and morph targets."""

    DT = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
    WIDTH = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT4": 16}

    def __init__(self, path: Path) -> None:
        import json
        import struct
        data = Path(path).read_bytes()
        if data[:4] == b"glTF":
            n = struct.unpack_from("<I", data, 12)[0]
            self.json = json.loads(data[20:20 + n])
            at = 20 + n
            self.bin = data[at + 8:at + 8 + struct.unpack_from("<I", data, at)[0]] if at < len(data) else b""
        else:
            self.json = json.loads(data)
            uri = self.json["buffers"][0]["uri"] if self.json.get("buffers") else ""
            self.bin = (Path(path).parent / uri).read_bytes() if uri else b""
        self.parent = {c: i for i, n in enumerate(self.json.get("nodes", [])) for c in n.get("children", [])}

    def accessor(self, i: int) -> np.ndarray:
        a = self.json["accessors"][i]
        dt, w, n = np.dtype(self.DT[a["componentType"]]), self.WIDTH[a["type"]], a["count"]
        out = np.zeros((n, w), np.float64)
        if "bufferView" in a:
            v = self.json["bufferViews"][a["bufferView"]]
            stride = v.get("byteStride", dt.itemsize * w)
            start = v.get("byteOffset", 0) + a.get("byteOffset", 0)
            raw = np.frombuffer(self.bin, np.uint8, stride * (n - 1) + dt.itemsize * w if n else 0, start)
            rows = np.lib.stride_tricks.as_strided(raw, (n, dt.itemsize * w), (stride, 1)) if n else raw.reshape(0, 0)
            out = np.ascontiguousarray(rows).view(dt).reshape(n, w).astype(np.float64)
        if "sparse" in a:
            s = a["sparse"]
            iv, vv = self.json["bufferViews"][s["indices"]["bufferView"]], self.json["bufferViews"][s["values"]["bufferView"]]
            idx = np.frombuffer(self.bin, self.DT[s["indices"]["componentType"]], s["count"], iv.get("byteOffset", 0))
            out[idx.astype(np.int64)] = np.frombuffer(self.bin, dt, s["count"] * w, vv.get("byteOffset", 0)).reshape(-1, w)
        if a.get("normalized"):
            out = np.maximum(out / float(np.iinfo(dt).max), -1.0)
        return out

    @staticmethod
    def compose(t, q_xyzw, s) -> np.ndarray:
        x, y, z, w = q_xyzw / np.linalg.norm(q_xyzw)
        r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                      [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                      [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
        m = np.eye(4)
        m[:3, :3] = r * np.asarray(s, float)
        m[:3, 3] = t
        return m

    def animation(self, name: str) -> dict:
        return next(a for a in self.json.get("animations", []) if a["name"] == name)

    def sample(self, anim: dict, node: int, path: str, time: float):
        """The animated value of node's path at `time` (None when not animated): glTF's interpolations.
        The time is taken as the float32 the file holds, so that a key's own time finds that key."""
        time = float(np.float32(time))
        for c in anim["channels"]:
            if c["target"].get("node") != node or c["target"]["path"] != path:
                continue
            s = anim["samplers"][c["sampler"]]
            t = self.accessor(s["input"])[:, 0]
            v = self.accessor(s["output"])
            if path == "weights":
                v = v.reshape(len(t), -1)
            cubic = s.get("interpolation") == "CUBICSPLINE"
            if cubic:
                v = v.reshape(len(t), 3, -1)
            k = int(np.clip(np.searchsorted(t, time, side="right") - 1, 0, len(t) - 1))
            if time <= t[0] or k == len(t) - 1:
                return v[k, 1] if cubic else v[k]
            u = (time - t[k]) / (t[k + 1] - t[k])
            if s.get("interpolation") == "STEP":
                return v[k]
            if cubic:
                d = t[k + 1] - t[k]
                return ((2 * u ** 3 - 3 * u ** 2 + 1) * v[k, 1] + d * (u ** 3 - 2 * u ** 2 + u) * v[k, 2]
                        + (-2 * u ** 3 + 3 * u ** 2) * v[k + 1, 1] + d * (u ** 3 - u ** 2) * v[k + 1, 0])
            if path == "rotation":
                a, b = v[k], v[k + 1] * (1 if np.dot(v[k], v[k + 1]) >= 0 else -1)
                return (1 - u) * a + u * b
            return (1 - u) * v[k] + u * v[k + 1]
        return None

    def local(self, i: int, anim: dict | None = None, time: float = 0.0) -> np.ndarray:
        n = self.json["nodes"][i]
        if "matrix" in n:
            return np.asarray(n["matrix"], float).reshape(4, 4).T
        parts = [np.asarray(n.get(k, d), float) for k, d in
                 (("translation", (0, 0, 0)), ("rotation", (0, 0, 0, 1)), ("scale", (1, 1, 1)))]
        if anim is not None:
            for j, path in enumerate(("translation", "rotation", "scale")):
                got = self.sample(anim, i, path, time)
                if got is not None:
                    parts[j] = got
        return self.compose(*parts)

    def world(self, i: int, anim: dict | None = None, time: float = 0.0) -> np.ndarray:
        m = np.eye(4)
        while i is not None:
            m = self.local(i, anim, time) @ m
            i = self.parent.get(i)
        return m

    def mesh_points(self, node: int, anim: dict | None = None, time: float = 0.0) -> np.ndarray:
        """(N, 3) world positions of the vertices of node's mesh (first primitive's attributes):
        morph targets by the node's weights, then skinning by the joints, or the node's world matrix."""
        n = self.json["nodes"][node]
        mesh = self.json["meshes"][n["mesh"]]
        prim = mesh["primitives"][0]
        p = self.accessor(prim["attributes"]["POSITION"])
        if prim.get("targets"):
            w = self.sample(anim, node, "weights", time) if anim is not None else None
            w = np.asarray(mesh.get("weights", [0.0] * len(prim["targets"])) if w is None else w, float)
            for wk, t in zip(w, prim["targets"]):
                if wk:
                    p = p + wk * self.accessor(t["POSITION"])
        ph = np.c_[p, np.ones(len(p))]
        if "skin" not in n:
            return (ph @ self.world(node, anim, time).T)[:, :3]
        skin = self.json["skins"][n["skin"]]
        ibm = self.accessor(skin["inverseBindMatrices"]).reshape(-1, 4, 4).transpose(0, 2, 1)
        joint = np.stack([self.world(j, anim, time) @ ibm[k] for k, j in enumerate(skin["joints"])])
        js = self.accessor(prim["attributes"]["JOINTS_0"]).astype(int)
        ws = self.accessor(prim["attributes"]["WEIGHTS_0"])
        m = np.einsum("vk,vkij->vij", ws, joint[js])
        return np.einsum("vij,vj->vi", m, ph)[:, :3]

    def triangles(self, node: int) -> int:
        mesh = self.json["meshes"][self.json["nodes"][node]["mesh"]]
        return sum(self.json["accessors"][p["indices"]]["count"] // 3 for p in mesh["primitives"] if "indices" in p)


def to_gltf_axes(p: np.ndarray) -> np.ndarray:
    """Blender (x, y, z) -> glTF (x, z, -y), written out for the tests."""
    p = np.asarray(p, float)
    return np.stack([p[..., 0], p[..., 2], -p[..., 1]], -1)
