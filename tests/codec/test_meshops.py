"""Degenerate faces are dropped with their corner data, in bulk, before Blender sees them."""
import numpy as np
import pytest

from addon import codec
from addon.codec import meshops
from addon.codec.scene import Mesh, ShapeKey
from tests.odd_geometry import DROPPED, KEPT, WRITERS


def _mesh():
    # a quad, a triangle repeating vertex 1, a triangle past the vertices, a 2-corner face, a good triangle
    corners = np.array([0, 1, 2, 3, 1, 1, 2, 0, 9, 2, 0, 1, 2, 4, 3], np.uint32)
    faces = np.array([0, 4, 7, 10, 12], np.uint32)
    m = Mesh("m", positions=np.arange(15, dtype=np.float32).reshape(5, 3), corners=corners, faces=faces)
    m.uv_layers["UVMap"] = np.arange(15 * 2, dtype=np.float32).reshape(15, 2)
    m.normals = np.tile(np.float32([0, 0, 1]), (15, 1))
    m.face_material = np.array([0, 1, 2, 3, 4], np.int32)
    m.face_attributes["smooth"] = np.array([10, 11, 12, 13, 14], np.int32)
    m.smoothing = np.array([1, 2, 4, 8, 16], np.uint32)
    return m


def test_drops_repeated_missing_and_short_faces_with_their_data():
    m = _mesh()
    assert meshops.degenerate_faces(m).tolist() == [False, True, True, True, False]
    assert meshops.drop_degenerate_faces(m) == 3
    assert m.faces.tolist() == [0, 4]
    assert m.corners.tolist() == [0, 1, 2, 3, 2, 4, 3]
    assert m.uv_layers["UVMap"][:, 0].tolist() == [0, 2, 4, 6, 24, 26, 28]
    assert len(m.normals) == 7
    assert m.face_material.tolist() == [0, 4]
    assert m.face_attributes["smooth"].tolist() == [10, 14]
    assert m.smoothing.tolist() == [1, 16]
    assert len(m.positions) == 5                      # vertices stay


def test_clean_mesh_is_untouched():
    m = Mesh.from_triangles("t", np.zeros((3, 3)) + np.eye(3), [[0, 1, 2]])
    assert meshops.make_safe(m) == []
    assert m.corners.tolist() == [0, 1, 2]


def test_layers_of_the_wrong_length_are_left_out_with_a_warning():
    m = Mesh.from_triangles("t", np.eye(3), [[0, 1, 2]])
    m.uv_layers["short"] = np.zeros((2, 2), np.float32)
    m.shape_keys = [ShapeKey("Basis", np.eye(3, dtype=np.float32)), ShapeKey("bad", np.zeros((2, 3), np.float32))]
    (warning,) = meshops.make_safe(m)
    assert "UV layer 'short'" in warning and "shape key 'bad'" in warning
    assert not m.uv_layers and [k.name for k in m.shape_keys] == ["Basis"]


@pytest.mark.parametrize("fmt", sorted(WRITERS))
def test_every_format_gives_the_bridge_faces_it_can_drop(tmp_path, fmt):
    scene = codec.load(WRITERS[fmt](tmp_path))
    odd = next(m for m in scene.meshes if m.name.lower() == "odd")
    (warning,) = meshops.make_safe(odd)
    assert f"{DROPPED} degenerate faces" in warning
    assert len(odd.faces) == KEPT and not meshops.degenerate_faces(odd).any()


# -- the kernel: triangulation, normals, the corner -> vertex split ------------------------------
def _plain_fan(faces, n_corners):
    """The definition: face by face, triangles (first, k, k + 1) around the first corner."""
    ends = list(faces[1:]) + [n_corners]
    tris, owner = [], []
    for f, (s, e) in enumerate(zip(faces, ends)):
        for k in range(s + 1, e - 1):
            tris.append((s, k, k + 1))
            owner.append(f)
    return tris, owner


@pytest.mark.parametrize("sizes", [[3, 3, 3], [4, 3, 5, 6], [5], [3, 2, 4, 1, 0, 3], [], [7, 3]])
def test_triangulate_fans_every_face_in_order(sizes):
    faces = np.cumsum([0] + sizes[:-1]).astype(np.uint32) if sizes else np.zeros(0, np.uint32)
    n = int(sum(sizes))
    tris, face = meshops.triangulate(faces, n)
    want, owner = _plain_fan([int(f) for f in faces], n)
    assert tris.dtype == np.int64 and tris.shape == (len(want), 3)
    assert tris.tolist() == [list(t) for t in want] and face.tolist() == owner
    assert meshops.all_triangles(faces, n) == (bool(sizes) and all(s == 3 for s in sizes))


