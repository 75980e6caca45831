"""Unreal Engine 1 vertex meshes: X_d.3d (geometry) + X_a.3d (frames) + optional X.uc script.

In-memory entry points (the same in every format package; the package's attributes
read, write, to_scene and from_scene are these modules): `read.parse(d_bytes, a_bytes,
warnings, script_bytes) -> UnrealMesh`, `write.encode_bytes(model) -> {file name: bytes}`,
`to_scene.to_scene(model, ImportOptions(), warnings)` and
`from_scene.from_scene(scene, ExportOptions(), warnings)`; one file alone:
`read.read_geometry` / `read.read_animation`, `write.write_geometry` / `write.write_animation`.
"""
from __future__ import annotations

from ...registry import FormatSpec, Limits
from . import files, from_scene, read, to_scene, write
from .merge import MAX_FRAMES
from .model import DEUS_EX, MAX_VERTICES, STANDARD
from .options import ExportOptions, ImportOptions


def sniff(head: bytes, filename: str) -> bool:
    """The pair has no magic: the names say which file is which; a .uc must hold #exec lines."""
    low = filename.lower()
    if low.endswith(".uc"):
        return True
    return low.endswith(("_d.3d", "_a.3d")) and len(head) >= 4


def version(model) -> str:
    kinds = {"Deus Ex 16-bit" if m.variant == DEUS_EX else "standard packed" for m in getattr(model, "meshes", [model])}
    return " and ".join(sorted(kinds))


FORMAT = FormatSpec(
    name="unreal",
    label="Unreal Engine 1 Vertex Mesh",
    extensions=(".3d", ".uc"),
    sniff=sniff,
    read=read.read,
    encode=write.encode,
    to_scene=to_scene.to_scene,
    from_scene=from_scene.from_scene,
    import_options=ImportOptions,
    export_options=ExportOptions,
    sources=read.sources,
    parts=read.parts, part_option="mesh_name",
    version=version,
    set_name=lambda p: files.stem_and_role(p)[0],
    partner=read.is_partner,                                       # the data file stands for the set
    main_suffix="_d.3d",
    written=lambda p: [p, p.with_name(files.stem_and_role(p)[0] + "_a.3d")],
    limits=Limits(vertices=MAX_VERTICES[STANDARD], faces=from_scene.MAX_TRIANGLES, frames=MAX_FRAMES,
                  note=f"Deus Ex: {MAX_VERTICES[DEUS_EX]} vertices"),
    operator_id="scene.unreal_vertex_mesh", file_names=("_d.3d", "_a.3d", ".uc"),
)
