"""Corner pairs across edges, and the fans of edge-connected faces around each vertex, in bulk.

Corners are the Scene's: `corners` (C,) vertex per corner, `faces` (F,) loop starts. Nothing here
sorts when it need not: `edge_sides` scatters the corners by Blender's edge and direction, which
pairs the two faces of every edge whose faces agree in winding (edge_pairs, with a sort, takes the
others).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n,) root label of each item joined by pairs (a[i], b[i]): min-label propagation with
    pointer jumping; the root is the smallest index of its component."""
    label = np.arange(n)
    if len(a) == 0:
        return label
    while True:
        old = label
        low = np.minimum(label[a], label[b])
        label = label.copy()
        np.minimum.at(label, a, low)
        np.minimum.at(label, b, low)
        while True:                       # jump to the root of each chain
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt
        if np.array_equal(label, old):
            return label



@dataclass
class Edges:
    """Corner pairs across the edges of a mesh: corner a[i] and corner b[i] start the same edge
    in two faces; a_next/b_next are the corners that end it. An edge of three or more faces
    comes as a chain of pairs with manifold False (Blender treats it as sharp)."""
    a: np.ndarray
    b: np.ndarray
    a_next: np.ndarray
    b_next: np.ndarray
    flipped: np.ndarray         # both sides run the same way (the faces' windings disagree)
    manifold: np.ndarray


def triangle_starts(faces: np.ndarray, n_corners: int) -> bool:
    """Whether `faces` (loop starts) are 0, 3, 6...: every face a triangle, in order."""
    f = np.asarray(faces)
    if n_corners != 3 * len(f):
        return False
    wide_enough = f.dtype.kind in "iu" and f.dtype.itemsize >= 4 and n_corners < 2 ** (8 * f.dtype.itemsize - 1)
    return np.array_equal(f, np.arange(0, n_corners, 3, f.dtype if wide_enough else np.int64))


_TRI_NEXT: dict = {}                     # per type: 1, 2, 0, 4, 5, 3...: a prefix serves any triangle mesh
_TRI_NEXT_KEPT = 1 << 20                 # corners: 12 MB at most (intp and int32), kept between meshes


def _triangle_next(n_corners: int, dtype) -> np.ndarray:
    """next_corner of a triangle mesh in `dtype`, read-only: a view of one kept array."""
    kept = _TRI_NEXT.get(np.dtype(dtype))
    if kept is not None and len(kept) >= n_corners:
        return kept[:n_corners]
    nxt = np.arange(1, n_corners + 1, dtype=dtype)
    nxt.reshape(-1, 3)[:, 2] -= 3
    nxt.flags.writeable = False
    if n_corners <= _TRI_NEXT_KEPT:
        _TRI_NEXT[np.dtype(dtype)] = nxt
    return nxt


def next_corner(faces: np.ndarray, n_corners: int, triangles: bool | None = None) -> np.ndarray:
    """(C,) intp: the next corner of each corner's face (wrapping to the face's first). Read-only
    for triangles: a view of one kept array, so that a mesh costs no new array. triangles:
    triangle_starts(faces, n_corners), when the caller has it."""
    if triangles is None:
        triangles = triangle_starts(faces, n_corners)
    if len(faces) and triangles:
        return _triangle_next(n_corners, np.intp)
    nxt = np.arange(1, n_corners + 1, dtype=np.intp)
    if len(faces):
        starts = np.asarray(faces, np.intp)
        nxt[np.r_[starts[1:], n_corners] - 1] = starts
    return nxt


def edge_pairs(corners: np.ndarray, nxt: np.ndarray, edge_of: np.ndarray | None = None) -> Edges:
    """Consecutive corners of each edge, after sorting the corners by their edge: `edge_of`, an
    edge index per corner (Blender's corner_edge), or else the edge's two vertices. With edge
    indices and no edge of three faces, two scatters find the pairs without a sort."""
    v0 = np.asarray(corners)
    if edge_of is not None:
        key = np.asarray(edge_of)
        n_edges = int(key.max()) + 1 if len(key) else 0
        count = np.bincount(key, minlength=n_edges)
        if not (count > 2).any():
            idx = np.arange(len(key), dtype=np.int32)        # int32: half the memory traffic
            first, last = np.empty(n_edges, np.int32), np.empty(n_edges, np.int32)
            first[key[::-1]] = idx[::-1]            # the last write wins: the lowest corner
            last[key] = idx
            two = np.flatnonzero(count == 2)
            a, b = first[two], last[two]
            return Edges(a, b, nxt[a], nxt[b], v0[a] == v0[b], np.ones(len(a), bool))
    else:
        v0 = v0.astype(np.int64)
        v1 = v0[nxt]
        n = int(v0.max()) + 1 if len(v0) else 1
        key = np.minimum(v0, v1) * n + np.maximum(v0, v1)
    order = np.argsort(key)
    ks = key[order]
    same = ks[1:] == ks[:-1]
    pair = np.flatnonzero(same)
    # a pair is manifold when its key run is exactly two long
    before = np.r_[False, same[:-1]]
    after = np.r_[same[1:], False]
    manifold = ~before[pair] & ~after[pair]
    a, b = order[pair], order[pair + 1]
    return Edges(a, b, nxt[a], nxt[b], v0[a] == v0[b], manifold)


