"""From command-line sources (files, folders, globs) to the files to convert and where each goes.

Folders are walked recursively and globs expanded; extensions match in any
case. A file that is only read through another of its set (an Unreal
`_a.3d` or `.uc`) is not a source of its own when found by a walk: the set's
`_d.3d` stands for it. A UNIGINE `.anim` beside its `.mesh` is not converted on
its own either (its animations go with the mesh), though `check` reads it alone.
Named explicitly, any file of a set is accepted, and one set is converted once.
"""
from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import FormatError
from ..registry import FormatSpec, find_format


@dataclass(frozen=True)
class Source:
    path: Path
    folder: Path          # its folder relative to the root it was found under (mirrored under OUTDIR)
    spec: FormatSpec


def _readable(path: Path) -> FormatSpec | None:
    try:
        return find_format(path.name)      # by extension only: the worker settles magic
    except FormatError:
        return None


def _walk(root: Path, skip: Path | None):
    for folder, dirs, names in os.walk(root):
        # never walk into the output folder (`lgf convert . -d out` run twice)
        dirs[:] = sorted(d for d in dirs if skip is None or (Path(folder) / d).resolve() != skip)
        for name in sorted(names):
            yield Path(folder) / name


def gather(args: list[str], outdir: Path | None = None, convert: bool = False) -> tuple[list[Source], list[str]]:
    """The sources, in a stable order, and the arguments that name nothing (nothing under `outdir`).

    convert: also leave out the companions of a set found in the same walk (a check reads each alone)."""
    skip = outdir.resolve() if outdir is not None else None
    found: list[Source] = []
    missing: list[str] = []
    named: set[Path] = set()

    def add_tree(root: Path, base: Path | None = None):
        base = base or root              # mirrored from here: a folder matched by a glob keeps its own name
        for p in _walk(root, skip):
            spec = _readable(p)
            if spec is not None and not spec.partner(p):
                found.append(Source(p, p.parent.relative_to(base), spec))

    for arg in args:
        p = Path(arg)
        if p.is_dir():
            add_tree(p)
        elif p.is_file():
            spec = _readable(p)
            if spec is None:
                missing.append(f"{arg}: no format reads {p.suffix or p.name!r}")
            else:
                found.append(Source(p, Path(), spec))
                named.add(p.resolve())
        elif glob.has_magic(arg):
            parts = Path(arg).parts
            fixed = next(i for i, part in enumerate(parts) if glob.has_magic(part))
            base = Path(*parts[:fixed]) if fixed else Path(".")
            hits = sorted(glob.glob(arg, recursive=True))
            for h in map(Path, hits):
                if h.is_dir():
                    add_tree(h, base if h.is_relative_to(base) else h)
                elif (spec := _readable(h)) is not None and not spec.partner(h):
                    found.append(Source(h, h.parent.relative_to(base) if h.is_relative_to(base) else Path(), spec))
            if not hits:
                missing.append(f"{arg}: matches no file")
        else:
            missing.append(f"{arg}: no such file or folder")
    if convert:
        # found by a walk or glob beside its set's main file, a companion goes with it; named, it converts alone
        taken = {c.resolve() for s in found for c in s.spec.companions(s.path)} - named
        found = [s for s in found if s.path.resolve() not in taken]
    return _one_per_set(found), missing


def _one_per_set(sources: list[Source]) -> list[Source]:
    seen, out = set(), []
    for s in sources:
        key = (str(s.path.parent.resolve()), s.spec.name, s.spec.set_name(s.path))
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


@dataclass(frozen=True)
class Plan:
    source: Source
    output: Path          # the path handed to save(): the set's first file, whose age decides "up to date"
    clash: str = ""       # another source already writes this output


def plan(sources: list[Source], to: FormatSpec, outdir: Path | None) -> list[Plan]:
    out, taken = [], {}
    for s in sources:
        folder = (outdir / s.folder) if outdir is not None else s.path.parent
        name = s.spec.set_name(s.path)
        main = to.main_output(folder, name)
        key = str(main.resolve()).lower()      # case-insensitive file systems collide too
        clash = f"{taken[key]} is converted to the same output {main}" if key in taken else ""
        taken.setdefault(key, str(s.path))
        out.append(Plan(s, main, clash))
    return out
