"""Ultimate 3D model files (.u3d v2.0 and v1.0).

read() -> model (model.Model for v2, model.ModelV1 for v1), encode() -> bytes,
to_scene() / from_scene() <-> the neutral Scene. The benchmark entry points
are these four functions plus `encode_bytes`/`parse_bytes` for in-memory work.

Where each decision of specs/ultimate3d-notes.md lives:
- row-vector matrices, x y z w quaternions, key interpolation: transforms.py;
  the warning for matrices that are not affine (elements 3, 7, 11, 15): transforms.warn_not_affine
- axes (Blender x y z = U3D X Z Y) and reversed winding: to_scene.scene_mesh,
  mesh_out.mesh_vertices
- the compressed-normal typo and the v1 constants: normals.py
- v1's lost types (nLOD WORD/DWORD, String names): read_v1.read_header
- one shadow-geometry index buffer, Triangle16/32 by nVertex: read_v2._shadow
- AES-128 ECB, zero-padded key (UTF-8 bytes, at most 16), padding byte, wrong password: crypto.py
- the "*" default texture path: materials.resolve_texture
- MeshToBone inverse as the rest pose, BoneFrame/PassOnBoneFrame: to_scene._Builder.skeleton
- continue at chunk start + ChunkSize, unknown chunks/tails kept: read_v2.parse_chunks
"""
from __future__ import annotations

from pathlib import Path

from ...errors import FormatError, Warnings
from ...registry import FormatSpec
from . import read_v1, read_v2, write_v1, write_v2
from .from_scene import from_scene
from .to_scene import to_scene
from .model import V1_MAGIC, V2_MAGIC, Model, ModelV1
from .options import ExportOptions, ImportOptions

UNIVERSAL_3D_MAGIC = b"U3D\0"   # ECMA-363 Universal 3D: same extension, unrelated format


def sniff(head: bytes, filename: str = "") -> bool:
    return head.startswith(V2_MAGIC) or head.startswith(V1_MAGIC)


def parse_bytes(data: bytes, warnings: Warnings, password: str = "", source: str = "") -> Model | ModelV1:
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
    return parse_bytes(Path(path).read_bytes(), warnings, options.password, str(path))


def encode_bytes(model: Model | ModelV1) -> bytes:
    return write_v1.write(model) if isinstance(model, ModelV1) else write_v2.write(model)


def encode(model: Model | ModelV1, target: Path) -> dict[Path, bytes]:
    return {Path(target): encode_bytes(model)}


def version(model: Model | ModelV1) -> str:
    if isinstance(model, ModelV1):
        return f"{model.header.file_version:.1f}"
    fh = model.file_header
    return f"{fh.major}.{fh.minor}.{fh.subminor}"


FORMAT = FormatSpec(
    name="u3d",
    label="Ultimate 3D",
    extensions=(".u3d",),
    sniff=sniff,
    read=read,
    encode=encode,
    to_scene=to_scene,
    from_scene=from_scene,
    import_options=ImportOptions,
    export_options=ExportOptions,
    version=version,
    operator_id="scene.ultimate3d",
)
