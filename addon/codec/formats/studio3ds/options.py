"""Codec-level options for .3ds; the Blender operators expose the same names.

User axes and global scale are applied by the Blender side, not here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...option_rules import Normals


@dataclass(frozen=True)
class ImportOptions:
    image_search_folder: str = ""          # searched recursively after the file's own folder
    use_keyframes: bool = True             # build actions from the keyframer tracks
    apply_transform: bool = False          # bake frame-0 world placement into the meshes
    # which node kinds to import: a set, or a comma list on the command line ("MESH,CAMERA")
    object_types: frozenset = frozenset({"EMPTY", "MESH", "CAMERA", "LIGHT", "ARMATURE"})
    use_master_scale: bool = False         # multiply lengths by the file's master scale (0x0100)
    use_hierarchy: bool = True             # parent objects as the keyframer says
    # SHARP_EDGES: welded vertices, smoothing groups as sharp edges and flat faces (Blender's own
    # smoothing); EXACT: welded, the groups' normals as custom normals; KEEP: the file's vertices
    # as stored (cut at UV seams) with custom normals
    normals: Normals = "SHARP_EDGES"           # welded with sharp edges, welded with custom normals, or as stored


@dataclass(frozen=True)
class ExportOptions:
    use_keyframes: bool = True             # write animation tracks, not just frame-0 keys
    name_limit: int = field(default=10, metadata={"min": 10, "max": 16})  # longest object/material name: 10 (classic 3DS) to 16
    texture_names_83: bool = False         # write texture file names as 8.3
    use_hierarchy: bool = True             # write the keyframer hierarchy
    master_scale: float = 1.0              # value written to 0x0100
