"""Registration of every format's operators, FileHandlers and menu entries.

Each module here (one per format) exposes CLASSES, IMPORT_MENU and EXPORT_MENU
(lists of menu draw functions). Modules starting with "_" are shared code.
"""
from __future__ import annotations

import importlib
import pkgutil

import bpy

from . import _cli


def _modules():
    return [importlib.import_module(f"{__name__}.{m.name}")
            for m in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name) if not m.name.startswith("_")]


def register():
    for mod in _modules():
        for cls in mod.CLASSES:
            bpy.utils.register_class(cls)
        for fn in mod.IMPORT_MENU:
            bpy.types.TOPBAR_MT_file_import.append(fn)
        for fn in mod.EXPORT_MENU:
            bpy.types.TOPBAR_MT_file_export.append(fn)
    _cli.register()


def unregister():
    _cli.unregister()
    for mod in reversed(_modules()):
        for fn in mod.IMPORT_MENU:
            bpy.types.TOPBAR_MT_file_import.remove(fn)
        for fn in mod.EXPORT_MENU:
            bpy.types.TOPBAR_MT_file_export.remove(fn)
        for cls in reversed(mod.CLASSES):
            bpy.utils.unregister_class(cls)
