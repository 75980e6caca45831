"""The Blender-free converter writes the same frames and sequences as Blender's exporter.

Each bundled sample is converted twice: `python -m addon.codec convert IN OUT`
(no Blender), and imported into Blender then exported with the default
options. Both files are read back with the codec and compared: animation
names and ranges, every channel at every frame, and the vertex frames.
"""
from pathlib import Path

import numpy as np
import pytest

import bpy
from addon.codec import load
from addon.codec.__main__ import main as codec_main
from addon.codec.animation import evaluate, frames_of

ASSETS = Path(__file__).resolve().parents[2] / "test_assets"
IMPORT = {".3d": bpy.ops.import_scene.unreal_vertex_mesh, ".u3d": bpy.ops.import_scene.ultimate3d,
          ".mesh": bpy.ops.import_scene.unigine_mesh, ".3ds": bpy.ops.import_scene.studio3ds}
EXPORT = {"_d.3d": bpy.ops.export_scene.unreal_vertex_mesh, ".u3d": bpy.ops.export_scene.ultimate3d,
          ".mesh": bpy.ops.export_scene.unigine_mesh, ".3ds": bpy.ops.export_scene.studio3ds}
CASES = [("unreal/box_d.3d", "_d.3d"), ("ultimate3d/skinned_v2.u3d", ".u3d"),
         ("ultimate3d/skinned_v2.u3d", "_d.3d"), ("unigine/tube_skinned.mesh", ".u3d"),
         ("unigine/tube_skinned.mesh", "_d.3d"), ("3ds/TargetCameraAnim.3ds", ".3ds")]


def _both(src: Path, ext: str, tmp_path: Path):
    codec_out, blender_out = tmp_path / f"codec{ext}", tmp_path / "blender" / f"blender{ext}"
    blender_out.parent.mkdir()
    assert codec_main(["convert", str(src), str(codec_out)]) in (0, None)
    assert IMPORT[src.suffix.lower()](filepath=str(src)) == {"FINISHED"}
    assert EXPORT[ext](filepath=str(blender_out)) == {"FINISHED"}
    return load(codec_out), load(blender_out)


@pytest.mark.parametrize("name,ext", CASES, ids=[f"{n}->{e}" for n, e in CASES])
def test_convert_gives_what_blender_exports(clean, tmp_path, name, ext):
    a, b = _both(ASSETS / name, ext, tmp_path)
    assert [(x.name, x.frame_start, x.frame_end) for x in a.animations] == \
        [(x.name, x.frame_start, x.frame_end) for x in b.animations]
    for x, y in zip(a.animations, b.animations):
        frames = frames_of(x)
        cx = {(c.target, c.bone, c.path): c for c in x.channels}
        cy = {(c.target, c.bone, c.path): c for c in y.channels}
        assert sorted(cx) == sorted(cy), x.name
        for key, c in cx.items():
            va, vb = evaluate(c, frames), evaluate(cy[key], frames)
            if key[2] == "rotation_quaternion":
                vb *= np.where(np.sum(va * vb, 1, keepdims=True) < 0, -1.0, 1.0)
            np.testing.assert_allclose(va, vb, atol=2e-3, err_msg=f"{x.name} {key}")
    for ma, mb in zip(a.meshes, b.meshes):
        assert len(ma.shape_keys) == len(mb.shape_keys)
        for ka, kb in zip(ma.shape_keys, mb.shape_keys):
            np.testing.assert_allclose(ka.positions, kb.positions, atol=0.02)
