"""3DS meshes of many faces are converted two at a time (mesh_in.MeshQueue): the same Scene and
the same warnings as one by one."""
import dataclasses
import importlib
import sys
import threading
import time

import numpy as np

from addon import codec
from tests.codec.fixtures_3ds import build, obj, trimesh

mesh_in = importlib.import_module("addon.codec.formats.studio3ds.mesh_in")
meshops_weld = importlib.import_module("addon.codec.meshops.welding")


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


def _snapshot(scene) -> list:
    """Everything a load gives, as plain values (arrays as dtype, shape and bytes), in order."""
    def plain(v):
        if isinstance(v, np.ndarray):
            return (v.dtype.str, v.shape, v.tobytes())
        if isinstance(v, dict):
            return sorted((k, plain(x)) for k, x in v.items())
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if dataclasses.is_dataclass(v):
            return [(f.name, plain(getattr(v, f.name))) for f in dataclasses.fields(v)]
        return v
    return [plain(scene.meshes), list(scene.warnings)]


def test_queued_meshes_under_load_every_time_give_what_one_thread_gives(tmp_path, monkeypatch):
    """The two-thread path (mesh_in.MeshQueue, welding in batches: parallel.map_two) run again and
    again while other threads keep the cores and Python's lock busy, with the lock handed over as
    often as Python can: each load the same meshes, bit for bit, and the same warnings in the same
    order as the loop on one thread. Small batches and a low BIG make many items to interleave."""
    objects = []
    for k, n in enumerate((40, 3, 31, 47, 36, 5, 44)):
        pts, tris = _grid(n, 200.0 * k)
        groups = np.where(np.arange(len(tris)) % (k + 3) == 0, 2, 1).astype(np.uint32)
        mats = [("Missing%d" % k, np.arange(0, len(tris), 2))]
        objects.append(obj(f"O{k}", trimesh(pts, tris, groups=groups, uv=pts[:, :2], materials=mats)))
    path = tmp_path / "many.3ds"
    path.write_bytes(build(objects))
    monkeypatch.setattr(mesh_in.MeshQueue, "BIG", 1000)
    monkeypatch.setattr(meshops_weld, "BATCH_ROWS", 4096)
    modes = ("SHARP_EDGES", "EXACT", "KEEP")
    with monkeypatch.context() as one:
        loop = lambda fn, items, threaded=True: [fn(x) for x in items]    # noqa: E731
        one.setattr(mesh_in, "map_two", loop)
        one.setattr(meshops_weld, "map_two", loop)
        want = {mode: _snapshot(codec.load(path, normals=mode)) for mode in modes}
    assert len(want["SHARP_EDGES"][0]) == 7 and want["SHARP_EDGES"][1]

    stop = threading.Event()

    def numpy_load():
        a = np.random.default_rng(0).random(1 << 16)
        while not stop.is_set():
            np.sort(a)

    def python_load():
        while not stop.is_set():
            sum(range(1000))

    others = [threading.Thread(target=f, daemon=True) for f in (numpy_load, python_load)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    for t in others:
        t.start()
    try:
        runs, start = 0, time.perf_counter()
        while runs < 60 and (runs < 6 or time.perf_counter() - start < 4.0):
            mode = modes[runs % len(modes)]
            assert _snapshot(codec.load(path, normals=mode)) == want[mode], (runs, mode)
            runs += 1
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        for t in others:
            t.join()
