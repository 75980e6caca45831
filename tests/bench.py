"""`python3 build.py bench`: speed of the bridge and of each format, beside its floor.

The floor of a row is the bare numpy + foreach_set (import) or foreach_get
(export) of the same arrays, measured in the same run, through the classic
mesh collections (vertices.co, loops.vertex_index, polygons.loop_start,
uv_layers, corner_normals), as the issues define it; index arrays go to those
unsigned properties as uint32, the one type Blender copies in bulk (a signed
type goes item by item through Python). The goal is a ratio of
at most 2.0 against it (for .3ds import, against the attribute floor below, as issue 11 sets it:
positions, corners, UVs and material indices, no custom normals). A second, stricter floor moves positions, corners
and UVs through the attribute API (one memory copy each), which the bridge
itself uses; its ratio is printed too. Vertex-group weights have no bulk
setter, so both import floors add them with one call per (bone, weight);
nor a bulk getter, so both export floors read them with the one bulk pass
Blender allows, the geometry-nodes copy that the bridge also uses
(bridge/weights.py). Each figure is the best of three, and a row's figures are
taken in turns (floor, attribute floor, ours; three rounds), so that a machine
whose speed drifts over a minute slows each of them alike.

    python3 build.py bench [--quick] [bridge|parse|3ds|unreal|u3d|unigine|lgf|gltf ...]

The `gltf` rows (tests/bench_gltf.py) convert to .glb without Blender, beside reading the source
and writing the same bytes. The `lgf` row (tests/bench_cli.py) converts a generated tree of 1,000 small
files with the command line, in files per second, beside reading and writing
the same bytes alone.

Each import row also gives its peak memory above the empty scene, and each
export row above the scene it exports, beside both floors' (tests/bench_memory.py:
one fresh Blender process per figure, the resident high-water mark; a floor's
import counts the arrays it is handed at their least size), with a target of at
most 1.5x the floor for every import of 1M triangles. `--no-memory` leaves them out.
"""
from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests import blender_setup  # noqa: E402  (isolates Blender's user folders first)
import bpy  # noqa: E402
import numpy as np  # noqa: E402

from tests import bench_data  # noqa: E402

ROWS: list[tuple] = []
TARGET = 2.0
MEMORY_TARGET = 1.5          # imports of at least MEMORY_TRIS triangles
MEMORY_TRIS = 900_000         # the 1M rows (a grid rounds its size down)
MEMORY = True


