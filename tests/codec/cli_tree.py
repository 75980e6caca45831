"""A small mixed tree of real files for the command-line tests (copied from test_assets)."""
from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ASSETS

TREE = {
    "ships/CUBE.3DS": "3ds/cube_hierarchy.3ds",            # upper-case extension
    "ships/deep/box_d.3d": "unreal/box_d.3d",              # an Unreal pair: one set
    "ships/deep/box_a.3d": "unreal/box_a.3d",
    "props/grid_static.MESH": "unigine/grid_static.mesh",
    "props/cube_v2.u3d": "ultimate3d/cube_v2.u3d",
    "props/broken/wrong.3ds": "3ds/wrong.3ds",             # not a 3DS file: reported, the run goes on
    "props/readme.txt": None,                              # no format reads it: ignored
}


def make_tree(root: Path) -> Path:
    for rel, src in TREE.items():
        dst = root / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src is None:
            dst.write_text("not a model")
        else:
            shutil.copy2(ASSETS / src, dst)
    return root
