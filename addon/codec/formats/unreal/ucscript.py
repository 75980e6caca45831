"""The .uc script: parse `#exec` directives, gather one mesh's setup, write a script.

Only `#exec` lines matter here; everything else in the file (UnrealScript
code, comments) is kept as text by the model and ignored.
"""
from __future__ import annotations

import math
import re

from ...errors import Warnings
from .model import PF_MASKED, Directive, MeshSetup, Script, Sequence

# Linear time on any line: a name starts only where no word character precedes it, and
# possessive quantifiers never give back, so a long token is scanned once, not once per character.
_PARAM = re.compile(r'(?<!\w)(\w++)\s*+=\s*+(?:"([^"]*+)"|(\S++))')
_EXEC = re.compile(r"\s*+#exec\b", re.IGNORECASE)


def _short(text: str, limit: int = 60) -> str:
    """A line or token as a warning quotes it: a 1 MB line is one short warning."""
    text = text.strip()
    return repr(text if len(text) <= limit else text[:limit] + "...")


def parse(text: bytes, warnings: Warnings, name: str = ".uc") -> Script:
    """Every `#exec` line; malformed lines become warnings, never errors."""
    directives: list[Directive] = []
    for lineno, line in enumerate(text.decode("latin-1").splitlines(), 1):
        m = _EXEC.match(line)
        if not m:
            continue
        body = line[m.end():].split("//", 1)[0]
        first = _PARAM.search(body)
        words = (body[:first.start()] if first else body).split()
        if len(words) < 2:
            warnings.warn(f"{name} line {lineno}: #exec without a group and command: {_short(line)}")
            continue
        tail = body[first.start():] if first else ""
        params = {p.group(1).upper(): p.group(2) if p.group(2) is not None else p.group(3)
                  for p in _PARAM.finditer(tail)}
        leftover = " ".join(words[2:] + _PARAM.sub(" ", tail).split())
        if leftover:
            warnings.warn(f"{name} line {lineno}: cannot read {_short(leftover)} in #exec {words[0][:20]} {words[1][:20]}")
        directives.append(Directive(words[0].upper(), words[1].upper(), params, lineno))
    return Script(text, directives)


def number(d: Directive, key: str, default: float, warnings: Warnings) -> float:
    raw = d.get(key)
    if raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isfinite(value):
        return value
    warnings.warn(f".uc line {d.line}: {d.group} {d.command} {key}={_short(raw, 20)} is not a number; "
                  f"using {default:g}")
    return default


def _flag(d: Directive, key: str) -> bool:
    return d.get(key).strip().lower() in ("1", "true")


# the MESH IMPORT parameters compose() writes itself; any other is kept as read
_WRITTEN_IMPORT = {"MESH", "ANIVFILE", "DATAFILE", "X", "Y", "Z", "UNMIRROR"}


def mesh_names(script: Script) -> list[str]:
    return [d.get("MESH") for d in script.directives if (d.group, d.command) == ("MESH", "IMPORT")]


