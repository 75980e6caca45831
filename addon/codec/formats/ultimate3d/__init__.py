"""Ultimate 3D model files (.u3d v2.0 and v1.0).

In-memory entry points (the same in every format package; the package's attributes
read, write, to_scene and from_scene are these modules): `read.parse(bytes, warnings,
password) -> model.Model (v2) | model.ModelV1 (v1)`, `write.encode_bytes(model) -> bytes`,
`to_scene.to_scene(model, ImportOptions(), warnings)` and
`from_scene.from_scene(scene, ExportOptions(), warnings)`. read.py and write.py
choose the version; read_v1/read_v2 and write_v1/write_v2 hold each version's layout.

Where each decision of specs/ultimate3d-notes.md lives:
- key interpolation: transforms.py;
  the warning for matrices that are not affine (elements 3, 7, 11, 15): transforms.warn_not_affine
- axes (Blender x y z = U3D X Z Y), matrices and quaternions: conventions.py; reversed
  winding: to_scene.scene_mesh, mesh_out.mesh_vertices
- the compressed-normal typo and the v1 constants: normals.py
- v1's lost types (nLOD WORD/DWORD, String names): read_v1.read_header
- one shadow-geometry index buffer, Triangle16/32 by nVertex: read_v2._shadow, model.index_dtype
- AES-128 ECB, zero-padded key (UTF-8 bytes, at most 16), padding byte, wrong password: crypto.py
- the "*" default texture path: materials.resolve_texture
- MeshToBone inverse as the rest pose, BoneFrame/PassOnBoneFrame: to_scene._Builder.skeleton
- continue at chunk start + ChunkSize, unknown chunks/tails kept: read_v2.parse_chunks
"""
from __future__ import annotations

from ...registry import FormatSpec
from . import from_scene, read, to_scene, write
from .model import Model, ModelV1
from .options import ExportOptions, ImportOptions


def version(model: Model | ModelV1) -> str:
    if isinstance(model, ModelV1):
        return f"{model.header.file_version:.1f}"
    fh = model.file_header
    return f"{fh.major}.{fh.minor}.{fh.subminor}"


FORMAT = FormatSpec(
    name="u3d",
    label="Ultimate 3D",
    extensions=(".u3d",),
    sniff=read.sniff,
    read=read.read,
    encode=write.encode,
    to_scene=to_scene.to_scene,
    from_scene=from_scene.from_scene,
    import_options=ImportOptions,
    export_options=ExportOptions,
    version=version,
    operator_id="scene.ultimate3d",
)
