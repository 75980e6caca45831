"""A loaded Scene's mesh arrays own their memory: a view into the file's bytes, however small,
keeps all of them alive while Blender builds the meshes (a 1M-triangle .3ds held its 25 MB
through the import for the sake of its smoothing groups; `build.py bench` shows the peak)."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import load
from tests.conftest import ASSETS

SOURCES = ["3ds/jeep1.3ds", "3ds/cube_hierarchy.3ds", "unreal/box_d.3d", "unigine/tube_skinned.mesh",
           "unigine/grid_static.mesh", "ultimate3d/skinned_v2.u3d", "ultimate3d/cube_v2.u3d"]


def _file_views(scene) -> list[str]:
    out = []
    for m in scene.meshes:
        arrays = {k: v for k, v in vars(m).items() if isinstance(v, np.ndarray)}
        for group in ("uv_layers", "colors", "face_attributes", "vertex_attributes", "corner_attributes"):
            arrays.update({f"{group}[{k}]": v for k, v in getattr(m, group).items()})
        for k, key in enumerate(m.shape_keys):
            arrays[f"shape_keys[{k}]"] = key.positions
        for name, a in arrays.items():
            while isinstance(a.base, np.ndarray):
                a = a.base
            if a.base is not None:          # bytes, a memoryview or an mmap: the file's buffer
                out.append(f"{m.name}.{name} ({type(a.base).__name__})")
    return out


@pytest.mark.parametrize("path", SOURCES)
def test_loaded_meshes_hold_no_view_of_the_file(path):
    scene = load(ASSETS / path)
    assert scene.meshes
    assert _file_views(scene) == []
