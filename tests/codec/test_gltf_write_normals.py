"""Scene -> glTF normals where the Scene has none of its own: smoothing groups (a .3ds read for Blender's own
smoothing) smooth across every corner of a vertex, UV seams included, and stop where the mesh is cut (two
vertices at one point), as Blender shades the same mesh; a mesh without groups, sharp edges or flat faces
smooths per vertex. Expected normals are summed here, face by face."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import load, save
from addon.codec.scene import Mesh, Node, Scene
from tests.conftest import ASSETS
from tests.gltf_write_samples import Gltf, to_gltf_axes

N = 4          # quads a side


def cut_grid() -> Mesh:
    """A wavy N x N quad grid cut open along x = 2 (the points there are two vertices each, one per side)
    whose UVs also jump at x = 1 (a seam in UVs alone)."""
    pts, index = [], {}
    for y in range(N + 1):
        for x in range(N + 1):
            for side in ((0, 1) if x == 2 else (0,)):
                index[x, y, side] = len(pts)
                pts.append((x, y, 0.3 * np.sin(1.3 * x + 0.4) * np.cos(0.9 * y)))

    def v(x, y, right):              # the vertex of point (x, y) for a face right of the cut or not
        return index[x, y, 1 if (x == 2 and right) else 0]

    tris, uvs = [], []
    for y in range(N):
        for x in range(N):
            right = x >= 2
            a, b, c, d = v(x, y, right), v(x + 1, y, right), v(x + 1, y + 1, right), v(x, y + 1, right)
            for t in ((a, b, c), (a, c, d)):
                tris.append(t)
                uvs += [(pts[k][0] / N + (0.5 if x >= 1 else 0.0), pts[k][1] / N) for k in t]
    mesh = Mesh.from_triangles("cut", np.asarray(pts, np.float32), tris)
    mesh.uv_layers["UVMap"] = np.asarray(uvs, np.float32)
    return mesh


def written(mesh: Mesh, tmp_path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(glTF vertex of each triangle corner, each glTF vertex's normal and position), as the file holds them."""
    scene = Scene()
    scene.meshes.append(mesh)
    scene.add_node(Node("cut", "MESH", 0))
    save(scene, tmp_path / "n.glb")
    g = Gltf(tmp_path / "n.glb")
    prim = g.json["meshes"][0]["primitives"]
    assert len(prim) == 1
    return (g.accessor(prim[0]["indices"])[:, 0].astype(int), g.accessor(prim[0]["attributes"]["NORMAL"]),
            g.accessor(prim[0]["attributes"]["POSITION"]))


def face_sums(mesh: Mesh, key) -> dict:
    """Area-weighted face normal sums (float64) per key(corner)."""
    p = mesh.positions.astype(np.float64)
    tris = mesh.corners.reshape(-1, 3)
    out: dict = {}
    for f, (a, b, c) in enumerate(tris):
        n = np.cross(p[b] - p[a], p[c] - p[a])
        for k in range(3):
            out[key(3 * f + k)] = out.get(key(3 * f + k), 0.0) + n
    return out


def unit(n: np.ndarray) -> np.ndarray:
    return n / np.linalg.norm(n)


def cut_twins(mesh: Mesh) -> np.ndarray:
    """The two vertices of one point of the cut."""
    twins = np.flatnonzero((mesh.positions[:, 0] == 2) & (mesh.positions[:, 1] == 1))
    assert len(twins) == 2
    return twins


