"""Welded meshes with native smoothing, for formats that split vertices only for UVs or normals.

A format such as .3ds stores one vertex per (point, UV, normal), so a mesh read as
stored is cut open at every UV seam. `weld` joins the vertices at exactly the same
point (UVs stay per corner, so seams become UV seams); `split_fans` splits again the
points where faces touch without sharing an edge (one vertex per fan of edge-connected
faces), because Cycles smooths across such a point though Blender's corner normals do
not. `sharp_from_groups` turns smoothing-group masks into Blender's own sharp edges and
flat faces; `weld_by_normals` does the same from a file's own corner normals.

Corners are the Scene's: `corners` (C,) vertex per corner, `faces` (F,) loop starts.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

COS_SAME = 0.999          # corner normals closer than this count as the same
COS_OFF = float(np.cos(np.radians(10)))    # a file normal further than this from the shading is reported

# The welding is split in two: the codec welds and keeps the groups (Mesh.smoothing); the bridge,
# once Blender has found the edges, runs group_shading: it marks the sharp edges and splits the
# points where faces meet without an edge. Neither sorts: `weld_points` puts the points in a hash
# table, and `edge_sides` scatters the corners by Blender's edge and direction, which pairs the two
# faces of every edge whose faces agree in winding (edge_pairs, with a sort, takes the others).


def face_normals(positions: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(F, 3) float32, length = twice the area (area weighting); the cross product spelled
    out per component, which is several times faster than np.cross on large arrays."""
    p = np.asarray(positions, np.float32)
    a = np.take(p, tris[:, 0], axis=0)
    u = np.take(p, tris[:, 1], axis=0) - a
    v = np.take(p, tris[:, 2], axis=0) - a
    out = np.empty_like(u)
    out[:, 0] = u[:, 1] * v[:, 2] - u[:, 2] * v[:, 1]
    out[:, 1] = u[:, 2] * v[:, 0] - u[:, 0] * v[:, 2]
    out[:, 2] = u[:, 0] * v[:, 1] - u[:, 1] * v[:, 0]
    return out


def unit(v: np.ndarray) -> np.ndarray:
    n = np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    return v / np.where(n > 0, n, 1.0).astype(v.dtype)


def weld_ids(positions: np.ndarray) -> np.ndarray:
    """(V,) id per vertex, 0..P-1, equal for vertices at exactly the same point."""
    return weld_points(positions)[0]


