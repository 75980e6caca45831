"""The values an option of the formats' option dataclasses allows, declared once on its field.

A `typing.Literal[...]` annotation lists the choices; field metadata
`{"min": x, "max": y}` bounds a number. The command line checks both before any
file converts, `lgf formats` and the README list them, and the Blender
operators' enums and limits are tested against them.
"""
from __future__ import annotations

from dataclasses import Field, fields
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
