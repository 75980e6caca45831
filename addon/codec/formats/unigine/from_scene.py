"""Neutral Scene -> UNIGINE model: meshes merged into surfaces, armature, animations.

The conventions (basis, UV flip, attribute names) come from scene.py. Surfaces
are made per material or per object; within a surface, coordinate vertices
are the Blender vertices its triangles use, and triangle vertices are the
distinct per-corner records (tangent quaternion, UVs, colour), as written: the
quaternions are made per corner first, so that corners the file cannot tell
apart share a triangle vertex and the split compares 8 bytes, not 28.
"""
from __future__ import annotations

import numpy as np

from ...axes import inverse_or_identity
from ...errors import FormatError, Warnings
from ...meshops import all_triangles, split_corners, triangulate
from ...option_rules import choices
from ...scene import Mesh, Scene
from . import bounds, tangent
from .animation_out import armature_bones, build_tracks
from .conventions import BASIS, COLOR_NAME
from .geometry import corner_frames
from .model import MAX_WEIGHTS, WEIGHT_SCALE, AnimFile, Bounds, MeshFile, MorphTarget, Surface, Weights
from .options import AnimExportOptions, ExportOptions


MAX_SURFACES = 32768      # the format page's limit
MAX_BONES = 32767         # bone and parent indices are signed shorts


def _mesh_nodes(scene: Scene) -> list[tuple[int, int]]:
    """(node, mesh) pairs; meshes no node shows are taken as they are."""
    pairs = [(i, n.data) for i, n in enumerate(scene.nodes) if n.kind == "MESH" and 0 <= n.data < len(scene.meshes)]
    shown = {m for _, m in pairs}
    return pairs + [(-1, m) for m in range(len(scene.meshes)) if m not in shown]


def _placed(scene: Scene, node: int, arm_node: int) -> np.ndarray:
    """The mesh's matrix in the file's space: world, or relative to the armature it is skinned to."""
    if node < 0:
        return np.eye(4)
    m = scene.world_matrix(node)
    if arm_node >= 0:
        m = inverse_or_identity(scene.world_matrix(arm_node)) @ m
    b4 = np.eye(4)
    b4[:3, :3] = BASIS
    return np.linalg.inv(b4) @ m @ b4


_IDENTITY_BASIS = np.array_equal(BASIS, np.eye(3))


