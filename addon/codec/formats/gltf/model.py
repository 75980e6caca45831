"""The glTF 2.0 file model: the JSON document and its binary buffers, as the file holds them.

A `.gltf` names its buffers and images by URI (files beside it, or data: URIs); a
`.glb` holds the JSON chunk and one BIN chunk. The model keeps the JSON text as read
(`json_text`), so that an unchanged document writes back byte for byte, and the parsed
`json` for every reader and writer in between.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

GLB_MAGIC = b"glTF"
GLB_VERSION = 2
CHUNK_JSON = 0x4E4F534A
CHUNK_BIN = 0x004E4942

# accessor componentType -> numpy dtype string (little-endian)
COMPONENT_DTYPES = {5120: "i1", 5121: "u1", 5122: "<i2", 5123: "<u2", 5125: "<u4", 5126: "<f4"}
MESHOPT = ("EXT_meshopt_compression", "KHR_meshopt_compression")   # compress buffer views (the reader skips them)
TYPE_WIDTHS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}


@dataclass
class Document:
    json: dict[str, Any]                                   # the parsed glTF JSON
    buffers: list[bytes] = field(default_factory=list)     # buffers[i] is glTF buffer i's bytes
    # files beside a .gltf that its URIs name (images, and buffers kept as their own files): uri -> bytes
    resources: dict[str, bytes] = field(default_factory=dict)
    binary: bool = True                                    # .glb (one file) or .gltf (JSON + files)
    json_text: bytes = b""                                 # the JSON as read ("" for a written one)
    bin_padding: bytes = b""                               # a .glb's own padding/trailing bytes, kept
    name: str = ""                                         # the file's stem
    path: str = ""                                         # the file read ("" in memory): images beside it