def best_in_turns(fns, repeat: int = 3, setup=None) -> list[float]:
    """The best time of each function, run in turns (one of each per round): a ratio of two of
    them then compares runs made under the same machine load."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out in zip(fns, times):
            if setup:
                setup()
            gc.collect()
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return [min(t) for t in times]


def reset():
    bpy.ops.wm.read_homefile(use_empty=True)


# -- floors -------------------------------------------------------------------
def floor_build(scene, fast: bool = False) -> None:
    """Bare build of what a Scene holds: foreach_set of every mesh array (material indices
    when there are several slots), shape keys, one vertex-group add per (bone, weight), edit
    bones, and keyframes set in bulk. fast: positions and corners through the attribute API
    (one copy each) instead of the classic vertices/loops collections."""
    objects = {}
    for k, m in enumerate(scene.meshes):
        me = bpy.data.meshes.new(m.name)
        me.vertices.add(len(m.positions))
        me.loops.add(len(m.corners))
        me.polygons.add(len(m.faces))
        if fast:
            me.attributes["position"].data.foreach_set("vector", m.positions.ravel())
            me.attributes[".corner_vert"].data.foreach_set("value", m.corners.astype(np.int32))
        else:
            me.vertices.foreach_set("co", m.positions.ravel())
            me.loops.foreach_set("vertex_index", m.corners.astype(np.uint32))
        me.polygons.foreach_set("loop_start", m.faces.astype(np.uint32))     # unsigned: one copy (a signed type goes item by item)
        for name, uv in m.uv_layers.items():
            me.uv_layers.new(name=name, do_init=False).uv.foreach_set("vector", uv.ravel())
        if m.face_material is not None and len(m.materials) > 1:
            me.attributes.new("material_index", "INT", "FACE").data.foreach_set(
                "value", np.ascontiguousarray(m.face_material, np.int32))
        me.update(calc_edges=True)
        if m.normals is not None:
            me.normals_split_custom_set(m.normals)
        if m.shape_keys or m.skin is not None:
            ob = objects[k] = bpy.data.objects.new(m.name, me)
            bpy.context.scene.collection.objects.link(ob)
            for key in m.shape_keys:
                ob.shape_key_add(name=key.name, from_mix=False).data.foreach_set("co", key.positions.ravel())
        if m.skin is not None:
            groups = [ob.vertex_groups.new(name=b.name) for b in scene.armatures[m.skin.armature].bones]
            j, w = m.skin.joints.ravel(), m.skin.weights.ravel()
            v = np.repeat(np.arange(len(m.skin.joints)), m.skin.joints.shape[1])
            keep = (j >= 0) & (w > 0)
            j, w, v = j[keep], w[keep], v[keep]
            order = np.lexsort((w, j))
            j, w, v = j[order], w[order], v[order]
            cut = np.flatnonzero((np.diff(j) != 0) | (np.diff(w) != 0)) + 1
            for lo, hi in zip(np.r_[0, cut], np.r_[cut, len(j)]):
                groups[j[lo]].add(v[lo:hi].tolist(), float(w[lo]), "REPLACE")
    arm_obj = None
    for arm in scene.armatures:
        arm_obj = bpy.data.objects.new(arm.name, bpy.data.armatures.new(arm.name))
        bpy.context.scene.collection.objects.link(arm_obj)
        bpy.context.view_layer.objects.active = arm_obj
        bpy.ops.object.mode_set(mode="EDIT")
        for b in arm.bones:
            eb = arm_obj.data.edit_bones.new(b.name)
            eb.head, eb.tail = b.matrix[:3, 3], b.matrix[:3, 3] + b.matrix[:3, 1] * 0.1
        bpy.ops.object.mode_set(mode="OBJECT")
    for anim in scene.animations:
        action = bpy.data.actions.new(anim.name)
        fcurves = action.fcurves if bpy.app.version < (4, 4) else None
        if fcurves is None:
            slot = action.slots.new(id_type="OBJECT", name="x")
            fcurves = action.layers.new("L").strips.new(type="KEYFRAME").channelbag(slot, ensure=True).fcurves
        for ch in anim.channels:
            values = np.asarray(ch.values, np.float32).reshape(len(ch.frames), -1)
            path = f'pose.bones["{ch.bone}"].{ch.path}' if ch.bone else ch.path
            for i in range(values.shape[1]):
                fc = fcurves.new(path, index=i)
                fc.keyframe_points.add(len(ch.frames))
                fc.keyframe_points.foreach_set("co", np.stack([ch.frames, values[:, i]], 1).astype(np.float32).ravel())


def floor_read(objects, fast: bool = False) -> None:
    """Bare read: foreach_get of the same arrays from each mesh, and of every keyframe.
    fast: positions, corners and UVs through the attribute API."""
    for ob in objects:
        if ob.type != "MESH":
            continue
        me = ob.data
        V, L = len(me.vertices), len(me.loops)
        co = np.empty(V * 3, np.float32)
        vi = np.empty(L, np.int32 if fast else np.uint32)      # the attribute is signed, the loops' property not
        ls = np.empty(len(me.polygons), np.uint32)
        if fast:
            me.attributes["position"].data.foreach_get("vector", co)
            me.attributes[".corner_vert"].data.foreach_get("value", vi)
        else:
            me.vertices.foreach_get("co", co)
            me.loops.foreach_get("vertex_index", vi)
            me.polygons.foreach_get("loop_start", ls)
        for layer in me.uv_layers:
            uv = np.empty(L * 2, np.float32)
            (me.attributes[layer.name].data if fast else layer.uv).foreach_get("vector", uv)
        n = np.empty(L * 3, np.float32); me.corner_normals.foreach_get("vector", n)
        if me.shape_keys:
            for kb in me.shape_keys.key_blocks:
                kb.data.foreach_get("co", co)
        if ob.vertex_groups:
            WEIGHTS.weight_triples(bpy.context, ob)     # no bulk getter: the geometry-nodes pass
    for action in bpy.data.actions:
        curves = action.fcurves if bpy.app.version < (4, 4) else [
            fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags for fc in bag.fcurves]
        for fc in curves:
            co = np.empty(len(fc.keyframe_points) * 2, np.float32)
            fc.keyframe_points.foreach_get("co", co)


def verdict(t: float, floor: float, target: float = TARGET) -> str:
    return f"{'meets target' if t / floor <= target else 'misses'} ({t / floor:.2f}x)"


def memory(phase: str, data: str, import_id: str = "", export_id: str = "", export_kwargs=None):
    """Peak MB above the empty scene of (ours, floor, attribute floor), or None with --no-memory."""
    if not MEMORY:
        return None
    from tests.bench_memory import peak_mb
    return tuple(peak_mb(kind, phase, data, import_id, export_id, export_kwargs) for kind in ("ours", "floor", "fast"))


def memory_verdict(mem, target_fast: bool, targeted: bool) -> str:
    ours, floor, fast = mem
    base = max(fast if target_fast else floor, 1e-3)
    return verdict(ours, base, MEMORY_TARGET) if targeted else f"no target ({ours / base:.2f}x)"


def row(name: str, t: float, floor: float, fast: float, target_fast: bool = False, mem=None,
        mem_targeted: bool = False) -> None:
    """target_fast: the row's target is set against the attribute floor (.3ds, issue 11).
    mem: peak MB of (ours, floor, attribute floor); mem_targeted: the 1.5x memory target applies."""
    ROWS.append((name, t, floor, fast, target_fast, mem, mem_targeted))
    print(f"  {name:<52} {t * 1000:9.1f} ms  floor {floor * 1000:9.1f} ms  ratio {t / floor:5.2f}"
          f"  (attribute floor {fast * 1000:8.1f} ms, ratio {t / fast:5.2f})"
          f"  {verdict(t, fast if target_fast else floor)}", flush=True)
    if mem:
        print(f"  {'':<52} peak {mem[0]:7.1f} MB  floor {mem[1]:7.1f} MB  attribute floor {mem[2]:7.1f} MB"
              f"  memory {memory_verdict(mem, target_fast, mem_targeted)}", flush=True)


# -- bridge ---------------------------------------------------------------------
def bench_bridge(lgf, sizes) -> None:
    bridge = lgf.bridge
    for tris in sizes:
        scene = bench_data.grid_scene(tris)
        floor, fast, t = best_in_turns([lambda: floor_build(scene), lambda: floor_build(scene, True),
                                        lambda: bridge.build_scene(scene, bridge.BuildOptions(), bpy.context)],
                                       setup=reset)     # ours last: its objects stay for the export rows
        row(f"bridge import {tris // 1000}k tris", t, floor, fast, mem=memory("import", f"grid:{tris}"),
            mem_targeted=tris >= MEMORY_TRIS)
        objs = list(bpy.data.objects)
        opts = bridge.CollectOptions(use_keyframes=False)
        floor, fast, t = best_in_turns([lambda: floor_read(objs), lambda: floor_read(objs, True),
                                        lambda: bridge.collect_scene(bpy.context, opts)])
        row(f"bridge export {tris // 1000}k tris", t, floor, fast, mem=memory("export", f"grid:{tris}"))


def bench_format(lgf, label: str, scene, ext: str, import_op, export_op, codec_opts=None,
                 target_fast: bool = False, export_kwargs=None) -> None:
    """A format row pair: operator import of a file we wrote, and operator export back.
    target_fast: the import's verdict is against the attribute floor."""
    export_kwargs = export_kwargs or {}
    out = Path(tempfile.mkdtemp(prefix="lgf-bench-"))
    src = out / f"bench{ext}"
    lgf.codec.save(scene, src, **(codec_opts or {}))
    reloaded = lgf.codec.load(src)       # the floor builds exactly what the file holds
    floor, fast, t = best_in_turns([lambda: floor_build(reloaded), lambda: floor_build(reloaded, True),
                                    lambda: import_op(filepath=str(src))], setup=reset)   # ours last, as above
    ids = (str(src), import_op.idname_py(), export_op.idname_py(), export_kwargs)
    tris = sum(len(m.faces) for m in reloaded.meshes)
    row(f"{label} import", t, floor, fast, target_fast, memory("import", *ids), tris >= MEMORY_TRIS)
    objs = list(bpy.data.objects)
    floor, fast, t = best_in_turns([lambda: floor_read(objs), lambda: floor_read(objs, True),
                                    lambda: export_op(filepath=str(out / f"back{ext}"), **export_kwargs)])
    row(f"{label} export", t, floor, fast, mem=memory("export", *ids))       # export: against its own (classic) floor