def _apply(xf: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Points placed by a 4x4 (float64 arithmetic, float32 result); the identity copies nothing."""
    if np.array_equal(xf, np.eye(4)):
        return np.asarray(points, np.float32)
    return (np.asarray(points, np.float64) @ xf[:3, :3].T + xf[:3, 3]).astype(np.float32)


_WIDTH = {"uv0": 2, "uv1": 2, "colors": 1}     # record columns of the optional split data
_FRAME = 2                                       # the tangent quaternion: 4 int16 in 2 columns


class _Part:
    """One mesh object's triangles, ready to cut into surfaces.

    Each triangle corner's split data sits in one row of `record` (uint32
    words): the tangent quaternion (4 int16), then the optional uv0, uv1
    (2 float32 each) and colour (4 bytes); `layout`
    names the column where each optional one starts.
    """

    def __init__(self, scene: Scene, node: int, mesh: Mesh, arm_node: int, bone_map, warnings: Warnings):
        self.name = scene.nodes[node].name if node >= 0 else mesh.name
        xf = _placed(scene, node, arm_node)
        self.tri_corners, tri_face = triangulate(mesh.faces, len(mesh.corners))      # (T, 3) corner indices
        self.positions = _apply(xf, mesh.positions)
        self.keys = [(k.name, _apply(xf, k.positions)) for k in mesh.shape_keys]
        corner = self.tri_corners.reshape(-1)
        in_order = all_triangles(mesh.faces, len(mesh.corners))

        def per_corner(a: np.ndarray) -> np.ndarray:
            return a if in_order else a[corner]

        self.vertex = per_corner(mesh.corners.astype(np.int64))
        uvs = list(mesh.uv_layers.values())[:2]
        if len(mesh.uv_layers) > 2:
            warnings.warn(f"mesh {mesh.name!r}: only 2 of its {len(mesh.uv_layers)} UV layers are written")
        cols = mesh.colors.get(COLOR_NAME, next(iter(mesh.colors.values()), None))
        present = ["uv0", "uv1"][:len(uvs)] + ([] if cols is None else ["colors"])
        self.layout = {}
        width = _FRAME
        for attr in present:
            self.layout[attr] = width
            width += _WIDTH[attr]
        self.record = np.empty((len(corner), width), np.uint32)
        floats = self.record.view(np.float32)
        for uv, attr in zip(uvs, ("uv0", "uv1")):
            c = self.layout[attr]
            uv = per_corner(np.asarray(uv, np.float32).reshape(-1, 2))
            floats[:, c] = uv[:, 0]
            floats[:, c + 1] = 1.0 - uv[:, 1]            # conventions.uv_from_blender
        if cols is not None:
            rgba = np.clip(np.round(per_corner(np.asarray(cols)) * 255), 0, 255).astype(np.uint8)
            self.record[:, self.layout["colors"]] = rgba.view(np.uint32).reshape(-1)
        normal, tan, sign = corner_frames(mesh, self.positions, self.tri_corners, xf)
        if not _IDENTITY_BASIS:
            normal, tan = normal @ BASIS, tan @ BASIS
        tangent.encode(normal, tan, sign, out=self.record.view(np.int16)[:, :2 * _FRAME])
        fm = mesh.face_material if mesh.face_material is not None else np.zeros(len(mesh.faces), np.int32)
        slots = np.asarray(fm, np.int64)
        if not in_order:
            slots = slots[tri_face]
        mats = np.asarray(mesh.materials or [-1], np.int64)
        self.material = mats[np.clip(slots, 0, len(mats) - 1)]
        self.skin = _skin_arrays(mesh, bone_map, warnings) if mesh.skin is not None and bone_map is not None else None


def _skin_arrays(mesh: Mesh, bone_map: np.ndarray, warnings: Warnings):
    """At most 4 weights per vertex, renormalised and quantized to sum to 65535."""
    joints = np.asarray(mesh.skin.joints, np.int64)
    w = np.where(joints >= 0, np.asarray(mesh.skin.weights, np.float64), 0.0)
    w = np.where(w > 0, w, 0.0)
    order = np.argsort(-w, axis=1, kind="stable")
    w = np.take_along_axis(w, order, 1)
    joints = np.take_along_axis(joints, order, 1)
    if w.shape[1] > MAX_WEIGHTS:
        dropped = int((w[:, MAX_WEIGHTS:] > 0).any(1).sum())
        if dropped:
            warnings.warn(f"mesh {mesh.name!r}: {dropped} vertices had more than {MAX_WEIGHTS} weights; "
                          f"the smallest were dropped and the rest renormalised")
        w, joints = w[:, :MAX_WEIGHTS], joints[:, :MAX_WEIGHTS]
    pad = MAX_WEIGHTS - w.shape[1]
    if pad > 0:
        w = np.pad(w, ((0, 0), (0, pad)))
        joints = np.pad(joints, ((0, 0), (0, pad)), constant_values=-1)
    total = w.sum(1, keepdims=True)
    q = np.round(w / np.where(total > 0, total, 1.0) * WEIGHT_SCALE)
    # the rounding remainder goes to the largest weight so that each sum is 65535
    q[:, 0] += np.where(total[:, 0] > 0, WEIGHT_SCALE - q.sum(1), 0)
    q = q.astype(np.uint16)
    bones = np.where(joints >= 0, bone_map[np.clip(joints, 0, len(bone_map) - 1)], 0)
    return q, bones


def _used_vertices(vertex: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(vertex, return_inverse=True) for indices below `count`, without a sort."""
    seen = np.zeros(count, bool)
    seen[vertex] = True
    used = np.flatnonzero(seen)
    if len(used) == count:
        return used, vertex
    new_index = np.cumsum(seen, dtype=np.int64) - 1
    return used, new_index[vertex]


