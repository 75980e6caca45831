"""Welding helpers: the quick fan check against the labelling, welding, the closed-form inverse."""
import numpy as np
import pytest

from addon.codec import axes, welding

TETRA = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])


def _several(tris: np.ndarray, n_vertices: int | None = None) -> bool:
    c = np.asarray(tris).ravel().astype(np.uint32)
    e = welding.edge_pairs(c, welding.next_corner(np.arange(0, len(c), 3), len(c)))
    return welding.several_fans(c, e, n_vertices or int(c.max()) + 1)


def _labelled(tris: np.ndarray) -> bool:
    """The slow answer: label every fan, then see whether a vertex got a second one."""
    c = np.asarray(tris).ravel().astype(np.uint32)
    n = int(c.max()) + 1
    e = welding.edge_pairs(c, welding.next_corner(np.arange(0, len(c), 3), len(c)))
    return len(welding.split_fans(c, welding.fan_labels(len(c), e), n)[1]) > n


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
        e = welding.edge_pairs(c, welding.next_corner(np.arange(0, len(c), 3), len(c)))
        if e.manifold.all() and not e.flipped.any():   # where the walk is sure, it is exact
            assert several == _labelled(tris)
            checked += 1
    assert checked > 300


def test_weld_joins_points_and_keeps_a_zero_area_face_apart():
    pos = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0, 0, 0], [0, 0, 0]],
                   np.float32)
    corners = np.array([0, 1, 2, 3, 5, 4, 6, 7, 3])          # the third face collapses when welded
    new, source = welding.weld(pos, corners, np.arange(0, 9, 3))
    assert new[:6].tolist() == [0, 1, 2, 1, 3, 2]
    np.testing.assert_array_equal(pos[source[new[:6]]], pos[corners[:6]])
    assert len(set(new[6:].tolist())) == 3 and not set(new[6:].tolist()) & set(new[:6].tolist())


def test_affine_inverse_is_the_inverse():
    rng = np.random.default_rng(5)
    for _ in range(50):
        m = np.eye(4)
        m[:3] = rng.normal(size=(3, 4))
        np.testing.assert_allclose(axes.affine_inverse(m) @ m, np.eye(4), atol=1e-9)
        assert axes.det3(m[:3, :3]) == pytest.approx(np.linalg.det(m[:3, :3]))
    with pytest.raises(np.linalg.LinAlgError):
        axes.affine_inverse(np.zeros((4, 4)))


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
    assert welding.weld_by_normals(m, False, w) == 0 and not w.as_list() and len(m.positions) == 8

    def bent(p):                                    # one point's normal turned 45 degrees off
        n = outward(p)
        n[0] = np.cross(n[0], [0, 0, 1]) + n[0]
        return n / np.linalg.norm(n, axis=1, keepdims=True)
    m, stored = _cube(bent)
    w = Warnings()
    assert welding.weld_by_normals(m, False, w) == int((stored == 0).sum())
    assert "Exact" in w.as_list()[0]
    m, _ = _cube(bent)
    assert welding.weld_by_normals(m, True, Warnings()) == 0          # exact keeps them: nothing lost


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
    e = welding.edge_pairs(c, welding.next_corner(m.faces, len(c)))
    assert not welding.several_fans(c, e, len(m.positions))
    np.testing.assert_allclose(np.sort(m.positions, 0)[[7, 8]], [[1, 1, 1], [1, 1, 1]])   # the point, twice
    if normals == "SHARP_EDGES":
        # flat boxes: the 12 box edges of each box sharp (2 corners each), the face diagonals not
        assert m.sharp_edges is not None and int(m.sharp_edges.sum()) == 2 * 12 * 2


def test_split_fan_points_keeps_a_single_fan_mesh_as_it_is():
    from addon.codec.scene import Mesh
    from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS
    m = Mesh.from_triangles("Cube", CUBE_POINTS, CUBE_TRIS)
    before = m.corners.copy()
    assert welding.split_fan_points(m) == 0
    np.testing.assert_array_equal(m.corners, before)
