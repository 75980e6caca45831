"""ARCHITECTURE.md stays true: every path it names exists, and every format package is named in it."""
from __future__ import annotations

import re

from addon.codec import registered_formats
from tests.conftest import ROOT

DOC = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
PATHLIKE = re.compile(r"`((?:addon|tests)/[\w./-]+|[\w-]+\.md)`")


def named_paths(text: str) -> list[str]:
    return sorted(set(PATHLIKE.findall(text)))


def test_every_named_module_and_test_exists():
    paths = named_paths(DOC)
    assert len(paths) > 20, "the page names the modules and tests it describes"
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, f"ARCHITECTURE.md names what does not exist: {missing}"


def test_kernel_files_named_relative_to_their_package_exist():
    # `meshops/welding.py` and `cli/work.py`: named inside their package's row
    short = set(re.findall(r"`((?:meshops|cli)/[\w.]+)`", DOC))
    assert short
    missing = [p for p in short if not (ROOT / "addon" / "codec" / p).exists()]
    assert not missing, missing


def test_every_registered_format_package_is_named():
    packages = {spec.read.__module__.split(".")[3] if spec.read.__module__.startswith("addon.codec.formats.")
                else "" for spec in registered_formats().values()}
    packages |= {m.split(".")[-1] for m in {s.to_scene.__module__.rsplit(".", 1)[0]
                                             for s in registered_formats().values()}}
    packages.discard("")
    assert packages, "the registry names its packages"
    unnamed = [p for p in sorted(packages) if f"`addon/codec/formats/{p}/`" not in DOC]
    assert not unnamed, f"ARCHITECTURE.md does not name format packages {unnamed}"


def test_the_check_sees_a_missing_path():
    assert named_paths("see `addon/codec/nowhere.py` and `tests/codec/test_core.py`") == [
        "addon/codec/nowhere.py", "tests/codec/test_core.py"]
    assert not (ROOT / "addon/codec/nowhere.py").exists()