def _surface_record(parts: list[tuple["_Part", np.ndarray]]) -> np.ndarray:
    """The selected rows of the parts' records, with the optional columns any of them has (zeros if missing)."""
    optional = [attr for attr in _WIDTH if any(attr in p.layout for p, _ in parts)]
    (p0, sel0), = parts[:1]
    if len(parts) == 1 and sel0.all() and list(p0.layout) == optional:
        return p0.record
    width = _FRAME + sum(_WIDTH[a] for a in optional)
    out = np.zeros((3 * sum(int(sel.sum()) for _, sel in parts), width), np.uint32)
    row = 0
    for p, sel in parts:
        src = p.record if sel.all() else p.record.reshape(-1, 3, p.record.shape[1])[sel].reshape(-1, p.record.shape[1])
        n = len(src)
        out[row:row + n, :_FRAME] = src[:, :_FRAME]
        col = _FRAME
        for attr in optional:
            if attr in p.layout:
                out[row:row + n, col:col + _WIDTH[attr]] = src[:, p.layout[attr]:p.layout[attr] + _WIDTH[attr]]
            col += _WIDTH[attr]
        row += n
    return out


def _columns_at(record: np.ndarray, rows: np.ndarray, col: int, width: int) -> np.ndarray:
    """record[rows, col:col + width] as a new contiguous array: a pair of words at an even column is
    gathered as one 8-byte value (one gather, not a 2-D fancy index)."""
    if width == 2 and col % 2 == 0 and record.shape[1] % 2 == 0 and record.flags.c_contiguous:
        return np.take(record.view(np.uint64)[:, col // 2], rows).view(np.uint32).reshape(-1, 2)
    return np.ascontiguousarray(record[rows, col:col + width])


def _surface(name: str, parts: list[tuple["_Part", np.ndarray]], key_names: list[str]) -> Surface:
    """Cut the selected triangles of several parts into one surface."""
    picked = [p.vertex if sel.all() else p.vertex.reshape(-1, 3)[sel].reshape(-1) for p, sel in parts]
    # the coordinate vertices are each part's used ones, part after part; per-vertex data is gathered
    # part by part at those, so each shape key costs the surface's vertices, not all of every part's
    used, coords = zip(*[_used_vertices(v, len(p.positions)) for v, (p, _) in zip(picked, parts)])
    offsets = np.cumsum([0] + [len(u) for u in used])
    coord = coords[0] if len(parts) == 1 else np.concatenate([c + o for c, o in zip(coords, offsets)])

    def at_used(per_vertex: list[np.ndarray]) -> np.ndarray:
        got = [np.take(a, u, axis=0) for a, u in zip(per_vertex, used)]
        return got[0] if len(got) == 1 else np.concatenate(got)

    record = _surface_record(parts)
    optional = [attr for attr in _WIDTH if any(attr in p.layout for p, _ in parts)]
    first, tri = split_corners(record, coord, within_vertex=False)
    surf = Surface(name)
    base = MorphTarget(key_names[0] if key_names else "base", at_used([p.positions for p, _ in parts]),
                       _columns_at(record, first, 0, _FRAME).view(np.int16).reshape(-1, 4))
    surf.targets.append(base)
    col = _FRAME
    for attr in optional:
        if attr == "colors":
            surf.colors = _columns_at(record, first, col, 1).view(np.uint8).reshape(-1, 4)
        else:
            setattr(surf, attr, _columns_at(record, first, col, 2).view(np.float32).reshape(-1, 2))
        col += _WIDTH[attr]
    keyed = [(dict(p.keys), p.positions) for p, _ in parts]      # once: a dict per key made keys x keys work
    for k in key_names[1:]:
        surf.targets.append(MorphTarget(k, at_used([keys.get(k, rest) for keys, rest in keyed]), base.tangents))
    surf.coord_indices = coord.astype(np.uint32)
    surf.tri_indices = tri.astype(np.uint32)
    if any(p.skin is not None for p, _ in parts):
        q = at_used([p.skin[0] if p.skin is not None else np.zeros((len(p.positions), 4), np.uint16) for p, _ in parts])
        b = at_used([p.skin[1] if p.skin is not None else np.zeros((len(p.positions), 4), np.int64) for p, _ in parts])
        counts = (q > 0).sum(1).astype(np.uint8)
        surf.weights = Weights(counts, np.where(q > 0, b, 0).astype(np.int16), q)
    surf.bounds = bounds.of_points(base.positions)
    return surf


def scene_to_mesh(scene: Scene, opts: ExportOptions, warnings: Warnings) -> MeshFile:
    allowed = choices(ExportOptions)["surfaces_from"]
    if opts.surfaces_from not in allowed:
        raise FormatError(f"surfaces_from must be one of {', '.join(allowed)}, not {opts.surfaces_from!r}")
    m = MeshFile()
    arm_index, arm_node, bones, bind, bone_map = armature_bones(scene, warnings)
    if len(bones) > MAX_BONES:
        raise FormatError(f"{len(bones)} bones: bone indices are shorts, at most {MAX_BONES} bones fit")
    m.bones, m.bind = bones, bind
    parts = [_Part(scene, node, scene.meshes[mi], arm_node, bone_map, warnings) for node, mi in _mesh_nodes(scene)]
    if not parts:
        raise FormatError("nothing to export: the scene has no mesh")
    groups: dict[str, list] = {}
    for p in parts:
        if opts.surfaces_from == "OBJECT":
            groups.setdefault(p.name, []).append((p, np.ones(len(p.tri_corners), bool)))
            continue
        for mat in np.unique(p.material):
            label = scene.materials[mat].name if 0 <= mat < len(scene.materials) else p.name
            groups.setdefault(label, []).append((p, p.material == mat))
    if len(groups) > MAX_SURFACES:
        raise FormatError(f"{len(groups)} surfaces: UNIGINE meshes hold at most {MAX_SURFACES}")
    for label, members in groups.items():
        key_names = list(dict.fromkeys(k for p, _ in members for k, _ in p.keys))     # in first-seen order
        m.surfaces.append(_surface(label, members, key_names))
    # one surface: its own bounds (of_surfaces would compute the same numbers again)
    m.bounds = Bounds(m.surfaces[0].bounds.values.copy()) if len(m.surfaces) == 1 else bounds.of_surfaces(m.surfaces)
    tracks = build_tracks(scene, bones, bind, quantized=not opts.embed_animations, warnings=warnings)
    if opts.embed_animations:
        m.animations = tracks
    elif tracks:
        m.companion = AnimFile(Bounds(anim_placeholder()), bones, bind, tracks)
    return m


def anim_placeholder() -> np.ndarray:
    """The file-level bounds real .anim files carry: min 1e9, max -1e9, radius -1."""
    return np.array([1e9] * 3 + [-1e9] * 3 + [0.0] * 3 + [-1.0], np.float32)


def scene_to_anim(scene: Scene, opts: AnimExportOptions, warnings: Warnings) -> AnimFile:
    _, _, bones, bind, _ = armature_bones(scene, warnings)
    if not bones:
        raise FormatError("an .anim needs an armature (or the rest pose of the .anim it came from)")
    tracks = build_tracks(scene, bones, bind, quantized=True, warnings=warnings)
    if not tracks:
        warnings.warn("no action animates a bone of the armature; the .anim holds no animation")
    return AnimFile(Bounds(anim_placeholder()), bones, bind, tracks)


def from_scene(scene: Scene, opts: ExportOptions | AnimExportOptions, warnings: Warnings) -> MeshFile | AnimFile:
    """A .mesh (with its animations in companion .anim files), or with AnimExportOptions an .anim alone."""
    if isinstance(opts, AnimExportOptions):
        return scene_to_anim(scene, opts, warnings)
    return scene_to_mesh(scene, opts, warnings)
