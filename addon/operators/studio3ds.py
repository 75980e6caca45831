"""File > Import/Export for 3D Studio (.3ds)."""
import bpy
from bpy.props import EnumProperty

from .. import bridge
from ._scaffold import ExportOperator, ImportOperator, for_format, option_properties


@for_format("3ds")
class IMPORT_SCENE_OT_studio3ds(bpy.types.Operator, ImportOperator):
    """Import a 3D Studio file: meshes, hierarchy, materials, cameras, lights and keyframes"""
    world: option_properties(bridge.BuildOptions, {"world"})["world"]


@for_format("3ds")
class EXPORT_SCENE_OT_studio3ds(bpy.types.Operator, ExportOperator):
    """Export a 3D Studio file"""
    path_mode: EnumProperty(name="Path Mode", items=bridge.TEXTURE_PATH_MODES, default="STRIP",
                            description="How texture files are named in the file")

    def collect(self, context):
        scene = super().collect(context)
        bridge.refer_images(scene, self.filepath, self.path_mode, self.texture_names_83)
        return scene

    def draw(self, context):
        super().draw(context)
        self.layout.prop(self, "path_mode")
