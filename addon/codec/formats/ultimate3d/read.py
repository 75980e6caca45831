"""Ultimate 3D bytes -> model: v2.0 (read_v2) or v1.0 (read_v1) by the file's magic."""
from __future__ import annotations

from pathlib import Path

from ...errors import FormatError, Warnings
from . import read_v1, read_v2
from .model import V1_MAGIC, V2_MAGIC, Model, ModelV1
from .options import ImportOptions

UNIVERSAL_3D_MAGIC = b"U3D\0"   # ECMA-363 Universal 3D: same extension, unrelated format


def sniff(head: bytes, filename: str = "") -> bool:
    return head.startswith(V2_MAGIC) or head.startswith(V1_MAGIC)


def parse(data: bytes, warnings: Warnings, password: str = "", source: str = "") -> Model | ModelV1:
    if data.startswith(V2_MAGIC):
        return read_v2.read(data, warnings, password, source)
    if data.startswith(V1_MAGIC):
        return read_v1.read(data, warnings, source)
    if data.startswith(UNIVERSAL_3D_MAGIC):
        raise FormatError("this is a Universal 3D (ECMA-363) file, an unrelated format that shares the .u3d "
                          "extension; only Ultimate 3D model files are supported", 0)
    raise FormatError("not an Ultimate 3D model file: it starts with neither 'U3DModelFile' (v1.0) "
                      "nor '$U3D_FILE_HEADER' (v2.0)", 0)


def read(path: Path, options: ImportOptions, warnings: Warnings) -> Model | ModelV1:
    return parse(Path(path).read_bytes(), warnings, options.password, str(path))