def test_face_normals_are_twice_the_area_along_the_winding():
    pos = np.array([[0, 0, 0], [2, 0, 0], [0, 3, 0], [0, 0, 0]], np.float32)
    fn = meshops.face_normals(pos, np.array([[0, 1, 2], [0, 2, 1], [0, 3, 1]]))
    assert fn.tolist() == [[0, 0, 6], [0, 0, -6], [0, 0, 0]]      # a degenerate face: zero


@pytest.mark.parametrize("groups", [[1], [1, 3]], ids=["one group", "masks sharing a bit"])
def test_smoothing_of_a_scene_mesh_stops_at_a_cut_and_of_file_vertices_joins_one_point(groups):
    """Two quads folded along a cut (two vertices per point of the fold): smoothing a Scene mesh (welded: as
    Blender shades it, and as the glTF writer takes it) keeps each side's normal there; smoothing a file's own
    vertices (a .3ds cut open at its UV seams) joins the vertices at one point."""
    pos = np.float32([[0, 0, 0], [0, 1, 0], [1, 0, 0], [1, 1, 0], [1, 0, 0], [1, 1, 0], [2, 0, 1], [2, 1, 1]])
    tris = np.array([[0, 2, 3], [0, 3, 1], [4, 6, 7], [4, 7, 5]])
    m = Mesh.from_triangles("fold", pos, tris)
    m.smoothing = np.resize(np.uint32(groups), 4)
    cut = meshops.smooth_normals(pos, tris, m.smoothing, welded=True).reshape(4, 3, 3)
    assert np.allclose(cut[0, 1], [0, 0, 1]) and np.allclose(cut[2, 0], [-np.sqrt(0.5), 0, np.sqrt(0.5)], atol=1e-6)
    joined = meshops.smooth_normals(pos, tris, m.smoothing).reshape(4, 3, 3)
    assert np.allclose(joined[0, 1], joined[2, 0]) and not np.allclose(joined[0, 1], [0, 0, 1], atol=1e-3)


def test_vertex_normals_sum_area_weighted_faces_and_leave_unused_and_nan_vertices_apart():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 2], [5, 5, 5], [np.nan, 0, 0]], np.float32)
    tris = np.array([[0, 1, 2], [0, 3, 1], [1, 5, 2]])
    vn = meshops.vertex_normals(pos, tris[:2])
    # (0,0,1) * 1 from the first face, (0,2,0)... from the second: cross((0,0,2), (1,0,0)) = (0,2,0)
    assert vn.tolist() == [[0, 2, 1], [0, 2, 1], [0, 0, 1], [0, 2, 0], [0, 0, 0], [0, 0, 0]]
    vn = meshops.vertex_normals(pos, tris)
    assert np.isnan(vn[[1, 2, 5]]).any(axis=1).all() and np.isfinite(vn[[0, 3, 4]]).all()
    assert meshops.vertex_normals(pos, np.zeros((0, 3), np.int64)).shape == (6, 3)


def _plain_split(record, vertex, within_vertex=True):
    """The definition: distinct rows by bytes (and vertex, within_vertex), ordered by (vertex of the
    first corner, first corner)."""
    seen, firsts, label = {}, [], []
    for i, row in enumerate(record):
        key = (int(vertex[i]) if within_vertex else 0, np.ascontiguousarray(row).tobytes())
        if key not in seen:
            seen[key] = len(firsts)
            firsts.append(i)
        label.append(seen[key])
    order = sorted(range(len(firsts)), key=lambda g: (int(vertex[firsts[g]]), firsts[g]))
    rank = {g: r for r, g in enumerate(order)}
    return [firsts[g] for g in order], [rank[g] for g in label]


def test_split_orders_vertices_by_their_first_corner_within_each_vertex():
    # vertex 1 first sees value 7, then 5, then 7 again (joins the first); vertex 0 sees 5 too
    record = np.array([[7], [5], [9], [7], [5]], np.int32)
    vertex = np.array([1, 1, 2, 1, 0])
    first, index = meshops.split_corners(record, vertex)
    assert (first.tolist(), index.tolist()) == _plain_split(record, vertex)
    assert first.tolist() == [4, 0, 1, 2] and index.tolist() == [1, 2, 3, 1, 0]
    # UNIGINE's triangle vertices: equal bytes are one vertex whatever the vertex, placed by its first user
    first, index = meshops.split_corners(record, vertex, within_vertex=False)
    assert (first.tolist(), index.tolist()) == _plain_split(record, vertex, False)
    assert first.tolist() == [0, 1, 2] and index.tolist() == [0, 1, 2, 0, 1]


