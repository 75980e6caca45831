"""Codec-level options; the Blender operators expose the same names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ...option_rules import Normals


@dataclass(frozen=True)
class ImportOptions:
    password: str = ""                 # for AES-encrypted files (EncryptionVersion 2)
    texture_search_folder: str = ""    # third place to look for "*"-prefixed texture names
    normals: Normals = "SHARP_EDGES"       # welded with sharp edges, welded with custom normals, or as stored


@dataclass(frozen=True)
class ExportOptions:
    version: Literal["2.0", "1.0"] = "2.0"  # 2.0: Ultimate 3D 3.0; 1.0: Ultimate 3D 2.1
    password: str = ""                 # non-empty: encrypt with AES-128 (v2.0 only)
