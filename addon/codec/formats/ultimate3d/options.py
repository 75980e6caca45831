"""Codec-level options; the Blender operators expose the same names."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ImportOptions:
    password: str = ""                 # for AES-encrypted files (EncryptionVersion 2)
    texture_search_folder: str = ""    # third place to look for "*"-prefixed texture names
    normals: str = "SHARP_EDGES"       # SHARP_EDGES, EXACT or KEEP: welded with sharp edges, welded with custom normals, as stored


@dataclass(frozen=True)
class ExportOptions:
    version: str = "2.0"               # "2.0" or "1.0"
    password: str = ""                 # non-empty: encrypt with AES-128 (v2.0 only)
