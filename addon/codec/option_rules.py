"""The values an option of the formats' option dataclasses allows, declared once on its field.

A `typing.Literal[...]` annotation lists the choices; field metadata
`{"min": x, "max": y}` bounds a number. The command line checks both before any
file converts, `lgf formats` and the README list them, and the Blender
operators' enums and limits are tested against them.
"""
from __future__ import annotations

from dataclasses import MISSING, Field, dataclass, field, fields
from typing import Literal, get_args, get_origin, get_type_hints

# the normals import option of every format that stores a vertex per (point, normal, UV)
Normals = Literal["SHARP_EDGES", "EXACT", "KEEP"]


def choices(cls: type) -> dict[str, tuple]:
    """Each Literal-annotated field's allowed values, in declared order."""
    hints = get_type_hints(cls)
    return {f.name: get_args(hints[f.name]) for f in fields(cls) if get_origin(hints[f.name]) is Literal}


def bounds(f: Field) -> tuple[float | None, float | None]:
    """A number field's inclusive (min, max); None where it is open."""
    return f.metadata.get("min"), f.metadata.get("max")


def option(default, label: str, help: str = "", *, items: dict | None = None, subtype: str = "",
           secret: bool = False, **bounds_and_more):
    """A dataclass field that also says how the option is shown: its label, its help (the CLI's, the
    README's and the Blender property's description), labels and help for each choice (`items`:
    value -> (label, help)), a path `subtype` ("DIR_PATH", "FILE_PATH") and whether it is a `secret`
    (a password: hidden and never saved in presets). `min`/`max` bound a number; `soft_min`/`soft_max`
    bound its slider."""
    meta = {"label": label, "help": help, **bounds_and_more}
    if items is not None:
        meta["items"] = items
    if subtype:
        meta["subtype"] = subtype
    if secret:
        meta["secret"] = True
    return field(default=default, metadata=meta)


def same_option(cls: type, name: str):
    """The field `name` of `cls` again, for an options class that has the same option."""
    f = next(f for f in fields(cls) if f.name == name)
    return field(default=f.default, metadata=f.metadata)


def shown_items(cls: type, f: Field) -> tuple[tuple[str, str, str], ...]:
    """(value, label, help) of each choice of a Literal field, or of each member a set field may hold."""
    labels = f.metadata.get("items", {})
    values = choices(cls).get(f.name) or tuple(labels)
    missing = [v for v in values if v not in labels]
    if missing or set(labels) - set(values):
        raise TypeError(f"{cls.__name__}.{f.name}: choices {values} and shown items {tuple(labels)} differ")
    return tuple((v, *labels[v]) for v in values)


NORMALS_ITEMS = {
    "SHARP_EDGES": ("Sharp Edges (Native)",
                    "Weld the vertices at one point; the file's smoothing becomes sharp edges (and flat faces), "
                    "which Blender shades itself and keeps up to date as you edit"),
    "EXACT": ("Exact (Custom Normals)", "Weld the vertices at one point; the file's normals as custom split normals"),
    "KEEP": ("Keep File Vertices",
             "The vertices as the file stores them (cut open at UV seams), with custom split normals"),
}


def normals_option(items: dict = NORMALS_ITEMS):
    return option("SHARP_EDGES", "Normals", "How the file's normals become Blender's: welded with sharp edges, welded with custom "
                  "normals, or the file's vertices as stored",
                  items=items)


@dataclass(frozen=True)
class ShownOption:
    """One option as a user interface shows it (the Blender operators build their properties from these)."""
    name: str
    kind: str                  # bool, int, float, str, choice (one of items) or set (any of items)
    default: object
    label: str
    help: str
    items: tuple = ()          # (value, label, help)
    min: float | None = None
    max: float | None = None
    soft_min: float | None = None
    soft_max: float | None = None
    subtype: str = ""          # DIR_PATH, FILE_PATH
    secret: bool = False       # a password: hidden, never saved


def shown_options(cls: type) -> list[ShownOption]:
    out = []
    allowed = choices(cls)
    for f in fields(cls):
        default = f.default if f.default is not MISSING else f.default_factory()
        md = f.metadata
        if isinstance(default, (set, frozenset)):
            kind = "set"
        elif f.name in allowed or "items" in md:
            kind = "choice"
        else:
            kind = "bool" if isinstance(default, bool) else type(default).__name__
        lo, hi = bounds(f)
        out.append(ShownOption(
            f.name, kind, default, md.get("label", f.name.replace("_", " ").title()), md.get("help", ""),
            shown_items(cls, f) if kind in ("choice", "set") else (), lo, hi,
            md.get("soft_min"), md.get("soft_max"), md.get("subtype", ""), md.get("secret", False)))
    return out
