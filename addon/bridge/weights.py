"""Vertex-group weights out of Blender in bulk.

Blender has no bulk accessor for weights (MDeformVert is not an attribute).
Geometry nodes can copy each group into a named float attribute, which has
one: a throw-away object shares the mesh, a node tree stores every group,
and the evaluated copy is read with one foreach_get per group. Groups whose
name a mesh attribute already uses are walked vertex by vertex instead.
"""
from __future__ import annotations

import bpy
import numpy as np

def _store_tree(names: list[str]):
    ng = bpy.data.node_groups.new(".lgf_weights", "GeometryNodeTree")
    ng.interface.new_socket("Geometry", in_out="INPUT", socket_type="NodeSocketGeometry")
    ng.interface.new_socket("Geometry", in_out="OUTPUT", socket_type="NodeSocketGeometry")
    src = ng.nodes.new("NodeGroupInput").outputs[0]
    for k, name in enumerate(names):
        read = ng.nodes.new("GeometryNodeInputNamedAttribute")
        read.data_type = "FLOAT"
        read.inputs["Name"].default_value = name
        store = ng.nodes.new("GeometryNodeStoreNamedAttribute")
        store.data_type, store.domain = "FLOAT", "POINT"
        store.inputs["Name"].default_value = f"lgf_w{k}"
        ng.links.new(src, store.inputs["Geometry"])
        ng.links.new(read.outputs["Attribute"], store.inputs["Value"])
        src = store.outputs["Geometry"]
    ng.links.new(src, ng.nodes.new("NodeGroupOutput").inputs[0])
    return ng


def weight_triples(context, ob) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(vertex, group, weight) for every nonzero membership of `ob`'s vertex groups."""
    names = [g.name for g in ob.vertex_groups]
    V = len(ob.data.vertices)
    # a group named like a mesh attribute ("UVMap") would read the attribute: walk those instead
    taken = set(ob.data.attributes.keys())
    bulk = [k for k, n in enumerate(names) if n not in taken]
    walked = [k for k, n in enumerate(names) if n in taken]
    parts = [_walk(ob, set(walked))] if walked else []
    if bulk and V:
        parts.append(_through_nodes(context, ob, [names[k] for k in bulk], np.array(bulk)))
    if not parts:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float32)
    return tuple(np.concatenate(p) for p in zip(*parts))


def _through_nodes(context, ob, names: list[str], index: np.ndarray):
    tmp = bpy.data.objects.new(".lgf_weights", ob.data)
    tree = _store_tree(names)
    context.scene.collection.objects.link(tmp)
    verts, groups, weights = [], [], []
    try:
        tmp.modifiers.new("weights", "NODES").node_group = tree
        ev = tmp.evaluated_get(context.evaluated_depsgraph_get())
        me = ev.to_mesh()
        try:
            buf = np.empty(len(ob.data.vertices), np.float32)
            for k in range(len(names)):
                me.attributes[f"lgf_w{k}"].data.foreach_get("value", buf)
                nz = np.flatnonzero(buf)
                verts.append(nz)
                groups.append(np.full(len(nz), index[k]))
                weights.append(buf[nz])
        finally:
            ev.to_mesh_clear()
    finally:
        bpy.data.objects.remove(tmp)
        bpy.data.node_groups.remove(tree)
    return np.concatenate(verts), np.concatenate(groups), np.concatenate(weights)


def _walk(ob, wanted: set[int]):
    """The per-vertex walk, for the few groups the node path cannot read."""
    rows = [(v.index, g.group, g.weight) for v in ob.data.vertices for g in v.groups if g.group in wanted]
    arr = np.array(rows, np.float64).reshape(-1, 3)
    return arr[:, 0].astype(np.int64), arr[:, 1].astype(np.int64), arr[:, 2].astype(np.float32)
