"""One Scene mesh -> one glTF mesh: shared vertex accessors, one primitive per material, morph targets.

glTF keeps attributes per vertex, Blender per corner: a vertex is split where its corners differ in
normal, UVs or colours (meshops.split_corners). Faces are fanned into triangles. Normals are the
mesh's own, else what its sharp edges and flat faces give, else smooth. Shape keys become morph
targets (deltas from the basis, sparse where most vertices stay); a skin gives JOINTS_0/WEIGHTS_0
with at most 4 influences, the rest folded into the 4 largest.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import meshops
from ...errors import Warnings
from ...scene import Mesh
from .accessors_out import ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER, Buffer
from .conventions import points_from_blender, uv_from_blender
from .materials_out import Materials
from .morph_out import targets as morph_targets


@dataclass
class Written:
    index: int                  # glTF mesh
    source: np.ndarray          # (V',) the Scene vertex of each glTF vertex
    extra_joint: bool = False   # some vertex has no weight: it is bound to the skin's last joint (the armature)
    step: np.ndarray | None = None   # positions are whole multiples of this (3,): the node scales by it


def _smoothing(mesh: Mesh, in_order: bool) -> np.ndarray | None:
    """The mesh's group masks when they give its normals: it has no custom normals and is all triangles in order
    (a .3ds read for Blender's own smoothing; formats without own_smoothing have them from codec.with_normals)."""
    if mesh.normals is not None or mesh.smoothing is None or len(mesh.smoothing) != len(mesh.faces) or not in_order:
        return None
    return mesh.smoothing


def _vertex_normals(mesh: Mesh, tv: np.ndarray, groups: np.ndarray | None) -> np.ndarray | None:
    """(3, V) float32 normal of each vertex (x, y and z rows: gathered faster) when every corner of a vertex
    has its vertex's normal (no custom normals, and smoothing `groups` with one mask, or no groups, sharp
    edges or flat faces), else None: then the corner split need not look at the normals."""
    pos = np.asarray(mesh.positions, np.float32)
    if groups is not None:
        return meshops.one_group_normals(pos, tv, groups, welded=True)
    if (mesh.normals is not None and len(mesh.normals) == len(mesh.corners)) \
            or mesh.sharp_edges is not None or mesh.sharp_faces is not None:
        return None
    return np.ascontiguousarray(meshops.unit(meshops.vertex_normals(pos, tv)).T)


def _corner_normals(mesh: Mesh, tris_c: np.ndarray, tv: np.ndarray, groups: np.ndarray | None,
                    order: np.ndarray | None) -> np.ndarray:
    """(T*3, 3) float32 normal of each triangle corner, when _vertex_normals has none."""
    pos = np.asarray(mesh.positions, np.float32)
    nc = len(mesh.corners)
    if groups is not None:
        return meshops.smooth_normals(pos, tv, groups, welded=True)
    if mesh.normals is not None and len(mesh.normals) == nc:
        return _corner_rows(mesh.normals, order)
    nxt = meshops.next_corner(np.asarray(mesh.faces, np.int64), nc)
    flat = np.zeros(len(mesh.faces), bool) if mesh.sharp_faces is None else np.asarray(mesh.sharp_faces, bool)
    sharp_c = np.zeros(nc, bool) if mesh.sharp_edges is None else np.asarray(mesh.sharp_edges, bool)
    # a triangle's side is an edge of the face only where its next corner is the face's next corner
    side = np.roll(tris_c, -1, axis=1)
    sharp = (sharp_c[tris_c] & (nxt[tris_c] == side)).reshape(-1)
    face = meshops.face_of_corner(np.asarray(mesh.faces, np.int64), nc)[tris_c[:, 0]]
    n_t = len(tv)
    edges = meshops.edge_pairs(tv.reshape(-1), meshops.next_corner(np.arange(0, 3 * n_t, 3), 3 * n_t))
    return meshops.sharp_edge_normals(pos, tv, sharp, flat[face], edges)


def _unit_rows(n: np.ndarray) -> np.ndarray:
    """Normals as glTF wants them: unit length (a degenerate one points up)."""
    n = np.asarray(n, np.float32)
    length2 = n[:, 0] * n[:, 0] + n[:, 1] * n[:, 1] + n[:, 2] * n[:, 2]
    if (np.abs(length2 - 1.0) < 1e-5).all():       # unit already (the usual case): no copy
        return n
    n = np.nan_to_num(n)
    length = np.sqrt(np.einsum("ij,ij->i", n, n))
    bad = length < 1e-6
    n = n / np.where(bad, 1.0, length)[:, None]
    n[bad] = (0.0, 0.0, 1.0)
    return n


def _corner_rows(a, order: np.ndarray | None) -> np.ndarray:
    """Per-corner rows of each triangle corner (`order`; None: the faces are triangles in order), float32."""
    a = np.asarray(a, np.float32)
    return a if order is None else np.take(a, order, axis=0)


def _skin_rows(mesh: Mesh, n_joints: int, warnings: Warnings) -> tuple[np.ndarray, np.ndarray, bool]:
    """(V, 4) joints and float32 weights that sum to 1; vertices without weight go to joint n_joints."""
    joints = np.asarray(mesh.skin.joints, np.int64)
    weights = np.where(joints >= 0, np.asarray(mesh.skin.weights, np.float64), 0.0)
    weights = np.where(np.isfinite(weights) & (weights > 0) & (joints < n_joints), weights, 0.0)
    order = np.argsort(-weights, axis=1, kind="stable")[:, :4]
    rows = np.arange(len(joints))[:, None]
    if joints.shape[1] > 4:
        over = int(((weights > 0).sum(1) > 4).sum())
        if over:
            warnings.warn(f"mesh {mesh.name!r}: {over} vertices have more than 4 bone influences, which glTF "
                          "holds; the smallest are folded into the 4 largest")
    j, w = joints[rows, order], weights[rows, order]
    if w.shape[1] < 4:
        j = np.pad(j, ((0, 0), (0, 4 - w.shape[1])))
        w = np.pad(w, ((0, 0), (0, 4 - w.shape[1])))
    total = w.sum(1)
    free = total <= 0
    w = w / np.where(free, 1.0, total)[:, None]
    j = np.where(w > 0, j, 0)
    j[free, 0], w[free, 0] = n_joints, 1.0
    return j, w.astype(np.float32), bool(free.any())


@dataclass
class Split:
    """A mesh's triangles split into glTF vertices: the bulk work of a mesh that needs no buffer, so that
    several meshes can take it on two threads (parallel.map_two) before they are written in order."""
    mesh: Mesh                  # with values that are not finite at 0
    notes: list[str]            # warnings, given when the mesh is written
    source: np.ndarray          # (V',) the Scene vertex of each glTF vertex
    normals: np.ndarray         # (V', 3) glTF axes
    primitives: list            # (material slot, its triangles' glTF vertices (3T',) in the index type), by slot
    points: np.ndarray | None = None    # (V', 3) glTF positions, times the scale (None: the morph targets give them)
    uvs: list = field(default_factory=list)       # (V', 2) glTF UVs per layer
    colors: list = field(default_factory=list)    # (V', k) 0..1 per colour layer


def split(mesh: Mesh, scale: float = 1.0) -> Split:
    """The corner -> vertex split of `mesh`, with its vertices' positions (times `scale`), UVs and colours
    gathered (on the calling thread: several meshes split on two)."""
    notes = Warnings()
    nc = len(mesh.corners)
    in_order = meshops.all_triangles(mesh.faces, nc)         # then triangle k is corners 3k..3k+2
    tris_c, face = (None, None) if in_order else meshops.triangulate(mesh.faces, nc)
    if not in_order and not len(tris_c):
        notes.warn(f"mesh {mesh.name!r} has no faces, which a glTF mesh needs: its object is written empty")
        return Split(mesh, notes.items, np.zeros(0, np.int64), np.zeros((0, 3), np.float32), [])
    order = None if in_order else tris_c.reshape(-1)        # the corner of each triangle corner
    tv = np.asarray(mesh.corners, np.int64)
    tv = tv.reshape(-1, 3) if in_order else tv[tris_c]
    record = [_corner_rows(a, order) for a in mesh.uv_layers.values()] \
        + [_corner_rows(c, order) for c in mesh.colors.values()]
    groups = _smoothing(mesh, in_order)
    by_vertex = _vertex_normals(mesh, tv, groups)
    if by_vertex is None:
        # made unit before the split: corners whose normals become the same are one vertex
        tris_c = np.arange(nc).reshape(-1, 3) if in_order else tris_c
        record.insert(0, _unit_rows(_corner_normals(mesh, tris_c, tv, groups, order)))
    vertex = tv.reshape(-1)
    first, vertex_of = meshops.split_corners(record or np.zeros((len(vertex), 0), np.uint8), vertex)
    source = vertex[first]
    # each vertex's normal once; unit rows checked on those alone, as a corner of its vertex has its normal
    normals = np.take(record[0], first, axis=0) if by_vertex is None else _unit_rows(np.take(by_vertex, source, axis=1).T)
    rows = first if in_order else order[first]          # the Scene corner of each glTF vertex
    basis = mesh.shape_keys[0].positions if mesh.shape_keys else mesh.positions
    return Split(mesh, notes.items, source, points_from_blender(normals),
                 _primitives(mesh, face, vertex_of.reshape(-1, 3), len(first)),
                 _points(basis, source, scale) if len(mesh.shape_keys) <= 1 else None,
                 [uv_from_blender(np.take(np.asarray(uv, np.float32), rows, axis=0)) for uv in mesh.uv_layers.values()],
                 [np.clip(np.nan_to_num(np.take(np.asarray(c, np.float32), rows, axis=0)), 0.0, 1.0).reshape(len(rows), -1)[:, :4]
                  for c in mesh.colors.values()])


def _primitives(mesh: Mesh, face: np.ndarray | None, tri_vertices: np.ndarray, n_v: int) -> list:
    """Split.primitives: the triangles of each material slot in use, ascending (face: of each triangle; None:
    the faces are triangles in order)."""
    index_type = np.uint8 if n_v < 0xFF else np.uint16 if n_v < 0xFFFF else np.uint32
    tri = tri_vertices.astype(index_type)               # the small type first: less to sift per slot
    if mesh.face_material is None:
        return [(0, tri.reshape(-1))]
    slots = np.asarray(mesh.face_material)
    slots = slots if face is None else slots[face]
    lo, hi = int(slots.min()), int(slots.max())
    used = np.flatnonzero(np.bincount(slots - lo if lo else slots)) + lo if hi - lo < 1 << 16 else np.unique(slots)
    if len(used) == 1:
        return [(lo, tri.reshape(-1))]
    rows = tri.view(np.dtype((np.void, tri.strides[0]))).reshape(-1)      # a triangle as one item: 10x faster sifting
    return [(slot, rows[slots == slot].view(index_type)) for slot in used.tolist()]


def write_mesh(sp: Split, buf: Buffer, mats: Materials, json: dict, scale: float, warnings: Warnings,
               n_joints: int = -1, quantize: bool = False) -> Written | None:
    """Append the glTF mesh of a split mesh (positions times `scale`); n_joints >= 0: its skin's joint count;
    quantize: its one node may carry a grid step (see morph_out.targets)."""
    for note in sp.notes:
        warnings.warn(note)
    if not sp.primitives:
        return None
    mesh, source = sp.mesh, sp.source
    uv_names = list(mesh.uv_layers)
    targets, step = [], None
    if sp.points is None:
        targets, position, step = morph_targets(mesh, source, buf, scale, quantize)
    else:
        position = buf.accessor(sp.points, ARRAY_BUFFER, bounds=True)
    attrs = {"POSITION": position, "NORMAL": buf.accessor(sp.normals, ARRAY_BUFFER)}
    for i, uv in enumerate(sp.uvs):
        attrs[f"TEXCOORD_{i}"] = buf.accessor(uv, ARRAY_BUFFER)
    for i, col in enumerate(sp.colors):
        attrs[f"COLOR_{i}"] = buf.accessor(col, ARRAY_BUFFER)
    extra = False
    if mesh.skin is not None and n_joints >= 0:
        j, w, extra = _skin_rows(mesh, n_joints, warnings)
        jt = np.uint8 if n_joints + 1 <= 256 else np.uint16
        attrs["JOINTS_0"] = buf.accessor(j[source].astype(jt), ARRAY_BUFFER)
        attrs["WEIGHTS_0"] = buf.accessor(w[source], ARRAY_BUFFER)
    out: dict = {"name": mesh.name, "primitives": []}
    if targets:
        out["weights"] = [float(k.value) for k in mesh.shape_keys[1:]]
        out["extras"] = {"targetNames": [k.name for k in mesh.shape_keys[1:]]}
    for slot, indices in sp.primitives:
        prim: dict = {"attributes": attrs, "mode": 4, "indices": buf.accessor(indices, ELEMENT_ARRAY_BUFFER)}
        scene_mat = mesh.materials[slot] if 0 <= slot < len(mesh.materials) else -1
        mat = mats.material(scene_mat, uv_names)
        if mat >= 0:
            prim["material"] = mat
        if targets:
            prim["targets"] = targets
        out["primitives"].append(prim)
    meshes = json.setdefault("meshes", [])
    meshes.append(out)
    return Written(len(meshes) - 1, source, extra, step)


def _points(p: np.ndarray, source: np.ndarray, scale: float) -> np.ndarray:
    q = points_from_blender(np.take(np.asarray(p, np.float32), source, axis=0))    # take: 2-D fancy indexing is slower
    return q * np.float32(scale) if scale != 1.0 else q
