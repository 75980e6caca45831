"""Codec-level options for Unreal Engine 1 vertex meshes (the operators expose the same names)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...option_rules import option


@dataclass(frozen=True)
class ImportOptions:
    use_uc_script: bool = option(True, "Use .uc Script", "Read X.uc (beside the pair or in Classes/) for scale, "
                                 "origin, sequences, notifies and skins")
    texture_search_folder: str = option("", "Texture Folder", "Another folder to search for the skins the script "
                                        "names (empty: only the package folders)", subtype="DIR_PATH")
    mesh_name: str = option("", "Mesh Name", "Which MESH to import: of a .uc, one by name (empty: every mesh "
                            "whose files exist); of a data file several scripts import, whose animation (empty: "
                            "the first; the import's warning lists them)")


@dataclass(frozen=True)
class ExportOptions:
    variant: Literal["AS_IMPORTED", "STANDARD", "DEUS_EX"] = option("AS_IMPORTED", "Format", "The vertex packing", items={
        "AS_IMPORTED": ("As Imported", "The packing the mesh was imported with (Standard for a mesh made in "
                                       "Blender); the import's UNMIRROR is kept too"),
        "STANDARD": ("Standard (packed)", "Unreal / Unreal Tournament: 11/11/10-bit packed vertices"),
        "DEUS_EX": ("Deus Ex (16-bit)", "Deus Ex: 16-bit vertices, at most 8191")})
    scale: float = option(1.0, "Vertex Scale", "Multiplies the default packing (X*8, Y*8, Z*4; Deus Ex x256); "
                          "0 fits the mesh into the packed range", min=0.0, soft_max=100.0)
    use_scene_range: bool = option(True, "Scene Frame Range", "Write the scene's start to end frame; off: Start "
                                   "Frame to End Frame, exactly as given")
    frame_start: int = option(1, "Start Frame", "First frame to write when Scene Frame Range is off")
    frame_end: int = option(250, "End Frame", "Last frame to write when Scene Frame Range is off")
    sequence_source: Literal["ANIMATIONS", "MARKERS", "ALL"] = option(
        "ANIMATIONS", "Sequences", "What becomes a MESH SEQUENCE", items={
            "ANIMATIONS": ("Actions / NLA Strips", "One MESH SEQUENCE per action and NLA strip"),
            "MARKERS": ("Timeline Markers", "Each marker starts a sequence that runs to the next"),
            "ALL": ("One Sequence", "A single 'All' sequence over every frame")})
    separate_meshes: bool = option(False, "Separate Meshes", "Each mesh object its own pair (named after it) and "
                                   "MESH IMPORT in the one script; off: every object merged into one mesh")
    write_uc: bool = option(True, "Write .uc Script", "Write X.uc beside the pair (or the pair into Models/ for "
                            "Classes/X.uc)")
    package_name: str = option("", "Package", "Package named in the script's defaultproperties (empty: none)")
    texture_group: str = option("Skins", "Texture Group", "GROUP= of TEXTURE IMPORT")
    texture_prefix: str = option("", "Texture Prefix", "Prefix for texture names without one (e.g. J gives Jskin1)")
