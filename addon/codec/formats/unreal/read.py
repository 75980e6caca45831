"""Bytes -> model for _d.3d and _a.3d, and the whole set of files from one path.

The reader keeps the file's own numbers; oddities that real files contain
(a header frame count beyond the data, a short stride, trailing bytes) are
warnings, and everything needed to write the same bytes back is kept.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ...binary import Reader
from ...errors import FormatError, Warnings
from . import files, ucscript
from .model import (ANIM_HEADER_SIZE, BYTES_PER_VERTEX, DEUS_EX, HEADER_SIZE, STANDARD, TRIANGLE,
                    AnimationFile, GeometryFile, Script, UnrealMesh)
from .packing import is_deus_ex, stored_vertices, vertices_present


# frames whose stride stores fewer vertices than the mesh has still give every vertex a position in
# every frame: (frames x vertices x 12 bytes) may exceed the file only by this much
MAX_GROWTH, MAX_EXTRA = 32, 16 << 20


def read_geometry(data: bytes, warnings: Warnings) -> GeometryFile:
    r = Reader(data, path="_d.3d")
    with r.chunk("HEADER"):
        r.need(HEADER_SIZE, "the 48-byte geometry header")
        num_polys, num_verts = r.u16(), r.u16()
        rest = r.bytes(HEADER_SIZE - 4)
    with r.chunk("TRIANGLES"):
        if num_polys * TRIANGLE.itemsize > r.remaining:
            r.fail(f"header says {num_polys} triangles ({num_polys * TRIANGLE.itemsize} bytes), "
                   f"the file holds {r.remaining} bytes after the header: truncated")
        tris = r.array(TRIANGLE, num_polys)
    trailing = r.rest()
    if trailing:
        warnings.warn(f"{len(trailing)} bytes after the last triangle ignored (kept on rewrite)",
                      HEADER_SIZE + num_polys * TRIANGLE.itemsize, "_d.3d")
    return GeometryFile(num_polys, num_verts, rest, tris, trailing)


def read_animation(data: bytes, num_verts: int, warnings: Warnings) -> tuple[AnimationFile, str]:
    """The frames, and the variant (STANDARD or DEUS_EX) the notes' test picks."""
    r = Reader(data, path="_a.3d")
    with r.chunk("HEADER"):
        r.need(ANIM_HEADER_SIZE, "the 4-byte animation header")
        num_frames, frame_size = r.u16(), r.u16()
    with r.chunk("FRAMES"):
        if frame_size == 0:
            if num_frames or r.remaining:
                r.fail(f"FrameSize is 0 but the header claims {num_frames} frames")
            return AnimationFile(num_frames, 0, np.zeros((0, 0), np.uint8)), STANDARD
        whole = min(num_frames, r.remaining // frame_size)
        if whole < num_frames:
            warnings.warn(f"header claims {num_frames} frames of {frame_size} bytes, the file holds "
                          f"{whole}; reading {whole}", r.pos, r.path)
        frames = r.array(np.uint8, whole * frame_size).reshape(whole, frame_size)
        trailing = r.rest()
    variant = DEUS_EX if is_deus_ex(frames, frame_size, num_verts) else STANDARD
    body = whole * frame_size + len(trailing)
    have = vertices_present(body, whole, frame_size, variant, num_verts)
    stored = stored_vertices(frame_size, variant, num_verts)
    if whole and stored < num_verts and whole * num_verts * 12 > MAX_GROWTH * len(data) + MAX_EXTRA:
        raise FormatError(f"FrameSize {frame_size} stores {stored} of the {num_verts} vertices per frame: "
                          f"{whole} frames would need {whole * num_verts * 12 >> 20} MB from a file of "
                          f"{len(data)} bytes", 2, "_a.3d/HEADER")
    if stored < num_verts and whole > 1:
        kept = "keep the position the last frame gives them" if have > stored else "stay at the origin"
        warnings.warn(f"FrameSize {frame_size} stores {stored} of the {num_verts} vertices per frame; "
                      f"the {num_verts - stored} unused ones {kept}"
                      + ("" if have >= num_verts else f" ({num_verts - have} are at the origin in every frame)"),
                      2, "_a.3d/HEADER")
    elif have < num_verts:
        warnings.warn(f"FrameSize {frame_size} and the file's {body} bytes of frames hold "
                      f"{have} of the {num_verts} vertices of the last frame; the others are placed at the origin",
                      2, "_a.3d/HEADER")
    # the last frame's vertices may run past its stride into these bytes (one frame of NumVerts*3)
    width = num_verts * BYTES_PER_VERTEX[variant]
    unused = len(trailing) - max(0, width - frame_size) if whole else 0
    if unused > 0 and whole == num_frames:
        warnings.warn(f"{unused} bytes after frame {num_frames} ignored (kept on rewrite)",
                      ANIM_HEADER_SIZE + body - unused, "_a.3d")
    return AnimationFile(num_frames, frame_size, frames, trailing), variant


def parse(geometry: bytes, animation: bytes, warnings: Warnings, script: bytes = b"", name: str = "mesh") -> UnrealMesh:
    """In memory: the _d.3d and _a.3d bytes (and a .uc script's, if any) -> the model."""
    g = read_geometry(geometry, warnings)
    a, variant = read_animation(animation, g.num_verts, warnings)
    uc = ucscript.parse(script, warnings, f"{name}.uc") if script else None
    return UnrealMesh(name=name, variant=variant, geometry=g, animation=a, script=uc)


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as e:
        raise FormatError(f"cannot read {path.name}: {e.strerror or e}", file=str(path)) from e


def _base(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1].lower()


def _names_file(d, which: str, name: str) -> bool:
    return d.command == "IMPORT" and d.group == "MESH" and _base(d.get(which)) == name.lower()


def _script_for(opened: Path, stem: str, warnings: Warnings) -> tuple[Path | None, Script | None]:
    """X.uc beside the pair or in Classes/; else a script whose MESH IMPORT names the opened
    file as its DATAFILE or ANIVFILE (a script named after its class, or prototype DATAnn.3D)."""
    for p in files.script_candidates(opened.parent, stem):
        return p, ucscript.parse(_read_bytes(p), warnings, p.name)
    want = opened.name.lower()
    for p in files.other_scripts(opened.parent):
        text = _read_bytes(p)
        if want.encode() not in text.lower():
            continue
        quiet = Warnings()
        script = ucscript.parse(text, quiet, p.name)
        if any(_names_file(d, k, want) for d in script.directives for k in ("DATAFILE", "ANIVFILE")):
            warnings.extend(quiet)
            return p, script
    return None, None


def _partner_from_script(path: Path, missing: FormatError, warnings: Warnings) -> tuple[Path, Path, Path, Script]:
    """(data, animation, script path, script) for a file whose name does not give its partner
    (`missing` says why): the script's MESH IMPORT that names it gives the other file."""
    script_path, script = _script_for(path, files.stem_and_role(path)[0], warnings)
    want = path.name.lower()
    hit = next((d for d in (script.directives if script else []) for k in ("DATAFILE", "ANIVFILE")
                if _names_file(d, k, want)), None)
    if hit is None:
        raise missing
    found = []
    for key in ("DATAFILE", "ANIVFILE"):
        named = hit.get(key)
        if _base(named) == want:
            found.append(path)
            continue
        other = files.resolve_from_script(script_path, named) if named else None
        if other is None and named:
            other = files.find_ci(path.parent, named.replace("\\", "/").rsplit("/", 1)[-1])
        if other is None:
            raise FormatError(f"{script_path.name} pairs {path.name} with {named or 'no file'!r} ({key}), "
                              "which is not found", file=str(path))
        found.append(other)
    return found[0], found[1], script_path, script


def _mesh_in_script(script: Script, pair_d: Path, stem: str, wanted: str, warnings: Warnings) -> str:
    """The MESH name the script gives this pair."""
    imports = [d for d in script.directives if (d.group, d.command) == ("MESH", "IMPORT")]
    if wanted:
        hit = next((d.get("MESH") for d in imports if d.get("MESH").lower() == wanted.lower()), None)
        if hit is None:
            raise FormatError(f"the script has no MESH IMPORT MESH={wanted}")
        return hit
    by_file = [d for d in imports
               if d.get("DATAFILE").replace("\\", "/").rsplit("/", 1)[-1].lower() == pair_d.name.lower()]
    if by_file:
        return by_file[0].get("MESH")
    if imports:
        warnings.warn(f"the script imports no mesh from {pair_d.name}; using its first mesh {imports[0].get('MESH')!r}")
        return imports[0].get("MESH")
    warnings.warn("the script has no MESH IMPORT directive; its other directives are ignored")
    return stem


def read(path: Path, options, warnings: Warnings) -> UnrealMesh:
    """Read the set from any of its files: X_d.3d, X_a.3d or X.uc."""
    path = Path(path)
    stem, role = files.stem_and_role(path)
    script_path, script, name = None, None, stem
    if role == "uc":
        script_path, script = path, ucscript.parse(_read_bytes(path), warnings, path.name)
        names = ucscript.mesh_names(script)
        wanted = getattr(options, "mesh_name", "") or ""
        pick = [n for n in names if n.lower() == wanted.lower()] if wanted else names
        if not pick:
            raise FormatError(f"{path.name} has no #exec MESH IMPORT" + (f" for mesh {wanted!r}" if wanted else ""),
                              file=str(path))
        name = pick[0]
        setup = ucscript.describe(script, name, Warnings())
        d_path = files.resolve_from_script(path, setup.datafile) if setup.datafile else None
        a_path = files.resolve_from_script(path, setup.anivfile) if setup.anivfile else None
        if d_path is None or a_path is None:
            missing = setup.datafile if d_path is None else setup.anivfile
            raise FormatError(f"{path.name}: mesh {name!r} names {missing or 'no file'!r}, which is not found "
                              "beside the script, in the package folder or in Models/", file=str(path))
    else:
        try:
            d_path, a_path = files.pair_for(path)
        except FormatError as missing:
            d_path, a_path, script_path, script = _partner_from_script(path, missing, warnings)
            stem = files.stem_and_role(d_path)[0]
        if getattr(options, "use_uc_script", True):
            if script is None:
                script_path, script = _script_for(d_path, files.stem_and_role(d_path)[0], warnings)
            if script is not None:
                name = _mesh_in_script(script, d_path, stem, getattr(options, "mesh_name", ""), warnings)
    try:
        geometry = read_geometry(_read_bytes(d_path), warnings)
    except FormatError as e:
        raise e.in_file(str(d_path))
    try:
        animation, variant = read_animation(_read_bytes(a_path), geometry.num_verts, warnings)
    except FormatError as e:
        raise e.in_file(str(a_path))
    if role != "uc" and not getattr(options, "use_uc_script", True):
        script = None
    return UnrealMesh(name=name, variant=variant, geometry=geometry, animation=animation, script=script,
                      data_path=str(d_path), anim_path=str(a_path),
                      script_path=str(script_path) if script_path else "")


def sources(path: Path) -> list[Path]:
    """The two binary files a read consumes (the script is not rewritten by check)."""
    try:
        model = read(Path(path), None, Warnings())
    except FormatError:
        return [Path(path)]
    return [Path(model.data_path), Path(model.anim_path)]
