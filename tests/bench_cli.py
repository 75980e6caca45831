"""The `lgf` bench row: a generated tree of 1,000 small mixed-format files converted with -j 1 and -j 2.

Beside it: reading and writing the same bytes alone (the floor), the codec's
own in-process load + save of the same files, and one interpreter's start-up
(Python, numpy, the codec), which each worker pays once. The per-file
overhead is what the command adds per file beyond the codec's own work.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from addon import codec  # noqa: E402
from tests import bench_data  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
KINDS = [".3ds", "_d.3d", ".mesh", ".u3d"]


def make_tree(root: Path, count: int) -> list[Path]:
    scenes = [bench_data.grid_scene(50 + 10 * k) for k in range(8)]
    out = []
    for i in range(count):
        path = root / f"set{i % 10}" / f"m{i:04d}{KINDS[i % len(KINDS)]}"
        codec.save(scenes[i % len(scenes)], path)
        out.append(path)
    return out


def _timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def bench_cli(count: int = 1000) -> list[tuple[str, float]]:
    work = Path(tempfile.mkdtemp(prefix="lgf-bench-tree-"))
    try:
        files = make_tree(work / "src", count)
        target = "u3d"

        def cli(jobs: int, out: str):
            r = subprocess.run([sys.executable, "-m", "addon.codec", "convert", str(work / "src"), "--to", target,
                                "-d", str(work / out), "-j", str(jobs), "-q"], cwd=ROOT, capture_output=True, text=True)
            assert r.returncode == 0, r.stderr[-2000:]

        t1 = _timed(lambda: cli(1, "j1"))
        t2 = _timed(lambda: cli(2, "j2"))
        outs = sorted((work / "j1").rglob("*.u3d"))
        assert len(outs) == count
        sizes = [p.read_bytes() for p in outs]

        def io_only():
            for i, src in enumerate(files):
                src.read_bytes()
                dst = work / "io" / f"{i}.bin"
                dst.parent.mkdir(exist_ok=True)
                dst.write_bytes(sizes[i])

        t_io = min(_timed(io_only) for _ in range(2))
        t_codec = min(_timed(lambda: [codec.save(codec.load(p), work / "codec" / f"{i}.u3d") for i, p in enumerate(files)])
                      for _ in range(2))
        boot = "import addon.codec.cli as c; c.registered_formats()"
        start = min(_timed(lambda: subprocess.run([sys.executable, "-c", boot], cwd=ROOT, check=True))
                    for _ in range(3))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    per_file = (t1 - start - t_codec) / count
    print(f"  lgf convert {count} mixed files -> .{target}: -j 1 {count / t1:7.1f} files/s ({t1:.2f} s), "
          f"-j 2 {count / t2:7.1f} files/s ({t2:.2f} s)", flush=True)
    print(f"    floor: read + write the same bytes alone {count / t_io:9.1f} files/s ({t_io:.2f} s); "
          f"codec load+save in one process {count / t_codec:7.1f} files/s ({t_codec:.2f} s)")
    print(f"    start-up once per worker (Python, numpy, the codec and its formats) {start * 1000:.0f} ms; "
          f"per-file overhead of the command {per_file * 1000:.2f} ms "
          + (f"({100 * per_file * count / t1:.0f}% of the -j 1 run)" if per_file > 0 else
             "(below the noise between the two runs)"), flush=True)
    return [("lgf -j 1", t1), ("lgf -j 2", t2), ("bytes alone", t_io), ("codec alone", t_codec),
            ("start-up", start)]


if __name__ == "__main__":
    bench_cli(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
