"""File > Import/Export for Ultimate 3D models (.u3d v2.0 and v1.0)."""
from dataclasses import replace

import bpy
from bpy.props import EnumProperty, StringProperty
from bpy_extras.io_utils import orientation_helper

from .. import bridge
from ..codec.formats.ultimate3d.options import ExportOptions, ImportOptions
from ._normals import normals_property
from ._scaffold import ExportOperator, ImportOperator, file_handler, menu_entry


@orientation_helper(axis_forward="Y", axis_up="Z")
class IMPORT_SCENE_OT_ultimate3d(bpy.types.Operator, ImportOperator):
    """Import an Ultimate 3D model (.u3d v1.0 or v2.0)"""
    bl_idname = "import_scene.ultimate3d"
    bl_label = "Import Ultimate 3D"
    format_name = "u3d"
    options_class = ImportOptions
    filename_ext = ".u3d"
    filter_glob: StringProperty(default="*.u3d", options={"HIDDEN"})
    password: StringProperty(name="Password", subtype="PASSWORD", default="", options={"SKIP_SAVE"},
                             description="Password of an encrypted (AES) file")
    texture_search_folder: StringProperty(name="Texture Folder", subtype="DIR_PATH", default="",
                                          description="Where to look for textures not found beside the model "
                                                      "or in its gfx/ folder")
    normals: normals_property()


def _animated_shape_keys(objs) -> bool:
    for ob in objs:
        keys = getattr(ob.data, "shape_keys", None) if ob.type == "MESH" else None
        if keys is not None and keys.animation_data is not None and (
                keys.animation_data.action is not None or len(keys.animation_data.nla_tracks)):
            return True
    return False


@orientation_helper(axis_forward="Y", axis_up="Z")
class EXPORT_SCENE_OT_ultimate3d(bpy.types.Operator, ExportOperator):
    """Export an Ultimate 3D model (.u3d): meshes, LoDs, materials, skeleton, skinning and actions"""
    bl_idname = "export_scene.ultimate3d"
    bl_label = "Export Ultimate 3D"
    format_name = "u3d"
    options_class = ExportOptions
    filename_ext = ".u3d"
    filter_glob: StringProperty(default="*.u3d", options={"HIDDEN"})
    version: EnumProperty(name="Version", default="2.0", items=(
        ("2.0", "2.0", "Ultimate 3D 3.0: chunked, LoD distances, action ranges, encryption"),
        ("1.0", "1.0", "Ultimate 3D 2.1: fixed layout, 16-bit counts, no action ranges")))
    password: StringProperty(name="Password", subtype="PASSWORD", default="", options={"SKIP_SAVE"},
                             description="Encrypt the file with AES-128 (v2.0 only; empty: no encryption)")

    def collect_options(self) -> bridge.CollectOptions:
        o = super().collect_options()
        # frame-based animation: without a skeleton, animated shape keys are baked one key per frame
        objs = bridge.objects_in_scope(bpy.context, o)
        if not any(ob.type == "ARMATURE" for ob in objs) and _animated_shape_keys(objs):
            o = replace(o, bake_vertices=True)
        return o


CLASSES = (
    IMPORT_SCENE_OT_ultimate3d,
    EXPORT_SCENE_OT_ultimate3d,
    file_handler("IO_FH_ultimate3d", "Ultimate 3D", "import_scene.ultimate3d", "export_scene.ultimate3d", ".u3d"),
)
IMPORT_MENU = [menu_entry("import_scene.ultimate3d", "Ultimate 3D (.u3d)")]
EXPORT_MENU = [menu_entry("export_scene.ultimate3d", "Ultimate 3D (.u3d)")]
