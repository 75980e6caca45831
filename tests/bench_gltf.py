"""Bench rows for the Blender-free glTF writer: `lgf convert` of a 1M-triangle .3ds and of a 5k-vertex x
1000-frame Unreal mesh to .glb, beside a floor: reading the same source and writing the same number of
bytes (the same atomic write, of the same bytes in memory); target at most 2x. The .glb's size is printed
beside the source's. Each figure is the best of five rounds taken in turns, each writing a new file."""
from __future__ import annotations

import gc
import shutil
import tempfile
import time
from pathlib import Path

TARGET = 2.0


def _best_in_turns(fns, outputs, repeat: int = 5) -> list[float]:
    """The best time of each fn, taken in turns; each fn's output file is removed before it runs, so that no
    write replaces a file (renaming over a large file waits on the file system's own flush of it, for tens
    to hundreds of ms at random: that made the ratios chance, not the codec)."""
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, out, output in zip(fns, times, outputs):
            output.unlink(missing_ok=True)
            gc.collect()
            t = time.perf_counter()
            fn()
            out.append(time.perf_counter() - t)
    return [min(t) for t in times]


def _size(files) -> int:
    return sum(Path(p).stat().st_size for p in files)


def rows_gltf(lgf, quick: bool) -> list[tuple[str, float, float, int, int]]:
    """(name, time, floor, source bytes, .glb bytes) per row, printed as they come."""
    from tests import bench_data
    from tests.bench_unreal import make_scene
    codec = lgf.codec
    from importlib import import_module
    write_atomically = import_module(f"{lgf.__name__}.codec.fileio").write_atomically
    tris = 100_000 if quick else 1_000_000
    frames = 100 if quick else 1000
    cases = [(f".3ds {tris // 1000}k tris -> .glb", bench_data.studio_scene(tris, max(1, tris // 60_000)), "big.3ds"),
             (f"UE1 5k verts x {frames} frames -> .glb", make_scene(5000, frames), "big_d.3d")]
    out = []
    folder = Path(tempfile.mkdtemp(prefix="lgf-bench-gltf-"))
    try:
        for name, scene, file in cases:
            src = folder / file
            codec.save(scene, src)
            sources = list(folder.iterdir())          # every file of the source (_d.3d, _a.3d, .uc)
            glb = folder / "out.glb"
            codec.save(codec.load(src), glb)
            blob = glb.read_bytes()     # the same bytes, in memory (bytes(n) would copy from never-touched zero pages)
            t, floor = _best_in_turns([lambda: codec.save(codec.load(src), glb),
                                       lambda: (codec.load(src), write_atomically({folder / "floor.bin": blob}))],
                                      [glb, folder / "floor.bin"])
            row = (name, t, floor, _size(sources), glb.stat().st_size)
            out.append(row)
            print(f"  {name:<52} {t * 1000:9.1f} ms  floor {floor * 1000:9.1f} ms  ratio {t / floor:5.2f}  "
                  f"{'meets target' if t / floor <= TARGET else 'misses'}  .glb {row[4] / 1e6:.1f} MB, "
                  f"source {row[3] / 1e6:.1f} MB", flush=True)
            for p in list(folder.iterdir()):
                p.unlink()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return out
