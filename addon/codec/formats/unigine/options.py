"""Codec-level options of the UNIGINE importers and exporters (the operators expose the same names)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...option_rules import Normals, normals_option, option, same_option


@dataclass(frozen=True)
class ImportOptions:
    """.mesh import."""

    one_object_per_surface: bool = option(False, "One Object per Surface", "An object per surface instead of one "
                                          "object with a material slot per surface")
    fps: float = option(30.0, "Frame Rate", "The files store no frame rate", min=0.01, max=1000.0)
    normals: Normals = normals_option()


@dataclass(frozen=True)
class ExportOptions:
    """.mesh export."""

    surfaces_from: Literal["MATERIAL", "OBJECT"] = option("MATERIAL", "Surfaces", "What becomes a surface", items={
        "MATERIAL": ("One per Material", "Merge the meshes; each material is a surface"),
        "OBJECT": ("One per Object", "Each mesh object is a surface")})
    embed_animations: bool = option(False, "Embed Animations", "Write the actions into the .mesh; otherwise beside "
                                    "it as a .anim of the same name")


@dataclass(frozen=True)
class AnimImportOptions:
    """.anim import."""

    fps: float = same_option(ImportOptions, "fps")
    rest_mesh: str = option("", "Rest Mesh", "A .mesh whose bind pose the keys are read against (empty: the "
                            ".anim's own bind block); the armature's rest is used in Blender", subtype="FILE_PATH")


@dataclass(frozen=True)
class AnimExportOptions:
    """.anim export: nothing to choose; boxes and flags follow the notes."""
