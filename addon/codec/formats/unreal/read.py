"""Bytes -> model for _d.3d and _a.3d, and the whole set of files from one path.

The reader keeps the file's own numbers; oddities that real files contain
(a header frame count beyond the data, a short stride, trailing bytes) are
warnings, and everything needed to write the same bytes back is kept.
"""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...binary import Reader
from ...errors import FormatError, Warnings
from . import files, read_scripts, ucscript
from .model import (ANIM_HEADER_SIZE, BYTES_PER_VERTEX, DEUS_EX, HEADER_SIZE, STANDARD, TRIANGLE,
                    AnimationFile, GeometryFile, Script, ScriptMeshes, UnrealMesh)
from .packing import is_deus_ex, stored_vertices, vertices_present


# frames whose stride stores fewer vertices than the mesh has still give every vertex a position in
# every frame: (frames x vertices x 12 bytes) may exceed the file only by this much
MAX_GROWTH, MAX_EXTRA = 32, 16 << 20
MAX_SCRIPT_MESHES = 256        # meshes read from one script (a carcass's fragments are a dozen)


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


def _script_for(d_path: Path, warnings: Warnings) -> tuple[Path | None, Script | None]:
    """X.uc beside the pair or in Classes/; else the first of the package's scripts whose
    MESH IMPORT names the data file (a script named after its class)."""
    for p in files.script_candidates(d_path.parent, files.stem_and_role(d_path)[0]):
        return p, ucscript.parse(_read_bytes(p), warnings, p.name)
    hit = next(iter(read_scripts.users(d_path)), None)
    if hit is None:
        return None, None
    return hit.script, ucscript.parse(_read_bytes(hit.script), warnings, hit.script.name)


def _named(imp: read_scripts.MeshImport) -> str:
    return f"{imp.mesh} ({imp.script.name}: {imp.anivfile or '-'})"


def _partner_from_scripts(path: Path, missing: FormatError, wanted: str,
                          warnings: Warnings) -> tuple[Path, Path, read_scripts.MeshImport]:
    """(data, animation, the MESH IMPORT) for a file whose name does not give its partner (`missing`
    says why): the package's scripts that import it give the other file; of several, the one
    `wanted` names, else the first."""
    found = read_scripts.users(path)
    if not found:
        raise missing
    hit = found[0]
    if wanted:
        hit = next((u for u in found if u.mesh.lower() == wanted.lower()), None)
        if hit is None:
            raise FormatError(f"no script imports {path.name} as mesh {wanted!r}; those that do: "
                              + ", ".join(_named(u) for u in found), file=str(path))
    elif len(found) > 1:
        warnings.warn(f"{len(found)} meshes of the package's scripts use {path.name}: "
                      + ", ".join(_named(u) for u in found) + f"; importing {hit.mesh} (Mesh Name picks another)")
    out = []
    for key in ("DATAFILE", "ANIVFILE"):
        named = hit.datafile if key == "DATAFILE" else hit.anivfile
        if read_scripts.base_name(named) == path.name.lower():
            out.append(path)
            continue
        other = files.resolve_from_script(hit.script, named) if named else None
        if other is None:
            raise FormatError(f"{hit.script.name} pairs {path.name} with {named or 'no file'!r} ({key}), "
                              "which is not found", file=str(path))
        out.append(other)
    return out[0], out[1], hit


def _mesh_in_script(script: Script, pair_d: Path, stem: str, wanted: str, warnings: Warnings) -> str:
    """The MESH name the script gives this pair."""
    imports = [d for d in script.directives if (d.group, d.command) == ("MESH", "IMPORT")]
    if wanted:
        hit = next((d.get("MESH") for d in imports if d.get("MESH").lower() == wanted.lower()), None)
        if hit is None:
            raise FormatError(f"the script has no MESH IMPORT MESH={wanted}")
        return hit
    by_file = [d for d in imports if read_scripts.base_name(d.get("DATAFILE")) == pair_d.name.lower()]
    if by_file:
        return by_file[0].get("MESH")
    if imports:
        warnings.warn(f"the script imports no mesh from {pair_d.name}; using its first mesh {imports[0].get('MESH')!r}")
        return imports[0].get("MESH")
    warnings.warn("the script has no MESH IMPORT directive; its other directives are ignored")
    return stem


def _read_pair(d_path: Path, a_path: Path, warnings: Warnings) -> tuple:
    """(geometry, animation, variant) of one pair; errors name the file they come from."""
    try:
        geometry = read_geometry(_read_bytes(d_path), warnings)
    except FormatError as e:
        raise e.in_file(str(d_path))
    try:
        animation, variant = read_animation(_read_bytes(a_path), geometry.num_verts, warnings)
    except FormatError as e:
        raise e.in_file(str(a_path))
    return geometry, animation, variant


class _Found(NamedTuple):
    """A mesh a read gives, with its pair of files, found without reading them."""
    name: str
    d_path: Path
    a_path: Path
    script: Script | None
    script_path: str