def weld_points(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(id per vertex 0..P-1, the lowest vertex at each point), ids in the order of those lowest
    vertices: vertices at exactly the same point share an id (-0.0 is 0.0; rows of any width:
    positions with more per-vertex values after them)."""
    p = np.ascontiguousarray(positions, np.float32)
    p = (p if p.ndim == 2 else p.reshape(len(p), -1)) + np.float32(0.0)         # -0.0 -> 0.0
    n = len(p)
    idx = np.int32 if n < 2 ** 31 else np.int64
    root = np.arange(n, dtype=idx)
    _find_roots(p.view(np.uint32), root, 0)
    is_root = root == np.arange(n, dtype=idx)
    rank = np.cumsum(is_root, dtype=idx)
    rank -= 1
    return np.take(rank, root), np.flatnonzero(is_root)


_MIX = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)


def _find_roots(bits: np.ndarray, root: np.ndarray, depth: int) -> None:
    """root[i] = the lowest row equal to row i (rows of uint32 words), through a hash table: each
    row's slot takes the lowest row that lands there (the last of the writes, in reverse); rows
    equal to their slot's row are done, the others (a different row took the slot) go round again
    with another hash, and exact sorting settles the few rows left."""
    n, w = bits.shape
    if n == 0:
        return
    if depth == len(_MIX) or n < 64:
        _, first, inv = np.unique(np.ascontiguousarray(bits).view(np.dtype((np.void, 4 * w))).ravel(),
                                  return_index=True, return_inverse=True)
        root[:] = root[first[inv.ravel()]]
        return
    mul = np.uint64(_MIX[depth])
    h = bits[:, 0].astype(np.uint64)
    for k in range(1, w):
        h *= mul
        h ^= bits[:, k]
    h *= mul                                   # the top bits of a product mix every lower bit
    size_bits = (2 * n - 1).bit_length() + 2 * depth          # at most half full, then sparser
    slot = (h >> np.uint64(64 - size_bits)).view(np.int64)
    rows = np.arange(n, dtype=root.dtype)
    table = np.empty(1 << size_bits, root.dtype)
    table[slot[::-1]] = rows[::-1]             # the last write wins: the lowest row takes its slot
    own = np.take(table, slot)
    if (own > rows).any():                     # numpy does not promise the order of repeated writes
        _find_roots(bits, root, len(_MIX))
        return
    # a row that took its slot is its own root; the others are checked against the slot's row
    moved = np.flatnonzero(own != rows)
    if not len(moved):
        return
    other = np.take(own, moved)
    same = np.ones(len(moved), bool)
    for k in range(w):
        col = bits[:, k]
        same &= np.take(col, moved) == np.take(col, other)
    root[moved[same]] = np.take(root, other[same])
    rest = moved[~same]                        # a different row took the slot: another round
    if len(rest):
        sub = root[rest]
        _find_roots(bits[rest], sub, depth + 1)
        root[rest] = sub


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


_TRI_NEXT = np.zeros(0, np.intp)         # 1, 2, 0, 4, 5, 3...: a prefix serves any triangle mesh
_TRI_NEXT_KEPT = 1 << 20                 # corners: 8 MB at most, kept between meshes


def next_corner(faces: np.ndarray, n_corners: int) -> np.ndarray:
    """(C,) intp: the next corner of each corner's face (wrapping to the face's first). Read-only
    for triangles: a view of one kept array, so that a mesh costs no new array."""
    global _TRI_NEXT
    if len(faces) and triangle_starts(faces, n_corners):
        if len(_TRI_NEXT) >= n_corners:
            return _TRI_NEXT[:n_corners]
        nxt = np.arange(1, n_corners + 1, dtype=np.intp)
        nxt.reshape(-1, 3)[:, 2] -= 3
        nxt.flags.writeable = False
        if n_corners <= _TRI_NEXT_KEPT:
            _TRI_NEXT = nxt
        return nxt
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
    after: np.ndarray       # (C,) the vertex at the far end of each corner's own edge


def edge_sides(corners: np.ndarray, nxt: np.ndarray, edge_of: np.ndarray, n_edges: int) -> Sides | None:
    """Blender's edges (`edge_of`: its corner_edge) seen from their two sides, without a sort: a
    corner runs its edge up (from the lower vertex) or down; the two faces of a manifold edge with
    agreeing windings run it once each way. One scatter of the corners by side finds, for each
    corner, the other face's corner at the same vertex (the corner after the one running the other
    way). None when some side has two corners (an edge of three or more faces, or faces whose
    windings disagree): edge_pairs decides then."""
    cv = np.asarray(corners)
    after = np.take(cv, nxt)
    key = np.left_shift(edge_of, 1, dtype=np.intp)          # intp: numpy converts other index types
    np.add(key, cv > after, out=key)
    side = np.full(2 * n_edges, -1, np.int32 if len(cv) < 2 ** 31 else np.intp)
    side[key] = nxt
    if np.count_nonzero(side >= 0) != len(cv):     # two corners wrote one side
        return None
    np.bitwise_xor(key, 1, out=key)                # the other way along the same edge
    return Sides(side, np.take(side, key), after)


def several_fans_by_sides(corners: np.ndarray, nxt: np.ndarray, sides: Sides, n_vertices: int) -> bool:
    """several_fans for a mesh that edge_sides accepts. One walk per vertex, from a corner whose
    edge before it is a border if it has one; every vertex has one fan exactly when the walks meet
    every corner (a walk meets only its own fan). A walk that reaches a border goes on to its
    vertex's start, so that every walk stops back at its start: one comparison per step. Uses up
    sides.across (a copy would be one more array per mesh)."""
    cv = np.asarray(corners)
    n = len(cv)
    if n == 0:
        return False
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


def sharp_edges_by_sides(groups: np.ndarray, sides: Sides, faces: np.ndarray, n_corners: int
                         ) -> tuple[np.ndarray, np.ndarray]:
    """sharp_from_groups per edge (E,), with edge_sides, and the flat faces (F,)."""
    side = sides.side
    g = np.asarray(groups).astype(np.uint32)
    sharp = np.zeros(len(side) // 2, bool)
    if len(g) == 0 or (g == g[0]).all():
        return sharp, g == 0                            # one mask everywhere: no edge between groups
    two = side.reshape(-1, 2)
    both = (two >= 0).all(axis=1)
    face_of = face_of_corner(faces, n_corners)
    ga, gb = g[face_of[two[both, 0]]], g[face_of[two[both, 1]]]
    sharp[both] = ((ga & gb) == 0) & ((ga | gb) != 0)
    return sharp, g == 0


@dataclass
class GroupShading:
    """What smoothing groups become on a mesh with Blender's edges (group_shading)."""
    split: tuple[np.ndarray, np.ndarray] | None     # (corners, source vertex per vertex) when points split
    sharp_edges: np.ndarray | None                  # (E,) bool
    sharp_faces: np.ndarray | None                  # (F,) bool


