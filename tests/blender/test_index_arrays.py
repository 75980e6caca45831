"""Index arrays and keyframe enums move in one copy: foreach_get / foreach_set copy a buffer in bulk
only when its type matches the property's (any other goes item by item through Python, about 100
times slower: 60 ms of a 1M-triangle import's loop starts). Blender's mesh index properties are
unsigned ints, a keyframe's enums bytes."""
import importlib

import numpy as np
import pytest

import bpy

# the index properties the bridge moves with mesh_build.set_indices / get_indices
INDEX_PROPERTIES = [("MeshPolygon", "polygons", "loop_start"), ("MeshPolygon", "polygons", "loop_total"),
                    ("MeshLoop", "loops", "vertex_index"), ("MeshLoop", "loops", "edge_index"),
                    ("MeshLoopTriangle", "loop_triangles", "loops"),
                    ("MeshLoopTriangle", "loop_triangles", "polygon_index")]


class Counted(np.ndarray):
    """An array that counts item reads and writes: the buffer protocol makes none of them."""
    items = 0

    def __getitem__(self, i):
        Counted.items += 1
        return super().__getitem__(i)

    def __setitem__(self, i, v):
        Counted.items += 1
        super().__setitem__(i, v)


def counted(a: np.ndarray) -> np.ndarray:
    Counted.items = 0
    return np.array(a).view(Counted)


def _quads(n: int):
    """n separate quads, split into two triangles' worth of loop triangles by Blender."""
    me = bpy.data.meshes.new("quads")
    me.vertices.add(4 * n)
    me.loops.add(4 * n)
    me.polygons.add(n)
    me.attributes["position"].data.foreach_set("vector", np.random.default_rng(1).random(12 * n, np.float32))
    me.attributes[".corner_vert"].data.foreach_set("value", np.arange(4 * n, dtype=np.int32))
    me.polygons.foreach_set("loop_start", np.arange(0, 4 * n, 4, dtype=np.uint32))
    me.update(calc_edges=True)
    me.calc_loop_triangles()
    return me


@pytest.mark.parametrize("struct,collection,name", INDEX_PROPERTIES)
def test_each_index_property_is_unsigned_and_copied_in_one_go_only_as_uint32(clean, struct, collection, name):
    assert getattr(bpy.types, struct).bl_rna.properties[name].subtype == "UNSIGNED"
    me = _quads(5)
    items = getattr(me, collection)
    width = 3 if name == "loops" else 1
    out = counted(np.zeros(len(items) * width, np.uint32))
    items.foreach_get(name, out)
    assert Counted.items == 0 and out.any()
    signed = counted(np.zeros(len(items) * width, np.int32))
    items.foreach_get(name, signed)
    assert Counted.items > 0                     # the test sees the item-by-item path
    assert np.array_equal(signed, out.view(np.int32))


class Spy:
    """A real collection, with the buffers handed to it noted."""

    def __init__(self, collection):
        self.collection, self.formats = collection, []

    def foreach_set(self, key, buf):
        self.formats.append(memoryview(buf).format)
        self.collection.foreach_set(key, buf)

    def foreach_get(self, key, buf):
        self.formats.append(memoryview(buf).format)
        self.collection.foreach_get(key, buf)


def test_the_bridge_hands_index_properties_the_one_type_blender_copies_in_one_go(clean, lgf):
    mesh_build = importlib.import_module(lgf.__name__ + ".bridge.mesh_build")
    me = _quads(6)
    polygons, loops = Spy(me.polygons), Spy(me.loops)
    mesh_build.set_indices(polygons, "loop_start", np.arange(0, 24, 4, dtype=np.int32)[::-1].copy())
    got = mesh_build.get_indices(polygons, "loop_start", 6)
    assert np.array_equal(got, np.arange(0, 24, 4)[::-1]) and got.dtype == np.int32
    assert np.array_equal(mesh_build.get_indices(loops, "vertex_index", 24), np.arange(24))
    assert polygons.formats + loops.formats == ["I", "I", "I"]



@pytest.mark.parametrize("name", ["interpolation", "handle_left_type", "handle_right_type"])
def test_keyframe_enums_are_copied_in_one_go_only_as_bytes(clean, lgf, name):
    api = importlib.import_module(lgf.__name__ + ".bridge.action_api")
    ob = bpy.data.objects.new("keyed", None)
    clean.scene.collection.objects.link(ob)
    action = bpy.data.actions.new("keys")
    api.assign(ob, action)
    api.add_curve(api.channels(action, ob), "location", 0, np.arange(8.0), np.zeros(8), "BEZIER",
                  handles=np.zeros((8, 2, 2)))
    points = api.curves_of(action)[0].keyframe_points
    assert api.KEY_ENUM == np.uint8
    out = counted(np.full(len(points), 99, api.KEY_ENUM))
    points.foreach_get(name, out)
    assert Counted.items == 0
    assert set(out) == ({2} if name == "interpolation" else {0})         # BEZIER; FREE handles
    wide = counted(np.zeros(len(points), np.int32))
    points.foreach_get(name, wide)
    assert Counted.items > 0 and np.array_equal(wide, out)