def _script_meshes(path: Path, script: Script, wanted: str, warnings: Warnings) -> list[_Found]:
    """A script's meshes: the one `wanted` names, else every one whose files exist (a weapon's
    pickup, first- and third-person meshes; a carcass's fragments)."""
    first: dict[str, str] = {}
    for n in ucscript.mesh_names(script):
        if n:
            first.setdefault(n.lower(), n)              # a mesh imported twice is read once
    names = list(first.values())
    pick = [n for n in names if n.lower() == wanted.lower()] if wanted else names
    if not pick:
        raise FormatError(f"{path.name} has no #exec MESH IMPORT" + (f" for mesh {wanted!r}" if wanted else ""),
                          file=str(path))
    if len(pick) > MAX_SCRIPT_MESHES:
        warnings.warn(f"{path.name} imports {len(pick)} meshes; reading the first {MAX_SCRIPT_MESHES}")
        pick = pick[:MAX_SCRIPT_MESHES]
    found, first_missing = [], None
    for name in pick:
        setup = ucscript.describe(script, name, Warnings())
        d_path = files.resolve_from_script(path, setup.datafile) if setup.datafile else None
        a_path = files.resolve_from_script(path, setup.anivfile) if setup.anivfile else None
        if d_path is None or a_path is None:
            missing = setup.datafile if d_path is None else setup.anivfile
            said = (f"mesh {name!r} names {missing or 'no file'!r}, which is not found beside the script, "
                    "in the package folder or in Models/")
            error = FormatError(f"{path.name}: {said}", file=str(path))
            if len(pick) == 1:
                raise error
            warnings.warn(f"{said}; that mesh is skipped")
            first_missing = first_missing or error
            continue
        found.append(_Found(name, d_path, a_path, script, str(path)))
    if not found:
        raise first_missing
    return found


def _locate(path: Path, options, warnings: Warnings) -> list[_Found]:
    """The meshes a read of `path` gives, their files found and the scripts read, the pairs not."""
    stem, role = files.stem_and_role(path)
    wanted = getattr(options, "mesh_name", "") or ""
    if role == "uc":
        return _script_meshes(path, ucscript.parse(_read_bytes(path), warnings, path.name), wanted, warnings)
    script_path, script, name = None, None, stem
    try:
        d_path, a_path = files.pair_for(path)
    except FormatError as missing:
        d_path, a_path, hit = _partner_from_scripts(path, missing, wanted, warnings)
        script_path, name = hit.script, hit.mesh
        script = ucscript.parse(_read_bytes(hit.script), warnings, hit.script.name)
    use_script = getattr(options, "use_uc_script", True)
    if use_script and script is None:
        script_path, script = _script_for(d_path, warnings)
        if script is not None:
            name = _mesh_in_script(script, d_path, files.stem_and_role(d_path)[0], wanted, warnings)
    if not use_script:
        script, name, script_path = None, files.stem_and_role(d_path)[0], None
    return [_Found(name, d_path, a_path, script, str(script_path) if script_path else "")]


def read(path: Path, options, warnings: Warnings) -> UnrealMesh | ScriptMeshes:
    """Read the set from any of its files: X_d.3d, X_a.3d or X.uc (every mesh it imports, or the
    one the mesh_name option names)."""
    path = Path(path)
    found = _locate(path, options, warnings)
    several = len(found) > 1                            # warnings then say which mesh they are about
    meshes, pairs = [], {}
    for f in found:
        if (f.d_path, f.a_path) not in pairs:          # meshes that share their files read them once
            own = Warnings()
            pairs[f.d_path, f.a_path] = _read_pair(f.d_path, f.a_path, own)
            warnings.extend([f"mesh {f.name!r}: {w}" for w in own.as_list()] if several else own)
        geometry, animation, variant = pairs[f.d_path, f.a_path]
        meshes.append(UnrealMesh(name=f.name, variant=variant, geometry=geometry, animation=animation,
                                 script=f.script, data_path=str(f.d_path), anim_path=str(f.a_path),
                                 script_path=f.script_path))
    return meshes[0] if len(meshes) == 1 else ScriptMeshes(meshes, found[0].script, str(path))


def sources(path: Path, options=None) -> list[Path]:
    """The binary files a read consumes, every pair of a script (the script is not rewritten by check);
    found without reading them."""
    try:
        found = _locate(Path(path), options, Warnings())
    except FormatError:
        return [Path(path)]
    return list(dict.fromkeys(p for f in found for p in (f.d_path, f.a_path)))


def parts(path: Path) -> list[str]:
    """The meshes of a script that imports several (their files found), or the meshes of the package's
    scripts that animate a data file with no partner of its own: convert writes each alone."""
    if files.stem_and_role(Path(path))[1] != "uc":
        try:
            files.pair_for(Path(path))
        except FormatError:
            return [u.mesh for u in read_scripts.users(Path(path))]
        return []
    try:
        found = _locate(Path(path), None, Warnings())
    except FormatError:
        return []
    return [f.name for f in found] if len(found) > 1 else []


def is_partner(path: Path) -> bool:
    """Read only through another file of its set: an _a.3d, a .uc, or an animation file that only
    the package's scripts name (ANIVnn.3D); the data file stands for the set."""
    role = files.stem_and_role(Path(path))[1]
    if role:
        return role in ("a", "uc")
    want = Path(path).name.lower()
    return any(read_scripts.base_name(u.anivfile) == want for u in read_scripts.users(Path(path)))