def group_shading(corners: np.ndarray, faces: np.ndarray, groups: np.ndarray, n_vertices: int,
                  edge_of: np.ndarray, n_edges: int, sharp: bool = True) -> GroupShading:
    """Native smoothing from u32 group masks per face, with Blender's edges (`edge_of`, its
    corner_edge): the points where faces meet without an edge split (one vertex per fan: Cycles
    would smooth across them), else the sharp edges and flat faces (when `sharp`). Blender-free,
    so that the bridge can run it for several meshes at once."""
    nxt = next_corner(faces, len(corners))
    sides = edge_sides(corners, nxt, edge_of, n_edges)
    edges = None
    if sides is None:                                 # edges of 3+ faces or disagreeing windings
        edges = edge_pairs(corners, nxt, edge_of)
        several = several_fans(corners, edges, n_vertices)
    else:
        several = several_fans_by_sides(corners, nxt, sides, n_vertices)
    if several:
        if edges is None:
            edges = edge_pairs(corners, nxt, edge_of)
        new_corners, source = split_fans(corners, fan_labels(len(corners), edges), n_vertices)
        if len(source) > n_vertices:
            return GroupShading((new_corners, source), None, None)
    if not sharp:
        return GroupShading(None, None, None)
    if edges is None:
        return GroupShading(None, *sharp_edges_by_sides(groups, sides, faces, len(corners)))
    by_corner, flat = sharp_from_groups(groups, faces, len(corners), edges)
    per_edge = np.zeros(n_edges, bool)
    per_edge[np.asarray(edge_of)[by_corner]] = True
    return GroupShading(None, per_edge, flat)


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


