"""UNIGINE .mesh (ms11) and .anim (an10): two formats sharing one model.

For timing (benchmarks): read.read_mesh(bytes, Warnings) / write.write_mesh(model),
to_scene.mesh_to_scene(model, ImportOptions(), Warnings) and
from_scene.scene_to_mesh(scene, ExportOptions(), Warnings); the same for .anim
with read_anim / write_anim / anim_to_scene / scene_to_anim.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from ...errors import FormatError, Warnings
from ...registry import FormatSpec
from ...scene import Scene
from . import pose
from .from_scene import anim_placeholder, scene_to_mesh
from .animation_out import armature_bones, build_tracks
from .model import ANIM_MAGIC, MESH_MAGIC, AnimFile, Bounds, MeshFile
from .options import AnimExportOptions, AnimImportOptions, ExportOptions, ImportOptions
from .read import read_anim, read_mesh
from .to_scene import anim_to_scene, mesh_to_scene, rebase_animations, warn_bad_bind
from .write import write_anim, write_mesh


def _sniff(prefix: bytes):
    # any version of the family: the reader then names an unsupported one
    return lambda head, name: head[:2] == prefix and head[2:4].isdigit()


def _read_mesh(path: Path, opts: ImportOptions, warnings: Warnings) -> MeshFile:
    m = read_mesh(Path(path).read_bytes(), warnings)
    m.name = Path(path).stem
    return m


def _read_anim(path: Path, opts: AnimImportOptions, warnings: Warnings) -> AnimFile:
    a = read_anim(Path(path).read_bytes(), warnings)
    a.name = Path(path).stem
    return a


def _encode_mesh(m: MeshFile, target: Path) -> dict[Path, bytes]:
    """The mesh, and its animations beside it: X.anim for one, X_<name>.anim each for several."""
    out = {Path(target): write_mesh(m)}
    a = m.companion
    if a is not None and len(a.animations) > 1:
        for t in a.animations:
            name = re.sub(r"[^A-Za-z0-9_.-]+", "_", t.name).strip("._") or "anim"
            out[Path(target).with_name(f"{Path(target).stem}_{name}.anim")] = write_anim(replace(a, animations=[t]))
    elif a is not None:
        out[Path(target).with_suffix(".anim")] = write_anim(a)
    return out


def partner_anims(mesh: Path) -> list[Path]:
    """The .anim files beside a .mesh that belong to it, as _encode_mesh writes them: X.anim and
    X_<name>.anim beside X.mesh, any case; an .anim that fits two meshes (a, a_b) is the longer one's."""
    try:
        files = sorted(Path(mesh).parent.iterdir())
    except OSError:
        return []
    meshes = [p.stem.lower() for p in files if p.suffix.lower() == ".mesh"]

    def owner(anim: str) -> str:
        return max((m for m in meshes if anim == m or anim.startswith(m + "_")), key=len, default="")

    own = Path(mesh).stem.lower()
    return [p for p in files if p.suffix.lower() == ".anim" and owner(p.stem.lower()) == own]


def rest_from_mesh(path: str | Path, warnings: Warnings) -> tuple[dict[str, np.ndarray], dict[str, str | None]]:
    """Parent-local bind matrices by bone name, and each bone's parent name, from a .mesh's bind pose."""
    m = read_mesh(Path(path).read_bytes(), Warnings())
    warn_bad_bind(m.bones, m.bind, warnings, f"{Path(path).name}: ")
    local = pose.bind_local(m.bind)
    names = [b.name for b in m.bones]
    return ({n: local[i] for i, n in enumerate(names)},
            {b.name: names[b.parent] if b.parent >= 0 else None for b in m.bones})


def _anim_to_scene(a: AnimFile, opts: AnimImportOptions, warnings: Warnings) -> Scene:
    rest = parents = None
    if opts.rest_mesh:
        try:
            rest, parents = rest_from_mesh(opts.rest_mesh, warnings)
        except FormatError as e:
            raise e.in_file(opts.rest_mesh)
    return anim_to_scene(a, opts, warnings, rest, parents)


def scene_to_anim(scene: Scene, opts: AnimExportOptions, warnings: Warnings) -> AnimFile:
    _, _, bones, bind, _ = armature_bones(scene, warnings)
    if not bones:
        raise FormatError("an .anim needs an armature (or the rest pose of the .anim it came from)")
    tracks = build_tracks(scene, bones, bind, quantized=True, warnings=warnings)
    if not tracks:
        warnings.warn("no action animates a bone of the armature; the .anim holds no animation")
    return AnimFile(Bounds(anim_placeholder()), bones, bind, tracks)


FORMAT = [
    FormatSpec(
        name="unigine-mesh", label="UNIGINE Mesh", extensions=(".mesh",), sniff=_sniff(MESH_MAGIC[:2]),
        read=_read_mesh, encode=_encode_mesh, to_scene=mesh_to_scene, from_scene=scene_to_mesh,
        import_options=ImportOptions, export_options=ExportOptions, version=lambda m: MESH_MAGIC.decode(),
        companions=partner_anims, operator_id="scene.unigine_mesh"),
    FormatSpec(
        name="unigine-anim", label="UNIGINE Animation", extensions=(".anim",), sniff=_sniff(ANIM_MAGIC[:2]),
        read=_read_anim, encode=lambda a, target: {Path(target): write_anim(a)},
        to_scene=_anim_to_scene, from_scene=scene_to_anim,
        import_options=AnimImportOptions, export_options=AnimExportOptions, version=lambda a: ANIM_MAGIC.decode(),
        operator_id="anim.unigine_anim", rebase=rebase_animations),
]