def fan_labels(n_corners: int, e: Edges, join: np.ndarray | None = None) -> np.ndarray:
    """(C,) fan root per corner: corners at one vertex joined across the (joined) edges."""
    sel = slice(None) if join is None else join
    a, b, an, bn, fl = e.a[sel], e.b[sel], e.a_next[sel], e.b_next[sel], e.flipped[sel]
    if e.manifold[sel].all():
        # each corner meets at most one corner across its own edge and one across the edge
        # before it: two gathers per round instead of a scatter
        idx = np.int32 if n_corners < 2 ** 31 else np.int64     # int32: half the memory traffic per round
        own = np.arange(n_corners, dtype=idx)
        before = np.arange(n_corners, dtype=idx)
        own[a] = np.where(fl, b, bn)
        own[b] = np.where(fl, a, an)
        before[an] = np.where(fl, bn, b)
        before[bn] = np.where(fl, an, a)
        return _min_labels(own, before)
    # opposite windings: a meets b_next and a_next meets b; same windings: a meets b
    x = np.concatenate([a, an])
    y = np.concatenate([np.where(fl, b, bn), np.where(fl, bn, b)])
    return components(n_corners, x, y)


def several_fans(corners: np.ndarray, e: Edges, n_vertices: int) -> bool:
    """Whether some vertex has faces in more than one fan (then fan_labels must split it): a walk
    around each vertex, across its edges, all vertices at once, from a corner that starts a border
    if it has one; the walk stops back at its start or at a border. One fan: the walk met every face
    at the vertex. Edges of three faces or disagreeing windings: True (the labelling decides)."""
    v = np.asarray(corners)
    if len(v) == 0:
        return False
    if not e.manifold.all() or e.flipped.any():
        return True
    own = np.arange(len(v), dtype=np.int32)          # the corner across the edge a corner starts
    own[e.a], own[e.b] = e.b_next, e.a_next
    inner = np.zeros(len(v), bool)                   # the edge a corner ends has a second face
    inner[e.a_next] = inner[e.b_next] = True
    faces = np.bincount(v, minlength=n_vertices)
    start = np.empty(n_vertices, np.int32)
    start[v] = np.arange(len(v), dtype=np.int32)
    border = np.flatnonzero(~inner).astype(np.int32)
    start[v[border]] = border
    start = start[faces > 0]
    return bool((_walk(own, start, faces[v[start]]) != faces[v[start]]).any())


def _walk(step: np.ndarray, start: np.ndarray, limit: np.ndarray) -> np.ndarray:
    """Faces met by each walk from `start` until it stops at a border or back at its start (limit + 1
    when a walk runs on, which only a broken edge map could make)."""
    met = limit + 1
    idx, cur = np.arange(len(start)), start
    for k in range(1, int(limit.max(initial=0)) + 2):
        if not len(idx):
            break
        nxt = step[cur]
        done = (nxt == cur) | (nxt == start[idx])
        if done.any():
            met[idx[done]] = k
            go = ~done
            idx, cur = idx[go], nxt[go]
        else:
            cur = nxt
    return met



@dataclass
class Sides:
    """Blender's edges seen from their two sides (edge_sides)."""
    side: np.ndarray        # (2E,) the corner after the one that runs edge e up (2e) or down (2e + 1), or -1
    across: np.ndarray      # (C,) the corner across each corner's own edge, at its vertex; -1 at a border
    after: np.ndarray       # (C,) intp: the vertex at the far end of each corner's own edge
    next: np.ndarray        # (C,) the next corner of each corner's face, in the type of `side`