def weld(positions: np.ndarray, corners: np.ndarray, faces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(corners (C,) uint32, stored vertex per welded vertex): one vertex per point, numbered in
    the stored order. A face whose corners would meet at one vertex (zero area) keeps its own."""
    corners = np.asarray(corners)
    nv = len(positions)
    if nv == 0 or len(corners) == 0:
        return corners.astype(np.uint32), np.arange(nv)
    ids, first = weld_points(positions)          # numbered in the stored order already
    welded = np.take(ids, corners)
    if triangle_starts(faces, len(corners)):
        w3 = welded.reshape(-1, 3)
        bad_face = (w3[:, 0] == w3[:, 1]) | (w3[:, 1] == w3[:, 2]) | (w3[:, 2] == w3[:, 0])
        bad_corner = np.repeat(bad_face, 3) if bad_face.any() else None
    else:                                     # polygons: also corners further apart
        bad_corner = welded == welded[next_corner(faces, len(corners))]
        face_of = face_of_corner(faces, len(corners))
        order = np.argsort(face_of * (len(first) + 1) + welded, kind="stable")
        fs, ws = face_of[order], welded[order]
        bad_corner[order[1:]] |= (fs[1:] == fs[:-1]) & (ws[1:] == ws[:-1])
        if not bad_corner.any():
            bad_corner = None
    if bad_corner is not None:
        face_of = face_of_corner(faces, len(corners))
        bad = np.zeros(len(faces), bool)
        bad[face_of[bad_corner]] = True
        welded = np.where(bad[face_of], len(first) + corners.astype(np.int64), welded)
    else:
        used = np.zeros(nv, bool)             # by the stored vertices: corners index those in intp
        used[corners] = True
        if not used.all():                    # a point is in use when one of its vertices is
            used_points = np.zeros(len(first), bool)
            used_points[ids[used]] = True
            used = used_points
        if used.all():
            # the usual case: every point in use, nothing to renumber
            return (welded.view(np.uint32) if welded.dtype == np.int32 else welded.astype(np.uint32)), first
    # renumber: used points first, then the stored vertices kept for zero-area faces
    source_all = np.r_[first, np.arange(nv)]
    used = np.zeros(len(source_all), bool)
    used[welded] = True
    new_of = np.cumsum(used) - 1
    return new_of[welded].astype(np.uint32), source_all[used]


def weld_by_normals(mesh, exact: bool, warnings=None) -> int:
    """For formats that store a vertex per (point, normal, UV): one vertex per point (equal in
    every shape key and skin weight too), the file's corner normals kept as custom normals
    (exact) or as sharp edges where they differ across an edge, which Blender shades itself.
    Returns how many corners' file normals the sharp edges cannot give (off by more than
    COS_OFF: the file's normals are not its faces' own, e.g. bent by hand), which `warnings` hears."""
    if not len(mesh.positions):
        return 0                             # nothing to weld (a mesh without vertices)
    cols = [np.asarray(mesh.positions, np.float32).reshape(len(mesh.positions), -1)]
    cols += [np.asarray(k.positions, np.float32).reshape(len(mesh.positions), -1) for k in mesh.shape_keys]
    if mesh.skin is not None:
        cols += [np.asarray(mesh.skin.joints).astype(np.int32).view(np.float32),
                 np.asarray(mesh.skin.weights, np.float32)]
    for v in mesh.vertex_attributes.values():
        cols.append(np.asarray(v).reshape(len(mesh.positions), -1).astype(np.float32))
    corners, source = weld(np.hstack(cols), mesh.corners, mesh.faces)
    split_vertices(mesh, corners, source)
    if exact or mesh.normals is None or len(mesh.normals) != len(mesh.corners):
        return 0
    n = np.asarray(mesh.normals, np.float32)
    e = edge_pairs(mesh.corners, next_corner(mesh.faces, len(mesh.corners)))
    # opposite windings: a meets b_next, a_next meets b
    other_a = np.where(e.flipped, e.b, e.b_next)
    other_an = np.where(e.flipped, e.b_next, e.b)
    same = (np.einsum("ij,ij->i", n[e.a], n[other_a]) >= COS_SAME) & \
        (np.einsum("ij,ij->i", n[e.a_next], n[other_an]) >= COS_SAME)
    sharp = np.zeros(len(mesh.corners), bool)
    sharp[e.a[~same]] = sharp[e.b[~same]] = True
    mesh.sharp_edges = sharp
    if len(mesh.corners) != 3 * len(mesh.faces):
        return 0
    tris = np.asarray(mesh.corners, np.int64).reshape(-1, 3)
    native = sharp_edge_normals(mesh.positions, tris, sharp, np.zeros(len(tris), bool), e, by_angle=True)
    off = int((np.einsum("ij,ij->i", native, unit(n)) < COS_OFF).sum())
    if off and warnings is not None:
        warnings.warn(f"{mesh.name!r}: {off} of the file's corner normals are not what sharp edges can give "
                      f"(more than 10 degrees off); import with Normals: Exact to keep them")
    return off


def split_fan_points(mesh) -> int:
    """Where faces meet at a welded point without sharing an edge, Cycles smooths across them (dark
    smears) though Blender's corner normals do not: give such a point a vertex per fan of faces, as
    the 3DS import does. Corners keep their normals and sharp edges. Returns the vertices added."""
    corners = np.asarray(mesh.corners)
    if not len(corners):
        return 0
    e = edge_pairs(corners, next_corner(mesh.faces, len(corners)))
    if not several_fans(corners, e, len(mesh.positions)):
        return 0
    new_corners, source = split_fans(corners, fan_labels(len(corners), e), len(mesh.positions))
    added = len(source) - len(mesh.positions)
    if added:
        split_vertices(mesh, new_corners, source)
    return added

def split_vertices(mesh, corners: np.ndarray, source: np.ndarray) -> None:
    """Give a Scene Mesh new corners over the vertices `source` picks: every per-vertex array
    (positions, attributes, shape keys, skin) follows."""
    mesh.corners = np.asarray(corners, np.uint32)
    mesh.positions = np.take(mesh.positions, source, axis=0)
    mesh.vertex_attributes = {k: np.take(v, source, axis=0) for k, v in mesh.vertex_attributes.items()}
    for key in mesh.shape_keys:
        key.positions = np.take(key.positions, source, axis=0)
    if mesh.skin is not None:
        mesh.skin.joints, mesh.skin.weights = mesh.skin.joints[source], mesh.skin.weights[source]


def sharp_from_groups(groups: np.ndarray, faces: np.ndarray, n_corners: int,
                      edges: Edges) -> tuple[np.ndarray, np.ndarray]:
    """(sharp edge per corner (C,) bool, flat face (F,) bool) from u32 group masks per face:
    a face without a group is flat; an edge between faces that share no group is sharp, unless
    both are flat (the edge inside a flat area shows no crease)."""
    g = np.asarray(groups).astype(np.uint32)
    sharp = np.zeros(n_corners, bool)
    if len(g) == 0 or (g == g[0]).all():
        return sharp, g == 0                            # one mask everywhere: no edge between groups
    face_of = face_of_corner(faces, n_corners)
    ga, gb = g[face_of[edges.a]], g[face_of[edges.b]]
    cut = ((ga & gb) == 0) & ((ga | gb) != 0) & edges.manifold
    sharp[edges.a[cut]] = True
    sharp[edges.b[cut]] = True
    return sharp, g == 0


def face_of_corner(faces: np.ndarray, n_corners: int) -> np.ndarray:
    if n_corners == 3 * len(faces):
        return np.repeat(np.arange(len(faces)), 3)
    return np.repeat(np.arange(len(faces)), np.diff(np.r_[np.asarray(faces, np.int64), n_corners]))


def mixed_corners(corners: np.ndarray, faces: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """(C,) bool: the corners at a vertex whose faces carry more than one mask: only there can
    sharp edges smooth otherwise than the groups (elsewhere one mask joins every face)."""
    g = np.asarray(groups, np.uint32)
    if len(g) == 0 or (g == g[0]).all():
        return np.zeros(len(corners), bool)             # one mask: the usual smooth model
    cg = g[face_of_corner(faces, len(corners))]
    v = np.asarray(corners, np.int64)
    rep = np.zeros(int(v.max()) + 1 if len(v) else 0, np.uint32)
    rep[v] = cg
    odd = np.zeros(len(rep), bool)
    odd[v[cg != rep[v]]] = True
    return odd[v]


def corner_angles(positions: np.ndarray, tris: np.ndarray) -> np.ndarray:
    """(C,) the angle of each triangle corner (Blender weights face normals by it)."""
    p = np.asarray(positions, np.float32)
    a, b, c = (np.take(p, tris[:, k], axis=0) for k in range(3))
    ab, bc, ca = unit(b - a), unit(c - b), unit(a - c)          # each side once, not twice per corner
    cos = np.empty((len(tris), 3), np.float32)
    cos[:, 0] = -np.einsum("ij,ij->i", ab, ca)                  # at a: towards b and towards c (-ca)
    cos[:, 1] = -np.einsum("ij,ij->i", bc, ab)
    cos[:, 2] = -np.einsum("ij,ij->i", ca, bc)
    return np.arccos(np.clip(cos.ravel(), -1.0, 1.0))


def sharp_edge_normals(positions: np.ndarray, tris: np.ndarray, sharp: np.ndarray, flat: np.ndarray,
                       edges: Edges, by_angle: bool = False) -> np.ndarray:
    """(C, 3) the corner normals that sharp edges and flat faces give: the sum over each smooth
    fan of edge-connected faces, area weighted (as the smoothing-group normals are, so that only
    the grouping differs), or by_angle as Blender weights them."""
    fn = face_normals(positions, tris)
    n = len(tris) * 3
    face_of = np.repeat(np.arange(len(tris)), 3)
    join = (~sharp[edges.a] & ~flat[face_of[edges.a]] & ~flat[face_of[edges.b]] & ~edges.flipped
            & edges.manifold)
    labels = fan_labels(n, edges, join)
    rows = np.repeat(unit(fn) if by_angle else fn, 3, axis=0)
    if by_angle:
        rows *= corner_angles(positions, tris)[:, None].astype(np.float32)
    acc = np.empty((n, 3), np.float32)
    for k in range(3):
        acc[:, k] = np.bincount(labels, rows[:, k], minlength=n)
    out = unit(acc[labels])
    fl = np.repeat(flat, 3)
    out[fl] = unit(rows[fl])
    return out


def differing_corners(a: np.ndarray, b: np.ndarray) -> int:
    """How many corner normals of two (C, 3) sets point differently."""
    return int((np.einsum("ij,ij->i", a, b) < COS_SAME).sum())
