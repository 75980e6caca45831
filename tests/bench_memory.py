"""Peak memory of a bench row: one fresh Blender process per figure.

tracemalloc sees only Python's allocations, not Blender's, so the figure is the
process's resident high-water mark (VmHWM) during the measured call, above the
resident size just before it; the mark is reset there (writing 5 to
/proc/self/clear_refs), and free memory goes back to the system (malloc_trim)
before each resident size is taken. Linux only.

Our import of a file is measured above the empty scene with the extension
installed: the whole read counts. A floor is handed its data, so its figure is
the bytes of the arrays it hands Blender (at 4 bytes an index, as Blender takes
them) plus the peak of the build above its loaded Scene: the data must exist
once, in the least room, whatever reads it. A bridge row's Scene is the input
of both, counted so for both. An export is measured above the scene it exports
(imported beforehand by our operator, the same for all three).

    peak_mb(kind, phase, data, import_id, export_id, export_kwargs) -> MB

kind: "floor" | "fast" | "ours"; phase: "import" | "export"; data: a file path,
or "grid:<tris>" for the bridge rows (a generated Scene, no file).
"""
from __future__ import annotations

import ctypes
import gc
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _status(key: str) -> int:
    """A /proc/self/status figure in KiB."""
    return int(re.search(rf"^{key}:\s+(\d+)", Path("/proc/self/status").read_text(), re.M).group(1))


def peak_mb(kind: str, phase: str, data: str, import_id: str = "", export_id: str = "",
            export_kwargs: dict | None = None) -> float:
    spec = dict(kind=kind, phase=phase, data=data, import_id=import_id, export_id=export_id,
                export_kwargs=export_kwargs or {})
    out = subprocess.run([sys.executable, __file__, json.dumps(spec)], cwd=ROOT, env=os.environ,
                         capture_output=True, text=True)
    found = re.search(r"^PEAK (\d+)$", out.stdout, re.M)
    if out.returncode or not found:
        raise RuntimeError(f"memory run {spec} failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    return int(found.group(1)) / 1024


def _settled_rss() -> int:
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return _status("VmRSS")


def floor_bytes(scene) -> int:
    """The bytes of the arrays floor_build hands Blender, at their least size."""
    n = 0
    for m in scene.meshes:
        n += m.positions.size * 4 + (len(m.corners) + len(m.faces)) * 4
        n += sum(uv.size * 4 for uv in m.uv_layers.values())
        n += len(m.faces) * 4 if m.face_material is not None and len(m.materials) > 1 else 0
        n += m.normals.size * 4 if m.normals is not None else 0
        n += sum(k.positions.size * 4 for k in m.shape_keys)
        n += (m.skin.joints.size + m.skin.weights.size) * 4 if m.skin is not None else 0
    for anim in scene.animations:
        n += sum((len(ch.frames) + np.size(ch.values)) * 4 for ch in anim.channels)
    return n


def _child(spec: dict) -> int:
    sys.path.insert(0, str(ROOT))
    from tests import bench, bench_data, blender_setup
    import bpy
    lgf = blender_setup.install()
    from importlib import import_module
    bench.WEIGHTS = import_module(f"{lgf.__name__}.bridge.weights")
    bench.reset()
    base = _settled_rss()
    data, kind = spec["data"], spec["kind"]
    grid = data.startswith("grid:")

    def source():
        return bench_data.grid_scene(int(data[5:])) if grid else lgf.codec.load(data)

    def op(idname):
        mod, name = idname.split(".")
        return getattr(getattr(bpy.ops, mod), name)

    if spec["phase"] == "import":
        scene = source() if grid or kind != "ours" else None
        if scene is not None:
            base = _settled_rss() - floor_bytes(scene) // 1024      # the Scene counts at its least size
        if kind == "floor":
            run = lambda: bench.floor_build(scene)                              # noqa: E731
        elif kind == "fast":
            run = lambda: bench.floor_build(scene, True)                        # noqa: E731
        elif grid:
            run = lambda: lgf.bridge.build_scene(scene, lgf.bridge.BuildOptions(), bpy.context)  # noqa: E731
        else:
            run = lambda: op(spec["import_id"])(filepath=data)                  # noqa: E731
    else:
        if grid:
            scene = source()
            lgf.bridge.build_scene(scene, lgf.bridge.BuildOptions(), bpy.context)
        else:
            op(spec["import_id"])(filepath=data)
        objs = list(bpy.data.objects)
        out = Path(tempfile.mkdtemp(prefix="lgf-bench-mem-")) / ("back" + Path(data).name.split("bench", 1)[-1])
        if kind == "floor":
            run = lambda: bench.floor_read(objs)                                # noqa: E731
        elif kind == "fast":
            run = lambda: bench.floor_read(objs, True)                          # noqa: E731
        elif grid:
            run = lambda: lgf.bridge.collect_scene(bpy.context, lgf.bridge.CollectOptions(use_keyframes=False))  # noqa: E731
        else:
            run = lambda: op(spec["export_id"])(filepath=str(out), **spec["export_kwargs"])  # noqa: E731
        base = _settled_rss()       # an export starts from the scene it exports
    _settled_rss()
    Path("/proc/self/clear_refs").write_text("5")     # the high-water mark restarts from here
    run()
    print(f"PEAK {max(0, _status('VmHWM') - base)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_child(json.loads(sys.argv[1])))