def edge_sides(corners: np.ndarray, nxt: np.ndarray, edge_of: np.ndarray, n_edges: int,
               triangles: bool = False) -> Sides | None:
    """Blender's edges (`edge_of`: its corner_edge) seen from their two sides, without a sort: a
    corner runs its edge up (from the lower vertex) or down; the two faces of a manifold edge with
    agreeing windings run it once each way. One scatter of the corners by side finds, for each
    corner, the other face's corner at the same vertex (the corner after the one running the other
    way). None when some side has two corners (an edge of three or more faces, or faces whose
    windings disagree): edge_pairs decides then. triangles: every face a triangle, in order
    (triangle_starts), which lets the far ends be read in order."""
    cv = np.asarray(corners)
    after = np.empty(len(cv), np.intp)     # intp: numpy converts other index types at each scatter
    if triangles:                          # three column copies: memory read in order, not gathered
        a3, c3 = after.reshape(-1, 3), cv.reshape(-1, 3)
        a3[:, 0], a3[:, 1], a3[:, 2] = c3[:, 1], c3[:, 2], c3[:, 0]
    else:
        after[:] = np.take(cv, nxt)
    key = np.left_shift(edge_of, 1, dtype=np.intp)
    np.add(key, cv > after, out=key)
    kind = np.int32 if len(cv) < 2 ** 31 else np.intp
    # in the table's type: none of numpy's conversions in each scatter of it
    nxt = _triangle_next(len(cv), kind) if triangles else nxt.astype(kind)
    side = np.full(2 * n_edges, -1, kind)
    side[key] = nxt
    if np.count_nonzero(side >= 0) != len(cv):     # two corners wrote one side
        return None
    np.bitwise_xor(key, 1, out=key)                # the other way along the same edge
    return Sides(side, np.take(side, key), after, nxt)


def several_fans_by_sides(corners: np.ndarray, sides: Sides, n_vertices: int) -> bool:
    """several_fans for a mesh that edge_sides accepts. One walk per vertex, from a corner whose
    edge before it is a border if it has one; every vertex has one fan exactly when the walks meet
    every corner (a walk meets only its own fan). A walk that reaches a border goes on to its
    vertex's start, so that every walk stops back at its start: one comparison per step. Uses up
    sides.across (a copy would be one more array per mesh)."""
    cv = np.asarray(corners)
    n = len(cv)
    if n == 0:
        return False
    nxt = sides.next
    step = sides.across                             # changed in place: borders lead to their vertex's start
    tails = np.flatnonzero(step < 0)                # corners whose own edge is a border
    start = np.full(n_vertices, -1, step.dtype)
    start[sides.after] = nxt                        # some corner at each vertex
    heads = np.take(nxt, tails)                     # after a border: a corner whose edge before it is one
    start[np.take(sides.after, tails)] = heads
    step[tails] = np.take(start, np.take(cv, tails))
    cur = start[start >= 0]
    met, first = len(cur), cur
    while len(cur) and met <= n:                    # each step meets a new corner of the walk's fan
        nx = np.take(step, cur)
        go = nx != first
        cur, first = nx[go], first[go]
        met += len(cur)
    return met != n



def _min_labels(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The smallest index reachable through the neighbour maps p and q (paths and cycles)."""
    label = np.minimum(np.arange(len(p), dtype=p.dtype), np.minimum(p, q))
    lp, lq = np.empty_like(label), np.empty_like(label)
    while True:
        np.take(label, p, out=lp)
        np.take(label, q, out=lq)
        np.minimum(lp, lq, out=lp)
        np.minimum(label, lp, out=lp)
        nxt = lp[lp]                                    # jump: a root's label is its own minimum
        if np.array_equal(nxt, label):
            return label
        label = nxt


def split_fans(corners: np.ndarray, labels: np.ndarray, n_vertices: int) -> tuple[np.ndarray, np.ndarray]:
    """(new corners, source vertex per new vertex): one vertex per fan; a vertex's first fan keeps it."""
    roots = np.flatnonzero(labels == np.arange(len(labels)))
    rv = np.asarray(corners, np.int64)[roots]
    order = np.argsort(rv, kind="stable")
    srt = rv[order]
    extra = np.r_[False, srt[1:] == srt[:-1]]
    source = np.arange(n_vertices)
    if not extra.any():
        return corners, source
    new_id = srt.copy()
    new_id[extra] = n_vertices + np.arange(int(extra.sum()))
    id_of_root = np.empty(len(labels), np.int64)
    id_of_root[roots[order]] = new_id
    return id_of_root[labels].astype(np.uint32), np.r_[source, srt[extra]]


def face_of_corner(faces: np.ndarray, n_corners: int) -> np.ndarray:
    if n_corners == 3 * len(faces):
        return np.repeat(np.arange(len(faces)), 3)
    return np.repeat(np.arange(len(faces)), np.diff(np.r_[np.asarray(faces, np.int64), n_corners]))
