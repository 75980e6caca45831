"""Blender's MikkTSpace tangents, the same bits every run.

Above 10,000 faces Blender's MikkTSpace works in threads and adds each group's tangent up with
atomic float adds, in whatever order the threads come: the last bits of the tangents (and so,
now and then, a quantised UNIGINE frame) change from run to run. So a bigger mesh goes to it in
pieces of at most that many faces, where it works in one thread, in face order: each piece is a
run of faces (the core, taken in order of their first point, so that neighbours go together)
with every face that shares a point with them, in the mesh's own order, and the core's corners
are kept. MikkTSpace joins only the faces around one point, so a core corner sees what it sees in
the whole mesh, summed in the same order: the same tangent as a one-thread run on the whole mesh
(a face with no usable UV area can take its orientation from a face outside the piece: there it
may differ, still the same every run).
"""
from __future__ import annotations

import bpy
import numpy as np

from ..codec.meshops import face_of_corner, ranges, weld_ids
from ..codec.scene import Mesh
from .mesh_build import _new_mesh

SEQUENTIAL_FACES = 10_000      # MikkTSpace's own limit: above it, threads and atomic sums


def mikk_tangents(me, uv_name: str, positions: np.ndarray, corner_vert: np.ndarray, starts: np.ndarray,
                  sizes: np.ndarray, normals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tangent (C, 3), bitangent sign (C,)) float32 of the mesh `me` (faces of 3 or 4 corners),
    from its UV map `uv_name`; the other arrays are me's own (normals: its corner normals)."""
    if len(starts) <= SEQUENTIAL_FACES:
        return _calc(me, uv_name, len(corner_vert))
    uv = np.empty(len(corner_vert) * 2, np.float32)
    me.uv_layers[uv_name].uv.foreach_get("vector", uv)
    uv = uv.reshape(-1, 2)
    point = weld_ids(positions)[corner_vert]           # MikkTSpace joins corners by value, not index
    by_point = np.argsort(point, kind="stable")
    first = np.searchsorted(point[by_point], np.arange(int(point.max()) + 2))
    if np.diff(first).max() > SEQUENTIAL_FACES:
        # a point more faces meet at than one thread takes (a huge fan, a collapsed mesh): no piece can hold
        # it, and shrinking cores would send those faces once per face; Blender's threaded call instead
        return _calc(me, uv_name, len(corner_vert))
    face_of = face_of_corner(starts, len(corner_vert))
    order = np.argsort(point[starts], kind="stable")
    tangent, sign = np.empty((len(corner_vert), 3), np.float32), np.empty(len(corner_vert), np.float32)
    at_point, at_face, in_core = np.zeros(len(first) - 1, bool), np.zeros(len(starts), bool), np.zeros(len(starts), bool)
    done, size = 0, SEQUENTIAL_FACES
    while done < len(order):
        core = order[done:done + size]
        at_point[point[ranges(starts[core], sizes[core])]] = True
        pts = np.flatnonzero(at_point)
        at_point[pts] = False
        at_face[face_of[by_point[ranges(first[pts], first[pts + 1] - first[pts])]]] = True
        piece = np.flatnonzero(at_face)                 # in the mesh's order
        at_face[piece] = False
        fit = max(1, min(SEQUENTIAL_FACES, int(0.9 * size * SEQUENTIAL_FACES / len(piece))))   # a core to fill a piece
        if len(piece) > SEQUENTIAL_FACES and size > 1:
            size = min(fit, size - 1)                   # too many faces around: a smaller core
            continue
        loops = ranges(starts[piece], sizes[piece])
        t, s = _piece(uv_name, positions, corner_vert[loops], sizes[piece], uv[loops], normals[loops])
        in_core[core] = True
        keep = np.repeat(in_core[piece], sizes[piece])
        in_core[core] = False
        tangent[loops[keep]], sign[loops[keep]] = t[keep], s[keep]
        done, size = done + len(core), fit
    return tangent, sign


def _calc(me, uv_name: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    me.calc_tangents(uvmap=uv_name)
    try:
        tangent, sign = np.empty(count * 3, np.float32), np.empty(count, np.float32)
        me.loops.foreach_get("tangent", tangent)
        me.loops.foreach_get("bitangent_sign", sign)
    finally:
        me.free_tangents()
    return tangent.reshape(-1, 3), sign


# Blender 4.5 keeps custom normals as given ("free" normals, a float corner attribute); before,
# they are stored against each corner's normal space and come back a little moved (the same each run)
_FREE_NORMALS = bpy.app.version >= (4, 5, 0)


def _piece(uv_name: str, positions, corner_vert, sizes, uv, normals) -> tuple[np.ndarray, np.ndarray]:
    """_calc on a throw-away mesh of these faces, with these corner normals."""
    verts, corners = np.unique(corner_vert, return_inverse=True)
    m = Mesh(name="lgf-tangents", positions=positions[verts], corners=corners.astype(np.uint32).ravel(),
             faces=(np.cumsum(sizes) - sizes).astype(np.uint32))
    m.uv_layers[uv_name] = uv
    if _FREE_NORMALS:
        m.corner_attributes["custom_normal"] = normals
    me = _new_mesh(m, [])
    try:
        if not _FREE_NORMALS:
            me.normals_split_custom_set(np.ascontiguousarray(normals, np.float32))
        return _calc(me, uv_name, len(corners))
    finally:
        bpy.data.meshes.remove(me)
