"""Welding helpers: the quick fan check against the labelling, welding, the closed-form inverse."""
import numpy as np
import pytest

from addon.codec import axes, meshops
from addon.codec.meshops import rows as meshops_rows
from addon.codec.meshops import welding as meshops_weld

TETRA = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _several(tris: np.ndarray, n_vertices: int | None = None) -> bool:
    c = np.asarray(tris).ravel().astype(np.uint32)
    e = meshops.edge_pairs(c, meshops.next_corner(np.arange(0, len(c), 3), len(c)))
    return meshops.several_fans(c, e, n_vertices or int(c.max()) + 1)


def _labelled(tris: np.ndarray) -> bool:
    """The slow answer: label every fan, then see whether a vertex got a second one."""
    c = np.asarray(tris).ravel().astype(np.uint32)
    n = int(c.max()) + 1
    e = meshops.edge_pairs(c, meshops.next_corner(np.arange(0, len(c), 3), len(c)))
    return len(meshops.split_fans(c, meshops.fan_labels(len(c), e), n)[1]) > n


def _grid(n: int) -> np.ndarray:
    q = np.arange(n * n).reshape(n, n)
    a, b, c, d = q[:-1, :-1].ravel(), q[:-1, 1:].ravel(), q[1:, 1:].ravel(), q[1:, :-1].ravel()
    return np.r_[np.stack([a, b, c], 1), np.stack([a, c, d], 1)]


@pytest.mark.parametrize("tris,want", [
    (TETRA, False),                                             # closed: one ring of faces per point
    (_grid(5), False),                                          # open: one fan per point, borders too
    (np.array([[0, 1, 2], [0, 3, 4]]), True),                   # a bow tie: two fans at 0
    (np.r_[TETRA, np.where(TETRA == 0, 0, TETRA + 3)], True),   # two closed fans at 0 (edges - faces = 0)
    (np.r_[_grid(3), [[4, 9, 10]]], True),                      # a lone face touching the middle point
])
def test_several_fans_finds_points_where_faces_meet_without_an_edge(tris, want):
    assert _several(tris) == want == _labelled(tris)


def test_several_fans_agrees_with_the_labelling_on_random_triangles():
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(2000):
        nv, nf = int(rng.integers(3, 10)), int(rng.integers(1, 10))
        tris = np.array([rng.choice(nv, 3, replace=False) for _ in range(nf)])
        several = _several(tris)
        assert several or not _labelled(tris)          # never misses a split
        c = tris.ravel()
        e = meshops.edge_pairs(c, meshops.next_corner(np.arange(0, len(c), 3), len(c)))
        if e.manifold.all() and not e.flipped.any():   # where the walk is sure, it is exact
            assert several == _labelled(tris)
            checked += 1
    assert checked > 300


def test_weld_joins_points_and_keeps_a_zero_area_face_apart():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]],
                   np.float32)
    corners = np.array([0, 1, 2, 3, 5, 4, 6, 7, 3])          # the third face collapses when welded
    new, source = meshops.weld(pos, corners, np.arange(0, 9, 3))
    assert new[:6].tolist() == [0, 1, 2, 1, 3, 2]
    np.testing.assert_array_equal(pos[source[new[:6]]], pos[corners[:6]])
    assert len(set(new[6:].tolist())) == 3 and not set(new[6:].tolist()) & set(new[:6].tolist())


def test_guarded_inverse_of_batches_of_any_size():
    """Affine 4x4 and 3x3 matrices by the adjugate, others by LAPACK, in one batch; one that cannot be
    inverted (a zero scale, NaN, infinity) is the identity, with one warning."""
    from addon.codec.errors import Warnings
    rng = np.random.default_rng(5)
    affine = np.tile(np.eye(4), (50, 1, 1))
    affine[:, :3] = rng.normal(size=(50, 3, 4))
    general = rng.normal(size=(10, 4, 4))                              # a projective last row
    bad = np.stack([np.zeros((4, 4)), np.diag([1.0, 0.0, 1.0, 1.0]), np.full((4, 4), np.nan),
                    np.diag([np.inf, 1.0, 1.0, 1.0])])
    batch = np.concatenate([affine, general, bad]).reshape(8, 8, 4, 4)
    w = Warnings()
    inv = axes.inverse_or_identity(batch, w, "node 'x'").reshape(-1, 4, 4)
    np.testing.assert_allclose(inv[:60] @ np.concatenate([affine, general]), np.tile(np.eye(4), (60, 1, 1)), atol=1e-9)
    np.testing.assert_array_equal(inv[60:], np.tile(np.eye(4), (4, 1, 1)))
    assert len(w.as_list()) == 1 and "node 'x'" in w.as_list()[0]
    three = affine[:, :3, :3]
    np.testing.assert_allclose(axes.inverse_or_identity(three) @ three, np.tile(np.eye(3), (50, 1, 1)), atol=1e-9)
    for m in three[:5]:
        assert axes.det3(m) == pytest.approx(np.linalg.det(m))
    for _ in range(200):                         # the written-out cross product is np.cross, bit for bit
        u, v = rng.normal(size=3) * 10.0 ** rng.integers(-6, 6), rng.normal(size=3)
        assert np.array_equal(axes._cross3(u, v), np.cross(u, v))
    rows = rng.normal(size=(2, 7, 3))
    assert np.array_equal(axes._cross3(rows[0], rows[1]), np.cross(rows[0], rows[1]))


