#!/usr/bin/env python3
"""Build, prove, test and benchmark the Legacy Game Formats extension.

    python3 build.py                 build dist/legacy_game_formats-<version>.zip and prove it in Blender
    python3 build.py test [ARGS]     build, then run the whole pytest suite on real Blender (bpy)
    python3 build.py bench           build, then print the benchmark table
    python3 build.py fuzz [ARGS]     mutation-fuzz every importer (tests/fuzz.py; --minutes, --format, --seed)
    python3 build.py wheel           write dist/legacy_game_formats-<version>-py3-none-any.whl (the codec and `lgf`)
    --bpy VERSION                    use another pinned bpy (CI runs 4.2, 5.0 and 5.3 too)
    --python PATH                    the Python to make that bpy's venv with (default: found, see find_python)
    test --numpy 2 [ARGS]            the Blender-free codec tests (default tests/codec) on numpy 2,
                                     in their own .venv-np2 without bpy

Each command first bootstraps a local virtual environment from pinned
versions (.venv for the default Blender, .venv-bpyX.Y.Z for the others), on
the Python and numpy that Blender ships, and re-runs itself inside it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DEFAULT_BPY = "4.5.4"
BPY_PINS = {"4.2": "4.2.23", "4.5": "4.5.4", "5.0": "5.0.1", "5.1": "5.1.2", "5.2": "5.2.3", "5.3": "5.3.0"}
# What Blender runs on from each release on: its Python (PyPI's bpy installs on no other) and the
# numpy it bundles (build_files/build_environment/cmake/versions.cmake).
RUNTIMES = {(4, 2): ("3.11", "1.26.4"), (5, 1): ("3.13", "2.3.4")}
# Wheels bundled inside the extension, one per Blender platform (AES for encrypted .u3d).
BUNDLED = "pycryptodome==3.23.0"
# The codec tests run on plain Python, so they need the bundled library too.
# dask[distributed]: the `lgf convert --dask` test runs a LocalCluster.
PINS = ["pytest==8.3.5", "fake-bpy-module==20250604", BUNDLED, "dask[distributed]==2026.8.0"]
# The codec alone on numpy 2 (Blender ships 1.26 up to 5.0; the codec must run on both).
NUMPY2_PINS = ["numpy==2.2.6", "pytest==8.3.5", BUNDLED, "dask[distributed]==2026.8.0"]
WHEEL_PLATFORMS = ["manylinux_2_17_x86_64", "manylinux_2_17_aarch64", "macosx_10_9_universal2", "win_amd64"]
BLENDER_PLATFORMS = ["linux-x64", "linux-arm64", "macos-arm64", "macos-x64", "windows-x64"]


def runtime(bpy_version: str) -> tuple[str, str]:
    """(Python, numpy) of the Blender release that `bpy_version` is."""
    release = tuple(int(n) for n in bpy_version.split(".")[:2])
    return RUNTIMES[max((k for k in RUNTIMES if k <= release), default=min(RUNTIMES))]


def _python_version(exe: str) -> str | None:
    """X.Y of the interpreter `exe`, None when it does not run (a pyenv shim of a version not selected)."""
    try:
        r = subprocess.run([exe, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def find_python(version: str, given: str | None) -> str | None:
    """A Python `version` (X.Y): --python PATH when given, this one, pythonX.Y on the PATH, then pyenv's."""
    if given:
        return given if _python_version(given) == version else None
    if "%d.%d" % sys.version_info[:2] == version:
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    roots = [os.environ.get("PYENV_ROOT"), Path.home() / ".pyenv"]
    for root in filter(None, roots):
        found = Path(root).glob(f"versions/{version}.*/bin/python{version}")
        candidates += sorted(found, key=lambda p: [int(n) if n.isdigit() else -1
                                                   for n in p.parents[1].name.split(".")], reverse=True)
    return next((str(c) for c in candidates if c and _python_version(str(c)) == version), None)


def _venv_dir(bpy_version: str) -> Path:
    return ROOT / (".venv" if bpy_version == DEFAULT_BPY else f".venv-bpy{bpy_version}")


def _venv_python(venv: Path) -> Path:
    return venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _venv_version(venv: Path) -> str | None:
    """X.Y of the Python a venv was made with, from its pyvenv.cfg."""
    for line in (venv / "pyvenv.cfg").read_text().splitlines() if (venv / "pyvenv.cfg").exists() else []:
        key, _, value = line.partition("=")
        if key.strip() == "version":
            return ".".join(value.strip().split(".")[:2])
    return None


