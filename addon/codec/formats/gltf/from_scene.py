"""Scene -> Document (being written)."""
from __future__ import annotations

from ...errors import Warnings
from ...scene import Scene
from . import conventions  # noqa: F401
from .model import Document
from .options import ExportOptions


def from_scene(scene: Scene, opts: ExportOptions, warnings: Warnings) -> Document:
    return Document(json={"asset": {"version": "2.0"}}, binary=True)
