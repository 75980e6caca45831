"""Where the files of one mesh are: the _d/_a pair, its .uc script, its skins.

Mods lay packages out as Pkg/Models/X_d.3d, Pkg/Classes/X.uc and
Pkg/Textures/...; scripts name files relative to the package folder with
backslashes, and names on disk may differ in case.
"""
from __future__ import annotations

import os
from pathlib import Path

from ...errors import FormatError
from ...fileio import is_dir, is_file, usable_name

TEXTURE_EXTENSIONS = (".pcx", ".bmp", ".png", ".tga")


def _entries(folder: Path, name: str) -> list[Path]:
    """Entries of `folder` whose name equals `name` ignoring case (sorted, for a stable pick)."""
    low = name.lower()
    if not usable_name(name):
        return []
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.name.lower() == low)
    except OSError:
        return []


def find_ci(folder: Path, name: str) -> Path | None:
    """`folder/name`, matching the name case-insensitively."""
    exact = folder / name
    if is_file(exact):
        return exact
    return next((p for p in _entries(folder, name) if is_file(p)), None)


def find_dir_ci(folder: Path, name: str) -> Path | None:
    exact = folder / name
    if is_dir(exact):
        return exact
    return next((p for p in _entries(folder, name) if is_dir(p)), None)


def resolve_ci(base: Path, relative: str) -> Path | None:
    """A script path like ``MODELS\\x_a.3d`` under `base`, each part case-insensitive."""
    parts = [p for p in relative.replace("\\", "/").split("/") if p and p != "."]
    here = base
    for i, part in enumerate(parts):
        nxt = find_ci(here, part) if i == len(parts) - 1 else find_dir_ci(here, part)
        if nxt is None:
            return None
        here = nxt
    return here if parts else None


def stem_and_role(path: Path) -> tuple[str, str]:
    """("x", "d"|"a"|"uc") from x_d.3d, x_a.3d or x.uc; "" role for a bare x.3d."""
    low = path.name.lower()
    if low.endswith(".uc"):
        return path.name[:-3], "uc"
    if low.endswith(("_d.3d", "_a.3d")):
        return path.name[:-5], low[-4]
    if low.endswith(".3d"):
        return path.name[:-3], ""
    return path.stem, ""


def pair_for(path: Path) -> tuple[Path, Path]:
    """The (_d, _a) files of the pair that `path` (either of them) belongs to."""
    stem, role = stem_and_role(path)
    if role not in ("d", "a"):
        raise FormatError(f"{path.name}: an Unreal mesh file must be named <name>_d.3d or <name>_a.3d", file=str(path))
    partner_name = f"{stem}_{'a' if role == 'd' else 'd'}.3d"
    partner = find_ci(path.parent, partner_name)
    if partner is None:
        raise FormatError(f"missing partner file {partner_name} beside {path.name}: "
                          "the geometry (_d.3d) and animation (_a.3d) files are read together", file=str(path))
    return (path, partner) if role == "d" else (partner, path)


def script_candidates(folder: Path, stem: str) -> list[Path]:
    """Where a pair's .uc may be: beside it, or in a sibling Classes/ folder."""
    out = []
    for d in (folder, find_dir_ci(folder.parent, "Classes"), find_dir_ci(folder, "Classes")):
        if d is None:
            continue
        hit = find_ci(d, stem + ".uc")
        if hit is not None and hit not in out:
            out.append(hit)
    return out


def resolve_from_script(script_path: Path, relative: str) -> Path | None:
    """A file named in a script: relative to the package folder, the script's folder,
    or (by its base name) beside the script or in a sibling Models/ folder."""
    folder = script_path.parent
    for base in (folder.parent, folder):
        hit = resolve_ci(base, relative)
        if hit is not None:
            return hit
    name = relative.replace("\\", "/").rsplit("/", 1)[-1]
    for d in (folder, find_dir_ci(folder.parent, "Models")):
        if d is not None and (hit := find_ci(d, name)) is not None:
            return hit
    return None


def find_texture(relative: str, folders: list[Path], skip: tuple[str, ...] = ()) -> Path | None:
    """A skin named in a script, trying .pcx/.bmp/.png/.tga when the named one is absent;
    files ending in one of `skip` are passed over."""
    if not relative:
        return None
    rel = relative.replace("\\", "/")
    name = rel.rsplit("/", 1)[-1]
    rel_stem = rel.rsplit(".", 1)[0] if "." in name else rel
    stem = name.rsplit(".", 1)[0] if "." in name else name
    tries = [rel] + [rel_stem + e for e in TEXTURE_EXTENSIONS] + [name] + [stem + e for e in TEXTURE_EXTENSIONS]
    tries = [t for t in tries if not t.lower().endswith(skip)] if skip else tries
    for folder in folders:
        for t in tries:
            hit = resolve_ci(folder, t)
            if hit is not None:
                return hit
    return None
