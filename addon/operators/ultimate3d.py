"""File > Import/Export for Ultimate 3D models (.u3d v2.0 and v1.0)."""
from dataclasses import replace

import bpy

from .. import bridge
from ._scaffold import ExportOperator, ImportOperator, for_format


@for_format("u3d")
class IMPORT_SCENE_OT_ultimate3d(bpy.types.Operator, ImportOperator):
    """Import an Ultimate 3D model (.u3d v1.0 or v2.0)"""


@for_format("u3d")
class EXPORT_SCENE_OT_ultimate3d(bpy.types.Operator, ExportOperator):
    """Export an Ultimate 3D model (.u3d): meshes, LoDs, materials, skeleton, skinning and actions"""

    def collect_options(self) -> bridge.CollectOptions:
        o = super().collect_options()
        # frame-based animation: without a skeleton, animated shape keys are baked one key per frame
        objs = bridge.objects_in_scope(bpy.context, o)
        if not any(ob.type == "ARMATURE" for ob in objs) and bridge.shape_keys_animated(objs):
            o = replace(o, bake_vertices=True)
        return o
