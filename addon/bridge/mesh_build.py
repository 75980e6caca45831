"""Scene Mesh -> bpy Mesh, in bulk: one foreach_set per attribute."""
from __future__ import annotations

import bpy
import numpy as np

from ..codec import meshops
from ..codec.parallel import PARALLEL_CORNERS, map_two
from ..codec.scene import Mesh
from . import props


def _attr_type(arr: np.ndarray, domain_len: int) -> tuple[str, str, np.ndarray]:
    """(data_type, foreach key, flat data) for an attribute array. The data is copied only when it
    is not already aligned native int32/float32: foreach_set reads an unaligned view of the file's
    bytes (format "=i") item by item, about 20 times slower than one copy."""
    a = np.asarray(arr)
    width = 1 if a.ndim == 1 else a.shape[1]
    if a.dtype == np.bool_ and width == 1:
        return "BOOLEAN", "value", a.ravel()
    if a.dtype.kind in "iu" and width == 1:
        return "INT", "value", np.require(a, np.int32, "CA").ravel()
    a = np.require(a, np.float32, "CA")
    if width == 1:
        return "FLOAT", "value", a.ravel()
    if width == 2:
        return "FLOAT2", "vector", a.ravel()
    if width == 3:
        return "FLOAT_VECTOR", "vector", a.ravel()
    if width == 4:
        return "QUATERNION", "value", a.ravel()     # a plain 4-float carrier (colours go in Mesh.colors)
    raise ValueError(f"attribute of width {width} is not supported")


def add_attribute(me, name: str, domain: str, arr: np.ndarray) -> None:
    dtype, key, flat = _attr_type(arr, 0)
    if name in me.attributes:
        me.attributes.remove(me.attributes[name])
    me.attributes.new(name, dtype, domain).data.foreach_set(key, flat)


def build_mesh(m: Mesh, materials: list) -> "bpy.types.Mesh":
    """Create the mesh datablock. `materials` maps scene material index -> bpy material."""
    return build_meshes([m], materials)[0]


def build_meshes(meshes: list[Mesh], materials: list) -> list:
    """build_mesh for each mesh. Blender builds them one after another; the numpy work on their
    smoothing groups (sharp edges, points to split) then runs two meshes at a time
    (parallel.map_two: bpy keeps Python's lock, numpy lets go of it, so only this part overlaps).
    They go in batches of about _BATCH_CORNERS corners, each finished before the next one's corner
    edges are fetched: the edges and plans of every mesh at once would add a fifth to the peak
    memory of a large import."""
    built = [_new_mesh(m, materials) for m in meshes]
    jobs = [k for k, m in enumerate(meshes) if m.smoothing is not None and len(m.smoothing) == len(m.faces)]
    big = sum(len(meshes[k].corners) for k in jobs) >= PARALLEL_CORNERS
    for batch in _batches(jobs, [len(meshes[k].corners) for k in jobs]):
        args = [(meshes[k], corner_edges(built[k]), len(built[k].edges)) for k in batch]
        for k, plan in zip(batch, map_two(lambda a: _plan(*a), args, threaded=big)):
            built[k] = _finish(meshes[k], built[k], plan, materials)
    for k in sorted(set(range(len(meshes))) - set(jobs)):
        built[k] = _finish(meshes[k], built[k], None, materials)
    return built


_BATCH_CORNERS = 1 << 20      # a batch's edges take 4 MB; a few batches cost the threads little waiting


def _batches(jobs: list[int], corners: list[int]):
    """The jobs in order, in runs of at least two (one per thread) and about _BATCH_CORNERS corners."""
    start, total = 0, 0
    for i, n in enumerate(corners):
        total += n
        if i + 1 - start >= 2 and total >= _BATCH_CORNERS:
            yield jobs[start:i + 1]
            start, total = i + 1, 0
    if start < len(jobs):
        yield jobs[start:]


