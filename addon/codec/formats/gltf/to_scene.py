"""Document -> Scene (stub: the reader fills it)."""
from __future__ import annotations

from ...errors import FormatError, Warnings
from ...scene import Scene
from . import conventions  # noqa: F401  the one place of the axes, for the reader
from .model import Document


def to_scene(doc: Document, opts, warnings: Warnings) -> Scene:
    raise FormatError("glTF reading is not written yet")