def describe(script: Script, mesh: str, warnings: Warnings) -> MeshSetup:
    """Collect the directives that apply to `mesh` (names compare case-insensitively)."""
    key = mesh.lower()
    setup = MeshSetup(mesh=mesh)
    maps = {key}
    files: dict[str, str] = {}
    imports: dict[str, Directive] = {}
    assigned: dict[int, str] = {}
    seqs: dict[str, Sequence] = {}
    for d in script.directives:
        kind = (d.group, d.command)
        if kind == ("MESHMAP", "NEW") and d.get("MESH").lower() == key:
            maps.add(d.get("MESHMAP").lower())
        if kind == ("TEXTURE", "IMPORT"):
            files[d.get("NAME").lower()] = d.get("FILE")
            imports[d.get("NAME").lower()] = d
        if d.group == "MESH" and d.get("MESH").lower() != key:
            continue
        if d.group == "MESHMAP" and d.get("MESHMAP").lower() not in maps:
            continue
        if kind == ("MESH", "IMPORT"):
            setup.datafile, setup.anivfile = d.get("DATAFILE"), d.get("ANIVFILE")
            setup.unmirror, setup.zerotex = _flag(d, "UNMIRROR"), _flag(d, "ZEROTEX")
            setup.import_params = params_text({k: v for k, v in d.params.items() if k not in _WRITTEN_IMPORT})
        elif kind == ("MESH", "ORIGIN"):
            setup.origin = tuple(number(d, k, 0.0, warnings) for k in "XYZ")
            setup.rotation = tuple(number(d, k, 0.0, warnings) for k in ("YAW", "PITCH", "ROLL"))
        elif kind == ("MESH", "SEQUENCE"):
            name = d.get("SEQ")
            start, count = number(d, "STARTFRAME", -1, warnings), number(d, "NUMFRAMES", -1, warnings)
            if not name or start < 0 or count < 1:
                warnings.warn(f".uc line {d.line}: MESH SEQUENCE needs SEQ, STARTFRAME >= 0 and NUMFRAMES >= 1; skipped")
                continue
            seqs[name.lower()] = Sequence(name, int(start), int(count), number(d, "RATE", 0.0, warnings), d.get("GROUP"))
        elif kind == ("MESH", "NOTIFY"):
            seq = seqs.get(d.get("SEQ").lower())
            if seq is None:
                warnings.warn(f".uc line {d.line}: MESH NOTIFY names unknown sequence {d.get('SEQ')!r}; skipped")
                continue
            seq.notifies.append((number(d, "TIME", 0.0, warnings), d.get("FUNCTION")))
        elif kind == ("MESHMAP", "SCALE"):
            scale = [number(d, k, 1.0, warnings) for k in "XYZ"]
            if 0.0 in scale:
                # a flat mesh cannot be placed back (no inverse): the axis keeps the unit scale
                warnings.warn(f".uc line {d.line}: MESHMAP SCALE of 0 would flatten the mesh; 1 used on that axis")
                scale = [v or 1.0 for v in scale]
            setup.scale = tuple(scale)
        elif kind == ("MESHMAP", "SETTEXTURE"):
            num = number(d, "NUM", -1, warnings)
            if num < 0 or num > 255:
                warnings.warn(f".uc line {d.line}: SETTEXTURE NUM must be 0..255; skipped")
                continue
            assigned[int(num)] = d.get("TEXTURE")
    setup.sequences = list(seqs.values())
    setup.textures = {n: (t, files.get(t.lower(), "")) for n, t in assigned.items()}
    for n, t in assigned.items():
        d = imports.get(t.lower())
        if d is not None:
            setup.texture_flags[n] = texture_flags(d, warnings)
            setup.texture_params[n] = params_text({k: v for k, v in d.params.items() if k not in ("NAME", "FILE")})
    return setup


def texture_flags(d: Directive, warnings: Warnings) -> int:
    """A TEXTURE IMPORT's poly flags: FLAGS=n, plus masked for MASK=1 (later engines)."""
    flags = number(d, "FLAGS", 0, warnings)
    if flags != int(flags) or not 0 <= flags < 1 << 32:
        warnings.warn(f".uc line {d.line}: TEXTURE IMPORT FLAGS={d.get('FLAGS')!r} is not a flag word; using 0")
        flags = 0
    return int(flags) | (PF_MASKED if _flag(d, "MASK") else 0)


def params_text(params: dict[str, str]) -> str:
    """KEY=VALUE pairs as a script writes them (quoted when a value holds spaces)."""
    return " ".join(f"{k}={_file(v)}" for k, v in params.items())


def parse_params(text: str) -> dict[str, str]:
    """The inverse of params_text."""
    return {p.group(1).upper(): p.group(2) if p.group(2) is not None else p.group(3) for p in _PARAM.finditer(text)}


_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")


def identifier(name: str, fallback: str) -> str:
    """`name` as an UnrealScript identifier (ASCII letters, digits and _, not starting with
    a digit): other characters become _; an empty name becomes `fallback`."""
    out = _NOT_IDENTIFIER.sub("_", name)
    if not out:
        return fallback
    return "_" + out if out[0].isdigit() else out


def checked_identifier(name: str, fallback: str, what: str, warnings: Warnings | None) -> str:
    """identifier(), with a warning when the name had to change."""
    out = identifier(name, fallback)
    if out != name and warnings is not None:
        warnings.warn(f"{what} {name!r} is not a valid UnrealScript name; the script uses {out!r}")
    return out


