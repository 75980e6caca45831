"""3DS meshes of many faces are converted two at a time (mesh_in.MeshQueue): the same Scene and
the same warnings as one by one."""
import importlib

import numpy as np

from addon import codec
from tests.codec.fixtures_3ds import build, obj, trimesh

mesh_in = importlib.import_module("addon.codec.formats.studio3ds.mesh_in")


def _grid(n: int, dx: float):
    """An n x n quad grid in triangles, every triangle with its own three points (as a file split
    at every seam stores it): (points, triangles)."""
    ij = np.stack(np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"), -1).reshape(-1, 2)
    pts = np.column_stack([ij + [dx, 0], np.zeros(len(ij))]).astype(np.float32)
    q = (np.arange(n)[:, None] * (n + 1) + np.arange(n)[None, :]).ravel()
    tris = np.r_[np.stack([q, q + n + 1, q + n + 2], 1), np.stack([q, q + n + 2, q + 1], 1)]
    return pts[tris.ravel()], np.arange(tris.size).reshape(-1, 3)


def test_big_meshes_two_at_a_time_give_what_one_by_one_gives(tmp_path, monkeypatch):
    objects = []
    for k, n in enumerate((100, 3, 102, 104)):            # three meshes over MeshQueue.BIG faces
        pts, tris = _grid(n, 200.0 * k)
        groups = np.where(np.arange(len(tris)) % 7 == 0, 2, 1).astype(np.uint32)
        mats = [("Missing%d" % k, np.arange(0, len(tris), 2))]     # an undefined material: a warning
        objects.append(obj(f"O{k}", trimesh(pts, tris, groups=groups, uv=pts[:, :2], materials=mats)))
    path = tmp_path / "big.3ds"
    path.write_bytes(build(objects))
    assert sum(len(t) >= mesh_in.MeshQueue.BIG for t in (_grid(n, 0)[1] for n in (100, 3, 102, 104))) == 3

    queued = codec.load(path)
    monkeypatch.setattr(mesh_in.MeshQueue, "BIG", 10 ** 9)    # every mesh at once, as it comes
    one_by_one = codec.load(path)

    assert [m.name for m in queued.meshes] == [m.name for m in one_by_one.meshes]
    for a, b in zip(queued.meshes, one_by_one.meshes):
        for f in ("positions", "corners", "faces", "smoothing", "face_material"):
            np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
        np.testing.assert_array_equal(a.uv_layers["UVMap"], b.uv_layers["UVMap"])
        assert a.face_attributes.keys() == b.face_attributes.keys()
        assert len(a.positions) < len(a.corners)               # welded
    assert sorted(queued.warnings) == sorted(one_by_one.warnings)
    missing = [w.split("'")[1] for w in queued.warnings if "Missing" in w and "Missing1" not in w]
    assert missing == ["Missing0", "Missing2", "Missing3"]           # the queued ones join in order
