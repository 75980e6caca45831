"""Which objects an export takes, and their placement relative to the exported parent: shared by
the collection of meshes (collect.py) and the baking of their motion (animation_bake.py)."""
from __future__ import annotations

from dataclasses import dataclass

import bpy
import numpy as np

from ..codec.option_rules import option
from ..codec.scene_options import ExportContent

ANIMATION_SOURCES = {
    "AUTO": ("Automatic", "Every action, each on its own, when an object has several; else the scene range"),
    "ACTIONS": ("Actions", "Every action that fits the exported objects, each played alone"),
    "NLA": ("NLA Strips", "Every NLA strip, its action played alone"),
    "MARKERS": ("Timeline Markers", "Each timeline marker starts an animation that runs to the next"),
    "SCENE": ("Scene Range", "The scene's frame range, played as it is"),
}


@dataclass(frozen=True)
class CollectOptions(ExportContent):
    """use_keyframes and object_types come from the codec's scene_options; the fields with a label
    are the export operators' properties."""

    use_selection: bool = option(False, "Selected Only")
    use_visible: bool = option(False, "Visible Only")
    use_active_collection: bool = option(False, "Active Collection")
    collection: str = option("", "Collection", "Export only this collection (set by the Collection Exporter)")
    use_active_object: bool = option(False, "Active Object Only", "Write only the active object; off: every "
                                     "mesh object within the limits is merged into one")
    apply_modifiers: bool = option(True, "Apply Modifiers")
    triangulate: bool = True
    global_matrix: tuple = tuple(map(tuple, np.eye(4)))   # Blender -> file axes and scale
    bake_vertices: bool = False           # bake the evaluated vertices per frame of meshes that modifiers or
                                          # drivers deform (the codec replays shape keys and motion itself)
    animation_source: str = option("AUTO", "Animation Source", "What becomes the file's animations",
                                   items=ANIMATION_SOURCES)
    source_keys: bool = True              # plain keyed curves keep their own key frames (action_keys)
    tangents: bool = False                # corner_attributes "tangent" (C, 3) and "bitangent_sign" (C,)
    tangents_kept_as: str = ""            # a corner attribute the format prefers to MikkTSpace: a mesh with it skips that
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


def shape_keys_animated(objs) -> bool:
    """Whether an action or NLA track moves the shape keys of one of the meshes."""
    for ob in objs:
        keys = getattr(ob.data, "shape_keys", None) if ob.type == "MESH" else None
        if keys is not None and keys.animation_data is not None and (
                keys.animation_data.action is not None or len(keys.animation_data.nla_tracks)):
            return True
    return False


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
