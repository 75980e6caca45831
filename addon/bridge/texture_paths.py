"""How an export names its texture files: Blender's path modes, as the OBJ and FBX exporters
offer them, plus copying the pictures beside the exported file (under 8.3 names when asked)."""
from __future__ import annotations

import os
import shutil

import bpy
from bpy_extras.io_utils import path_reference

from ..codec.file_names import name_83
from ..codec.scene import Scene

MODES = (
    ("STRIP", "Strip Path", "File names only, as 3D Studio wrote them"),
    ("AUTO", "Auto", "Relative paths for pictures below the exported file's folder, else file names"),
    ("RELATIVE", "Relative", "Paths relative to the exported file where possible"),
    ("ABSOLUTE", "Absolute", "Full paths"),
    ("COPY", "Copy", "Copy the pictures beside the exported file and write their file names"),
)


def refer_images(scene: Scene, export_path: str, mode: str, names_83: bool = False) -> list[str]:
    """Rewrite each image's name as the export should write it (filepath cleared so that the
    name is used); COPY copies the pictures next to the file. Returns what was copied."""
    dst = os.path.dirname(os.path.abspath(export_path))
    src_base = os.path.dirname(bpy.data.filepath) if bpy.data.filepath else dst
    copied, taken = [], set()
    for img in scene.images:
        path = img.filepath
        if not path or mode == "STRIP":
            continue
        if mode == "COPY":
            name = name_83(path, taken) if names_83 else os.path.basename(path)
            target = os.path.join(dst, name)
            if os.path.isfile(path) and os.path.abspath(path) != os.path.abspath(target):
                shutil.copyfile(path, target)
                copied.append(target)
            img.name = name
        else:
            ref = path_reference(path, src_base, dst, "RELATIVE" if mode == "AUTO" else mode)
            if mode == "AUTO" and (os.path.isabs(ref) or ref.startswith("..")):
                ref = os.path.basename(path)        # not below the exported file: the name alone
            img.name = ref
        img.filepath = ""
    return copied
