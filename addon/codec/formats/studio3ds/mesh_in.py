"""One 0x4100 triangle mesh -> a neutral Mesh, in bulk.

The caller gives the matrix that takes the stored (world space) points to
the mesh's local space (never a mirror: scene.py takes a mirrored 0x4160 out
with an X flip, as lib3ds does), so the face order is kept as stored.
MeshQueue builds the big meshes of a file two at a time.
"""
from __future__ import annotations

from typing import get_args

import numpy as np

from ... import axes, meshops
from ...errors import Warnings
from ...option_rules import Normals
from ...parallel import map_two
from ...scene import Mesh
from ...meshops import smooth_normals
from . import ids
from .model import DEFAULT_FACE_FLAGS, Chunk

NORMAL_MODES = get_args(Normals)


class MeshQueue:
    """build_mesh for the meshes of a file: a mesh of many faces waits, and at `finish` the waiting
    ones are built together, each with warnings of its own that join the file's in order; smaller
    meshes are built at once, as they come."""

    BIG = 20_000            # faces

    def __init__(self, material_slots: dict[str, int], warnings: Warnings, normals: str, stats: dict):
        self.slots, self.w, self.normals, self.stats = material_slots, warnings, normals, stats
        self.waiting: list[tuple[list, int, tuple]] = []

    def add(self, meshes: list, name: str, tri: Chunk, to_local: np.ndarray, path: str) -> None:
        """Append the mesh (or its place, filled by `finish`) to `meshes`."""
        fc = tri.find(ids.FACE_ARRAY)
        if fc is None or len(fc.data) < self.BIG:
            meshes.append(build_mesh(name, tri, to_local, self.slots, self.w, path, self.normals, self.stats))
            return
        self.waiting.append((meshes, len(meshes), (name, tri, to_local, path)))
        meshes.append(None)

    def finish(self) -> None:
        """Three passes, each two meshes at a time: read the arrays, weld (all points in two big
        batches: meshops.weld_points_many), then the rest of the shading."""
        if not self.waiting:
            return
        read = map_two(lambda args: _read_apart(args, self.slots), [args for _, _, args in self.waiting])
        points = meshops.weld_points_many([mesh.positions for mesh, _, _ in read]) \
            if self.normals != "KEEP" else [None] * len(read)

        def shade(k: int):
            stats = {}
            mesh, groups, _ = read[k]
            _shade(mesh, groups, self.normals, stats, points[k])
            return stats
        done = map_two(shade, range(len(read)))
        for (meshes, k, _), (mesh, _, w), stats in zip(self.waiting, read, done):
            meshes[k] = mesh
            self.w.extend(w)
            for key, n in stats.items():
                self.stats[key] = self.stats.get(key, 0) + n
        self.waiting = []


def _read_apart(args: tuple, material_slots: dict[str, int]) -> tuple[Mesh, np.ndarray, Warnings]:
    """read_mesh with warnings of its own (MeshQueue: they join the file's in order)."""
    w = Warnings()
    name, tri, to_local, path = args
    return (*read_mesh(name, tri, to_local, material_slots, w, path), w)


def _fit(arr: np.ndarray, n: int, what: str, warnings: Warnings, offset: int, path: str) -> np.ndarray:
    """Pad with zeros or cut so that there is one entry per vertex/face."""
    if len(arr) == n:
        return arr
    warnings.warn(f"{what}: {len(arr)} entries for {n} items; {'padded with zeros' if len(arr) < n else 'cut'}",
                  offset, path)
    out = np.zeros((n,) + arr.shape[1:], arr.dtype)
    out[:min(n, len(arr))] = arr[:n]
    return out


def build_mesh(name: str, tri: Chunk, to_local: np.ndarray, material_slots: dict[str, int],
               warnings: Warnings, path: str, normals: str = "SHARP_EDGES", stats: dict | None = None) -> Mesh:
    """material_slots: material name -> Scene.materials index (unknown names get -1).
    normals: one of NORMAL_MODES (options.py); stats collects the welding figures."""
    mesh, groups = read_mesh(name, tri, to_local, material_slots, warnings, path)
    _shade(mesh, groups, normals, stats if stats is not None else {})
    return mesh