def test_split_of_corners_that_agree_keeps_the_vertex_order():
    vertex = np.array([2, 0, 1, 0, 2, 1])
    record = np.array([[20], [0], [10], [0], [20], [10]], np.int32)
    first, index = meshops.split_corners(record, vertex)
    assert index.tolist() == vertex.tolist() and vertex[first].tolist() == [0, 1, 2]


def test_split_compares_bytes_nan_and_signed_zero():
    rows = np.array([[np.nan], [np.nan], [0.0], [-0.0]], np.float32)
    first, index = meshops.split_corners(rows, np.zeros(4, np.int64))
    assert index.tolist() == [0, 0, 1, 2]            # one NaN pattern: equal; -0.0 is not 0.0


def test_split_of_nothing():
    first, index = meshops.split_corners(np.zeros((0, 3), np.float32), np.zeros(0, np.int64))
    assert first.shape == (0,) and index.shape == (0,)
    first, index = meshops.split_corners([np.zeros((0, 2), np.int16), np.zeros((0, 2), np.float32)],
                                         np.zeros(0, np.int64))
    assert first.shape == (0,) and index.shape == (0,)


def test_split_takes_columns_side_by_side_as_one_record():
    rng = np.random.default_rng(5)
    vertex = rng.integers(0, 50, 400)
    normal = rng.integers(-2, 2, (400, 2)).astype(np.int16)
    uv = rng.integers(0, 2, (400, 2)).astype(np.float32)
    w = rng.integers(0, 2, (400, 3)).astype(np.float32)
    stacked = np.concatenate([normal.view(np.uint8), uv.view(np.uint8), w.view(np.uint8)], 1)
    for within in (True, False):
        want = _plain_split(stacked, vertex, within)
        first, index = meshops.split_corners([normal, uv, w], vertex, within)
        assert (first.tolist(), index.tolist()) == want


@pytest.mark.parametrize("within", [True, False])
@pytest.mark.parametrize("smooth", [True, False])
def test_split_of_a_large_mesh_matches_the_definition(smooth, within, monkeypatch):
    """Large enough for the first-corner pass (most corners agree with their vertex's first: smooth)
    or for plain hashing (most differ); a small table makes rows collide and go round again."""
    from addon.codec.meshops import rows as meshops_rows
    rng = np.random.default_rng(7)
    n_v, n_c = 3000, 20_000
    vertex = rng.integers(0, n_v, n_c)
    if smooth:
        values = rng.integers(0, 1000, (n_v, 2))[vertex]
        odd = rng.random(n_c) < 0.1                    # a tenth of the corners: seams
        values[odd] = rng.integers(0, 3, (int(odd.sum()), 2))     # few values: repeats across vertices
    else:
        values = rng.integers(0, 4, (n_c, 2))
    record = values.astype(np.float32)
    monkeypatch.setattr(meshops_rows, "_PROBE", 256)
    want = _plain_split(record, vertex, within)
    for spare in (2, -8):
        monkeypatch.setattr(meshops_rows, "_SPARE_BITS", spare)
        first, index = meshops.split_corners(record, vertex, within)
        assert (first.tolist(), index.tolist()) == want
        first, index = meshops.split_corners([record[:, :1], record[:, 1:]], vertex, within)
        assert (first.tolist(), index.tolist()) == want


def test_split_takes_the_first_corner_pass_only_when_it_pays(monkeypatch):
    from addon.codec.meshops import rows as meshops_rows
    calls = []
    real = meshops_rows.representatives
    monkeypatch.setattr(meshops_rows, "representatives", lambda w: calls.append(len(w)) or real(w))
    monkeypatch.setattr(meshops_rows, "_PROBE", 64)
    vertex = np.repeat(np.arange(1000), 6)
    smooth = np.repeat(np.arange(1000, dtype=np.int32), 6)[:, None]
    meshops.split_corners(smooth, vertex, within_vertex=False)
    assert calls == [1000]                             # only each vertex's first corner was hashed
    calls.clear()
    meshops.split_corners(smooth, vertex)
    assert calls == []                                 # within a vertex, first corners are distinct anyway
    calls.clear()
    meshops.split_corners(np.arange(6000, dtype=np.int32)[:, None], vertex)
    assert calls == [6000]                             # nothing agrees: every corner hashed once


