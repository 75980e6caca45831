"""Install the built extension zip into real bpy, in an isolated Blender user folder.

Import this before anything imports bpy: it points Blender's user folders at
a fresh temporary directory, so a developer's own Blender set-up is never
read or changed.
"""
from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
USER_DIR = Path(tempfile.mkdtemp(prefix="lgf-blender-user-"))
for var in ("BLENDER_USER_RESOURCES", "BLENDER_USER_CONFIG", "BLENDER_USER_SCRIPTS",
            "BLENDER_USER_EXTENSIONS", "BLENDER_USER_DATAFILES"):
    os.environ[var] = str(USER_DIR / var.lower())
atexit.register(shutil.rmtree, USER_DIR, True)

import bpy  # noqa: E402

PACKAGE = "bl_ext.user_default.legacy_game_formats"


def built_zip() -> Path:
    env = os.environ.get("LGF_ZIP")
    if env:
        return Path(env)
    found = sorted((ROOT / "dist").glob("legacy_game_formats-*.zip"))
    if not found:
        raise RuntimeError("no built zip: run `python3 build.py test`, which builds it first")
    return found[-1]


def install(zip_path: Path | None = None):
    """Install and enable the extension; return its package module."""
    import importlib
    zip_path = zip_path or built_zip()
    bpy.ops.wm.read_homefile(use_empty=True)
    result = bpy.ops.extensions.package_install_files(filepath=str(zip_path), repo="user_default",
                                                      enable_on_install=True)
    if result != {"FINISHED"}:
        raise RuntimeError(f"installing {zip_path} returned {result}")
    if PACKAGE not in bpy.context.preferences.addons:
        raise RuntimeError(f"{PACKAGE} installed but not enabled")
    for sub in ("codec", "bridge", "operators"):
        importlib.import_module(f"{PACKAGE}.{sub}")
    return importlib.import_module(PACKAGE)
