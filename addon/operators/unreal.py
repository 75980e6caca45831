"""File > Import/Export for Unreal Engine 1 vertex meshes (X_d.3d + X_a.3d + X.uc)."""
import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import orientation_helper

from .. import bridge
from ..codec.errors import UnsupportedFeature
from ..codec.formats.unreal.from_scene import MAX_FRAMES
from ..codec.formats.unreal.options import ExportOptions, ImportOptions
from ._scaffold import ExportOperator, ImportOperator, file_handler, menu_entry

_GLOB = "*.3d;*.uc"


@orientation_helper(axis_forward="Y", axis_up="Z")
class IMPORT_SCENE_OT_unreal_vertex_mesh(bpy.types.Operator, ImportOperator):
    """Import an Unreal Engine 1 vertex mesh: pick X_d.3d, X_a.3d or the X.uc script"""
    bl_idname = "import_scene.unreal_vertex_mesh"
    bl_label = "Import Unreal Vertex Mesh"
    format_name = "unreal"
    options_class = ImportOptions
    filename_ext = ".3d"
    filter_glob: StringProperty(default=_GLOB, options={"HIDDEN"})
    use_uc_script: BoolProperty(name="Use .uc Script", default=True,
                                description="Read X.uc (beside the pair or in Classes/) for scale, origin, "
                                            "sequences, notifies and skins")
    texture_search_folder: StringProperty(name="Texture Folder", subtype="DIR_PATH", default="",
                                          description="Another folder to search for the skins the script names")
    mesh_name: StringProperty(name="Mesh Name", default="",
                              description="Which MESH of a script that imports several (empty: the pair's own)")


@orientation_helper(axis_forward="Y", axis_up="Z")
class EXPORT_SCENE_OT_unreal_vertex_mesh(bpy.types.Operator, ExportOperator):
    """Export a mesh, frame by frame, as an Unreal Engine 1 vertex mesh with its .uc script"""
    bl_idname = "export_scene.unreal_vertex_mesh"
    bl_label = "Export Unreal Vertex Mesh"
    format_name = "unreal"
    options_class = ExportOptions
    filename_ext = ".3d"
    check_extension = None               # X_d.3d, X_a.3d, X.3d and X.uc are all valid targets
    bake_vertices = True                 # meshes deformed by modifiers: one absolute shape key per frame
    filter_glob: StringProperty(default=_GLOB, options={"HIDDEN"})
    variant: EnumProperty(name="Format", default="AS_IMPORTED", items=(
        ("AS_IMPORTED", "As Imported", "The packing the mesh was imported with (Standard for a mesh made in "
                                       "Blender); the import's UNMIRROR is kept too"),
        ("STANDARD", "Standard (packed)", "Unreal / Unreal Tournament: 11/11/10-bit packed vertices"),
        ("DEUS_EX", "Deus Ex (16-bit)", "Deus Ex: 16-bit vertices, at most 8191")))
    scale: FloatProperty(name="Vertex Scale", default=1.0, min=0.0, soft_max=100.0,
                         description="Multiplies the default packing (X*8, Y*8, Z*4; Deus Ex x256); "
                                     "0 fits the mesh into the packed range")
    use_scene_range: BoolProperty(name="Scene Frame Range", default=True,
                                  description="Write the scene's start to end frame; off: Start Frame to "
                                              "End Frame below, exactly as given")
    frame_start: IntProperty(name="Start Frame", default=1,
                             description="First frame to write when Scene Frame Range is off")
    frame_end: IntProperty(name="End Frame", default=250,
                           description="Last frame to write when Scene Frame Range is off")
    sequence_source: EnumProperty(name="Sequences", default="ANIMATIONS", items=(
        ("ANIMATIONS", "Actions / NLA Strips", "One MESH SEQUENCE per action and NLA strip"),
        ("MARKERS", "Timeline Markers", "Each marker starts a sequence that runs to the next"),
        ("ALL", "One Sequence", "A single 'All' sequence over every frame")))
    write_uc: BoolProperty(name="Write .uc Script", default=True)
    package_name: StringProperty(name="Package", default="", description="Package named in the script")
    texture_group: StringProperty(name="Texture Group", default="Skins")
    texture_prefix: StringProperty(name="Texture Prefix", default="",
                                   description="Prefix for the texture names in the script")
    use_active_object: BoolProperty(name="Active Object Only", default=False,
                                    description="Write only the active object; off: every mesh object within the "
                                                "limits is merged into the one Unreal mesh")

    def invoke(self, context, event):
        if self.use_scene_range:         # unticking it then shows the scene's range to edit
            self.frame_start, self.frame_end = context.scene.frame_start, context.scene.frame_end
        return super().invoke(context, event)

    def collect_options(self) -> bridge.CollectOptions:
        from dataclasses import replace
        # one vertex frame per frame whatever the curves' keys: thinning them would only cost time
        o = replace(super().collect_options(), use_active_object=self.use_active_object, source_keys=False)
        if self.use_scene_range:
            return o                     # None, None: the bake covers the scene's range
        # as given: an end before the start bakes nothing, and the codec says so
        if self.frame_end - self.frame_start + 1 > MAX_FRAMES:
            raise UnsupportedFeature(f"frames {self.frame_start}..{self.frame_end}: the format holds at most "
                                     f"{MAX_FRAMES} frames")
        return replace(o, frame_start=self.frame_start, frame_end=self.frame_end)

    def draw(self, context):
        ExportOperator.draw(self, context)
        if not self.collection:
            box = self.layout.box()
            box.label(text="Objects")
            box.prop(self, "use_active_object")


CLASSES = (
    IMPORT_SCENE_OT_unreal_vertex_mesh,
    EXPORT_SCENE_OT_unreal_vertex_mesh,
    file_handler("IO_FH_unreal_vertex_mesh", "Unreal Vertex Mesh", "import_scene.unreal_vertex_mesh",
                 "export_scene.unreal_vertex_mesh", ".3d;.uc"),
)
IMPORT_MENU = [menu_entry("import_scene.unreal_vertex_mesh", "Unreal Vertex Mesh (_d.3d, _a.3d, .uc)")]
EXPORT_MENU = [menu_entry("export_scene.unreal_vertex_mesh", "Unreal Vertex Mesh (_d.3d, _a.3d, .uc)")]
