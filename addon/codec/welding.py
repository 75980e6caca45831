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
# once Blender has found the edges, marks the sharp ones and splits the points where faces meet
# without an edge (edge_pairs with Blender's corner_edge needs no sort).


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
    """(id per vertex 0..P-1, the lowest vertex at each point): vertices at exactly the same point
    share an id (rows of any width: positions with more per-vertex values after them). A 64-bit hash of the coordinate bits sorts much faster than the 12-byte records;
    the result is checked, and on a collision the exact sort is used."""
    p = np.ascontiguousarray(positions, np.float32)
    p = p.reshape(len(p), -1) + np.float32(0.0)                                 # -0.0 -> 0.0
    bits = p.view(np.uint32).astype(np.uint64)
    h = bits[:, 0] * np.uint64(0x9E3779B97F4A7C15)
    for k in range(1, bits.shape[1]):
        h = (h ^ bits[:, k]) * np.uint64(0xC2B2AE3D27D4EB4F) if k + 1 < bits.shape[1] else h ^ bits[:, k]
    order = np.argsort(h)
    hs = h[order]
    start = np.flatnonzero(np.r_[True, hs[1:] != hs[:-1]]) if len(hs) else np.zeros(0, np.int64)
    group = np.zeros(len(h), np.int64)
    group[start[1:]] = 1
    ids = np.empty(len(h), np.int64)
    ids[order] = np.cumsum(group)
    first = np.minimum.reduceat(order, start) if len(start) else start
    if (bits == bits[first[ids]]).all():
        return ids, first
    _, first, ids = np.unique(np.ascontiguousarray(p).view(np.dtype((np.void, 4 * p.shape[1]))).ravel(),
                              return_index=True, return_inverse=True)
    return ids.ravel(), first


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


def next_corner(faces: np.ndarray, n_corners: int) -> np.ndarray:
    """(C,) the next corner of each corner's face (wrapping to the face's first)."""
    nxt = np.arange(1, n_corners + 1, dtype=np.int64)
    if len(faces):
        starts = np.asarray(faces, np.int64)
        ends = np.r_[starts[1:], n_corners] - 1
        nxt[ends] = starts
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
    corners = np.asarray(corners, np.int64)
    nv = len(positions)
    if nv == 0 or len(corners) == 0:
        return corners.astype(np.uint32), np.arange(nv)
    ids, first = weld_points(positions)
    # number the points in the stored order (first vertices are distinct: a scatter, no sort);
    # a file without repeated points keeps its vertices as they are
    is_first = np.zeros(nv, bool)
    is_first[first] = True
    rank = (np.cumsum(is_first) - 1)[first]
    ids = rank[ids]
    first = np.flatnonzero(is_first)
    welded = ids[corners]
    if len(corners) == 3 * len(faces):
        w3 = welded.reshape(-1, 3)
        bad_corner = np.repeat((w3[:, 0] == w3[:, 1]) | (w3[:, 1] == w3[:, 2]) | (w3[:, 2] == w3[:, 0]), 3)
    else:                                     # polygons: also corners further apart
        bad_corner = welded == welded[next_corner(faces, len(corners))]
        face_of = face_of_corner(faces, len(corners))
        order = np.argsort(face_of * (len(first) + 1) + welded, kind="stable")
        fs, ws = face_of[order], welded[order]
        bad_corner[order[1:]] |= (fs[1:] == fs[:-1]) & (ws[1:] == ws[:-1])
    if bad_corner.any():
        face_of = face_of_corner(faces, len(corners))
        bad = np.zeros(len(faces), bool)
        bad[face_of[bad_corner]] = True
        welded = np.where(bad[face_of], len(first) + corners, welded)
    else:
        used = np.zeros(len(first), bool)
        used[welded] = True
        if used.all():                        # the usual case: every point in use, nothing to renumber
            return welded.astype(np.uint32), first
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
