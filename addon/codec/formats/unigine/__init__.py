"""UNIGINE .mesh (ms11) and .anim (an10): two formats sharing one model.

In-memory entry points (the same in every format package; the package's attributes
read, write, to_scene and from_scene are these modules): `read.parse(bytes, warnings)
-> MeshFile | AnimFile` (by magic), `write.encode_bytes(model) -> bytes`,
`to_scene.to_scene(model, ImportOptions() or AnimImportOptions(), warnings)` and
`from_scene.from_scene(scene, ExportOptions() or AnimExportOptions(), warnings)`;
for one kind: read_mesh / read_anim, write_mesh / write_anim, mesh_to_scene /
anim_to_scene, scene_to_mesh / scene_to_anim.
"""
from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ...errors import FormatError, Warnings
from ...registry import FormatSpec
from ...scene import Scene
from . import conventions, from_scene, read, to_scene, write
from .model import ANIM_MAGIC, MESH_MAGIC, AnimFile, MeshFile
from .options import AnimExportOptions, AnimImportOptions, ExportOptions, ImportOptions
from .read import read_anim, read_mesh
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



def join_partner_anims(scene: Scene, mesh: Path, warnings: Warnings) -> None:
    """The animations of the .anim files beside a .mesh join its scene, on its armature, read
    against the mesh's bind pose (as the engine plays them); one the mesh already holds is not doubled."""
    arm = next((i for i, n in enumerate(scene.nodes) if n.kind == "ARMATURE"), -1)
    for p in partner_anims(mesh):
        if arm < 0:
            warnings.warn(f"{p.name} beside it is left out: the mesh has no armature to play it")
            continue
        opts = AnimImportOptions(fps=scene.fps if 0.01 <= scene.fps <= 1000 else 30.0, rest_mesh=str(mesh))
        try:
            part = to_scene.to_scene(_read_anim(p, opts, warnings), opts, warnings)
        except FormatError as e:
            warnings.warn(f"{p.name} beside it is left out: {e}")
            continue
        held = {a.name for a in scene.animations}
        for anim in part.animations:
            if anim.name in held:
                warnings.warn(f"{p.name}: the mesh already holds animation {anim.name!r}; the file's copy is left out")
                continue
            for ch in anim.channels:
                ch.target = arm
            scene.animations.append(anim)
    to_scene.each_alone(scene)


FORMAT = [
    FormatSpec(
        name="unigine-mesh", label="UNIGINE Mesh", extensions=(".mesh",), sniff=_sniff(MESH_MAGIC[:2]),
        read=_read_mesh, encode=_encode_mesh, to_scene=to_scene.to_scene, from_scene=from_scene.from_scene,
        import_options=ImportOptions, export_options=ExportOptions, version=lambda m: MESH_MAGIC.decode(),
        companions=partner_anims, join_companions=join_partner_anims, operator_id="scene.unigine_mesh", tangent_attribute=conventions.TANGENT_ATTR),
    FormatSpec(
        name="unigine-anim", label="UNIGINE Animation", extensions=(".anim",), sniff=_sniff(ANIM_MAGIC[:2]),
        read=_read_anim, encode=lambda a, target: {Path(target): write_anim(a)},
        to_scene=to_scene.to_scene, from_scene=from_scene.from_scene,
        import_options=AnimImportOptions, export_options=AnimExportOptions, version=lambda a: ANIM_MAGIC.decode(),
        operator_id="anim.unigine_anim", rebase=to_scene.rebase_animations),
]
