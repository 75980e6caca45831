"""Registration of every format's operators, and of the menu entries and FileHandlers that the
codec's registry gives them (one FormatSpec: its label, extensions and operator id).

Each module here (one per format) holds that format's operator classes, decorated with
_scaffold.for_format. Modules starting with "_" are shared code.
"""
from __future__ import annotations

import importlib
import pkgutil

import bpy

from .. import codec
from . import _cli
from ._scaffold import OPERATORS, file_handler

_registered: list = []


def _import_modules() -> None:
    for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")


def blender_formats() -> list[codec.FormatSpec]:
    """The registered formats that have Blender operators, in the registry's order."""
    _import_modules()
    specs = [s for s in codec.registered_formats().values() if s.operator_id]
    for s in specs:
        missing = {"import", "export"} - set(OPERATORS.get(s.name, {}))
        if missing:
            raise TypeError(f"format {s.name!r} names operator {s.operator_id!r} but has no "
                            f"{' or '.join(sorted(missing))} operator (operators/_scaffold.for_format)")
    return specs


def menu_items(side: str) -> list[tuple[str, str]]:
    """(operator id, text) of each File > Import or File > Export entry."""
    return [(f"{side}_{s.operator_id}", s.menu_label) for s in blender_formats()]


def classes() -> list[type]:
    """Every class to register: each format's operators, then its FileHandler."""
    out = []
    for s in blender_formats():
        out += [OPERATORS[s.name]["import"], OPERATORS[s.name]["export"], file_handler(s)]
    return out


def _draw_import(self, context):
    for idname, text in menu_items("import"):
        self.layout.operator(idname, text=text)


def _draw_export(self, context):
    for idname, text in menu_items("export"):
        self.layout.operator(idname, text=text)


def register():
    _registered[:] = classes()
    for cls in _registered:
        bpy.utils.register_class(cls)
    bpy.types.TOPBAR_MT_file_import.append(_draw_import)
    bpy.types.TOPBAR_MT_file_export.append(_draw_export)
    _cli.register()


def unregister():
    _cli.unregister()
    bpy.types.TOPBAR_MT_file_export.remove(_draw_export)
    bpy.types.TOPBAR_MT_file_import.remove(_draw_import)
    for cls in reversed(_registered):
        bpy.utils.unregister_class(cls)
    _registered.clear()
