"""A neutral Mesh -> 0x4100 triangle mesh chunks, in bulk.

Vertices are split only where UVs differ (3DS has one UV per vertex);
smoothing comes from the kept group attribute, else from the normals.
Parts over 65535 vertices or faces are cut off into further objects.
A mirroring placement (det < 0) reverses the written face order, so that the
stored world-space faces point outward, as lib3ds and assimp (which take the
mirror out of the mesh with an X flip) and our reader expect.
"""
from __future__ import annotations

import numpy as np

from ... import axes, meshops
from ...scene import Mesh
from . import ids
from .groups import corners_agree, smoothing_groups
from .model import DEFAULT_FACE_FLAGS, Chunk, MaterialGroup, VertexFlags

LIMIT = 65535


def _face_values(mesh: Mesh, name: str, tri_face: np.ndarray, default: int) -> np.ndarray | None:
    a = mesh.face_attributes.get(name)
    if a is None or len(a) != len(mesh.faces):
        n = len(mesh.faces) if isinstance(tri_face, slice) else len(tri_face)
        return None if default is None else np.full(n, default, np.int64)
    return np.asarray(a)[tri_face]


def split_at_uv_seams(vert: np.ndarray, uv: np.ndarray | None, nv: int):
    """One 3DS vertex per distinct (vertex, UV) pair (meshops.split_corners: vertices in order, a
    vertex's UVs in the order of their first corner; unused vertices dropped): (source vertex per
    new vertex, new index per corner, UVs)."""
    if uv is None:
        used = np.zeros(nv, bool)
        used[vert] = True
        return np.flatnonzero(used), (np.cumsum(used) - 1)[vert], None
    uv = np.ascontiguousarray(uv, np.float32) + np.float32(0.0)      # -0.0 -> 0.0
    first, inv = meshops.split_corners(uv, vert)
    return vert[first], inv, uv[first]


def _parts(tris: np.ndarray) -> list[np.ndarray]:
    """Face index ranges with at most LIMIT faces and LIMIT distinct vertices each."""
    todo, out = [np.arange(len(tris))], []
    while todo:
        f = todo.pop(0)
        if len(f) <= LIMIT and len(np.unique(tris[f])) <= LIMIT:
            out.append(f)
        else:
            half = len(f) // 2
            todo[:0] = [f[:half], f[half:]]
    return out


