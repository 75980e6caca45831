"""build.py makes each Blender's venv on the Python that its bpy installs on: found on the PATH, then in
pyenv, or given with --python; when none is found, one line says which and how to give it."""
from __future__ import annotations

import shutil
import subprocess
import sys

import build

RELEASE = "3.99"          # a Python that no machine has: only the stand-ins below answer to it


def _stand_in(path, answers: str | None):
    """An executable that answers the version query as a Python `answers` would; None: a pyenv shim of a
    version not selected, which exits 127."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + (f"echo {answers}\n" if answers else "exit 127\n"))
    path.chmod(0o755)
    return path


def test_the_path_first_then_pyenv_newest_first(tmp_path, monkeypatch):
    shim = _stand_in(tmp_path / "shims" / f"python{RELEASE}", None)
    for v in ("3.99.1", "3.99.10", "3.99.9"):
        _stand_in(tmp_path / "pyenv" / "versions" / v / "bin" / f"python{RELEASE}", RELEASE)
    monkeypatch.setenv("PATH", str(shim.parent))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert build.find_python(RELEASE, None) == str(tmp_path / "pyenv/versions/3.99.10/bin" / f"python{RELEASE}")
    on_path = _stand_in(tmp_path / "bin" / f"python{RELEASE}", RELEASE)
    monkeypatch.setenv("PATH", f"{on_path.parent}:{shim.parent}")
    assert build.find_python(RELEASE, None) == str(on_path)


def test_python_given_is_taken_only_when_it_is_that_version(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "none"))
    monkeypatch.setenv("HOME", str(tmp_path))
    right, wrong = _stand_in(tmp_path / "right", RELEASE), _stand_in(tmp_path / "wrong", "3.98")
    assert build.find_python(RELEASE, str(right)) == str(right)
    assert build.find_python(RELEASE, str(wrong)) is None
    assert build.find_python(RELEASE, None) is None


def test_no_python_for_that_blender_is_one_line_and_no_venv(tmp_path):
    """Run a copy of build.py (its venvs would go beside it) for a Blender on another Python than this one."""
    this = "%d.%d" % sys.version_info[:2]
    release, needs = next((r, build.runtime(pin)[0]) for r, pin in build.BPY_PINS.items()
                          if build.runtime(pin)[0] != this)
    shutil.copy(build.__file__, tmp_path / "build.py")
    env = {"PATH": str(tmp_path / "bin"), "PYENV_ROOT": str(tmp_path / "none"), "HOME": str(tmp_path)}
    r = subprocess.run([sys.executable, str(tmp_path / "build.py"), "--bpy", release, "zip"],
                       capture_output=True, text=True, env=env, cwd=tmp_path)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and f"needs Python {needs}" in r.stderr and "--python" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build.py"]