def bootstrap(bpy_version: str, argv: list[str], venv: Path | None = None, pins: list[str] | None = None,
              python: str | None = None) -> None:
    """Re-exec inside the pinned venv, creating or updating it first.
    Exits with one line when the Python that Blender needs is not found."""
    venv = venv or _venv_dir(bpy_version)
    py = _venv_python(venv)
    if pins is None:
        needs, numpy = runtime(bpy_version)
        pins = [f"bpy=={bpy_version}", f"numpy=={numpy}", *PINS]
    else:               # the codec alone: this Python (or --python) will do
        needs = None
    stamp = venv / ".lgf-pins"
    want = "\n".join(pins)
    if Path(sys.prefix).resolve() == venv.resolve() and stamp.exists() and stamp.read_text() == want:
        return
    if not py.exists() or needs and _venv_version(venv) != needs:    # remade: an older build.py's
        base = find_python(needs, python) if needs else python or sys.executable
        if base is None:
            where = f"{python} is not Python {needs}" if python else f"no python{needs} on the PATH or in pyenv"
            sys.exit(f"build.py: bpy {bpy_version} needs Python {needs} ({where}): "
                     f"install it or pass --python /path/to/python{needs}")
        print(f"creating {venv.name} (Python {_python_version(base)}: {base}) ...", flush=True)
        subprocess.run([base, "-m", "venv", "--clear", str(venv)], check=True)
    if not stamp.exists() or stamp.read_text() != want:
        print(f"installing {', '.join(pins)} into {venv.name} ...", flush=True)
        subprocess.run([str(py), "-m", "pip", "install", "--disable-pip-version-check", "-q", *pins], check=True)
        stamp.write_text(want)
    env = dict(os.environ, LGF_BPY=bpy_version)
    sys.exit(subprocess.call([str(py), str(Path(__file__).resolve()), *argv], env=env))


# ---------------------------------------------------------------------------
# Building the zip
# ---------------------------------------------------------------------------
def _bl_scripts() -> Path:
    import bpy  # noqa: F401  (only to locate Blender's bundled scripts)
    return Path(bpy.utils.resource_path("LOCAL")) / "scripts"


def _bundled_wheels(cache: Path) -> list[Path]:
    """Download (once) the bundled wheels for every platform we declare."""
    cache.mkdir(parents=True, exist_ok=True)
    out = []
    name, version = BUNDLED.split("==")
    for plat in WHEEL_PLATFORMS:
        found = [p for p in cache.glob(f"{name}-{version}-*.whl") if plat in p.name]
        if not found:
            subprocess.run([sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "-q",
                            "--only-binary=:all:", "--no-deps", "--platform", plat,
                            "--python-version", "3.11", "-d", str(cache), BUNDLED], check=True)
            found = [p for p in cache.glob(f"{name}-{version}-*.whl") if plat in p.name]
        out.append(sorted(found)[0])
    return sorted(set(out))


def build() -> Path:
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    (ROOT / "build").mkdir(exist_ok=True)
    # a private staging folder, so that concurrent builds never trample each other
    work = Path(tempfile.mkdtemp(prefix="stage-", dir=ROOT / "build"))
    try:
        return _build_in(work, manifest)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _build_in(work: Path, manifest: dict) -> Path:
    stage = work / "legacy_game_formats"
    shutil.copytree(ROOT / "addon", stage, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*", "*.md"))
    text = (ROOT / "blender_manifest.toml").read_text()
    wheels = _bundled_wheels(ROOT / "build" / "wheels")
    (stage / "wheels").mkdir()
    for w in wheels:
        shutil.copy2(w, stage / "wheels" / w.name)
    listed = ", ".join(f'"./wheels/{w.name}"' for w in wheels)
    text = text.replace("# wheels = []", f"wheels = [{listed}]")
    platforms = ", ".join(f'"{p}"' for p in BLENDER_PLATFORMS)
    text = text.replace('license = ', f'platforms = [{platforms}]\n\nlicense = ', 1)
    (stage / "blender_manifest.toml").write_text(text)

    dist = ROOT / "dist"
    dist.mkdir(exist_ok=True)
    out = dist / f"{manifest['id']}-{manifest['version']}.zip"
    tmp_zip = work / out.name
    scripts = _bl_scripts()
    builder = scripts / "addons_core" / "bl_pkg" / "cli" / "blender_ext.py"
    tags = scripts / "modules" / "_bpy_internal" / "extensions" / "tags.py"
    subprocess.run([sys.executable, str(builder), "build", "--source-dir", str(stage),
                    "--output-filepath", str(tmp_zip), "--valid-tags", str(tags)], check=True)
    # Blender's own validator, as the extensions site runs it.
    subprocess.run([sys.executable, str(builder), "validate", str(tmp_zip)], check=True)
    os.replace(tmp_zip, out)
    return out


# ---------------------------------------------------------------------------
# The wheel: the codec alone, as the package legacy_game_formats_codec, with `lgf`
# ---------------------------------------------------------------------------
WHEEL_PACKAGE = "legacy_game_formats_codec"
WHEEL_EXTRAS = {"crypto": ["pycryptodome>=3.20"], "dask": ["dask[distributed]>=2024.1"]}


def build_wheel(dist: Path | None = None) -> Path:
    """Written directly as a zip (a wheel is one): no build backend to install, and byte-reproducible."""
    import base64
    import zipfile
    manifest = tomllib.loads((ROOT / "blender_manifest.toml").read_text())
    name, version = manifest["id"], manifest["version"]
    info = f"{name}-{version}.dist-info"
    files: dict[str, bytes] = {}
    for src in sorted((ROOT / "addon" / "codec").rglob("*.py")):
        if "__pycache__" not in src.parts:
            files[f"{WHEEL_PACKAGE}/{src.relative_to(ROOT / 'addon' / 'codec').as_posix()}"] = src.read_bytes()
    files[f"{WHEEL_PACKAGE}/_version.py"] = f'VERSION = "{version}"\n'.encode()
    extras = "".join(f"Provides-Extra: {x}\n" + "".join(f'Requires-Dist: {r}; extra == "{x}"\n' for r in reqs)
                     for x, reqs in WHEEL_EXTRAS.items())
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
        f"Summary: {manifest['tagline']}: the Blender-free codec and the lgf converter\n"
        f"License: GPL-3.0-or-later\nRequires-Python: >=3.11\nRequires-Dist: numpy>=1.26\n{extras}"
        f"Description-Content-Type: text/markdown\n\n{(ROOT / 'README.md').read_text(encoding='utf-8')}").encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: build.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/entry_points.txt"] = f"[console_scripts]\nlgf = {WHEEL_PACKAGE}.cli:main\n".encode()
    files[f"{info}/LICENSE"] = (ROOT / "LICENSE").read_bytes()
    record = [f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b'=').decode()},{len(b)}"
              for n, b in files.items()]
    files[f"{info}/RECORD"] = ("\n".join(record + [f"{info}/RECORD,,"]) + "\n").encode()
    dist = dist or ROOT / "dist"
    dist.mkdir(parents=True, exist_ok=True)
    out = dist / f"{name}-{version}-py3-none-any.whl"
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for n, b in files.items():
            entry = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            z.writestr(entry, b, zipfile.ZIP_DEFLATED)
    os.replace(tmp, out)
    return out


