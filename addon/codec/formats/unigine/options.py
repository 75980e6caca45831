"""Codec-level options of the UNIGINE importers and exporters (the operators expose the same names)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...option_rules import Normals


@dataclass(frozen=True)
class ImportOptions:
    """.mesh import."""

    one_object_per_surface: bool = False   # a Mesh per surface instead of one Mesh with a slot per surface
    fps: float = 30.0                      # the files store no frame rate
    normals: Normals = "SHARP_EDGES"           # welded with sharp edges, welded with custom normals, or as stored


@dataclass(frozen=True)
class ExportOptions:
    """.mesh export."""

    surfaces_from: Literal["MATERIAL", "OBJECT"] = "MATERIAL"      # MATERIAL: a surface per material; OBJECT: a surface per mesh object
    embed_animations: bool = False         # actions inside the .mesh; otherwise beside it as <name>.anim


@dataclass(frozen=True)
class AnimImportOptions:
    """.anim import."""

    fps: float = 30.0
    rest_mesh: str = ""                    # a .mesh whose bind pose is the rest ("" = the .anim's own bind block)


@dataclass(frozen=True)
class AnimExportOptions:
    """.anim export: nothing to choose; boxes and flags follow the notes."""
