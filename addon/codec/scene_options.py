"""The options that say which part of a scene is taken, declared once for every layer.

The bridge's BuildOptions and CollectOptions, the .3ds codec options (which apply them
for the command line too) and the operators' properties all come from these fields.
"""
from __future__ import annotations

from dataclasses import dataclass

from .option_rules import option

OBJECT_TYPES = {"EMPTY": ("Empty", ""), "MESH": ("Mesh", ""), "CAMERA": ("Camera", ""),
                "LIGHT": ("Light", ""), "ARMATURE": ("Armature", "")}


@dataclass(frozen=True)
class ImportContent:
    use_keyframes: bool = option(True, "Animation", "Import keyframes and actions")
    # a set, or a comma list on the command line ("MESH,CAMERA")
    object_types: frozenset = option(frozenset(OBJECT_TYPES), "Object Types", "Which kinds of object to import",
                                     items=OBJECT_TYPES)
    apply_transform: bool = option(False, "Apply Transform",
                                   "Bake the first frame's placement of root objects into the mesh data")


@dataclass(frozen=True)
class ExportContent:
    use_keyframes: bool = option(True, "Animation", "Write the animation, not only the current pose")
    object_types: frozenset = option(frozenset(OBJECT_TYPES), "Object Types", "Which kinds of object to export",
                                     items=OBJECT_TYPES)
