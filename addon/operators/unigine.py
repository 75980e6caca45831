"""File > Import/Export for UNIGINE meshes (.mesh) and skinned animations (.anim)."""
import bpy
from bpy.props import EnumProperty, StringProperty

from .. import bridge, codec
from ._scaffold import ExportOperator, ImportOperator, for_format


@for_format("unigine-mesh")
class IMPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ImportOperator):
    """Import a UNIGINE mesh (ms11): surfaces, UVs, colours, morph targets, skeleton, animations"""


@for_format("unigine-mesh")
class EXPORT_SCENE_OT_unigine_mesh(bpy.types.Operator, ExportOperator):
    """Export meshes as one UNIGINE mesh (ms11), with their armature; actions embedded or as .anim"""

    tangents = True          # Blender's MikkTSpace tangents feed the tangent quaternions, unless the mesh keeps
                             # the file's own (FormatSpec.tangent_attribute; export prefers those)


@for_format("unigine-anim")
class IMPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ImportOperator):
    """Import a UNIGINE animation (an10) onto the selected armature, matching bones by name"""
    armature_name: StringProperty(name="Armature", default="",
                                  description="The armature to animate (empty: the active one)")

    def build(self, context, scene, options):
        """Onto the armature: channels re-expressed against its rest, matched by bone name."""
        arm = bridge.find_armature(context, self.armature_name)
        if arm is None:
            raise codec.CodecError(f"no armature named {self.armature_name!r}" if self.armature_name
                                   else "select the armature to animate (or name it)")
        scene.warnings += codec.rebase(scene, bridge.armature_rest(arm))
        res = bridge.BuildResult(objects=[arm])
        if options.use_keyframes:
            res.actions = bridge.build_animations(scene, [], options.global_matrix, default_target=arm)
        bridge.apply_timeline(context, scene)
        return res

    def draw(self, context):
        super().draw(context)
        self.layout.prop(self, "armature_name")


@for_format("unigine-anim")
class EXPORT_ANIM_OT_unigine_anim(bpy.types.Operator, ExportOperator):
    """Export the armature's actions as a UNIGINE animation (an10)"""
    object_types: EnumProperty(name="Object Types", options={"ENUM_FLAG"}, default={"ARMATURE"},
                               items=(("ARMATURE", "Armature", ""),))
