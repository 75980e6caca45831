"""The package's scripts as an index: which MESH IMPORT lines name a data or animation file.

A file whose partner no _d/_a rule names (prototype DATAnn.3D / ANIVnn.3D, or
female_d.3d animated by Female1_a.3d in one script and F1Dead_a.3d in another)
is paired by the scripts that import it: those in its own folder and in
../Classes beside Models/. A package holds hundreds of scripts and a batch opens
hundreds of files from one folder, so each folder's scripts are read once per
process, and read again only when one of them changes (name, size or time).
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import Warnings
from . import files, ucscript

MAX_SCRIPTS = 4096               # .uc files indexed in one folder
MAX_SCRIPT_BYTES = 1 << 20       # a bigger .uc is no mesh script


@dataclass(frozen=True)
class MeshImport:
    """One `#exec MESH IMPORT` of a script (the script itself is read again when it is chosen: the
    index keeps no texts, however many scripts a folder holds)."""

    script: Path
    mesh: str
    datafile: str
    anivfile: str


def read_text(path: Path) -> bytes:
    """A script's bytes: the one place the index reads a file."""
    return path.read_bytes()


def _stamp(folder: Path) -> tuple:
    """(name, size, mtime) of the folder's .uc files, sorted by name ignoring case."""
    out = []
    try:
        with os.scandir(folder) as it:
            for e in it:
                if e.name[-3:].lower() == ".uc":
                    try:
                        st = e.stat()
                    except OSError:
                        continue
                    if e.is_file() and st.st_size <= MAX_SCRIPT_BYTES:
                        out.append((e.name, st.st_size, st.st_mtime_ns))
    except OSError:
        return ()
    return tuple(sorted(out, key=lambda t: (t[0].lower(), t[0]))[:MAX_SCRIPTS])


@functools.lru_cache(maxsize=32)
def _imports(folder: str, stamp: tuple) -> tuple[MeshImport, ...]:
    out = []
    for name, _, _ in stamp:
        path = Path(folder) / name
        try:
            text = read_text(path)
        except OSError:
            continue
        low = text.lower()
        if b"#exec" not in low or b"import" not in low:
            continue
        for d in ucscript.parse(text, Warnings(), name).directives:
            if (d.group, d.command) == ("MESH", "IMPORT") and d.get("MESH"):
                out.append(MeshImport(path, d.get("MESH"), d.get("DATAFILE"), d.get("ANIVFILE")))
    return tuple(out)


def folder_imports(folder: Path) -> tuple[MeshImport, ...]:
    """Every MESH IMPORT of the folder's scripts, in script name order, then line order."""
    return _imports(str(folder), _stamp(folder))


def base_name(script_path: str) -> str:
    """The file name a script's path ends in (``MODELS\\data20.3D`` -> ``data20.3d``)."""
    return script_path.replace("\\", "/").rsplit("/", 1)[-1].lower()


def _same(a: Path | None, b: Path) -> bool:
    try:
        return a is not None and os.path.samefile(a, b)
    except OSError:
        return False


def users(opened: Path) -> list[MeshImport]:
    """The MESH IMPORT lines of the package's scripts (the file's own folder, then ../Classes)
    that name `opened` as DATAFILE or ANIVFILE, one per mesh and pair of files."""
    want = opened.name.lower()
    folders = [opened.parent, files.find_dir_ci(opened.parent.parent, "Classes")]
    out, seen = [], set()
    for folder in dict.fromkeys(f for f in folders if f is not None):
        for imp in folder_imports(folder):
            named = [p for p in (imp.datafile, imp.anivfile) if base_name(p) == want]
            if not any(_same(files.resolve_from_script(imp.script, p), opened) for p in named):
                continue
            key = (imp.mesh.lower(), base_name(imp.datafile), base_name(imp.anivfile))
            if key not in seen:
                seen.add(key)
                out.append(imp)
    return out