def _finish(m: Mesh, me, plan: meshops.GroupShading | None, materials: list):
    """The mesh's smoothing (plan: from its groups) and custom properties; a mesh whose points
    split is built again."""
    if plan is not None and plan.split is not None:
        meshops.split_vertices(m, *plan.split)     # a vertex per fan: once more with the new vertices
        bpy.data.meshes.remove(me)
        return build_mesh(m, materials)
    if plan is not None and m.normals is not None and len(m.normals) == len(m.corners):
        me.normals_split_custom_set(np.ascontiguousarray(m.normals, np.float32).reshape(-1, 3))
    elif plan is not None:
        _set_sharp(me, None, plan.sharp_faces, sharp_edges=plan.sharp_edges)
    elif m.sharp_edges is not None and len(m.sharp_edges) == len(m.corners):
        _set_sharp(me, m.sharp_edges, m.sharp_faces)
    elif m.normals is not None and len(m.normals) == len(m.corners):
        me.normals_split_custom_set(np.ascontiguousarray(m.normals, np.float32).reshape(-1, 3))
    props.store(me, m.extras)
    return me


def _corner_arrays(m: Mesh) -> tuple[np.ndarray, np.ndarray]:
    """(corners, face starts) as int32, the attribute API's index type (the Scene's uint32 indices
    are the same bits below 2**31: a view, no copy; set_indices hands them on as uint32)."""
    return _int32(m.corners), _int32(m.faces)


def _int32(a) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype == np.uint32 and a.flags.c_contiguous and a.flags.aligned:
        return a.view(np.int32)
    return np.require(a, np.int32, "CA")


def _plan(m: Mesh, edge_of: np.ndarray, n_edges: int) -> meshops.GroupShading:
    corners, starts = _corner_arrays(m)
    return meshops.group_shading(corners, starts, m.smoothing, len(m.positions), edge_of, n_edges,
                                 sharp=m.normals is None or len(m.normals) != len(corners))


def _new_mesh(m: Mesh, materials: list) -> "bpy.types.Mesh":
    """The mesh datablock with every array of `m`, its edges found by Blender; no smoothing yet."""
    me = bpy.data.meshes.new(m.name)
    pos = np.ascontiguousarray(m.positions, np.float32)
    corners, starts = _corner_arrays(m)
    me.vertices.add(len(pos))
    me.loops.add(len(corners))
    me.polygons.add(len(starts))
    # the attribute API takes each array in one copy; the per-element collections are much slower
    if len(pos):                     # an empty mesh has no position attribute yet
        me.attributes["position"].data.foreach_set("vector", pos.ravel())
    corner_vert = me.attributes.get(".corner_vert")
    if corner_vert is not None:
        corner_vert.data.foreach_set("value", corners)
    else:
        set_indices(me.loops, "vertex_index", corners)
    set_indices(me.polygons, "loop_start", starts)

    for name, uv in m.uv_layers.items():
        layer = me.uv_layers.new(name=name, do_init=False)
        layer.uv.foreach_set("vector", np.ascontiguousarray(uv, np.float32).ravel())
    for name, col in m.colors.items():
        attr = me.color_attributes.new(name, "FLOAT_COLOR", "CORNER")
        attr.data.foreach_set("color", np.ascontiguousarray(col, np.float32).ravel())
    for index in m.materials:
        me.materials.append(materials[index] if index >= 0 else None)
    if m.face_material is not None and len(m.materials) > 1:
        # the attribute API takes it in one copy; polygons.foreach_set goes face by face
        add_attribute(me, "material_index", "FACE", np.ascontiguousarray(m.face_material, np.int32))
    for name, arr in m.face_attributes.items():
        add_attribute(me, name, "FACE", arr)
    for name, arr in m.vertex_attributes.items():
        add_attribute(me, name, "POINT", arr)
    for name, arr in m.corner_attributes.items():
        add_attribute(me, name, "CORNER", arr)
    me.update(calc_edges=True)
    return me


