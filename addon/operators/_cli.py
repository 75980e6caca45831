"""`blender -c legacy_game_formats ...`: the codec's command line, inside Blender."""
from __future__ import annotations

import bpy

_handle = None


PROG = "blender -c legacy_game_formats"


def _run(argv: list[str]) -> int:
    from ..codec.cli import main
    return main(argv, prog=PROG)


def register():
    global _handle
    if hasattr(bpy.utils, "register_cli_command"):
        _handle = bpy.utils.register_cli_command("legacy_game_formats", _run)


def unregister():
    global _handle
    if _handle is not None:
        bpy.utils.unregister_cli_command(_handle)
        _handle = None