def read_mesh(name: str, tri: Chunk, to_local: np.ndarray, material_slots: dict[str, int],
              warnings: Warnings, path: str) -> tuple[Mesh, np.ndarray]:
    """(the mesh as stored, a vertex per stored vertex, with no normals yet; its smoothing groups)."""
    verts = tri.value(ids.POINT_ARRAY)
    verts = np.zeros((0, 3), np.float32) if verts is None else verts
    nv = len(verts)
    fc = tri.find(ids.FACE_ARRAY)
    faces = fc.data if fc is not None else np.zeros((0, 4), np.uint16)
    nf = len(faces)
    tris = np.empty((nf, 3), np.intp)            # intp: gathers through it need no conversion
    for j in range(3):                           # a column at a time: one long loop each (a row at a time,
        tris[:, j] = faces[:, j]                 # numpy's casting loop would run once per face)
    if not nf or int(tris.max()) < nv:
        keep = slice(None)                       # the usual case: no copies through a mask
    else:
        keep = (tris < nv).all(axis=1)
        warnings.warn(f"{int((~keep).sum())} faces index vertices past the {nv} stored; dropped",
                      fc.offset, path + "/FACES")
    groups = np.zeros(nf, np.uint32)
    slot_of_face = np.full(nf, -1, np.int32)
    slots: list[int] = []
    if fc is not None:
        sg = fc.find(ids.SMOOTH_GROUP)
        if sg is not None:
            groups = _fit(sg.data, nf, "smoothing groups", warnings, sg.offset, path + "/FACES/SMOOTHING")
        for g in fc.find_all(ids.MSH_MAT_GROUP):
            idx = g.data.faces.astype(np.intp)
            bad = idx >= nf if len(idx) and int(idx.max()) >= nf else None
            if bad is not None:
                warnings.warn(f"material {g.data.name!r} lists {int(bad.sum())} faces past the {nf} stored; ignored",
                              g.offset, path + "/FACES/MATERIAL_GROUP")
                idx = idx[~bad]
            if g.data.name not in material_slots:
                warnings.warn(f"material {g.data.name!r} is not defined in the file", g.offset, path)
            slot_of_face[idx] = len(slots)
            slots.append(material_slots.get(g.data.name, -1))
    unset = slot_of_face < 0
    if slots and unset.any():
        slot_of_face[unset] = len(slots)
        slots.append(-1)
    else:
        slot_of_face[unset] = 0

    tris = tris[keep]
    with np.errstate(over="ignore", invalid="ignore"):
        if np.array_equal(to_local, np.eye(4)):
            positions = np.array(verts, np.float32)
        else:
            positions = axes.apply_points(to_local, verts)
    if not np.isfinite(positions).all():
        warnings.warn("non-finite or overflowing vertex coordinates set to 0", tri.offset, path + "/VERTICES")
        positions = np.nan_to_num(positions, nan=0.0, posinf=0.0, neginf=0.0)
    corners = tris.ravel()
    mesh = Mesh(name=name, positions=positions, corners=corners,
                faces=np.arange(0, len(corners), 3, dtype=np.uint32))
    kept_groups = np.array(groups[keep])         # a copy: a view of the file's bytes would keep all of them alive
    mesh.face_attributes["smoothing_groups"] = kept_groups.view(np.int32)
    flags = faces[keep, 3]
    if (flags != DEFAULT_FACE_FLAGS).any():      # all default: export writes them so without an attribute
        mesh.face_attributes["face_flags"] = flags.astype(np.int32)
    mesh.face_material = slot_of_face[keep]
    mesh.materials = slots or []
    uv = tri.find(ids.TEX_VERTS)
    if uv is not None:
        uvs = _fit(uv.data, nv, "UV coordinates", warnings, uv.offset, path + "/UVS")
        mesh.uv_layers["UVMap"] = np.take(np.asarray(uvs, np.float32), corners, axis=0)
    vf = tri.find(ids.POINT_FLAG_ARRAY)
    if vf is not None:
        mesh.vertex_attributes["vertex_flags"] = _fit(vf.data.flags, nv, "vertex flags", warnings,
                                                      vf.offset, path + "/VERTEX_FLAGS").astype(np.int32)
        if not vf.data.counted:
            mesh.extras["3ds_vertex_flags_uncounted"] = 1
    color = tri.value(ids.MESH_COLOR)
    if color is not None:
        mesh.extras["3ds_color"] = int(color)
    return mesh, kept_groups


def _shade(mesh: Mesh, groups: np.ndarray, normals: str, stats: dict, points=None) -> None:
    """The groups as normals (KEEP), or welded (points: meshops.weld_points of the positions, when found)."""
    if normals == "KEEP":
        mesh.normals = smooth_normals(mesh.positions, mesh.corners.reshape(-1, 3), groups)
        mesh.corners = mesh.corners.astype(np.uint32)
    else:
        _weld(mesh, groups, normals == "EXACT", stats, points)


def _weld(mesh: Mesh, groups: np.ndarray, exact: bool, stats: dict, points=None) -> None:
    """One vertex per point (UVs stay per corner), with the groups kept for Blender's own
    smoothing (Mesh.smoothing), or, exact, as custom normals. stats gains 'corners' and 'differ':
    the corners whose sharp-edge normal is not the groups' one."""
    corners, source = meshops.weld(mesh.positions, mesh.corners, mesh.faces, points)
    meshops.split_vertices(mesh, corners, source)
    mesh.smoothing = groups
    if exact:
        mesh.normals = smooth_normals(mesh.positions, mesh.corners.reshape(-1, 3).astype(np.int64), groups)
        return
    stats["corners"] = stats.get("corners", 0) + len(mesh.corners)
    # only at vertices with more than one mask can the two differ; every face there is compared
    odd = meshops.mixed_corners(mesh.corners, mesh.faces, groups)
    sel = odd.reshape(-1, 3).any(1) if odd.any() else None
    if sel is not None:
        sub = mesh.corners.reshape(-1, 3).astype(np.int64)[sel]
        faces = np.arange(0, sub.size, 3)
        edges = meshops.edge_pairs(sub.ravel(), meshops.next_corner(faces, sub.size))
        sharp, flat = meshops.sharp_from_groups(groups[sel], faces, sub.size, edges)
        native = meshops.sharp_edge_normals(mesh.positions, sub, sharp, flat, edges)
        exact_n = smooth_normals(mesh.positions, sub, groups[sel])
        at = odd.reshape(-1, 3)[sel].ravel()
        stats["differ"] = stats.get("differ", 0) + meshops.differing_corners(native[at], exact_n[at])