def corner_edges(me) -> np.ndarray:
    """(C,) Blender's edge index of the edge from each corner to the next one of its face."""
    attr = me.attributes.get(".corner_edge")
    if attr is None:
        return get_indices(me.loops, "edge_index", len(me.loops))
    out = np.empty(len(me.loops), np.int32)
    attr.data.foreach_get("value", out)
    return out


# Blender's mesh index properties (loop_start, loop_total, vertex_index, edge_index, the loop
# triangles' loops...) are unsigned: foreach_get/foreach_set copy a uint32 buffer in one go, and
# take any other type item by item through Python objects, about 100 times slower.

def set_indices(collection, key: str, values: np.ndarray) -> None:
    """foreach_set of an index property from int32 or uint32 values below 2 ** 31."""
    collection.foreach_set(key, _int32(values).view(np.uint32))


def get_indices(collection, key: str, count: int) -> np.ndarray:
    """(count,) int32: foreach_get of an index property."""
    out = np.empty(count, np.uint32)
    collection.foreach_get(key, out)
    return out.view(np.int32)


def _set_sharp(me, sharp_corners, flat, sharp_edges=None) -> None:
    """Native smoothing: sharp edges (per corner, or per edge: sharp_edges) and flat faces, from
    which Blender derives the normals."""
    if sharp_edges is None:
        sharp_edges = np.zeros(len(me.edges), bool)
        sharp_edges[corner_edges(me)[np.asarray(sharp_corners, bool)]] = True
    add_attribute(me, "sharp_edge", "EDGE", sharp_edges)
    add_attribute(me, "sharp_face", "FACE", np.zeros(len(me.polygons), bool) if flat is None
                  else np.asarray(flat, bool))


def add_shape_keys(obj, m: Mesh) -> None:
    """Absolute shape keys; key 0 becomes the basis (it must match the mesh positions)."""
    if not m.shape_keys:
        return
    blocks = []
    for key in m.shape_keys:
        kb = obj.shape_key_add(name=key.name, from_mix=False)
        kb.data.foreach_set("co", np.ascontiguousarray(key.positions, np.float32).ravel())
        kb.value = key.value
        kb.interpolation = key.interpolation
        blocks.append(kb)
    for key, kb in zip(m.shape_keys, blocks):
        if key.relative_to and 0 <= key.relative_to < len(blocks):
            kb.relative_key = blocks[key.relative_to]
    obj.data.shape_keys.use_relative = True
    obj.data.update()


def add_skin(obj, m: Mesh, bone_names: list[str]) -> None:
    """Vertex groups from (V, K) joints/weights: one `add` call per (bone, weight) pair."""
    skin = m.skin
    if skin is None:
        return
    groups = [obj.vertex_groups.new(name=n) for n in bone_names]
    joints = np.asarray(skin.joints).ravel()
    weights = np.asarray(skin.weights, np.float32).ravel()
    verts = np.repeat(np.arange(len(skin.joints)), np.asarray(skin.joints).shape[1])
    keep = (joints >= 0) & (joints < len(groups)) & (weights > 0)
    joints, weights, verts = joints[keep], weights[keep], verts[keep]
    # a bone listed twice for one vertex adds up (vg.add would let the second replace the first)
    pair, first = np.unique(verts.astype(np.int64) * len(groups) + joints, return_inverse=True)
    if len(pair) < len(verts):
        summed = np.zeros(len(pair), np.float64)
        np.add.at(summed, first, weights)
        verts, joints, weights = pair // len(groups), pair % len(groups), summed.astype(np.float32)
    # group identical (bone, weight) pairs so that each vg.add call takes many vertices
    order = np.lexsort((weights, joints))
    joints, weights, verts = joints[order], weights[order], verts[order]
    if not len(joints):
        return
    cut = np.flatnonzero((np.diff(joints) != 0) | (np.diff(weights) != 0)) + 1
    for lo, hi in zip(np.r_[0, cut], np.r_[cut, len(joints)]):
        groups[joints[lo]].add(verts[lo:hi].tolist(), float(weights[lo]), "REPLACE")
