"""Legacy Game Formats: import and export of .3ds, Unreal 1 vertex meshes,
UNIGINE .mesh/.anim and Ultimate 3D .u3d.

Only register()/unregister() live here; bpy is imported inside them so that
`import addon.codec` works on plain Python.
"""


def register():
    from . import operators
    operators.register()


def unregister():
    from . import operators
    operators.unregister()
