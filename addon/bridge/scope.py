"""Which objects an export takes, and their placement relative to the exported parent: shared by
the collection of meshes (collect.py) and the baking of their motion (animation_bake.py)."""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np


@dataclass(frozen=True)
class CollectOptions:
    use_selection: bool = False
    use_visible: bool = False
    use_active_collection: bool = False
    collection: str = ""                  # Collection Exporter: only this collection's objects
    use_active_object: bool = False       # only the active object (within the limits above)
    apply_modifiers: bool = True
    triangulate: bool = True
    global_matrix: tuple = tuple(map(tuple, np.eye(4)))   # Blender -> file axes and scale
    object_types: frozenset = frozenset({"EMPTY", "MESH", "CAMERA", "LIGHT", "ARMATURE"})
    use_keyframes: bool = True
    bake_vertices: bool = False           # bake the evaluated vertices per frame of meshes that modifiers or
                                          # drivers deform (the codec replays shape keys and motion itself)
    animation_source: str = "AUTO"        # animation_takes.SOURCES
    source_keys: bool = True              # plain keyed curves keep their own key frames (action_keys)
    tangents: bool = False                # corner_attributes "tangent" (C, 3) and "bitangent_sign" (C,)
    frame_start: int | None = None        # None = the scene's range
    frame_end: int | None = None


def objects_in_scope(context, o: CollectOptions) -> list:
    if o.collection:
        coll = bpy.data.collections.get(o.collection)
        objs = list(coll.all_objects) if coll else []
    elif o.use_active_collection:
        objs = list(context.view_layer.active_layer_collection.collection.all_objects)
    else:
        objs = list(context.view_layer.objects)
    if o.use_selection:
        objs = [ob for ob in objs if ob.select_get()]
    if o.use_visible:
        objs = [ob for ob in objs if ob.visible_get()]
    if o.use_active_object:
        objs = [ob for ob in objs if ob == context.view_layer.objects.active]
    return [ob for ob in objs if ob.type in o.object_types
            or ob.type in CONVERTED and "MESH" in o.object_types]


# Object types with geometry but no mesh of their own: written as their evaluated mesh, as glTF does.
CONVERTED = ("CURVE", "FONT", "SURFACE", "META")


def matrix_array(mat) -> np.ndarray:
    return np.array(mat, np.float64)


def local_matrix(ob, parent, G) -> np.ndarray:
    """The object's matrix relative to its parent (to the bone's head frame when
    bone-parented), or G @ world for roots."""
    if parent is None:
        return G @ matrix_array(ob.matrix_world)
    frame = parent.matrix_world
    if ob.parent_type == "BONE" and ob.parent_bone in parent.pose.bones:
        frame = frame @ parent.pose.bones[ob.parent_bone].matrix
    return matrix_array(frame.inverted_safe() @ ob.matrix_world)
