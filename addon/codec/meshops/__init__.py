"""The one mesh kernel every format calls: fan triangulation, face and vertex normals, the
corner -> vertex split, welding, and the repairs that keep a Scene mesh safe for Blender.

The corner -> vertex split has one output-order rule: distinct values are ordered by the
vertex that first uses them, then by first use; a mesh whose values never differ within a
vertex keeps its vertex order. The parts are this package's modules, named for what they are
(their entry points re-exported here, so that formats call this package only): the one row
grouping behind the split and welding (rows), welding (welding), edges and fans (edges), normals
(normals), smoothing-group shading (groups) and smoothing groups to normals (smoothing).

Real files hold faces that repeat a vertex (``a a b``), faces with fewer than
three corners, and corner indices past the vertex list. Blender either refuses
such faces or crashes on them (custom normals on a face that repeats a vertex
crash Blender 4.5), so they are dropped here, in bulk, with one counted warning.
Faces of zero area with three distinct vertices are valid Blender geometry and
stay.
"""
from __future__ import annotations

import numpy as np

from .edges import (Edges, components, edge_pairs, edge_sides, face_of_corner, fan_labels, next_corner,
                    several_fans, several_fans_by_sides, split_fans, triangle_starts)
from .groups import GroupShading, group_shading, mixed_corners, sharp_edges_by_sides, sharp_from_groups
from .normals import corner_angles, cross, differing_corners, face_normals, sharp_edge_normals, unit
from .rows import representatives, unique_in_order
from .welding import (split_fan_points, split_vertices, weld, weld_by_normals, weld_ids, weld_points,
                      weld_points_many)
from ..scene import Mesh
from .smoothing import one_group_normals, smooth_normals, with_normals

__all__ = ["triangulate", "all_triangles", "cross", "face_normals", "vertex_normals", "unit", "split_corners",
           "representatives", "weld", "weld_ids", "weld_points", "weld_points_many", "weld_by_normals",
           "split_fan_points", "split_vertices",
           "components", "Edges", "edge_pairs", "edge_sides", "face_of_corner", "fan_labels", "next_corner",
           "several_fans", "several_fans_by_sides", "split_fans", "triangle_starts",
           "GroupShading", "group_shading", "mixed_corners", "sharp_edges_by_sides", "sharp_from_groups",
           "corner_angles", "differing_corners", "sharp_edge_normals", "one_group_normals", "smooth_normals",
           "with_normals",
           "degenerate_faces", "drop_degenerate_faces", "mismatched_layers", "make_safe", "ranges"]


def all_triangles(faces: np.ndarray, n_corners: int) -> bool:
    """Whether every face is a triangle, in corner order (then triangle k is corners 3k..3k+2)."""
    return len(faces) > 0 and triangle_starts(faces, n_corners)


