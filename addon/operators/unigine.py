"""File > Import/Export for UNIGINE meshes (.mesh) and skinned animations (.anim)."""
import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import orientation_helper

from .. import bridge
from ..bridge.animation_build import build_animations
from ..codec.axes import inverse_or_identity
from ..codec.errors import CodecError, Warnings
from ..codec.formats.unigine.options import AnimExportOptions, AnimImportOptions, ExportOptions, ImportOptions
from ..codec.formats.unigine.conventions import TANGENT_ATTR
from ..codec.formats.unigine.to_scene import rebase_animations
from ._normals import normals_property
from ._scaffold import ExportOperator, ImportOperator, file_handler, menu_entry

_FPS = dict(name="Frame Rate", default=30.0, min=0.01, max=1000.0,
            description="The files store no frame rate")


@orientation_helper(axis_forward="Y", axis_up="Z")
class IMPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ImportOperator):
    """Import a UNIGINE mesh (ms11): surfaces, UVs, colours, morph targets, skeleton, animations"""
    bl_idname = "import_scene.unigine_mesh"
    bl_label = "Import UNIGINE Mesh"
    format_name = "unigine-mesh"
    options_class = ImportOptions
    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
    one_object_per_surface: BoolProperty(name="One Object per Surface", default=False,
                                         description="An object per surface instead of one object with a "
                                                     "material slot per surface")
    fps: FloatProperty(**_FPS)
    normals: normals_property()


@orientation_helper(axis_forward="Y", axis_up="Z")
class EXPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ExportOperator):
    """Export meshes as one UNIGINE mesh (ms11), with their armature; actions embedded or as .anim"""
    bl_idname = "export_scene.unigine_mesh"
    bl_label = "Export UNIGINE Mesh"
    format_name = "unigine-mesh"
    options_class = ExportOptions
    filename_ext = ".mesh"
    filter_glob: StringProperty(default="*.mesh", options={"HIDDEN"})
    surfaces_from: EnumProperty(name="Surfaces", default="MATERIAL", items=(
        ("MATERIAL", "One per Material", "Merge the meshes; each material is a surface"),
        ("OBJECT", "One per Object", "Each mesh object is a surface")))
    embed_animations: BoolProperty(name="Embed Animations", default=False,
                                   description="Write the actions into the .mesh; otherwise beside it as "
                                               "a .anim of the same name")

    tangents = True          # Blender's MikkTSpace tangents feed the tangent quaternions
    tangents_kept_as = TANGENT_ATTR      # unless the mesh keeps the file's own (export prefers those)


def _armature(context, name: str):
    """The armature the user names, else the active object's (or its parent's), else the only one."""
    if name:
        ob = bpy.data.objects.get(name)
        return ob if ob is not None and ob.type == "ARMATURE" else None
    ob = context.view_layer.objects.active
    for cand in (ob, getattr(ob, "parent", None)):
        if cand is not None and cand.type == "ARMATURE":
            return cand
    arms = [o for o in context.scene.objects if o.type == "ARMATURE"]
    return arms[0] if len(arms) == 1 else None


def _rest_local(arm) -> dict:
    """Parent-local rest matrices of the armature's bones, by name (per bone: fine)."""
    out = {}
    for b in arm.data.bones:
        m = np.array(b.matrix_local, np.float64)
        if b.parent is not None:
            m = inverse_or_identity(np.array(b.parent.matrix_local, np.float64)) @ m
        out[b.name] = m
    return out


@orientation_helper(axis_forward="Y", axis_up="Z")
class IMPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ImportOperator):
    """Import a UNIGINE animation (an10) onto the selected armature, matching bones by name"""
    bl_idname = "import_anim.unigine_anim"
    bl_label = "Import UNIGINE Animation"
    format_name = "unigine-anim"
    options_class = AnimImportOptions
    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    fps: FloatProperty(**_FPS)
    rest_mesh: StringProperty(name="Rest Mesh", subtype="FILE_PATH", default="",
                              description="A .mesh whose bind pose the keys are read against (empty: the "
                                          ".anim's own bind block); the armature's rest is used in Blender")
    armature_name: StringProperty(name="Armature", default="",
                                  description="The armature to animate (empty: the active one)")

    def build(self, context, scene, options):
        """Onto the armature: channels re-expressed against its rest, matched by bone name."""
        arm = _armature(context, self.armature_name)
        if arm is None:
            raise CodecError(f"no armature named {self.armature_name!r}" if self.armature_name
                             else "select the armature to animate (or name it)")
        w = Warnings()
        rebase_animations(scene, _rest_local(arm), w)
        scene.warnings += w.as_list()
        res = bridge.BuildResult(objects=[arm])
        if options.use_keyframes:
            res.actions = build_animations(scene, [], options.global_matrix, default_target=arm)
        bridge.apply_timeline(context, scene)
        return res

    def draw(self, context):
        super().draw(context)
        self.layout.prop(self, "armature_name")


@orientation_helper(axis_forward="Y", axis_up="Z")
class EXPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ExportOperator):
    """Export the armature's actions as a UNIGINE animation (an10)"""
    bl_idname = "export_anim.unigine_anim"
    bl_label = "Export UNIGINE Animation"
    format_name = "unigine-anim"
    options_class = AnimExportOptions
    filename_ext = ".anim"
    filter_glob: StringProperty(default="*.anim", options={"HIDDEN"})
    object_types: EnumProperty(name="Object Types", options={"ENUM_FLAG"}, default={"ARMATURE"},
                               items=(("ARMATURE", "Armature", ""),))


CLASSES = (
    IMPORT_SCENE_OT_unigine_mesh,
    EXPORT_SCENE_OT_unigine_mesh,
    IMPORT_ANIM_OT_unigine_anim,
    EXPORT_ANIM_OT_unigine_anim,
    file_handler("IO_FH_unigine_mesh", "UNIGINE Mesh", "import_scene.unigine_mesh", "export_scene.unigine_mesh",
                 ".mesh"),
    file_handler("IO_FH_unigine_anim", "UNIGINE Animation", "import_anim.unigine_anim", "export_anim.unigine_anim",
                 ".anim"),
)
IMPORT_MENU = [menu_entry("import_scene.unigine_mesh", "UNIGINE Mesh (.mesh)"),
               menu_entry("import_anim.unigine_anim", "UNIGINE Animation (.anim)")]
EXPORT_MENU = [menu_entry("export_scene.unigine_mesh", "UNIGINE Mesh (.mesh)"),
               menu_entry("export_anim.unigine_anim", "UNIGINE Animation (.anim)")]
