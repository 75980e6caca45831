"""Files that used to stop an import now come in, with their warnings, through the real operators."""
import math

import numpy as np
import pytest

import bpy
from tests.codec.test_hardening import _skinned_mesh
from tests.codec.test_unreal_partners import _package
from tests.codec.unigine_fixtures import IDENT


@pytest.mark.parametrize("opened", ["Models/DATA01.3D", "Models/ANIV01.3D", "Classes/Thing.uc"])
def test_prototype_unreal_pair_imports_from_any_of_its_files(clean, tmp_path, opened):
    pkg = _package(tmp_path)
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(pkg / opened)) == {"FINISHED"}
    (ob,) = [o for o in clean.scene.objects if o.type == "MESH"]
    assert ob.name == "Thing"
    assert len(ob.data.shape_keys.key_blocks) == 3


def test_unigine_mesh_with_a_nan_bind_pose_imports(clean, tmp_path, capfd):
    (tmp_path / "nan.mesh").write_bytes(_skinned_mesh([IDENT, ((0, 0, 0), (0, 0, 0, 1), (math.nan, 0, 1))]))
    capfd.readouterr()
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(tmp_path / "nan.mesh")) == {"FINISHED"}
    assert "1 bone(s) with a NaN, infinite or zero-scale bind pose ('child')" in capfd.readouterr().out
    (arm,) = [o for o in clean.scene.objects if o.type == "ARMATURE"]
    heads = np.array([b.head_local for b in arm.data.bones])
    assert len(heads) == 2 and np.isfinite(heads).all()


@pytest.mark.parametrize("op, ext", [("studio3ds", ".3ds"), ("ultimate3d", ".u3d"), ("unreal_vertex_mesh", "_d.3d"),
                                     ("unigine_mesh", ".mesh")])
def test_a_damaged_import_exports_to_every_format_with_warnings(clean, tmp_path, capfd, op, ext):
    """NaN from a file (a material colour) and from Blender (a vertex), and a name Latin-1 lacks: every
    exporter finishes and says what it replaced, where it used to stop with a traceback."""
    from tests.codec.test_hardening import _nan_3ds
    _nan_3ds(tmp_path / "nan.3ds")
    assert bpy.ops.import_scene.studio3ds(filepath=str(tmp_path / "nan.3ds")) == {"FINISHED"}
    ob = next(o for o in clean.scene.objects if o.type == "MESH")
    ob.name = "Würfel Ω"
    ob.data.vertices[0].co = (math.nan, 0.0, math.inf)
    capfd.readouterr()
    out = tmp_path / f"out{ext}"
    assert getattr(bpy.ops.export_scene, op)(filepath=str(out)) == {"FINISHED"}
    said = capfd.readouterr().out
    assert out.exists() and "NaN, infinite or out-of-range" in said
    if ext in (".3ds", ".u3d"):
        assert "names hold Latin-1 characters only: 'W" in said
    elif ext == "_d.3d":         # names are UnrealScript identifiers there (checked_identifier)
        assert "names hold" not in said      # the mesh takes the file's name: no name of the scene is written
