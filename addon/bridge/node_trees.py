"""The one place that knows how a material's or world's node tree is switched on across Blender
versions: 4.x renders it only with `use_nodes` on; 5.0 always does, and deprecates the flag."""
from __future__ import annotations

import bpy

_FLAG = bpy.app.version < (5, 0, 0)


def enable(owner) -> None:
    """Make the material or world render its node tree."""
    if _FLAG:
        owner.use_nodes = True


def in_use(owner) -> bool:
    """Whether the material or world renders its node tree (else, before 5.0, its plain colour)."""
    return owner.node_tree is not None and (not _FLAG or owner.use_nodes)
