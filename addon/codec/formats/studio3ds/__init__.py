"""3D Studio .3ds: chunk-tree file model, byte-exact read/write, Scene conversion.

In-memory entry points (the same in every format package; the package's attributes
read, write, to_scene and from_scene are these modules): `read.parse(bytes, warnings)
-> Model`, `write.encode_bytes(model) -> bytes`, `to_scene.to_scene(model,
ImportOptions(), warnings)` and `from_scene.from_scene(scene, ExportOptions(), warnings)`.
"""
from __future__ import annotations

from pathlib import Path

from ...registry import FormatSpec, Limits
from . import from_scene, mesh_out, read, to_scene, write
from .model import Model
from .options import ExportOptions, ImportOptions


def encode(model: Model, target: Path) -> dict[Path, bytes]:
    return {Path(target): write.encode_bytes(model)}


def version(model: Model) -> str:
    v = model.version()
    return "" if v is None else str(v)


FORMAT = FormatSpec(
    name="3ds", label="3D Studio", extensions=(".3ds",), sniff=read.sniff, read=read.read, encode=encode,
    to_scene=to_scene.to_scene, from_scene=from_scene.from_scene, import_options=ImportOptions, export_options=ExportOptions,
    version=version, operator_id="scene.studio3ds",
    limits=Limits(vertices=mesh_out.LIMIT, faces=mesh_out.LIMIT, note="a bigger mesh is cut into further objects"),
)
