"""A mesh's shape keys -> glTF morph targets: deltas from each key's reference key, sparse where few vertices
move, else in one buffer view per component type; on a grid (Unreal's frames), whole steps.

A vertex-animated mesh has thousands of keys: the bulk work runs on a few keys at a time (CHUNK values), so
that its temporaries stay in the cache; only the keys' whole steps (or their floats, off a grid) and the
written rows are full-size arrays.
"""
from __future__ import annotations

import numpy as np

from ...parallel import PARALLEL_CORNERS, map_two
from ...scene import Mesh
from .accessors_out import ARRAY_BUFFER, Buffer
from .conventions import points_from_blender

SPARSE_BELOW = 1 / 3        # a target whose moved vertices are fewer than this share is written sparse
CHUNK = 1 << 15             # values of one plane taken at a time: a few hundred KB of temporaries
ROWS = (("<f4", 3), ("i1", 4), ("<i2", 4))      # each kind's row: float, byte or short (x, z, -y), 4-byte rows
DIVISORS = (1, 2, 3, 4, 8)  # a grid's step: the smallest gap between the first points' values, or this part of it


def _runs(fn, n: int, n_v: int) -> list:
    """[fn(start, stop)] for runs of keys of about CHUNK values each, on two threads for a large mesh (each run
    writes only its own rows)."""
    step = max(1, CHUNK // max(n_v, 1))
    return map_two(lambda a: fn(a, min(a + step, n)), range(0, n, step), threaded=n * n_v >= PARALLEL_CORNERS)


def _planes(keys: list, a: int, b: int, scale: float) -> np.ndarray:
    """(b - a, 3, V) float32: the x, y and z rows of keys a to b, times `scale`."""
    out = np.empty((b - a, 3, len(keys[0].positions)), np.float32)
    for j, key in enumerate(keys[a:b]):
        out[j] = np.asarray(key.positions, np.float32).T
    if scale != 1.0:
        out *= np.float32(scale)
    return out


def grid(keys: list, scale: float, moves: Moves | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(step (3,), whole steps (K, 3, V) int16) when every coordinate of the shape keys `keys` times `scale`
    is a whole multiple of a step per axis, within int16 (a vertex-animated mesh packed on a grid, as
    Unreal's frames are); None when some axis has none. The step is sought in the first 65536 points.
    moves: given, it takes each key's whole steps less the first key's as they are checked (targets whose
    reference is the basis), so that no second pass reads them."""
    n_v = len(keys[0].positions)
    head = _planes(keys, 0, min(len(keys), -(-(1 << 16) // max(n_v, 1))), scale)
    q = np.array(map_two(lambda k: _least_gap(head[:, k].reshape(-1)[: 1 << 16]), range(3),
                         threaded=len(keys) * n_v >= PARALLEL_CORNERS), np.float64)   # a sort each: 2 ms
    ints = np.empty((len(keys), 3, n_v), np.int16)
    tried = np.zeros(3, np.int64)
    while True:
        step = q / np.array(DIVISORS)[tried]
        if (step <= 0).any():
            return None
        per_step = (1.0 / step).astype(np.float32)
        basis = None if moves is None else np.rint(head[0] * per_step[:, None])    # as run() makes key 0's
        off, reach = _whole(keys, scale, per_step, ints, moves, basis)
        if not off.any():
            break
        tried[off] += 1                               # that axis again, on a finer step
        if (tried == len(DIVISORS)).any():
            return None
    return None if (reach / step > 32767).any() else (step, ints)


def _least_gap(values: np.ndarray) -> float:
    """The smallest gap between the distinct `values`; 1 for one value (any step holds it)."""
    steps = np.diff(np.unique(values))
    return float(steps.min()) if len(steps) else 1.0


def _whole(keys: list, scale: float, per_step: np.ndarray, ints: np.ndarray, moves: Moves | None = None,
           basis: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(axes whose values times `per_step` are not all whole (within 1e-3), largest magnitude per axis),
    writing the whole steps to `ints` as it goes, and to `moves` each target's less the `basis` (key 0's
    whole steps); once some keys are off, the runs left are not looked at."""
    off_seen: list[np.ndarray] = []

    def run(a: int, b: int):
        if off_seen:
            return np.zeros(3, bool), np.zeros(3)
        r = _planes(keys, a, b, scale)
        reach = np.maximum(-r.min((0, 2)), r.max((0, 2)))
        r *= per_step[:, None]
        whole = np.rint(r)
        off = np.abs(np.subtract(r, whole, out=r), out=r).max((0, 2)) >= 1e-3
        if off.any():
            off_seen.append(off)
        else:
            ints[a:b] = whole
            if moves is not None and b > 1:
                own = whole[1:] if a == 0 else whole         # key 0 is the basis, no target
                moves.add(max(a, 1) - 1, np.subtract(own, basis, out=own))
        return off, reach
    found = _runs(run, len(keys), ints.shape[2])
    return np.logical_or.reduce([f[0] for f in found]), np.max([f[1] for f in found], axis=0)


def _gltf_bounds(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row (min, max) of Blender (x, y, z) columns as glTF's (x, z, -y)."""
    return np.stack([lo[:, 0], lo[:, 2], -hi[:, 1]], 1), np.stack([hi[:, 0], hi[:, 2], -lo[:, 1]], 1)


class Moves:
    """Each target's bounds and the Scene vertices it moves, gathered a few targets at a time. A Scene vertex
    that no face uses takes a used one's deltas: bounds and moves are the used ones' alone."""

    def __init__(self, n: int, source: np.ndarray, n_v: int, dtype) -> None:
        self.counts = np.bincount(source, minlength=n_v)        # glTF vertices per Scene vertex
        self.unused = np.flatnonzero(self.counts == 0)
        self.first = source[:1]
        self.lo, self.hi = np.empty((2, n, 3), dtype)
        self.moved = np.empty((n, n_v), bool)

    def add(self, a: int, d: np.ndarray) -> None:
        """d: (m, 3, V) deltas of targets a to a + m, in Blender's axes (changed here)."""
        b = a + len(d)
        if len(self.unused):
            d[:, :, self.unused] = d[:, :, self.first]
        self.lo[a:b], self.hi[a:b] = d.min(2), d.max(2)
        d.any(1, out=self.moved[a:b])

    def result(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(lo, hi (T, 3) in glTF axes, moved (T, V) bool, glTF vertices moved (T,))."""
        exact = np.float32 if self.counts.sum() < 1 << 24 else np.float64   # sums of whole counts: exact
        n_moved = (self.moved.astype(exact) @ self.counts.astype(exact)).astype(np.int64)   # BLAS per run is slow
        return *_gltf_bounds(self.lo, self.hi), self.moved, n_moved


class Deltas:
    """Each target's delta from its reference key, (n, 3, V) for the targets asked, in Blender's axes: float32,
    or int32 from whole steps (int16)."""

    def __init__(self, planes: np.ndarray, refs: np.ndarray) -> None:
        self.planes, self.refs = planes, refs
        self.dtype = np.float32 if planes.dtype.kind == "f" else np.int32
        self.relative = bool(refs.any())

    def __call__(self, targets: np.ndarray, dtype=None) -> np.ndarray:
        """targets: ascending target indices (key i + 1 is target i). dtype: a smaller integer type for whole
        steps, whose subtraction wraps around: exact for a delta that fits it."""
        keys = targets + 1
        together = keys[-1] - keys[0] == len(keys) - 1
        own = self.planes[keys[0]:keys[-1] + 1] if together else self.planes[keys]     # keys in a row: no copy
        ref = self.planes[self.refs[targets]] if self.relative else self.planes[0]
        return np.subtract(own, ref, dtype=dtype or self.dtype, casting="unsafe")

    def gather(self, moves: Moves) -> None:
        """Every target's deltas into `moves`, a few at a time."""
        _runs(lambda a, b: moves.add(a, self(np.arange(a, b))), len(self.refs), self.planes.shape[2])

    def rows(self, targets: np.ndarray, source: np.ndarray, kind: int) -> np.ndarray:
        """(len(targets), len(source), width) glTF rows (x, z, -y) of the Scene vertices `source`: floats,
        or bytes or shorts padded to 4 bytes a row."""
        dtype, width = ROWS[kind]
        out = np.empty((len(targets), len(source), width), dtype)

        def run(a: int, b: int) -> None:
            d = self(targets[a:b], dtype if kind else None)
            r = np.zeros((b - a, d.shape[2], width), dtype)
            r[:, :, 0], r[:, :, 1] = d[:, 0], d[:, 2]
            np.negative(d[:, 1], out=r[:, :, 2], casting="unsafe")   # -y before any cast: 0 stays +0 in whole steps
            np.take(r, source, axis=1, out=out[a:b], mode="wrap")     # "raise" would buffer `out`; "clip" is slower
        _runs(run, len(targets), self.planes.shape[2])
        return out


def targets(mesh: Mesh, source: np.ndarray, buf: Buffer, scale: float, quantize: bool):
    """The morph targets of `mesh`'s glTF vertices `source`. -> (targets, base POSITION accessor, grid step or
    None). quantize: when every key lies on a grid (Unreal frames), positions and deltas are whole steps
    (KHR_mesh_quantization: bytes or shorts), the step goes on the node. The bulk work runs on each key's x,
    y and z rows apart (contiguous, in Blender's axes); glTF's (x, z, -y) is taken where rows are written."""
    keys = mesh.shape_keys
    refs = np.array([k.relative_to if 0 < k.relative_to < len(keys) else 0 for k in keys[1:]], np.int64)
    n_v = len(keys[0].positions)
    on_grid = Moves(len(refs), source, n_v, np.int32) if quantize and not refs.any() else None
    found = grid(keys, scale, on_grid) if quantize else None
    step = None
    if found is not None:
        step, planes = found[0][[0, 2, 1]], found[1]
        base = buf.accessor(points_from_blender(planes[0][:, source].T).astype("<i2"), ARRAY_BUFFER, bounds=True)
    else:
        planes = _planes(keys, 0, len(keys), scale)
        base = buf.accessor(points_from_blender(planes[0][:, source].T), ARRAY_BUFFER, bounds=True)
    deltas = Deltas(planes, refs)
    moves = on_grid if found is not None and on_grid is not None else Moves(len(refs), source, n_v, deltas.dtype)
    if moves is not on_grid:                          # off a grid, or relative keys: a pass of their own
        deltas.gather(moves)
    lo, hi, moved, n_moved = moves.result()
    n = len(source)
    sparse = n_moved < SPARSE_BELOW * n
    kinds = np.zeros(len(refs), np.int8)              # 0 float (of whole steps when quantized), 1 byte, 2 short
    if step is not None:
        kinds[(lo >= -32767).all(1) & (hi <= 32767).all(1)] = 2
        kinds[(lo >= -127).all(1) & (hi <= 127).all(1)] = 1
    out: list[dict] = [{} for _ in range(len(refs))]
    for k in np.flatnonzero(n_moved == 0).tolist():
        out[k]["POSITION"] = buf.zeros(n)
    for k in np.flatnonzero(sparse & (n_moved > 0)).tolist():
        rows = np.flatnonzero(moved[k][source])
        values = points_from_blender(deltas(np.array([k]))[0][:, source[rows]].T).astype(ROWS[kinds[k]][0])
        out[k]["POSITION"] = buf.sparse(values, rows, n, (lo[k], hi[k]))
    for kind in (0, 1, 2):
        dense = np.flatnonzero(~sparse & (n_moved > 0) & (kinds == kind))
        if not len(dense):
            continue
        for k, acc in zip(dense.tolist(), buf.block(deltas.rows(dense, source, kind), lo[dense], hi[dense])):
            out[k]["POSITION"] = acc
    return out, base, step
