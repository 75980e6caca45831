"""Neutral Scene <-> Blender data. The only code that builds or reads bpy.data.

    result = build_scene(scene, BuildOptions(...))      # Scene -> objects
    scene = collect_scene(context, CollectOptions(...))  # objects -> Scene

Operators use what this package exports, nothing below it.
"""
from .animation_build import armature_rest, build_animations, find_armature
from .collect import collect_scene, read_mesh
from .scene_build import BuildOptions, BuildResult, apply_timeline, build_scene
from .scope import CollectOptions, objects_in_scope, shape_keys_animated
from .texture_paths import MODES as TEXTURE_PATH_MODES
from .texture_paths import refer_images

__all__ = ["BuildOptions", "BuildResult", "CollectOptions", "TEXTURE_PATH_MODES", "apply_timeline",
           "armature_rest", "build_animations", "build_scene", "collect_scene", "find_armature",
           "objects_in_scope", "read_mesh", "refer_images", "shape_keys_animated"]
