"""Generated benchmark data: grids of triangles with UVs and normals, and the
per-format row functions that `bench.py` runs."""
from __future__ import annotations

import numpy as np

from addon.codec.scene import Mesh, Node, Scene


def grid_mesh(name: str, tris: int, offset=(0.0, 0.0, 0.0)) -> Mesh:
    """A wavy n x n quad grid split into triangles (about `tris` of them)."""
    n = max(1, int(np.sqrt(tris / 2)))
    xs = np.linspace(0, 1, n + 1, dtype=np.float32)
    gx, gy = np.meshgrid(xs, xs, indexing="ij")
    gz = 0.05 * np.sin(gx * 20) * np.cos(gy * 20)
    pos = np.stack([gx, gy, gz], -1).reshape(-1, 3) + np.asarray(offset, np.float32)
    i = np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]
    a, b, c, d = i, i + (n + 1), i + (n + 2), i + 1
    tri = np.stack([np.stack([a, b, c], -1), np.stack([a, c, d], -1)], 2).reshape(-1, 3)
    m = Mesh.from_triangles(name, pos, tri)
    m.uv_layers["UVMap"] = pos[m.corners, :2].copy()
    v = pos[tri]
    fn = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    fn /= np.linalg.norm(fn, axis=1, keepdims=True)
    m.normals = np.repeat(fn, 3, axis=0).astype(np.float32)
    m.face_material = np.zeros(len(tri), np.int32)
    return m


def grid_scene(tris: int, parts: int = 1) -> Scene:
    s = Scene()
    for k in range(parts):
        s.meshes.append(grid_mesh(f"Grid{k:03d}", tris // parts, (k * 1.1, 0, 0)))
        s.add_node(Node(f"Grid{k:03d}", "MESH", k))
    return s


def _op(idname: str):
    import bpy
    mod, name = idname.split(".")
    return getattr(getattr(bpy.ops, mod), name)


def _formats(lgf) -> set:
    return set(lgf.codec.registered_formats())


def studio_scene(tris: int, parts: int) -> Scene:
    """Grids as a 3DS artist's file holds them: smooth (one smoothing group), two materials in
    stripes, and UVs that jump at each stripe, so that the file splits vertices at the seams."""
    from addon.codec.scene import Material
    s = grid_scene(tris, parts)
    s.materials = [Material("Paint"), Material("Chrome")]
    for m in s.meshes:
        n = int(np.sqrt(len(m.faces) / 2))
        m.materials = [0, 1]
        m.face_material = ((np.arange(len(m.faces)) // (2 * n * 8)) % 2).astype(np.int32)   # 8-row stripes
        m.uv_layers["UVMap"][:, 0] += np.repeat(m.face_material, 3) * np.float32(0.5)
        m.face_attributes["smoothing_groups"] = np.ones(len(m.faces), np.int32)
        m.normals = None
    return s


def rows_3ds(lgf, bench_format, quick: bool) -> None:
    if "3ds" not in _formats(lgf):
        return
    for tris in ([10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]):
        parts = max(1, tris // 60_000)           # keep each object under 65535 vertices
        bench_format(lgf, f".3ds {tris // 1000}k tris ({parts} objects)", studio_scene(tris, parts), ".3ds",
                     _op("import_scene.studio3ds"), _op("export_scene.studio3ds"), target_fast=True)


def rows_unreal(lgf, bench_format, quick: bool) -> None:
    from tests.bench_unreal import make_scene
    frames = 100 if quick else 1000
    bench_format(lgf, f"UE1 5k verts x {frames} frames", make_scene(5000, frames), "_d.3d",
                 _op("import_scene.unreal_vertex_mesh"), _op("export_scene.unreal_vertex_mesh"))


def rows_u3d(lgf, bench_format, quick: bool) -> None:
    from tests.codec.u3d_bench_scenes import skinned_scene, static_scene
    tris = 100_000 if quick else 1_000_000
    bench_format(lgf, f".u3d {tris // 1000}k tris static", static_scene(tris), ".u3d",
                 _op("import_scene.ultimate3d"), _op("export_scene.ultimate3d"))
    frames = 50 if quick else 500
    bench_format(lgf, f".u3d 20k verts skinned, 60 bones, {frames} frames", skinned_scene(20_000, 60, frames),
                 ".u3d", _op("import_scene.ultimate3d"), _op("export_scene.ultimate3d"))


def rows_unigine(lgf, bench_format, quick: bool) -> None:
    from addon.codec.errors import Warnings
    from tests import unigine_samples as samples
    from addon.codec.formats.unigine.options import ImportOptions
    from addon.codec.formats.unigine.to_scene import mesh_to_scene
    imp, exp = _op("import_scene.unigine_mesh"), _op("export_scene.unigine_mesh")
    tris = 100_000 if quick else 1_000_000
    bench_format(lgf, f"UNIGINE .mesh {tris // 1000}k tris static", grid_scene(tris), ".mesh", imp, exp)
    frames = 50 if quick else 500
    sc = mesh_to_scene(samples.skinned_mesh(20_000, 60, frames), ImportOptions(), Warnings())
    bench_format(lgf, f"UNIGINE .mesh 20k verts skinned, 60 bones, {frames} frames", sc, ".mesh", imp,
                 exp, {"embed_animations": True}, export_kwargs={"embed_animations": True})


FORMAT_ROWS = [rows_3ds, rows_unreal, rows_u3d, rows_unigine]
