"""Model -> bytes: _d.3d, _a.3d and the .uc script, named after the target path."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from . import files, ucscript
from .model import (ANIM_HEADER_SIZE, HEADER_SIZE, TRIANGLE, AnimationFile, GeometryFile, MeshSetup, ScriptMeshes,
                    UnrealMesh)
from ...binary import Writer


def write_geometry(g: GeometryFile) -> bytes:
    w = Writer()
    w.u16(g.num_polys)
    w.u16(g.num_verts)
    w.bytes(g.header_rest)
    w.array(np.asarray(g.triangles, TRIANGLE))
    w.bytes(g.trailing)
    assert w.tell() >= HEADER_SIZE
    return w.getvalue()


def write_animation(a: AnimationFile) -> bytes:
    w = Writer()
    w.u16(a.num_frames)
    w.u16(a.frame_size)
    w.array(np.asarray(a.frames, np.uint8))
    w.bytes(a.trailing)
    assert w.tell() >= ANIM_HEADER_SIZE
    return w.getvalue()


def target_paths(model: UnrealMesh, target: Path) -> tuple[Path, Path, Path, str]:
    """(_d, _a, .uc, stem) for a target that is any of X_d.3d, X_a.3d, X.3d or X.uc.

    Writing back over the files a model was read from keeps their exact names;
    a .uc target inside Classes/ puts the pair in the sibling Models/ folder.
    """
    target = Path(target)
    read_from = [Path(p) for p in (model.data_path, model.anim_path, model.script_path) if p]
    if target in read_from:
        d, a = Path(model.data_path), Path(model.anim_path)
        uc = Path(model.script_path) if model.script_path else d.parent / f"{files.stem_and_role(d)[0]}.uc"
        return d, a, uc, files.stem_and_role(d)[0]
    return _new_paths(target)


def _new_paths(target: Path) -> tuple[Path, Path, Path, str]:
    stem, role = files.stem_and_role(target)
    folder = target.parent
    if role == "uc":
        uc = target
        if folder.name.lower() == "classes":
            folder = files.find_dir_ci(folder.parent, "Models") or folder.parent / "Models"
    else:
        uc = folder / f"{stem}.uc"
    return folder / f"{stem}_d.3d", folder / f"{stem}_a.3d", uc, stem


def _encode_several(model: ScriptMeshes, target: Path) -> dict[Path, bytes]:
    """Every pair, and one script that imports them all. Written back over the files they were read
    from, each keeps its names; elsewhere, a read pair keeps its file names and an exported one is
    named after its mesh, beside the target (or in Models/ for a target in Classes/)."""
    target = Path(target)
    read_from = {Path(p) for m in model.meshes for p in (m.data_path, m.anim_path, m.script_path) if p}
    d, _, uc, _ = _new_paths(target)
    if target in read_from and model.script_path:
        uc = Path(model.script_path)
    out, setups = {}, []
    for m in model.meshes:
        if target in read_from and m.data_path:
            pair = Path(m.data_path), Path(m.anim_path)
        elif m.setup is None and m.data_path:
            pair = d.parent / Path(m.data_path).name, d.parent / Path(m.anim_path).name
        else:
            name = ucscript.identifier(m.setup.mesh if m.setup else m.name, "Mesh")   # _named_setup warns
            pair = d.parent / f"{name}_d.3d", d.parent / f"{name}_a.3d"
        out[pair[0]], out[pair[1]] = write_geometry(m.geometry), write_animation(m.animation)
        if m.setup is not None:
            setups.append(_named_setup(m, pair[0], pair[1], uc))
    if setups:
        out[uc] = ucscript.compose(setups, class_name=_class_name(uc, setups[0].mesh, model.meshes[0].notes))
    elif model.script is not None:
        out[uc] = model.script.text
    return out


def _named_setup(model: UnrealMesh, d: Path, a: Path, uc: Path) -> MeshSetup:
    """The model's setup naming its mesh as an identifier and its pair relative to the package folder."""
    models = "MODELS\\" if uc.parent != d.parent else ""
    mesh = ucscript.checked_identifier(model.setup.mesh or files.stem_and_role(d)[0], "Mesh", "mesh name", model.notes)
    return replace(model.setup, mesh=mesh, datafile=f"{models}{d.name}", anivfile=f"{models}{a.name}")


def _class_name(uc: Path, mesh: str, notes) -> str:
    """A script names its class after its file (an identifier; a warning when the file must be renamed)."""
    cls = ucscript.checked_identifier(uc.name[:-3], mesh, "class name", notes)
    if cls != uc.name[:-3] and notes is not None:
        notes.warn(f"UnrealScript expects class {cls} in a file named {cls}.uc; rename {uc.name} "
                   "before compiling it")
    return cls


def encode(model: UnrealMesh | ScriptMeshes, target: Path) -> dict[Path, bytes]:
    if isinstance(model, ScriptMeshes):
        return _encode_several(model, target)
    d, a, uc, _ = target_paths(model, target)
    out = {d: write_geometry(model.geometry), a: write_animation(model.animation)}
    if model.setup is not None:
        # the files keep their names; what the script names must be identifiers
        setup = _named_setup(model, d, a, uc)
        out[uc] = ucscript.compose(setup, class_name=_class_name(uc, setup.mesh, model.notes))
    elif model.script is not None:
        out[uc] = model.script.text
    return out


def encode_bytes(model: UnrealMesh | ScriptMeshes) -> dict[str, bytes]:
    """In memory: each file's bytes by its name (X_d.3d, X_a.3d, and X.uc when the model has a script)."""
    name = model.meshes[0].name if isinstance(model, ScriptMeshes) else model.name
    return {p.name: data for p, data in encode(model, Path(f"{name or 'mesh'}_d.3d")).items()}