def _file(path: str) -> str:
    """A file parameter; quoted when it holds spaces (the engine's Parse reads quoted values)."""
    return f'"{path}"' if any(c.isspace() for c in path) else path


def _fmt(v: float) -> str:
    return f"{v:.9g}"


def _texture_params(kept: str | None, flags: int, group: str) -> str:
    """The TEXTURE IMPORT parameters after NAME and FILE: those the script had, in its order,
    with FLAGS= set to `flags` (less the masked bit that a kept MASK=1 gives); else GROUP= and FLAGS=."""
    if kept is None:
        return f"GROUP={group} FLAGS={flags}"
    params = parse_params(kept)
    if "MASK" in params and _flag(Directive("", "", params), "MASK"):
        written = texture_flags(Directive("", "", {"FLAGS": params.get("FLAGS", "")}), Warnings())
        if not flags & PF_MASKED:
            del params["MASK"]
        elif not written & PF_MASKED:
            flags &= ~PF_MASKED
    if "FLAGS" in params or flags:
        params["FLAGS"] = str(flags)
    return params_text(params)


def _mesh_lines(s: MeshSetup) -> list[str]:
    """The directives the engine needs to import one mesh."""
    m = s.mesh
    lines = [f"#exec MESH IMPORT MESH={m} ANIVFILE={_file(s.anivfile)} DATAFILE={_file(s.datafile)} X=0 Y=0 Z=0"
             + (" UNMIRROR=1" if s.unmirror else "") + (f" {s.import_params}" if s.import_params else "")]
    lines.append(f"#exec MESH ORIGIN MESH={m} X={_fmt(s.origin[0])} Y={_fmt(s.origin[1])} Z={_fmt(s.origin[2])}"
                 + "".join(f" {k}={_fmt(v)}" for k, v in zip(("YAW", "PITCH", "ROLL"), s.rotation) if v))
    for q in s.sequences:
        lines.append(f"#exec MESH SEQUENCE MESH={m} SEQ={q.name} STARTFRAME={q.start} NUMFRAMES={q.count}"
                     + (f" RATE={_fmt(q.rate)}" if q.rate > 0 else "") + (f" GROUP={q.group}" if q.group else ""))
    for q in s.sequences:
        for time, function in q.notifies:
            lines.append(f"#exec MESH NOTIFY MESH={m} SEQ={q.name} TIME={_fmt(time)} FUNCTION={function}")
    lines.append(f"#exec MESHMAP NEW MESHMAP={m} MESH={m}")
    sx, sy, sz = s.scale or (1.0, 1.0, 1.0)
    lines.append(f"#exec MESHMAP SCALE MESHMAP={m} X={_fmt(sx)} Y={_fmt(sy)} Z={_fmt(sz)}")
    for num, (tex, path) in sorted(s.textures.items()):
        if path:
            rest = _texture_params(s.texture_params.get(num), s.texture_flags.get(num, 0), s.texture_group)
            lines.append(f"#exec TEXTURE IMPORT NAME={tex} FILE={_file(path)}" + (f" {rest}" if rest else ""))
    for num, (tex, _) in sorted(s.textures.items()):
        lines.append(f"#exec MESHMAP SETTEXTURE MESHMAP={m} NUM={num} TEXTURE={tex}")
    return lines


def compose(setups: MeshSetup | list[MeshSetup], class_name: str = "") -> bytes:
    """A script that imports each mesh (one MESH IMPORT and its directives per setup); the
    class shows the first. A skin that several meshes share is imported once."""
    setups = [setups] if isinstance(setups, MeshSetup) else setups
    s = setups[0]
    m = s.mesh
    lines, imported = [], set()
    for line in (line for one in setups for line in _mesh_lines(one)):
        if line.startswith("#exec TEXTURE IMPORT") and len(setups) > 1:
            if line in imported:
                continue
            imported.add(line)
        lines.append(line)
    head = [f"//{'=' * 70}", f"// {m}: written by Legacy Game Formats (Blender).", f"//{'=' * 70}",
            f"class {class_name or m} extends Actor;", ""]
    return ("\r\n".join(head + lines + ["", "defaultproperties", "{", f"    Mesh={s.package + '.' if s.package else ''}{m}",
                                        "    DrawType=DT_Mesh", "}", ""])).encode("latin-1", "replace")
