"""`python3 build.py wheel`: the codec alone, installed with pip into clean venvs on numpy 1.26 and numpy 2."""
from __future__ import annotations

import json
import subprocess
import sys
import tomllib
import venv
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tests.conftest import ASSETS, ROOT

VERSION = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]
# The oldest numpy the wheel allows that has wheels for this Python (1.26 has none for 3.13: pip would
# compile it for many minutes), and a newer 2.x.
NUMPYS = ["numpy==1.26.4" if sys.version_info < (3, 13) else "numpy==2.1.3", "numpy==2.4.6"]


def _build() -> Path:
    r = subprocess.run([sys.executable, str(ROOT / "build.py"), "wheel"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return ROOT / "dist" / f"legacy_game_formats-{VERSION}-py3-none-any.whl"


def test_wheel_holds_the_codec_only_with_metadata_and_the_lgf_command():
    whl = _build()
    with zipfile.ZipFile(whl) as z:
        names = z.namelist()
        meta = z.read(f"legacy_game_formats-{VERSION}.dist-info/METADATA").decode()
        entry = z.read(f"legacy_game_formats-{VERSION}.dist-info/entry_points.txt").decode()
        sources = [z.read(n).decode() for n in names if n.endswith(".py")]
    tops = {n.split("/")[0] for n in names}
    assert tops == {"legacy_game_formats_codec", f"legacy_game_formats-{VERSION}.dist-info"}
    assert "legacy_game_formats_codec/cli/__init__.py" in names
    assert not any("bridge/" in n or "operators/" in n for n in names)
    assert not any("import bpy" in s for s in sources)
    assert "lgf = legacy_game_formats_codec.cli:main" in entry
    assert "Requires-Python: >=3.11" in meta and "Requires-Dist: numpy>=1.26" in meta
    assert 'Requires-Dist: pycryptodome>=3.20; extra == "crypto"' in meta
    assert 'extra == "dask"' in meta


def _install_and_use(whl, numpy: str, tmp) -> dict:
    env_dir = tmp / numpy.replace("=", "")
    venv.create(env_dir, with_pip=True, clear=True)
    py, lgf = env_dir / "bin" / "python", env_dir / "bin" / "lgf"
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--disable-pip-version-check", f"{whl}[crypto]",
                        numpy], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = {}
    run = lambda *a: subprocess.run([str(lgf), *map(str, a)], capture_output=True, text=True, cwd=tmp)  # noqa: E731
    out["version"] = run("--version").stdout.strip()
    tree = tmp / f"tree-{numpy}"
    (tree / "a").mkdir(parents=True)
    for name in ("3ds/cube_hierarchy.3ds", "ultimate3d/cube_v2.u3d"):
        (tree / "a" / name.split("/")[1]).write_bytes((ASSETS / name).read_bytes())
    r = run("convert", tree, "--to", "3ds", "-d", tmp / f"out-{numpy}", "-j", "2", "--report", tmp / f"{numpy}.json")
    out["convert"] = (r.returncode, r.stderr)
    out["records"] = json.loads((tmp / f"{numpy}.json").read_text())
    r = run("convert", ASSETS / "3ds/cube_hierarchy.3ds", tmp / f"locked-{numpy}.u3d", "-o", "password=secret")
    out["encrypt"] = (r.returncode, r.stderr)
    r = run("info", tmp / f"locked-{numpy}.u3d", "-o", "password=secret", "--json")
    out["info"] = (r.returncode, r.stdout)
    # every reader on this numpy: each sample parsed and rewritten byte for byte
    r = run("check", *(ASSETS / f for f in ("unigine", "unreal", "ultimate3d")))
    out["check"] = (r.returncode, r.stderr)
    r = subprocess.run([str(py), "-c", "import numpy, legacy_game_formats_codec as c; "
                        "print(numpy.__version__, len(c.load(r'%s').meshes))" % (ASSETS / "unreal/box_d.3d")],
                       capture_output=True, text=True, cwd=tmp)
    out["import"] = r.stdout.split()
    return out


def test_wheel_installs_with_pip_on_numpy_1_and_2(tmp_path):
    whl = _build()
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda n: _install_and_use(whl, n, tmp_path), NUMPYS))
    for numpy, r in zip(NUMPYS, results):
        assert r["version"] == f"lgf {VERSION}", numpy
        assert r["convert"][0] == 0, (numpy, r["convert"])
        assert [x["status"] for x in r["records"]] == ["ok", "ok"], numpy
        assert r["encrypt"][0] == 0, (numpy, r["encrypt"])
        assert r["check"][0] == 0, (numpy, r["check"])
        assert r["info"][0] == 0 and json.loads(r["info"][1])["format"] == "u3d", numpy
        assert r["import"] == [numpy.split("==")[1], "1"], numpy
