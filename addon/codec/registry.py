"""One registry of formats: each format package under `formats/` exposes FORMAT.

A format plugs in with its extensions, a magic test, and four functions:
read (files -> model), encode (model -> bytes per file), to_scene and
from_scene. Everything else (load, save, check, info, convert) is generic.
"""
from __future__ import annotations

import functools
import importlib
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .errors import FormatError, Warnings
from .scene import Scene


@dataclass(frozen=True)
class Limits:
    """What the format can hold at most (None: no limit of its own); `lgf formats` lists them and
    the operators check what they can before any work."""
    vertices: int | None = None                 # per mesh
    faces: int | None = None                    # per mesh
    frames: int | None = None                   # per file
    note: str = ""                              # what happens at a limit, or a variant's own limits

    def as_text(self) -> str:
        parts = [f"{n} {what}" for n, what in ((self.vertices, "vertices per mesh"), (self.faces, "faces per mesh"),
                                               (self.frames, "frames")) if n is not None]
        return "; ".join(filter(None, [", ".join(parts), self.note]))


@dataclass(frozen=True)
class FormatSpec:
    name: str                                   # short id used in `info`, e.g. "3ds"
    label: str                                  # menu label, e.g. "3D Studio"
    extensions: tuple[str, ...]                 # lower case with dot; the first is the one written
    sniff: Callable[[bytes, str], bool]         # (first 64 bytes, file name) -> is it ours?
    read: Callable[[Path, Any, Warnings], Any]  # (path, import options, warnings) -> model
    encode: Callable[[Any, Path], dict[Path, bytes]]   # model, target path -> every file's bytes
    to_scene: Callable[[Any, Any, Warnings], Scene]
    from_scene: Callable[[Scene, Any, Warnings], Any]
    import_options: type                        # frozen dataclass of import options
    export_options: type                        # frozen dataclass of export options
    # the files a read (with these import options, or the defaults) consumed, for check
    sources: Callable[[Path, Any], list[Path]] = field(default=lambda p, options=None: [p])
    version: Callable[[Any], str] = field(default=lambda m: "")
    # for folder trees: the name a file's set goes by, and whether a file is only read through another
    set_name: Callable[[Path], str] = field(default=lambda p: p.name[:p.name.rfind(".")] if "." in p.name else p.name)
    partner: Callable[[Path], bool] = field(default=lambda p: False)
    # files of the set that its read does not take in (UNIGINE .anim beside the .mesh): not converted on their
    # own in a tree, though each still reads and checks alone
    companions: Callable[[Path], list[Path]] = field(default=lambda p: [])
    # what the companions add to the main file's scene (its animations), for a conversion that takes them in
    join_companions: Callable[[Scene, Path, Warnings], None] | None = None
    # the parts of a file that convert writes one output each, named after the part (an Unreal script's
    # meshes), and the import option that loads one of them
    parts: Callable[[Path], list[str]] = field(default=lambda p: [])
    part_option: str = ""
    main_suffix: str = ""                      # the first file written for a set ("" = extensions[0])
    # the files a write to main_output always makes: all must be newer than the inputs to be up to date
    written: Callable[[Path], list[Path]] = field(default=lambda p: [p])
    limits: Limits = Limits()
    # Blender: operators import_<operator_id> and export_<operator_id>, FileHandler IO_FH_<its last part>
    operator_id: str = ""
    file_names: tuple[str, ...] = ()           # what a user picks, for menus ("" = the extensions)
    # re-express the bone keys of a scene read from this format against another rest pose (parent-local
    # 4x4 matrices by bone name), for importing an animation onto an armature of the user's
    rebase: Callable[[Scene, dict, Warnings], None] | None = None
    # a corner attribute (kept from import) that the format writes in place of Blender's tangents
    tangent_attribute: str = ""
    # from_scene makes normals of Mesh.smoothing itself (encode gives it no codec.with_normals copy)
    own_smoothing: bool = False

    @property
    def menu_label(self) -> str:
        return f"{self.label} ({', '.join(self.file_names or self.extensions)})"

    def main_output(self, folder: Path, set_name: str) -> Path:
        return Path(folder) / f"{set_name}{self.main_suffix or self.extensions[0]}"


def registered_formats() -> dict[str, FormatSpec]:
    # not named formats(): importing the formats subpackage would shadow it on the package
    return dict(_scan())


@functools.cache
def _scan() -> dict[str, FormatSpec]:
    """The format packages, found once per process (a batch asks for every file)."""
    pkg = importlib.import_module(f"{__package__}.formats")
    out: dict[str, FormatSpec] = {}
    for mod in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        spec = getattr(importlib.import_module(f"{pkg.__name__}.{mod.name}"), "FORMAT", None)
        for s in (spec if isinstance(spec, (list, tuple)) else [spec]):
            if s is not None:
                out[s.name] = s
    return out


def find_format(path: str | Path, name: str = "", for_write: bool = False) -> FormatSpec:
    """By explicit name, else by extension; several candidates are settled by magic."""
    table = registered_formats()
    if name:
        if name not in table:
            raise FormatError(f"unknown format {name!r}; known: {', '.join(sorted(table))}")
        return table[name]
    p = Path(path)
    lower = p.name.lower()
    candidates = [s for s in table.values() if any(lower.endswith(e) for e in s.extensions)]
    if not candidates:
        raise FormatError(f"no format reads or writes {p.suffix or p.name!r}", file=str(p))
    if len(candidates) == 1 or for_write or not p.exists():
        return candidates[0]
    with open(p, "rb") as fh:
        head = fh.read(64)
    for s in candidates:
        if s.sniff(head, p.name):
            return s
    raise FormatError("the file matches no known magic for its extension", offset=0, file=str(p))