def _sharp_agrees(mesh: Mesh, groups: np.ndarray, vert: np.ndarray, corner_of, face_of_tri) -> bool | None:
    """Whether the mesh's sharp edges and flat faces are those the groups give (None: it has none).
    Only edges between two smooth faces count: Blender shades an edge beside a flat face, or one of
    three faces, as sharp whatever it is marked."""
    if mesh.sharp_edges is None or len(mesh.sharp_edges) != len(mesh.corners):
        return None
    given = np.asarray(mesh.sharp_edges, bool)[corner_of]
    if len(groups) and groups[0] and (groups == groups[0]).all() and not given.any():
        # one group on every face (a smooth model, the usual case) gives no sharp edge nor flat face:
        # nothing to compare edge by edge
        return mesh.sharp_faces is None or not np.asarray(mesh.sharp_faces, bool)[face_of_tri].any()
    faces = np.arange(0, len(vert), 3)
    edges = meshops.edge_pairs(vert, meshops.next_corner(faces, len(vert)))
    sharp, flat = meshops.sharp_from_groups(groups, faces, len(vert), edges)
    if mesh.sharp_faces is not None and not np.array_equal(np.asarray(mesh.sharp_faces, bool)[face_of_tri], flat):
        return False
    smooth = edges.manifold & ~flat[edges.a // 3] & ~flat[edges.b // 3]
    counted = np.concatenate([edges.a[smooth], edges.b[smooth]])
    return bool(np.array_equal(given[counted], sharp[counted]))


def _groups(mesh: Mesh, face_of_tri, local, tris, normals, vert=None, corner_of=slice(None)) -> np.ndarray:
    """The groups the file had, unless the mesh was edited since (its sharp edges, or its custom
    normals, are no longer the groups'); else groups built from the normals."""
    kept = _face_values(mesh, "smoothing_groups", face_of_tri, None)
    if kept is not None:
        groups = kept.astype(np.int64).astype(np.uint32)
        agrees = None if vert is None else _sharp_agrees(mesh, groups, vert, corner_of, face_of_tri)
        if agrees or (agrees is None and normals is None):
            return groups
        if agrees is None:
            if not groups.any():
                # all flat: it still holds when each face's three corner normals agree
                if corners_agree(normals.reshape(-1, 3, 3)):
                    return groups
            elif (np.einsum("ij,ij->i", meshops.smooth_normals(local, tris, groups), normals) >= 0.999).all():
                return groups
    return smoothing_groups(local, tris, normals)


def reversed_face_flags(flags: np.ndarray) -> np.ndarray:
    """Face flags for (a, c, b) instead of (a, b, c): edge CA (bit 0) and AB (bit 2) trade places."""
    f = flags.astype(np.uint16)
    return (f & np.uint16(~5 & 0xFFFF)) | ((f & 1) << 2) | ((f >> 2) & 1)


def _face_list(mesh: Mesh, name: str, face_of_tri, default: int, dtype) -> np.ndarray:
    a = _face_values(mesh, name, face_of_tri, default)
    return a.astype(dtype, copy=False)


def mesh_chunks(mesh: Mesh, world: np.ndarray, material_names: list[str]) -> list[Chunk]:
    """One N_TRI_OBJECT chunk per part. `world` places the local mesh (written into 0x4160)."""
    tri_corners, tri_face = meshops.triangulate(mesh.faces, len(mesh.corners))
    nt = len(tri_corners)
    if meshops.all_triangles(mesh.faces, len(mesh.corners)):
        corner_of = slice(None)                  # all triangles already: no copies through an index
        face_of_tri = slice(None)
    else:
        corner_of, face_of_tri = tri_corners.reshape(-1), tri_face
    vert = mesh.corners[corner_of].astype(np.int64)
    uv = next(iter(mesh.uv_layers.values()), None)
    src_vert, inv, uvs = split_at_uv_seams(vert, None if uv is None else uv[corner_of], len(mesh.positions))
    tris = inv.reshape(nt, 3)
    local = mesh.positions[src_vert]
    normals = None if mesh.normals is None else np.asarray(mesh.normals, np.float32)[corner_of]
    groups = _groups(mesh, face_of_tri, local, tris, normals, vert, corner_of)
    flags = _face_list(mesh, "face_flags", face_of_tri, DEFAULT_FACE_FLAGS, np.uint16)
    slot = (np.asarray(mesh.face_material)[face_of_tri] if mesh.face_material is not None
            and len(mesh.face_material) == len(mesh.faces) else np.zeros(nt, np.int64))
    slot = slot.astype(np.int64, copy=False)
    vflags = mesh.vertex_attributes.get("vertex_flags")
    world = np.asarray(world, np.float64)
    world_pts = local if np.array_equal(world, np.eye(4)) else axes.apply_points(world, local)
    m4160 = world.astype(np.float32)[:3, :4].T.ravel()
    mirrored = axes.det3(world[:3, :3]) < 0
    if mirrored:
        flags = reversed_face_flags(flags)
    single = nt <= LIMIT and len(src_vert) <= LIMIT
    out = []
    for part in ([slice(None)] if single else _parts(tris)):
        if single:
            used, local_idx = slice(None), tris
        else:
            used, local_idx = np.unique(tris[part], return_inverse=True)
        tri = Chunk(ids.N_TRI_OBJECT)
        tri.add(ids.POINT_ARRAY, world_pts[used])
        if vflags is not None and len(vflags) == len(mesh.positions):
            tri.add(ids.POINT_FLAG_ARRAY, VertexFlags(np.asarray(vflags)[src_vert[used]].astype(np.uint16),
                                                      not mesh.extras.get("3ds_vertex_flags_uncounted")))
        if uvs is not None:
            tri.add(ids.TEX_VERTS, uvs[used])
        tri.add(ids.MESH_MATRIX, m4160)
        if "3ds_color" in mesh.extras:
            tri.add(ids.MESH_COLOR, int(mesh.extras["3ds_color"]))
        faces = np.empty((len(flags[part]), 4), np.uint16)
        faces[:, :3] = local_idx.reshape(-1, 3)[:, [0, 2, 1]] if mirrored else local_idx.reshape(-1, 3)
        faces[:, 3] = flags[part]
        fc = tri.add(ids.FACE_ARRAY, faces)
        part_slot = slot[part]
        present = np.flatnonzero(np.bincount(part_slot.clip(0), minlength=1)) if len(part_slot) else []
        for s in present:
            s = int(s)
            name = material_names[s] if 0 <= s < len(material_names) else ""
            if name:
                members = np.arange(len(part_slot)) if len(present) == 1 else np.flatnonzero(part_slot == s)
                fc.add(ids.MSH_MAT_GROUP, MaterialGroup(name, members.astype(np.uint16)))
        fc.add(ids.SMOOTH_GROUP, groups[part])
        out.append(tri)
    return out