def triangulate(faces: np.ndarray, n_corners: int) -> tuple[np.ndarray, np.ndarray]:
    """((T, 3) int64 corner indices, (T,) int64 face of each triangle): each n-gon becomes a fan
    of n - 2 triangles around its first corner, faces in order; a face of fewer than three
    corners gives none."""
    starts = np.asarray(faces, np.int64)
    nf = len(starts)
    if all_triangles(starts, n_corners):
        return np.arange(n_corners, dtype=np.int64).reshape(-1, 3), np.arange(nf, dtype=np.int64)
    sizes = np.append(starts[1:], n_corners) - starts if nf else np.zeros(0, np.int64)
    per = np.clip(sizes - 2, 0, None)
    face = np.repeat(np.arange(nf, dtype=np.int64), per)
    k = np.arange(len(face), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
    s = starts[face]
    return np.stack([s, s + k + 1, s + k + 2], 1), face


def vertex_normals(positions: np.ndarray, tri_vertices: np.ndarray, face_n: np.ndarray | None = None) -> np.ndarray:
    """(V, 3) float32 area-weighted sums of the face normals at each vertex (not unit length:
    `unit` them; a vertex no face uses, or only faces of zero area, stays zero). NaN positions
    make NaN sums only at the vertices they touch. face_n: face_normals(positions, tri_vertices),
    when the caller has them."""
    tris = np.asarray(tri_vertices, np.int64).reshape(-1, 3)
    if face_n is None:
        face_n = face_normals(positions, tris) if len(tris) else np.zeros((0, 3), np.float32)
    v = tris.reshape(-1)
    rows = np.repeat(face_n, 3, axis=0)
    return np.stack([np.bincount(v, rows[:, c], minlength=len(positions)) for c in range(3)], 1).astype(np.float32)


def split_corners(record: np.ndarray, vertex: np.ndarray, within_vertex: bool = True
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The corner -> vertex split: corners of one vertex with the same bytes in `record` (one row per
    corner, any dtype; or a list of such arrays side by side, which need not be copied into one)
    become one vertex. -> (first corner of each vertex, vertex index per corner).
    within_vertex=False: corners of different vertices with the same bytes are one too (UNIGINE's
    triangle vertices, which its coordinate vertices do not bind).

    Vertices are ordered by the `vertex` (the mesh vertex, or the file's coordinate vertex) of
    their first corner, then by first corner: a mesh whose corners agree within each vertex keeps
    its order. Equal means equal bytes (-0.0 and 0.0 differ; NaNs with equal bits are equal).
    Linear time: rows are hashed, never trusted without a byte comparison."""
    return unique_in_order(record, vertex, within_vertex)


def degenerate_faces(mesh: Mesh) -> np.ndarray:
    """(F,) bool: faces Blender cannot hold (fewer than 3 corners, a corner range outside
    the corner list, a vertex index out of range, a vertex used twice in the face)."""
    nc, nv, nf = len(mesh.corners), len(mesh.positions), len(mesh.faces)
    if nf == 0:
        return np.zeros(0, bool)
    if triangle_starts(mesh.faces, nc):
        # triangles only (the usual case): three comparisons per face instead of a sort, in the
        # corners' own type, and the range check per face only when some index is out of range
        t = np.asarray(mesh.corners).reshape(-1, 3)
        bad = (t[:, 0] == t[:, 1]) | (t[:, 1] == t[:, 2]) | (t[:, 2] == t[:, 0])
        if (t.dtype.kind == "i" and t.min() < 0) or t.max() >= nv:
            bad |= ((t < 0) | (t >= nv)).any(axis=1)
        return bad
    starts = np.asarray(mesh.faces, np.int64)
    corners = np.asarray(mesh.corners, np.int64)
    ends = np.append(starts[1:], nc)
    sizes = ends - starts
    bad = (sizes < 3) | (starts < 0) | (ends > nc)
    ok = ~bad
    if not ok.any():
        return bad
    face = np.repeat(np.flatnonzero(ok), sizes[ok])
    at = ranges(starts[ok], sizes[ok])
    vert = corners[at]
    bad[face[(vert < 0) | (vert >= nv)]] = True
    # a vertex repeated within one face: equal (face, vertex) pairs side by side once sorted
    key = np.sort(face * max(nv, 1) + np.clip(vert, 0, max(nv - 1, 0)))
    dup = key[1:] == key[:-1]
    bad[key[1:][dup] // max(nv, 1)] = True
    return bad


def ranges(starts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The concatenation of range(s, s + n) for each (s, n), without a Python loop."""
    total = int(sizes.sum())
    if total == 0:
        return np.zeros(0, np.int64)
    offsets = np.cumsum(sizes) - sizes
    return np.repeat(starts - offsets, sizes) + np.arange(total)


def drop_degenerate_faces(mesh: Mesh) -> int:
    """Remove the faces `degenerate_faces` marks, with their corner data; returns how many.
    Vertices (and shape keys, skins) stay as they are."""
    bad = degenerate_faces(mesh)
    if not bad.any():
        return 0
    keep = ~bad
    starts = np.asarray(mesh.faces, np.int64)
    sizes = np.append(starts[1:], len(mesh.corners)) - starts
    at = ranges(starts[keep], sizes[keep])
    mesh.corners = np.asarray(mesh.corners)[at].astype(np.uint32)
    mesh.faces = (np.cumsum(sizes[keep]) - sizes[keep]).astype(np.uint32)
    for layers in (mesh.uv_layers, mesh.colors, mesh.corner_attributes):
        for name in list(layers):
            layers[name] = np.asarray(layers[name])[at]
    if mesh.normals is not None:
        mesh.normals = np.asarray(mesh.normals)[at]
    if mesh.face_material is not None:
        mesh.face_material = np.asarray(mesh.face_material)[keep]
    if mesh.smoothing is not None:
        mesh.smoothing = np.asarray(mesh.smoothing)[keep]
    for name in list(mesh.face_attributes):
        mesh.face_attributes[name] = np.asarray(mesh.face_attributes[name])[keep]
    return int(bad.sum())


def mismatched_layers(mesh: Mesh) -> list[str]:
    """Names of per-vertex, per-corner and per-face arrays whose length is not the mesh's
    (a Scene converter bug; Blender would refuse them)."""
    nv, nc, nf = len(mesh.positions), len(mesh.corners), len(mesh.faces)
    out = []
    for what, layers, n in (("UV layer", mesh.uv_layers, nc), ("colour layer", mesh.colors, nc),
                            ("corner attribute", mesh.corner_attributes, nc),
                            ("face attribute", mesh.face_attributes, nf),
                            ("vertex attribute", mesh.vertex_attributes, nv)):
        out += [f"{what} {name!r}" for name, a in layers.items() if len(a) != n]
    if mesh.normals is not None and len(mesh.normals) != nc:
        out.append("custom normals")
    if mesh.face_material is not None and len(mesh.face_material) != nf:
        out.append("face materials")
    if mesh.smoothing is not None and len(mesh.smoothing) != nf:
        out.append("smoothing groups")
    out += [f"shape key {k.name!r}" for k in mesh.shape_keys if len(k.positions) != nv]
    if mesh.skin is not None and len(mesh.skin.joints) != nv:
        out.append("skin weights")
    return out


def make_safe(mesh: Mesh) -> list[str]:
    """Drop degenerate faces and arrays of the wrong length; one warning line per kind."""
    out = []
    dropped = drop_degenerate_faces(mesh)
    if dropped:
        out.append(f"mesh {mesh.name!r}: {dropped} degenerate face{'s' if dropped != 1 else ''} "
                   "(a repeated or missing vertex, or fewer than 3 corners) dropped")
    wrong = mismatched_layers(mesh)
    if wrong:
        _drop_mismatched(mesh)
        out.append(f"mesh {mesh.name!r}: {', '.join(wrong)} did not match the mesh and "
                   f"{'were' if len(wrong) > 1 else 'was'} left out")
    return out


def _drop_mismatched(mesh: Mesh) -> None:
    nv, nc, nf = len(mesh.positions), len(mesh.corners), len(mesh.faces)
    for layers, n in ((mesh.uv_layers, nc), (mesh.colors, nc), (mesh.corner_attributes, nc),
                      (mesh.face_attributes, nf), (mesh.vertex_attributes, nv)):
        for name in [k for k, a in layers.items() if len(a) != n]:
            del layers[name]
    if mesh.normals is not None and len(mesh.normals) != nc:
        mesh.normals = None
    if mesh.face_material is not None and len(mesh.face_material) != nf:
        mesh.face_material = None
    if mesh.smoothing is not None and len(mesh.smoothing) != nf:
        mesh.smoothing = None
    mesh.shape_keys = [k for k in mesh.shape_keys if len(k.positions) == nv]
    if mesh.skin is not None and len(mesh.skin.joints) != nv:
        mesh.skin = None