def test_welding_and_the_split_share_one_row_grouping(monkeypatch):
    from addon.codec.meshops import rows as meshops_rows
    calls = []
    real = meshops_rows.representatives
    monkeypatch.setattr(meshops_rows, "representatives", lambda w: calls.append(len(w)) or real(w))
    from addon.codec.meshops import welding as meshops_weld
    monkeypatch.setattr(meshops_weld, "representatives", meshops_rows.representatives)
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 0, 0]], np.float32)
    assert meshops.weld_ids(pos).tolist() == [0, 1, 0]
    meshops.split_corners(np.arange(3, dtype=np.int32), np.zeros(3, np.int64), within_vertex=False)
    assert calls == [3, 3]


def test_row_grouping_survives_a_hash_collision(monkeypatch):
    from addon.codec.meshops import rows as meshops_rows
    # every row hashes to one slot in every round: only the byte comparison and the exact sort can tell them apart
    monkeypatch.setattr(meshops_rows, "_hash_rows", lambda words, seed: np.zeros(len(words), np.uint64))
    monkeypatch.setattr(meshops_rows, "_SORT_BELOW", 2)
    rows = np.array([[1, 2], [3, 4], [1, 2], [5, 6]], np.uint8)
    assert meshops_rows.representatives(rows).tolist() == [0, 1, 0, 3]
    first, order = meshops_rows.unique_in_order(rows, np.array([2, 1, 2, 0]))
    assert first.tolist() == [3, 1, 0] and order.tolist() == [2, 1, 2, 0]


@pytest.mark.parametrize("vertex_scale", [1, 70_000, 3_000_000])
def test_row_grouping_matches_the_plain_definition(vertex_scale, monkeypatch):
    from addon.codec.meshops import rows as meshops_rows
    rng = np.random.default_rng(vertex_scale)
    # few distinct values, so rows repeat across and within vertices; large vertex numbers take the radix path
    record = rng.integers(0, 3, (3000, 9)).astype(np.float32)
    vertex = rng.integers(0, 400, 3000) * vertex_scale
    want = _plain_split(record, vertex, within_vertex=False)
    first, tri = meshops_rows.unique_in_order(record.view(np.uint8).reshape(len(record), -1), vertex)
    assert (first.tolist(), tri.tolist()) == want
    # a tiny table makes most rows collide and go round again, then to the exact sort
    monkeypatch.setattr(meshops_rows, "_SORT_BELOW", 10)
    real = meshops_rows._hash_rows
    monkeypatch.setattr(meshops_rows, "_hash_rows", lambda words, seed: real(words, seed) & np.uint64(0xF000000000000000))
    first, tri = meshops_rows.unique_in_order(record.view(np.uint8).reshape(len(record), -1), vertex)
    assert (first.tolist(), tri.tolist()) == want


@pytest.mark.parametrize("late_seam", [False, True])
@pytest.mark.parametrize("unused", [False, True])
def test_split_of_a_mesh_whose_vertices_agree_matches_the_definition(late_seam, unused, monkeypatch):
    """Every corner agrees with its vertex (a smooth mesh): the per-vertex fast path; a seam past the
    probe must still be found (then the general path runs)."""
    from addon.codec.meshops import rows as meshops_rows
    monkeypatch.setattr(meshops_rows, "_PROBE", 256)
    monkeypatch.setattr(meshops_rows, "_CHUNK", 1000)
    rng = np.random.default_rng(11)
    n_v = 3000
    vertex = rng.permutation(np.arange(21_000) % n_v)       # every vertex used
    if unused:
        vertex[vertex % 7 == 0] += 1                  # some vertices no corner uses
    values = [rng.integers(0, 5, (n_v + 1, 3)).astype(np.int16)[vertex], rng.random((n_v + 1, 2), np.float32)[vertex]]
    if late_seam:
        values[1][-5, 0] += 1.0                       # one corner near the end differs from its vertex
    want = _plain_split(np.concatenate([v.view(np.uint8).reshape(len(vertex), -1) for v in values], 1), vertex)
    first, index = meshops.split_corners(values, vertex)
    assert (first.tolist(), index.tolist()) == want