def _cube(normals_at):
    from addon.codec.scene import Mesh
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS
    pts = np.asarray(CUBE_POINTS, np.float32)
    m = Mesh.from_triangles("cube", pts[CUBE_TRIS.ravel()], np.arange(36).reshape(-1, 3))   # 3 vertices a face
    m.normals = normals_at(pts)[CUBE_TRIS.ravel()]
    return m, CUBE_TRIS.ravel()


def test_weld_by_normals_reports_file_normals_that_sharp_edges_cannot_give():
    from addon.codec.errors import Warnings
    outward = lambda p: (p - p.mean(0)) / np.linalg.norm(p - p.mean(0), axis=1, keepdims=True)
    m, _ = _cube(outward)                           # smooth: Blender's own (angle-weighted) normals
    w = Warnings()
    assert meshops.weld_by_normals(m, False, w) == 0 and not w.as_list() and len(m.positions) == 8

    def bent(p):                                    # one point's normal turned 45 degrees off
        n = outward(p)
        n[0] = np.cross(n[0], [0, 0, 1]) + n[0]
        return n / np.linalg.norm(n, axis=1, keepdims=True)
    m, stored = _cube(bent)
    w = Warnings()
    assert meshops.weld_by_normals(m, False, w) == int((stored == 0).sum())
    assert "Exact" in w.as_list()[0]
    m, _ = _cube(bent)
    assert meshops.weld_by_normals(m, True, Warnings()) == 0          # exact keeps them: nothing lost


