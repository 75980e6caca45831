"""What the collector takes: selection, visibility, active collection, a named collection."""

import bpy
from addon.codec.scene import Node, Scene
from tests.bench_data import grid_mesh


def _three_objects(bridge, context):
    s = Scene()
    for k, name in enumerate(["A", "B", "C"]):
        s.meshes.append(grid_mesh(name, 8))
        s.add_node(Node(name, "MESH", k))
    bridge.build_scene(s, bridge.BuildOptions(), context)
    coll = bpy.data.collections.new("Only")
    context.scene.collection.children.link(coll)
    coll.objects.link(bpy.data.objects["C"])
    return s


def _names(bridge, context, **kw):
    return sorted(n.name for n in bridge.collect_scene(context, bridge.CollectOptions(use_keyframes=False, **kw)).nodes)


def test_scope_options(clean, lgf):
    bridge = lgf.bridge
    _three_objects(bridge, clean)
    assert _names(bridge, clean) == ["A", "B", "C"]
    for ob in bpy.data.objects:
        ob.select_set(ob.name == "A")
    assert _names(bridge, clean, use_selection=True) == ["A"]
    bpy.data.objects["B"].hide_set(True)
    assert _names(bridge, clean, use_visible=True) == ["A", "C"]
    assert _names(bridge, clean, collection="Only") == ["C"]
    layer = clean.view_layer.layer_collection.children["Only"]
    clean.view_layer.active_layer_collection = layer
    assert _names(bridge, clean, use_active_collection=True) == ["C"]


def test_object_type_filter_and_modifiers(clean, lgf):
    bridge = lgf.bridge
    _three_objects(bridge, clean)
    ob = bpy.data.objects["A"]
    mod = ob.modifiers.new("Sub", "SUBSURF")
    mod.levels = 1
    back = bridge.collect_scene(clean, bridge.CollectOptions(use_keyframes=False, apply_modifiers=True))
    a = back.meshes[[n.name for n in back.nodes].index("A")]
    assert len(a.corners) // 3 == 6 * len(ob.data.polygons)   # one subdivision: a triangle -> 3 quads -> 6 tris
    back = bridge.collect_scene(clean, bridge.CollectOptions(use_keyframes=False, apply_modifiers=False))
    a = back.meshes[[n.name for n in back.nodes].index("A")]
    assert len(a.corners) // 3 == len(ob.data.polygons)
    assert _names(bridge, clean, object_types=frozenset({"CAMERA"})) == []
