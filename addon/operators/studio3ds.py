"""File > Import/Export for 3D Studio (.3ds)."""
import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import orientation_helper

from ..codec.formats.studio3ds.options import ExportOptions, ImportOptions
from ..bridge import texture_paths
from ._normals import normals_property
from ._scaffold import ExportOperator, ImportOperator, file_handler, menu_entry


@orientation_helper(axis_forward="Y", axis_up="Z")
class IMPORT_SCENE_OT_studio3ds(bpy.types.Operator, ImportOperator):
    """Import a 3D Studio file: meshes, hierarchy, materials, cameras, lights and keyframes"""
    bl_idname = "import_scene.studio3ds"
    bl_label = "Import 3D Studio"
    format_name = "3ds"
    options_class = ImportOptions
    filename_ext = ".3ds"
    filter_glob: StringProperty(default="*.3ds", options={"HIDDEN"})
    image_search_folder: StringProperty(name="Image Folder", subtype="DIR_PATH", default="",
                                        description="Also search this folder, recursively, for textures "
                                                    "(the file's own folder is always searched)")
    use_master_scale: BoolProperty(name="Master Scale", default=False,
                                   description="Multiply lengths by the file's master scale (0x0100)")
    use_hierarchy: BoolProperty(name="Hierarchy", default=True,
                                description="Parent and place objects as the keyframer says (pivots, "
                                            "instances, dummies); off: the stored mesh placement only")
    normals: normals_property(smoothing_groups=True)
    world: EnumProperty(name="World", default="NEW", items=(
        ("NEW", "New World", "Ambient light, background and fog in a world of the file's own, set on the scene"),
        ("REPLACE", "Replace Scene World", "Rebuild the scene's current world from the file's environment"),
        ("NONE", "Keep Scene World", "Leave the scene's world as it is")))


@orientation_helper(axis_forward="Y", axis_up="Z")
class EXPORT_SCENE_OT_studio3ds(bpy.types.Operator, ExportOperator):
    """Export a 3D Studio file"""
    bl_idname = "export_scene.studio3ds"
    bl_label = "Export 3D Studio"
    format_name = "3ds"
    options_class = ExportOptions
    filename_ext = ".3ds"
    filter_glob: StringProperty(default="*.3ds", options={"HIDDEN"})
    name_limit: IntProperty(name="Name Length", default=10, min=10, max=16,
                            description="Longest object/material name: 10 (classic 3DS) or 16")
    texture_names_83: BoolProperty(name="8.3 Texture Names", default=False,
                                   description="Write texture file names as upper-case 8.3 names")
    use_hierarchy: BoolProperty(name="Hierarchy", default=True, description="Write parents through the keyframer")
    master_scale: FloatProperty(name="Master Scale", default=1.0, min=1e-6,
                                description="Value written as the file's master scale (0x0100)")
    path_mode: EnumProperty(name="Path Mode", items=texture_paths.MODES, default="STRIP",
                            description="How texture files are named in the file")

    def collect(self, context):
        scene = super().collect(context)
        texture_paths.refer_images(scene, self.filepath, self.path_mode, self.texture_names_83)
        return scene

    def draw(self, context):
        super().draw(context)
        self.layout.prop(self, "path_mode")


CLASSES = (
    IMPORT_SCENE_OT_studio3ds,
    EXPORT_SCENE_OT_studio3ds,
    file_handler("IO_FH_studio3ds", "3D Studio", "import_scene.studio3ds", "export_scene.studio3ds", ".3ds"),
)
IMPORT_MENU = [menu_entry("import_scene.studio3ds", "3D Studio (.3ds)")]
EXPORT_MENU = [menu_entry("export_scene.studio3ds", "3D Studio (.3ds)")]