def touching_boxes_scene(smooth: bool = False, apart: bool = False):
    """Two closed boxes in one mesh that touch at the point (1, 1, 1), every triangle with its own
    vertices (as UNIGINE and U3D store a vertex per normal); flat normals per face, or smooth ones
    (each corner's normal points away from its box's centre); apart: one mesh per box."""
    from addon.codec.scene import Material, Mesh, Node, Scene
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS
    boxes = [CUBE_POINTS[CUBE_TRIS.ravel()], (CUBE_POINTS + 1)[CUBE_TRIS.ravel()]]
    parts = boxes if apart else [np.concatenate(boxes)]
    sc = Scene(materials=[Material("M")])
    for i, pos in enumerate(parts):
        m = Mesh.from_triangles(f"Boxes{i}", pos, np.arange(len(pos)).reshape(-1, 3))
        m.materials, m.face_material = [0], np.zeros(len(pos) // 3, np.int32)
        if smooth:
            centre = np.where(np.arange(len(pos))[:, None] < 36, 0.5, 1.5)
            n = pos - centre
            m.normals = (n / np.linalg.norm(n, axis=1, keepdims=True)).astype(np.float32)
        sc.meshes.append(m)
        sc.add_node(Node(m.name, "MESH", i))
    return sc


@pytest.mark.parametrize("ext", ["mesh", "u3d"])
@pytest.mark.parametrize("normals", ["SHARP_EDGES", "EXACT"])
def test_welded_imports_split_points_where_faces_meet_without_an_edge(tmp_path, ext, normals):
    """The default import welds each box to its 8 corners; the touching point becomes one vertex per
    box (16, not 15), so no vertex has faces that share no edge (Cycles would smooth across them)."""
    from addon.codec import load, save
    save(touching_boxes_scene(), tmp_path / f"boxes.{ext}")
    m = load(tmp_path / f"boxes.{ext}", normals=normals).meshes[0]
    assert len(m.positions) == 16
    c = np.asarray(m.corners)
    e = meshops.edge_pairs(c, meshops.next_corner(m.faces, len(c)))
    assert not meshops.several_fans(c, e, len(m.positions))
    np.testing.assert_allclose(np.sort(m.positions, 0)[[7, 8]], [[1, 1, 1], [1, 1, 1]])   # the point, twice
    if normals == "SHARP_EDGES":
        # flat boxes: the 12 box edges of each box sharp (2 corners each), the face diagonals not
        assert m.sharp_edges is not None and int(m.sharp_edges.sum()) == 2 * 12 * 2


def test_split_fan_points_keeps_a_single_fan_mesh_as_it_is():
    from addon.codec.scene import Mesh
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS
    m = Mesh.from_triangles("Cube", CUBE_POINTS, CUBE_TRIS)
    before = m.corners.copy()
    assert meshops.split_fan_points(m) == 0
    np.testing.assert_array_equal(m.corners, before)


# -- Blender's edges seen from their two sides (the bridge's fast path) ------------------------
def _blender_edges(c: np.ndarray) -> tuple[np.ndarray, int]:
    """(corner_edge, edge count) as Blender numbers them: one edge per vertex pair of a face side."""
    nxt = meshops.next_corner(np.arange(0, len(c), 3), len(c))
    a, b = c, c[nxt]
    pair = np.minimum(a, b).astype(np.int64) * (int(c.max()) + 1) + np.maximum(a, b)
    uniq, edge_of = np.unique(pair, return_inverse=True)
    return edge_of.ravel().astype(np.int32), len(uniq)


def _several_by_sides(tris: np.ndarray):
    """None when edge_sides declines (edges of 3+ faces, disagreeing windings), else the answer."""
    c = np.asarray(tris).ravel().astype(np.int32)
    edge_of, n_edges = _blender_edges(c)
    nxt = meshops.next_corner(np.arange(0, len(c), 3), len(c))
    answers = set()
    for triangles in (True, False):             # far ends read in order, or gathered as for polygons
        sides = meshops.edge_sides(c, nxt, edge_of, n_edges, triangles=triangles)
        answers.add(None if sides is None else meshops.several_fans_by_sides(c, sides, int(c.max()) + 1))
    assert len(answers) == 1
    return answers.pop()


@pytest.mark.parametrize("tris,want", [
    (TETRA, False),
    (_grid(5), False),
    (np.array([[0, 1, 2], [0, 3, 4]]), True),
    (np.r_[TETRA, np.where(TETRA == 0, 0, TETRA + 3)], True),
    (np.r_[_grid(3), [[4, 9, 10]]], True),
    (np.r_[TETRA, [[0, 4, 5], [0, 5, 6]]], True),               # a closed fan and an open one at 0
    (np.array([[0, 1, 2]]), False),                             # one face
    (np.array([[0, 1, 2], [0, 2, 3], [0, 3, 1]]), False),       # an open cone: one fan, no border at 0
])
def test_walk_over_blender_edges_finds_points_where_faces_meet_without_an_edge(tris, want):
    assert _several_by_sides(tris) == want == _labelled(tris)


def test_edge_sides_declines_edges_of_three_faces_and_disagreeing_windings():
    assert _several_by_sides(np.array([[0, 1, 2], [1, 0, 3], [0, 1, 4]])) is None     # three faces on 0-1
    assert _several_by_sides(np.array([[0, 1, 2], [0, 1, 3]])) is None                # both run 0 -> 1
    assert _several_by_sides(np.array([[0, 1, 2], [1, 0, 3]])) is False               # opposite: accepted


def test_walk_over_blender_edges_agrees_with_the_labelling_on_random_triangles():
    rng = np.random.default_rng(11)
    answers = []
    for k in range(3000):
        if k % 2:                               # any triangles
            nv, nf = int(rng.integers(3, 12)), int(rng.integers(1, 14))
            tris = np.array([rng.choice(nv, 3, replace=False) for _ in range(nf)])
        else:                                   # part of a grid with two points merged: pinches
            tris = _grid(4)[rng.random(18) < 0.6]
            a, b = rng.choice(16, 2, replace=False)
            tris = np.where(tris == b, a, tris)
            tris = tris[(tris[:, 0] != tris[:, 1]) & (tris[:, 1] != tris[:, 2]) & (tris[:, 2] != tris[:, 0])]
            if not len(tris):
                continue
        got = _several_by_sides(tris)
        if got is not None:                     # accepted meshes: exact, both ways
            assert got == _labelled(tris), tris.tolist()
            answers.append(got)
    assert answers.count(True) > 300 and answers.count(False) > 150


def test_sharp_edges_by_sides_match_the_sorted_pairs():
    rng = np.random.default_rng(2)
    tris = _grid(7)
    c = tris.ravel().astype(np.int32)
    faces = np.arange(0, len(c), 3)
    edge_of, n_edges = _blender_edges(c)
    nxt = meshops.next_corner(faces, len(c))
    side = meshops.edge_sides(c, nxt, edge_of, n_edges)
    for groups in (rng.integers(0, 4, len(tris)).astype(np.uint32),
                   np.ones(len(tris), np.uint32), np.zeros(len(tris), np.uint32)):
        sharp, flat = meshops.sharp_edges_by_sides(groups, side, faces, len(c))
        per_corner, flat_ref = meshops.sharp_from_groups(groups, faces, len(c), meshops.edge_pairs(c, nxt))
        want = np.zeros(n_edges, bool)
        want[edge_of[per_corner]] = True
        np.testing.assert_array_equal(sharp, want)
        np.testing.assert_array_equal(flat, flat_ref)
    assert sharp.dtype == bool and not sharp.any() and flat.all()


@pytest.mark.parametrize("faces,n", [(np.arange(0, 12, 3), 12), (np.array([0, 4]), 6),
                                     (np.array([0, 3, 7]), 12), (np.zeros(0, int), 0)])
def test_next_corner_wraps_each_face(faces, n):
    sizes = np.diff(np.r_[faces, n])
    want = np.concatenate([np.roll(np.arange(s, s + k), -1) for s, k in zip(faces, sizes)] or [np.zeros(0, int)])
    np.testing.assert_array_equal(meshops.next_corner(faces, n), want)


# -- welding by a hash table -----------------------------------------------------------------
def _points_reference(p: np.ndarray):
    """The slow answer: exact sort of the rows (with -0.0 as 0.0)."""
    q = np.ascontiguousarray(np.asarray(p, np.float32) + np.float32(0.0))
    _, first, inv = np.unique(q.view(np.dtype((np.void, q.strides[0]))).ravel(), return_index=True,
                              return_inverse=True)
    return first[inv.ravel()]


@pytest.mark.parametrize("rows", [
    np.zeros((0, 3), np.float32),                                                    # empty
    np.array([[0.0, 0, 0]], np.float32),                                             # one
    np.array([[0.0, -0.0, 0], [-0.0, 0.0, -0.0], [1, 2, 3], [1, 2, 3]], np.float32),  # signed zeros weld
    np.array([[np.nan, 0, 0], [np.nan, 0, 0], [np.inf, 0, 0], [1e-45, 0, 0], [0, 0, 0]], np.float32),
    np.random.default_rng(0).integers(0, 40, (20000, 3)).astype(np.float32),         # many repeats
    np.random.default_rng(1).random((5000, 7), np.float32).repeat(3, axis=0)[::-1],  # wide rows
])
def test_weld_points_joins_exactly_equal_rows_numbered_in_stored_order(rows):
    ids, first = meshops.weld_points(rows)
    lowest = _points_reference(rows)
    np.testing.assert_array_equal(first[ids], lowest)          # same points, each at its lowest row
    assert (np.diff(first) > 0).all() and len(first) == len(set(lowest.tolist()))
    if len(rows):
        assert ids[0] == 0 and (np.diff(np.maximum.accumulate(ids)) <= 1).all()   # first seen, first numbered


@pytest.mark.parametrize("batch_rows", [meshops_weld.BATCH_ROWS, 1000])
def test_weld_points_many_welds_each_array_alone(monkeypatch, batch_rows):
    monkeypatch.setattr(meshops_weld, "BATCH_ROWS", batch_rows)      # 1000: one array per batch, several batches
    rng = np.random.default_rng(7)
    same = rng.integers(0, 30, (4000, 3)).astype(np.float32)
    arrays = [same, same.copy(), np.zeros((0, 3), np.float32), np.array([[0.0, -0.0, 0], [0, 0, 0]], np.float32),
              rng.integers(0, 5, (900, 3)).astype(np.float32)]       # equal rows in two arrays stay apart
    for got, rows in zip(meshops.weld_points_many(arrays), arrays):
        ids, first = got
        np.testing.assert_array_equal(first[ids], _points_reference(rows))
        assert (np.diff(first) > 0).all() and len(first) == len(set(_points_reference(rows).tolist()))
    with pytest.raises(ValueError):
        meshops.weld_points_many([same, np.zeros((3, 2), np.float32)])


def test_weld_points_settles_rows_no_hash_tells_apart(monkeypatch):
    monkeypatch.setattr(meshops_rows, "_MIX", (0, 0, 0))            # every row in one slot, every round
    rows = np.random.default_rng(4).integers(0, 9, (3000, 3)).astype(np.float32)
    ids, first = meshops.weld_points(rows)
    np.testing.assert_array_equal(first[ids], _points_reference(rows))


def test_weld_keeps_the_faces_of_polygons_that_happen_to_have_three_corners_a_face():
    pos = np.array([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [1, 0, 0], [2, 0, 0]], np.float32)
    corners = np.array([0, 1, 2, 3, 4, 5])                     # a quad and a 2-gon: 6 corners, 2 faces
    new, source = meshops.weld(pos, corners, np.array([0, 4]))
    np.testing.assert_array_equal(pos[source[new]], pos[corners])
    assert len(set(new[:4].tolist())) == 4


@pytest.mark.parametrize("faces,n,want", [
    (np.arange(0, 9, 3, dtype=np.uint32), 9, True), (np.arange(0, 9, 3, dtype=np.uint16), 9, True),
    (np.array([0, 4]), 6, False), (np.array([0, 3, 5]), 9, False), (np.zeros(0, np.uint32), 0, True),
    (np.arange(0, 3 * 40000, 3, dtype=np.uint16), 3 * 40000, False),     # wrapped uint16: not triangles
])
def test_triangle_starts(faces, n, want):
    assert meshops.triangle_starts(faces, n) is want


def test_weld_leaves_out_points_no_face_uses():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [5, 5, 5], [1, 0, 0], [0, 1, 0], [1, 1, 0]], np.float32)
    for corners, want_points in (([0, 1, 2, 4, 6, 5], 4),       # (5, 5, 5) unused: left out
                                 ([0, 1, 2, 0, 2, 6], 4)):      # only duplicates unused: all points stay
        new, source = meshops.weld(pos, np.array(corners), np.array([0, 3]))
        assert len(source) == want_points and new.max() == want_points - 1
        np.testing.assert_array_equal(pos[source[new]], pos[corners])
        assert (np.diff(source) > 0).all()                      # numbered in the stored order