WEIGHTS = None


def main(argv: list[str]) -> int:
    global WEIGHTS, MEMORY
    quick = "--quick" in argv
    MEMORY = "--no-memory" not in argv and sys.platform.startswith("linux")     # /proc/self: Linux only
    lgf = blender_setup.install()
    from importlib import import_module
    WEIGHTS = import_module(f"{lgf.__name__}.bridge.weights")
    print(f"Blender {bpy.app.version_string}, numpy {np.__version__}; best of 3; ratio = time / floor "
          f"(target <= {TARGET})", flush=True)
    sizes = [10_000, 100_000] if quick else [10_000, 100_000, 1_000_000]
    only = [a for a in argv if not a.startswith("-")]     # e.g. `bench u3d unreal`: just those rows
    if not only or "bridge" in only:
        bench_bridge(lgf, sizes)
    parse_rows = []
    if not only or "parse" in only:
        from tests.bench_parse import BUDGET, rows_parse
        parse_rows = rows_parse(lgf)
    for fn in bench_data.FORMAT_ROWS:
        if only and not any(o in fn.__name__ for o in only):
            continue
        fn(lgf, bench_format, quick)
    if not only or "lgf" in only:
        from tests.bench_cli import bench_cli
        bench_cli(200 if quick else 1000)
    gltf_rows = []
    if not only or "gltf" in only:
        from tests.bench_gltf import rows_gltf
        gltf_rows = rows_gltf(lgf, quick)
    print()
    print(f"| {'row':<52} | {'time ms':>9} | {'floor ms':>9} | {'ratio':>5} | {'attr floor ms':>13} | {'ratio':>5} "
          f"| {'verdict':<20} | {'peak MB':>7} | {'floor MB':>8} | {'attr MB':>7} | {'memory verdict':<22} |")
    print(f"|{'-' * 54}|{'-' * 11}|{'-' * 11}|{'-' * 7}|{'-' * 15}|{'-' * 7}|{'-' * 22}"
          f"|{'-' * 9}|{'-' * 10}|{'-' * 9}|{'-' * 24}|")
    for name, t, floor, fast, target_fast, mem, mem_targeted in ROWS:
        m = (f"{mem[0]:7.1f} | {mem[1]:8.1f} | {mem[2]:7.1f} | {memory_verdict(mem, target_fast, mem_targeted):<22}"
             if mem else f"{'-':>7} | {'-':>8} | {'-':>7} | {'-':<22}")
        print(f"| {name:<52} | {t * 1000:9.1f} | {floor * 1000:9.1f} | {t / floor:5.2f} | {fast * 1000:13.1f} "
              f"| {t / fast:5.2f} | {verdict(t, fast if target_fast else floor):<20} | {m} |")
    if parse_rows:
        print()
        print(f"| {'linear-time row':<52} | {'time ms':>9} | {'floor ms':>9} | {'budget ms':>9} | verdict  |")
        print(f"|{'-' * 54}|{'-' * 11}|{'-' * 11}|{'-' * 11}|{'-' * 10}|")
        for name, t, floor in parse_rows:
            print(f"| {name:<52} | {t * 1000:9.1f} | {floor * 1000:9.1f} | {BUDGET * 1000:9.0f} | "
                  f"{'OK' if t < BUDGET else 'TOO SLOW':<8} |")
    if gltf_rows:
        print()
        print(f"| {'conversion (codec, no Blender)':<52} | {'time ms':>9} | {'floor ms':>9} | {'ratio':>5} | verdict  "
              f"| {'.glb MB':>7} | {'source MB':>9} |")
        print(f"|{'-' * 54}|{'-' * 11}|{'-' * 11}|{'-' * 7}|{'-' * 10}|{'-' * 9}|{'-' * 11}|")
        for name, t, floor, src, glb in gltf_rows:
            print(f"| {name:<52} | {t * 1000:9.1f} | {floor * 1000:9.1f} | {t / floor:5.2f} | "
                  f"{'OK' if t / floor <= TARGET else 'misses':<8} | {glb / 1e6:7.1f} | {src / 1e6:9.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
