"""3D Studio .3ds: chunk-tree file model, byte-exact read/write, Scene conversion.

For benchmarks: `read.parse(bytes)`, `write.encode_bytes(model)`,
`to_scene.to_scene(model, ImportOptions(), Warnings())` and
`from_scene.from_scene(scene, ExportOptions(), Warnings())`.
"""
from __future__ import annotations

from pathlib import Path

from ...registry import FormatSpec, Limits
from .from_scene import from_scene
from .mesh_out import LIMIT
from .model import Model
from .options import ExportOptions, ImportOptions
from .read import read, sniff
from .to_scene import to_scene
from .write import encode_bytes


def encode(model: Model, target: Path) -> dict[Path, bytes]:
    return {Path(target): encode_bytes(model)}


def version(model: Model) -> str:
    v = model.version()
    return "" if v is None else str(v)


FORMAT = FormatSpec(
    name="3ds", label="3D Studio", extensions=(".3ds",), sniff=sniff, read=read, encode=encode,
    to_scene=to_scene, from_scene=from_scene, import_options=ImportOptions, export_options=ExportOptions,
    version=version, operator_id="scene.studio3ds",
    limits=Limits(vertices=LIMIT, faces=LIMIT, note="a bigger mesh is cut into further objects"),
)
