"""Neutral Scene <-> Blender data. The only code that builds or reads bpy.data.

    result = build_scene(scene, BuildOptions(...))      # Scene -> objects
    scene = collect_scene(context, CollectOptions(...))  # objects -> Scene
"""
from .collect import CollectOptions, collect_scene, objects_in_scope, read_mesh
from .scene_build import BuildOptions, BuildResult, apply_timeline, build_scene

__all__ = ["BuildOptions", "BuildResult", "CollectOptions", "apply_timeline", "build_scene", "collect_scene",
           "objects_in_scope", "read_mesh"]
