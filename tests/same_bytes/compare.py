"""Do two builds export the same bytes? For speed work that must not change output.

    python3 tests/same_bytes/compare.py BASE.zip NEW.zip [pytest paths...]

Runs the animation-heavy Blender tests (or the given ones) with each zip, keeping every file they
export (plugin.py), and exports the benchmark's animated scenes (bench_exports.py); then compares
file by file. Each build runs twice: a file that differs between a build's own two runs (random
test data) is listed as unstable, not as a difference. Run with the project's venv python.
"""
from __future__ import annotations

import filecmp
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ["tests/blender/test_actions.py", "tests/blender/test_bridge_bake.py",
         "tests/blender/test_convert_matches_blender.py", "tests/blender/test_ultimate3d.py",
         "tests/blender/test_unigine.py", "tests/blender/test_unreal.py", "tests/blender/test_bridge_roundtrip.py"]


def run(zip_path: str, out: Path, tests: list[str]) -> None:
    env = dict(os.environ, LGF_ZIP=zip_path, LGF_SAME_BYTES=str(out / "tests"))
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "tests.same_bytes.plugin", *tests],
                   cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, str(ROOT / "tests" / "same_bytes" / "bench_exports.py"), str(out / "bench")],
                   cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in folder.rglob("*") if p.is_file()}


def main(argv: list[str]) -> int:
    base_zip, new_zip, tests = argv[0], argv[1], argv[2:] or TESTS
    work = Path(tempfile.mkdtemp(prefix="lgf-same-bytes-"))
    for name, z in (("base", base_zip), ("base2", base_zip), ("new", new_zip), ("new2", new_zip)):
        run(z, work / name, tests)
    base, base2, new, new2 = (files(work / n) for n in ("base", "base2", "new", "new2"))
    unstable = {k for a, b in ((base, base2), (new, new2)) for k in a
                if k not in b or not filecmp.cmp(a[k], b[k], shallow=False)}
    differ = [k for k in sorted(base) if k not in unstable and (k not in new
                                                                or not filecmp.cmp(base[k], new[k], shallow=False))]
    differ += [k for k in sorted(new) if k not in base]
    print(f"{len(base) - len(unstable)} files compared, {len(unstable)} unstable within a build, "
          f"{len(differ)} differ")
    for k in differ:
        print("  DIFFERS:", k)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