# ---------------------------------------------------------------------------
def prove(zip_path: Path) -> int:
    """Install the zip into an isolated Blender user folder and use it."""
    return subprocess.call([sys.executable, str(ROOT / "tests" / "prove_zip.py"), str(zip_path)])


def run_tests(zip_path: Path, args: list[str]) -> int:
    env = dict(os.environ, LGF_ZIP=str(zip_path))
    return subprocess.call([sys.executable, "-m", "pytest", *(args or ["tests"])], cwd=ROOT, env=env)


def bench(zip_path: Path, args: list[str]) -> int:
    env = dict(os.environ, LGF_ZIP=str(zip_path))
    return subprocess.call([sys.executable, str(ROOT / "tests" / "bench.py"), *args], cwd=ROOT, env=env)


def main(argv: list[str]) -> int:
    bpy_version, python = DEFAULT_BPY, None
    if "--bpy" in argv:
        i = argv.index("--bpy")
        bpy_version = BPY_PINS.get(argv[i + 1], argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    if "--python" in argv:
        i = argv.index("--python")
        python = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if argv[:1] == ["wheel"]:          # plain Python is enough: no Blender, no venv
        out = build_wheel()
        print(f"built {out.relative_to(ROOT)} ({out.stat().st_size // 1024} KiB)")
        return 0
    if "--numpy" in argv:
        i = argv.index("--numpy")
        if argv[i + 1] != "2" or not argv or argv[0] != "test":
            print("build.py: --numpy 2 goes with `test` (the codec tests)", file=sys.stderr)
            return 2
        rest = argv[1:i] + argv[i + 2:]
        if any("blender" in a for a in rest):
            print("build.py: the Blender tests run on Blender's own numpy; --numpy 2 is for tests/codec", file=sys.stderr)
            return 2
        bootstrap("", sys.argv[1:], ROOT / ".venv-np2", NUMPY2_PINS, python)
        import numpy
        print(f"codec tests on numpy {numpy.__version__} (no bpy)", flush=True)
        if not any(a.startswith("tests") for a in rest):
            rest.append("tests/codec")
        return subprocess.call([sys.executable, "-m", "pytest", *rest], cwd=ROOT)
    bootstrap(bpy_version, sys.argv[1:], python=python)
    command, rest = (argv[0], argv[1:]) if argv and argv[0] in ("test", "bench", "zip", "fuzz") else ("build", argv)
    if command == "fuzz":          # the Blender-free codec only: no zip needed
        return subprocess.call([sys.executable, str(ROOT / "tests" / "fuzz.py"), *rest], cwd=ROOT)
    zip_path = build()
    print(f"built {zip_path.relative_to(ROOT)} "
          f"({zip_path.stat().st_size // 1024} KiB, sha256 {hashlib.sha256(zip_path.read_bytes()).hexdigest()[:16]})")
    if command == "zip":
        return 0
    if command == "test":
        return run_tests(zip_path, rest)
    if command == "bench":
        return bench(zip_path, rest)
    return prove(zip_path)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except subprocess.CalledProcessError as e:
        print(f"build.py: step failed (exit {e.returncode}): {' '.join(map(str, e.cmd))}", file=sys.stderr)
        sys.exit(1)
