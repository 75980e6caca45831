"""Codec-level options; the Blender operators expose the same names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...option_rules import Normals, normals_option, option


@dataclass(frozen=True)
class ImportOptions:
    password: str = option("", "Password", "Password of an encrypted (AES) file", secret=True)
    texture_search_folder: str = option("", "Texture Folder", "Where to look for textures not found beside the "
                                        "model or in its gfx/ folder", subtype="DIR_PATH")
    normals: Normals = normals_option()


@dataclass(frozen=True)
class ExportOptions:
    version: Literal["2.0", "1.0"] = option("2.0", "Version", "2.0: Ultimate 3D 3.0; 1.0: Ultimate 3D 2.1", items={
        "2.0": ("2.0", "Ultimate 3D 3.0: chunked, LoD distances, action ranges, encryption"),
        "1.0": ("1.0", "Ultimate 3D 2.1: fixed layout, 16-bit counts, no action ranges")})
    password: str = option("", "Password", "Encrypt the file with AES-128 (v2.0 only; empty: no encryption)",
                           secret=True)
