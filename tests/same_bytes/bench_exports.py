"""Export the benchmark's animated scenes (.u3d skinned, UNIGINE skinned with its animation, UE1)
with the zip in $LGF_ZIP into the folder argv[1]: import each generated file, export it back."""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests import blender_setup  # noqa: E402  (isolates Blender's user folders first)
import bpy  # noqa: E402

from tests.bench_data import _op  # noqa: E402


def scenes():
    from addon.codec.errors import Warnings
    from addon.codec.formats.unigine.options import ImportOptions
    from addon.codec.formats.unigine.to_scene import mesh_to_scene
    from tests import unigine_samples as samples
    from tests.bench_unreal import make_scene
    from tests.codec.u3d_bench_scenes import skinned_scene
    u3d, ue1, uni = "ultimate3d", "unreal_vertex_mesh", "unigine_mesh"
    return [("u3d", skinned_scene(20_000, 60, 500), ".u3d", {}, u3d),
            ("ue1", make_scene(5000, 1000), "_d.3d", {}, ue1),
            ("unigine", mesh_to_scene(samples.skinned_mesh(20_000, 60, 500), ImportOptions(), Warnings()), ".mesh",
             {"embed_animations": True}, uni)]


def main(dest: Path) -> None:
    lgf = blender_setup.install()
    for name, scene, ext, opts, op in scenes():
        bpy.ops.wm.read_homefile(use_empty=True)
        work = Path(tempfile.mkdtemp(prefix="lgf-same-"))
        lgf.codec.save(scene, work / f"source{ext}", **opts)
        _op(f"import_scene.{op}")(filepath=str(work / f"source{ext}"))
        (work / "out").mkdir()
        _op(f"export_scene.{op}")(filepath=str(work / "out" / f"back{ext}"), **opts)
        shutil.copytree(work / "out", dest / name, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
