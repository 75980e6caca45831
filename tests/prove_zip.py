"""Prove the built zip in real Blender: install, enable, import a bundled sample
of each format, export it again, and print what happened.

Run by `python3 build.py` with the zip path as its argument.
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import blender_setup  # noqa: E402  (isolates Blender's user folders first)
import bpy  # noqa: E402

ASSETS = blender_setup.ROOT / "test_assets"
# (format, sample, import operator, export operator, export file name)
SAMPLES = [
    ("3D Studio", "3ds/cube_hierarchy.3ds", "import_scene.studio3ds", "export_scene.studio3ds", "out.3ds"),
    ("Unreal 1", "unreal/box_d.3d", "import_scene.unreal_vertex_mesh", "export_scene.unreal_vertex_mesh", "out_d.3d"),
    ("UNIGINE", "unigine/tube_skinned.mesh", "import_scene.unigine_mesh", "export_scene.unigine_mesh", "out.mesh"),
    ("Ultimate 3D", "ultimate3d/skinned_v2.u3d", "import_scene.ultimate3d", "export_scene.ultimate3d", "out.u3d"),
]


def _op(idname: str):
    mod, name = idname.split(".")
    return getattr(getattr(bpy.ops, mod), name)


def main(zip_path: str) -> int:
    t0 = time.perf_counter()
    pkg = blender_setup.install(Path(zip_path))
    print(f"installed and enabled {pkg.__name__} in Blender {bpy.app.version_string} "
          f"({time.perf_counter() - t0:.1f} s)")
    rows, failed = [], 0
    out_dir = Path(tempfile.mkdtemp(prefix="lgf-prove-"))
    for label, sample, imp, exp, out_name in SAMPLES:
        path = ASSETS / sample
        if not path.exists():
            rows.append((label, sample, "missing sample", "", ""))
            failed += 1
            continue
        bpy.ops.wm.read_homefile(use_empty=True)
        try:
            t = time.perf_counter()
            r1 = _op(imp)(filepath=str(path))
            objs = len(bpy.data.objects)
            tris = sum(len(o.data.polygons) for o in bpy.data.objects if o.type == "MESH")
            out = out_dir / out_name
            r2 = _op(exp)(filepath=str(out))
            ms = (time.perf_counter() - t) * 1000
            ok = r1 == {"FINISHED"} and r2 == {"FINISHED"} and out.exists()
            rows.append((label, sample, f"{objs} objects, {tris} faces",
                         f"{out.stat().st_size if out.exists() else 0} bytes", f"{'ok' if ok else 'FAILED'} {ms:.0f} ms"))
            failed += not ok
        except (RuntimeError, AttributeError) as e:
            rows.append((label, sample, f"error: {e}".splitlines()[0][:60], "", "FAILED"))
            failed += 1
    widths = [max(len(str(r[i])) for r in rows + [("format", "sample", "imported", "exported", "result")])
              for i in range(5)]
    for r in [("format", "sample", "imported", "exported", "result")] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
