"""Small .3ds files built chunk by chunk with our own writer, for the 3DS tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.model import TCB_BITS, Chunk, MaterialGroup, Model, Track
from addon.codec.formats.studio3ds.write import encode_bytes

ASSETS = Path(__file__).resolve().parents[2] / "test_assets" / "3ds"
CORPUS = sorted(p for p in ASSETS.rglob("*") if p.suffix.lower() == ".3ds")
GOOD = [p for p in CORPUS if p.name not in ("wrong.3ds", "empty.3ds")]

# a unit cube: 8 corners, 12 outward (counter-clockwise seen from outside) triangles
CUBE_POINTS = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0],
                        [0, 0, 1], [1, 0, 1], [1, 1, 1], [0, 1, 1]], np.float32)
CUBE_TRIS = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                      [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]], np.int64)


def matrix_4160(m: np.ndarray) -> np.ndarray:
    """A 4x4 column-vector matrix as the 12 floats of 0x4160 (columns written one after another)."""
    return np.asarray(m, np.float32)[:3, :4].T.ravel()


def trimesh(points, tris, flags=7, groups=None, uv=None, matrix=None, materials=(), vertex_flags=None) -> Chunk:
    tri = Chunk(ids.N_TRI_OBJECT)
    tri.add(ids.POINT_ARRAY, np.asarray(points, np.float32))
    if vertex_flags is not None:
        from addon.codec.formats.studio3ds.model import VertexFlags
        tri.add(ids.POINT_FLAG_ARRAY, VertexFlags(np.asarray(vertex_flags, np.uint16)))
    if uv is not None:
        tri.add(ids.TEX_VERTS, np.asarray(uv, np.float32))
    tri.add(ids.MESH_MATRIX, matrix_4160(np.eye(4) if matrix is None else matrix))
    tris = np.asarray(tris)
    fl = np.broadcast_to(np.asarray(flags), (len(tris),))
    fc = tri.add(ids.FACE_ARRAY, np.column_stack([tris, fl]).astype(np.uint16))
    for name, faces in materials:
        fc.add(ids.MSH_MAT_GROUP, MaterialGroup(name, np.asarray(faces, np.uint16)))
    if groups is not None:
        fc.add(ids.SMOOTH_GROUP, np.asarray(groups, np.uint32))
    return tri


def obj(name: str, *children: Chunk) -> Chunk:
    return Chunk(ids.OBJECT, name, list(children))


def track(cid: int, frames, values, key_flags=None, tcb=None, flags=0x40) -> Chunk:
    n = len(frames)
    t = Track(flags=flags, frames=np.asarray(frames, np.int64),
              key_flags=np.zeros(n, np.uint16) if key_flags is None else np.asarray(key_flags, np.uint16),
              tcb=np.full((n, TCB_BITS), np.nan, np.float32) if tcb is None else np.asarray(tcb, np.float32),
              values=np.asarray(values, np.float32).reshape(n, -1))
    return Chunk(cid, t)


def kf_node(node_id: int, name: str, parent: int = 0xFFFF, pos=(0, 0, 0), rot=(0, 0, 0, 1), scl=(1, 1, 1),
            pivot=None, instance=None, tag=ids.OBJECT_NODE_TAG, extra=()) -> Chunk:
    """rot is one key (angle radians, axis x, y, z)."""
    c = Chunk(tag)
    c.add(ids.NODE_ID, node_id)
    c.add(ids.NODE_HDR, (name, 0, 0, parent))
    if instance is not None:
        c.add(ids.INSTANCE_NAME, instance)
    if pivot is not None:
        c.add(ids.PIVOT, tuple(pivot))
    c.children.append(track(ids.POS_TRACK, [0], [pos]))
    if tag in (ids.OBJECT_NODE_TAG,):
        c.children.append(track(ids.ROT_TRACK, [0], [rot]))
        c.children.append(track(ids.SCL_TRACK, [0], [scl]))
    c.children += list(extra)
    return c


def material(name: str, diffuse=(200, 100, 50), extra=()) -> Chunk:
    m = Chunk(ids.MAT_ENTRY)
    m.add(ids.MAT_NAME, name)
    d = m.add(ids.MAT_DIFFUSE)
    d.add(ids.COLOR_24, tuple(diffuse))
    m.children += list(extra)
    return m


def build(objects=(), materials=(), kf_nodes=None, seg=(0, 100), editor_extra=()) -> bytes:
    root = Chunk(ids.MAIN)
    root.add(ids.VERSION, 3)
    ed = root.add(ids.EDITOR)
    ed.add(ids.MESH_VERSION, 3)
    ed.add(ids.MASTER_SCALE, 1.0)
    ed.children += list(materials) + list(editor_extra) + list(objects)
    if kf_nodes is not None:
        kf = root.add(ids.KFDATA)
        kf.add(ids.KFHDR, (5, "TEST", seg[1]))
        kf.add(ids.KFSEG, seg)
        kf.add(ids.KFCURTIME, 0)
        kf.children += list(kf_nodes)
    return encode_bytes(Model(root))


def chunk_offset(data: bytes, cid: int, nth: int = 0) -> int:
    """Offset of the nth chunk header with this id (found by walking, for corruption tests)."""
    from addon.codec.formats.studio3ds.read import parse
    found = [c.offset for c in parse(data).root.walk() if c.cid == cid]
    return found[nth]


def build_lib3ds_placer(folder: Path):
    """Compile tests/codec/lib3ds_place_3ds.c against Debian's lib3ds-dev; return path -> {name: [bounds]}."""
    import subprocess
    exe = Path(folder) / "lib3ds_place"
    src = Path(__file__).with_name("lib3ds_place_3ds.c")
    subprocess.run(["gcc", "-O1", "-o", str(exe), str(src), "-l3ds"], check=True)

    def run(path, frame: float = 0.0):
        out = subprocess.run([str(exe), str(path), str(frame)], capture_output=True, text=True, check=True).stdout
        rows: dict[str, list] = {}
        for line in out.splitlines():
            p = line.split("\t")
            rows.setdefault(p[0] + ("." + p[1] if p[1] else ""), []).append(np.array(p[18:24], float))
        return rows
    return run