def _shading(tris, groups, sharp=True):
    c = np.asarray(tris).ravel().astype(np.int32)
    edge_of, n_edges = _blender_edges(c)
    faces = np.arange(0, len(c), 3, dtype=np.int32)
    return meshops.group_shading(c, faces, np.asarray(groups, np.uint32), int(c.max()) + 1, edge_of, n_edges,
                                 sharp), c, edge_of, n_edges


def test_group_shading_splits_points_where_faces_meet_without_an_edge():
    tris = np.r_[TETRA, np.where(TETRA == 0, 0, TETRA + 3)]       # two closed fans at point 0
    got, c, _, _ = _shading(tris, np.ones(len(tris)))
    new_corners, source = got.split
    assert len(source) == 8 and source[7] == 0 and got.sharp_edges is None
    assert len(set(new_corners[c == 0].tolist())) == 2              # one vertex per fan


@pytest.mark.parametrize("tris", [_grid(6),                                      # edge sides: no sort
                                  np.r_[_grid(3), [[1, 4, 9]]]])                 # edge 1-4 of three faces: sorted
def test_group_shading_marks_the_edges_between_groups(tris):
    groups = (np.arange(len(tris)) % 3).astype(np.uint32)            # 0: flat faces
    got, c, edge_of, n_edges = _shading(tris, groups)
    assert got.split is None
    faces = np.arange(0, len(c), 3)
    by_corner, flat = meshops.sharp_from_groups(groups, faces, len(c),
                                                meshops.edge_pairs(c, meshops.next_corner(faces, len(c))))
    want = np.zeros(n_edges, bool)
    want[edge_of[by_corner]] = True
    np.testing.assert_array_equal(got.sharp_edges, want)
    np.testing.assert_array_equal(got.sharp_faces, flat)
    assert want.any() and flat.any()
    assert _shading(tris, groups, sharp=False)[0].sharp_edges is None


def test_next_corner_of_triangles_is_a_read_only_prefix_of_one_kept_array():
    big = meshops.next_corner(np.arange(0, 300, 3), 300)
    small = meshops.next_corner(np.arange(0, 30, 3, dtype=np.uint32), 30)
    np.testing.assert_array_equal(small, big[:30])
    with pytest.raises(ValueError):
        small[0] = 5
    np.testing.assert_array_equal(meshops.next_corner(np.arange(0, 6, 3), 6), [1, 2, 0, 4, 5, 3])
