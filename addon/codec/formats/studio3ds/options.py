"""Codec-level options for .3ds; the Blender operators expose the same names.

User axes and global scale are applied by the Blender side, not here.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...option_rules import NORMALS_ITEMS, Normals, normals_option, option, same_option
from ...scene_options import ExportContent, ImportContent

SMOOTHING_GROUP_NORMALS = {**NORMALS_ITEMS, "SHARP_EDGES": (
    "Smoothing Groups (Sharp Edges)", "Weld the vertices at one point; smoothing groups become sharp edges and flat "
    "faces, which Blender shades itself and keeps up to date as you edit (the groups are kept for export)")}


@dataclass(frozen=True)
class ImportOptions(ImportContent):
    """use_keyframes, object_types and apply_transform are the bridge's too (scene_options)."""

    image_search_folder: str = option("", "Image Folder", "Also search this folder, recursively, for textures "
                                      "(the file's own folder is always searched)", subtype="DIR_PATH")
    use_master_scale: bool = option(False, "Master Scale", "Multiply lengths by the file's master scale (0x0100)")
    use_hierarchy: bool = option(True, "Hierarchy", "Parent and place objects as the keyframer says (pivots, "
                                 "instances, dummies); off: the stored mesh placement only")
    normals: Normals = normals_option(SMOOTHING_GROUP_NORMALS)


@dataclass(frozen=True)
class ExportOptions:
    use_keyframes: bool = same_option(ExportContent, "use_keyframes")
    name_limit: int = option(10, "Name Length", "Longest object/material name: 10 (classic 3DS) to 16",
                             min=10, max=16)
    texture_names_83: bool = option(False, "8.3 Texture Names", "Write texture file names as upper-case 8.3 names")
    use_hierarchy: bool = option(True, "Hierarchy", "Write parents through the keyframer")
    master_scale: float = option(1.0, "Master Scale", "Value written as the file's master scale (0x0100)", min=1e-6)
