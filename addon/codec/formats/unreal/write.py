"""Model -> bytes: _d.3d, _a.3d and the .uc script, named after the target path."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np

from . import files, ucscript
from .model import ANIM_HEADER_SIZE, HEADER_SIZE, TRIANGLE, AnimationFile, GeometryFile, UnrealMesh
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
    stem, role = files.stem_and_role(target)
    folder = target.parent
    if role == "uc":
        uc = target
        if folder.name.lower() == "classes":
            folder = files.find_dir_ci(folder.parent, "Models") or folder.parent / "Models"
    else:
        uc = folder / f"{stem}.uc"
    return folder / f"{stem}_d.3d", folder / f"{stem}_a.3d", uc, stem


def encode(model: UnrealMesh, target: Path) -> dict[Path, bytes]:
    d, a, uc, stem = target_paths(model, target)
    out = {d: write_geometry(model.geometry), a: write_animation(model.animation)}
    if model.setup is not None:
        # a script names its class after its file, and the pair relative to the package folder
        models = "MODELS\\" if uc.parent != d.parent else ""
        # the files keep their names; what the script names must be identifiers
        mesh = ucscript.checked_identifier(model.setup.mesh or stem, "Mesh", "mesh name", model.notes)
        cls = ucscript.checked_identifier(uc.name[:-3], mesh, "class name", model.notes)
        if cls != uc.name[:-3] and model.notes is not None:
            model.notes.warn(f"UnrealScript expects class {cls} in a file named {cls}.uc; rename {uc.name} "
                             "before compiling it")
        setup = replace(model.setup, mesh=mesh, datafile=f"{models}{d.name}", anivfile=f"{models}{a.name}")
        out[uc] = ucscript.compose(setup, class_name=cls)
    elif model.script is not None:
        out[uc] = model.script.text
    return out


def encode_bytes(model: UnrealMesh) -> dict[str, bytes]:
    """In memory: each file's bytes by its name (X_d.3d, X_a.3d, and X.uc when the model has a script)."""
    return {p.name: data for p, data in encode(model, Path(f"{model.name or 'mesh'}_d.3d")).items()}
