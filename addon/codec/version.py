"""The project's version, wherever the codec runs: wheel, extension or checkout."""
from __future__ import annotations

import tomllib
from pathlib import Path


def version() -> str:
    try:
        from ._version import VERSION      # written into the wheel by build.py
        return VERSION
    except ImportError:
        pass
    here = Path(__file__).resolve().parent
    # the extension keeps the manifest beside its package; a checkout keeps it at the root
    for folder in (here.parent, here.parent.parent):
        manifest = folder / "blender_manifest.toml"
        if manifest.is_file():
            return tomllib.loads(manifest.read_text(encoding="utf-8")).get("version", "unknown")
    return "unknown"