def assimp_objects(path, folder: Path) -> list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]:
    """Every mesh node as assimp places it: (node name, world points, triangles, bounds (6,)), in 3DS axes.

    From `assimp export -fassjson`: node transformations are row-major 4x4; the root node's is
    assimp's Z-up -> Y-up turn, left out here so that the points stay in the file's axes."""
    import json
    import subprocess
    out = Path(folder) / (Path(path).stem + ".json")
    subprocess.run(["assimp", "export", str(path), str(out), "-fassjson"], capture_output=True, check=True,
                   timeout=60)
    d = json.loads(out.read_text())
    found = []

    def walk(node, parent_world, is_root):
        m = np.eye(4) if is_root else parent_world @ np.array(node["transformation"], float).reshape(4, 4)
        if node.get("meshes"):
            pts, tris = [], []
            for k in node["meshes"]:
                v = np.array(d["meshes"][k]["vertices"], float).reshape(-1, 3)
                tris.append(np.array(d["meshes"][k]["faces"], np.int64).reshape(-1, 3) + sum(map(len, pts)))
                pts.append(v @ m[:3, :3].T + m[:3, 3])
            p = np.vstack(pts)
            found.append((node["name"], p, np.vstack(tris), np.r_[p.min(0), p.max(0)]))
        for c in node.get("children", []):
            walk(c, m, False)
    walk(d["rootnode"], np.eye(4), True)
    return found


def outward(points: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """Per triangle: does its winding (counter-clockwise = front) face away from the points' centre?"""
    t = np.asarray(points, np.float64)[np.asarray(tris)]
    n = np.cross(t[:, 1] - t[:, 0], t[:, 2] - t[:, 0])
    return np.einsum("ij,ij->i", n, t.mean(1) - np.asarray(points, np.float64).mean(0)) > 0
