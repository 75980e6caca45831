"""Smoothing-group masks (3DS) -> Blender's native smoothing: sharp edges, flat faces, and the
points split where faces meet without an edge.

The work is split in two: the codec welds and keeps the groups (Mesh.smoothing); the bridge,
once Blender has found the edges, runs group_shading: it marks the sharp edges and splits the
points where faces meet without an edge (Cycles smooths across such a point though Blender's
corner normals do not).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .edges import (Edges, Sides, edge_pairs, edge_sides, face_of_corner, fan_labels, next_corner,
                    several_fans, several_fans_by_sides, split_fans, triangle_starts)


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
    triangles = triangle_starts(faces, len(corners))
    nxt = next_corner(faces, len(corners), triangles)
    sides = edge_sides(corners, nxt, edge_of, n_edges, triangles)
    edges = None
    if sides is None:                                 # edges of 3+ faces or disagreeing windings
        edges = edge_pairs(corners, nxt, edge_of)
        several = several_fans(corners, edges, n_vertices)
    else:
        several = several_fans_by_sides(corners, sides, n_vertices)
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
