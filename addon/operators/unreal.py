"""File > Import/Export for Unreal Engine 1 vertex meshes (X_d.3d + X_a.3d + X.uc)."""
from dataclasses import replace

import bpy

from .. import bridge, codec
from ._scaffold import ExportOperator, ImportOperator, for_format, option_properties


@for_format("unreal")
class IMPORT_SCENE_OT_unreal_vertex_mesh(bpy.types.Operator, ImportOperator):
    """Import an Unreal Engine 1 vertex mesh: pick X_d.3d, X_a.3d or the X.uc script"""


@for_format("unreal")
class EXPORT_SCENE_OT_unreal_vertex_mesh(bpy.types.Operator, ExportOperator):
    """Export a mesh, frame by frame, as an Unreal Engine 1 vertex mesh with its .uc script"""
    check_extension = None               # X_d.3d, X_a.3d, X.3d and X.uc are all valid targets
    bake_vertices = True                 # meshes deformed by modifiers: one absolute shape key per frame
    use_active_object: option_properties(bridge.CollectOptions, {"use_active_object"})["use_active_object"]

    def invoke(self, context, event):
        if self.use_scene_range:         # unticking it then shows the scene's range to edit
            self.frame_start, self.frame_end = context.scene.frame_start, context.scene.frame_end
        return super().invoke(context, event)

    def collect_options(self) -> bridge.CollectOptions:
        # one vertex frame per frame whatever the curves' keys: thinning them would only cost time
        o = replace(super().collect_options(), source_keys=False)
        if self.use_scene_range:
            return o                     # None, None: the bake covers the scene's range
        # as given: an end before the start bakes nothing, and the codec says so
        if self.frame_end - self.frame_start + 1 > self.limits.frames:
            raise codec.UnsupportedFeature(f"frames {self.frame_start}..{self.frame_end}: the format holds at most "
                                           f"{self.limits.frames} frames")
        return replace(o, frame_start=self.frame_start, frame_end=self.frame_end)

    def draw(self, context):
        ExportOperator.draw(self, context)
        if not self.collection:
            box = self.layout.box()
            box.label(text="Objects")
            box.prop(self, "use_active_object")