@pytest.mark.parametrize("groups", [[1], [1, 3], [5, 4]], ids=["one group", "masks 1 and 3", "masks 5 and 4"])
def test_smoothing_groups_smooth_across_uv_seams_not_across_a_cut(groups, tmp_path):
    """Every face smooths with every other where masks share a bit (one group: the fast path; masks 1 and 3, or
    5 and 4, alternating: the corner path): each glTF vertex has the normal of its Scene vertex, summed over the
    faces there; the two vertices of the cut keep their own sides' normals (the edge between them is open in
    Blender too), and there is one glTF vertex per (vertex, UV) pair."""
    mesh = cut_grid()
    mesh.smoothing = np.resize(np.asarray(groups, np.uint32), len(mesh.faces))
    sums = face_sums(mesh, lambda c: int(mesh.corners[c]))
    idx, normals, positions = written(mesh, tmp_path)
    pairs = {(int(mesh.corners[c]),) + tuple(mesh.uv_layers["UVMap"][c]) for c in range(len(mesh.corners))}
    assert len(normals) == len(pairs) > len(mesh.positions)        # split at the UV seam
    for c, vertex in enumerate(idx):
        want = to_gltf_axes(unit(sums[int(mesh.corners[c])]))
        np.testing.assert_allclose(normals[vertex], want, atol=1e-5, err_msg=f"corner {c}")
    a, b = (normals[idx[list(mesh.corners).index(t)]] for t in cut_twins(mesh))
    assert not np.allclose(a, b, atol=1e-3)


def test_flat_faces_keep_their_own_normal_beside_smooth_ones(tmp_path):
    """Faces in group 0 are flat: their corners have the face's normal, and the smooth corners of the same vertex
    sum the smooth faces alone."""
    mesh = cut_grid()
    flat = np.zeros(len(mesh.faces), bool)
    flat[[0, 5, 6, 17]] = True
    mesh.smoothing = np.where(flat, 0, 1).astype(np.uint32)
    smooth = face_sums(mesh, lambda c: int(mesh.corners[c]) if not flat[c // 3] else ("flat", c // 3))
    idx, normals, _ = written(mesh, tmp_path)
    for c, vertex in enumerate(idx):
        want = to_gltf_axes(unit(smooth[("flat", c // 3) if flat[c // 3] else int(mesh.corners[c])]))
        np.testing.assert_allclose(normals[vertex], want, atol=1e-5, err_msg=f"corner {c}")


def test_a_mesh_without_groups_smooths_each_vertex_apart(tmp_path):
    """No normals, groups, sharp edges or flat faces: a vertex's normal sums its own faces (the cut stays
    open: its two vertices differ), and vertices split only at UV seams."""
    mesh = cut_grid()
    sums = face_sums(mesh, lambda c: int(mesh.corners[c]))
    idx, normals, _ = written(mesh, tmp_path)
    for c, vertex in enumerate(idx):
        np.testing.assert_allclose(normals[vertex], to_gltf_axes(unit(sums[int(mesh.corners[c])])), atol=1e-5)
    twins = cut_twins(mesh)
    assert not np.allclose(unit(sums[int(twins[0])]), unit(sums[int(twins[1])]), atol=1e-3)


def test_a_3ds_read_for_native_smoothing_writes_the_normals_its_exact_read_has(tmp_path):
    """A real file read with its groups and no normals (the default) writes, at every triangle corner, the normal
    that a read with Normals: Exact keeps as custom normals (the same groups, made normals on import)."""
    src = ASSETS / "3ds" / "mp5_sil.3ds"
    out = {}
    for mode in ("SHARP_EDGES", "EXACT"):
        scene = load(src, normals=mode)
        save(scene, tmp_path / f"{mode}.glb")
        g = Gltf(tmp_path / f"{mode}.glb")
        corners = []
        for mesh in g.json["meshes"]:
            for prim in mesh["primitives"]:
                idx = g.accessor(prim["indices"])[:, 0].astype(int)
                corners.append(np.c_[g.accessor(prim["attributes"]["POSITION"])[idx],
                                     g.accessor(prim["attributes"]["NORMAL"])[idx]])
        out[mode] = np.concatenate(corners)
    assert out["EXACT"].shape == out["SHARP_EDGES"].shape and len(out["EXACT"]) > 1000
    np.testing.assert_allclose(out["SHARP_EDGES"], out["EXACT"], atol=1e-5)
