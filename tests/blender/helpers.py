"""Small readers the Blender tests share (independent of the bridge they check)."""
import numpy as np

import bpy


def evaluated_positions(ob, world: bool = False) -> np.ndarray:
    """(V, 3) vertex positions as the depsgraph shows them now (object space, or world)."""
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = ev.to_mesh()
    try:
        co = np.empty(len(me.vertices) * 3, np.float32)
        me.vertices.foreach_get("co", co)
    finally:
        ev.to_mesh_clear()
    co = co.reshape(-1, 3)
    if not world:
        return co
    m = np.array(ob.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]
