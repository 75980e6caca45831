"""Blender exports give the same bytes every time: each exporter writes the same scene twice, with
a mesh of more faces than Blender's MikkTSpace takes in one thread (UNIGINE's tangents come from
it), faces in no order, UV seams and mirrored UVs."""
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest

import bpy

ASSETS = Path(__file__).resolve().parents[2] / "test_assets"
MIKK_THREADS_ABOVE = 10_000       # faces: Blender's MikkTSpace sums in threads above this (intern/mikktspace)


def _grid(n: int, seed: int = 1):
    """An n x n grid, wavy and smooth, of quads and triangles in a shuffled order; UVs mirrored on
    one half (both bitangent signs) and cut along the mirror line."""
    ij = np.stack(np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"), -1).reshape(-1, 2)
    pos = np.column_stack([ij / n, 0.1 * np.sin(0.3 * ij[:, 0]) * np.cos(0.2 * ij[:, 1])]).astype(np.float32)
    q = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    quads = np.stack([q, q + n + 1, q + n + 2, q + 1], 1)[np.random.default_rng(seed).permutation(n * n)]
    half = len(quads) // 2
    faces = np.concatenate([quads[:half].ravel(), quads[half:][:, [0, 1, 2, 0, 2, 3]].ravel()])
    sizes = np.r_[np.full(half, 4), np.full(2 * (len(quads) - half), 3)]
    me = bpy.data.meshes.new("Grid")
    me.vertices.add(len(pos))
    me.vertices.foreach_set("co", pos.ravel())
    me.loops.add(len(faces))
    me.loops.foreach_set("vertex_index", faces.astype(np.int32))
    me.polygons.add(len(sizes))
    me.polygons.foreach_set("loop_start", (np.cumsum(sizes) - sizes).astype(np.int32))
    me.update(calc_edges=True)
    me.shade_smooth()               # corners share normals, so MikkTSpace joins faces round each point
    uv = pos[faces, :2] * np.float32(3.0)
    uv[:, 0] = np.where(pos[faces, 0] > 0.5, 3.0 - uv[:, 0], uv[:, 0])
    me.uv_layers.new(name="UVMap").uv.foreach_set("vector", uv.astype(np.float32).ravel())
    return me


def _tangents(lgf):
    return import_module(f"{lgf.__name__}.bridge.tangents")


def _mikk(lgf, me):
    """The tangents and signs the bridge reads for an export."""
    m = import_module(f"{lgf.__name__}.bridge.collect").read_mesh(me, False, True)
    return m.corner_attributes["tangent"], m.corner_attributes["bitangent_sign"]


def test_mikktspace_in_pieces_is_blenders_one_thread_result(lgf, clean, monkeypatch):
    """A mesh under the limit, which Blender works through in one thread, with custom normals, cut
    into pieces of at most 400 faces: every tangent and sign the same bits as Blender's own for the
    whole mesh."""
    tangents = _tangents(lgf)
    me = _grid(50)
    assert 2000 < len(me.polygons) <= MIKK_THREADS_ABOVE
    normals = np.empty(len(me.vertices) * 3, np.float32)
    me.vertex_normals.foreach_get("vector", normals)
    normals = normals.reshape(-1, 3) + np.random.default_rng(2).normal(0, 0.1, (len(me.vertices), 3)).astype(np.float32)
    me.normals_split_custom_set_from_vertices(normals / np.linalg.norm(normals, axis=1, keepdims=True))
    want_t, want_s = tangents._calc(me, "UVMap", len(me.loops))
    assert (want_s < 0).any() and (want_s > 0).any()
    monkeypatch.setattr(tangents, "SEQUENTIAL_FACES", 400)
    got_t, got_s = _mikk(lgf, me)
    np.testing.assert_array_equal(got_s, want_s)
    if tangents._FREE_NORMALS:
        np.testing.assert_array_equal(got_t, want_t)
    else:       # the pieces' normals are stored against each corner's normal space: a little moved
        np.testing.assert_allclose(got_t, want_t, atol=2e-4)


def test_mikktspace_of_a_big_mesh_is_the_same_every_time(lgf, clean):
    me = _grid(110)
    assert len(me.polygons) > MIKK_THREADS_ABOVE
    first_t, first_s = _mikk(lgf, me)
    assert np.isfinite(first_t).all() and (np.abs(np.linalg.norm(first_t, axis=1) - 1) < 1e-4).all()
    for _ in range(3):
        t, s = _mikk(lgf, me)
        assert t.tobytes() == first_t.tobytes() and s.tobytes() == first_s.tobytes()


def _import(path: str) -> None:
    src = ASSETS / path
    op = {".3ds": bpy.ops.import_scene.studio3ds, ".3d": bpy.ops.import_scene.unreal_vertex_mesh,
          ".mesh": bpy.ops.import_scene.unigine_mesh, ".anim": bpy.ops.import_anim.unigine_anim,
          ".u3d": bpy.ops.import_scene.ultimate3d}[src.suffix.lower()]
    assert op(filepath=str(src)) == {"FINISHED"}


# per format: samples to import, the exporter, the file name, and whether the big grid joins them
# (a skinned .u3d model must be its one mesh)
CASES = {"3ds": (["3ds/CameraRollAnimWithChildObject.3ds"], bpy.ops.export_scene.studio3ds, "x.3ds", True),
         "unreal": (["unreal/box_d.3d"], bpy.ops.export_scene.unreal_vertex_mesh, "x_d.3d", True),
         "unigine-mesh": (["unigine/tube_skinned.mesh"], bpy.ops.export_scene.unigine_mesh, "x.mesh", True),
         "unigine-anim": (["unigine/tube_skinned.mesh", "unigine/tube_bend.anim"], bpy.ops.export_anim.unigine_anim,
                          "x.anim", True),
         "u3d": (["ultimate3d/skinned_v2.u3d"], bpy.ops.export_scene.ultimate3d, "x.u3d", False),
         "u3d-static": (["ultimate3d/cube_v2.u3d"], bpy.ops.export_scene.ultimate3d, "x.u3d", True)}


@pytest.mark.parametrize("fmt", sorted(CASES))
def test_every_exporter_writes_the_same_bytes_twice(lgf, clean, tmp_path, fmt):
    samples, export, name, with_grid = CASES[fmt]
    for sample in samples:
        _import(sample)
    if with_grid:
        grid = bpy.data.objects.new("Grid", _grid(126))     # 16129 points: under UE1's 16383
        clean.scene.collection.objects.link(grid)
        assert len(grid.data.polygons) > MIKK_THREADS_ABOVE
    if fmt == "unigine-anim":
        bpy.context.view_layer.objects.active = next(o for o in clean.scene.objects if o.type == "ARMATURE")
    runs = []
    for run in ("a", "b", "c"):
        (tmp_path / run).mkdir()
        assert export(filepath=str(tmp_path / run / name)) == {"FINISHED"}
        runs.append({p.name: p.read_bytes() for p in sorted((tmp_path / run).iterdir())})
    assert name in runs[0] and all(runs[0].values())
    for again in runs[1:]:
        assert again.keys() == runs[0].keys()
        assert [k for k in runs[0] if runs[0][k] != again[k]] == []
