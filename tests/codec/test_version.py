"""One version everywhere: the manifest's, the codec's, `lgf --version`, the wheel's metadata and the
newest release in CHANGELOG.md."""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tomllib
import zipfile

from addon.codec.version import version
from tests.conftest import ROOT

MANIFEST = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]


def _newest_release() -> str:
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert releases, "CHANGELOG.md names no release"
    return releases[0]


def test_manifest_codec_command_and_changelog_agree():
    assert re.fullmatch(r"\d+\.\d+\.\d+", MANIFEST)
    out = subprocess.run([sys.executable, "-m", "addon.codec", "--version"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == MANIFEST     # "<program> <version>"
    assert version() == MANIFEST
    assert _newest_release() == MANIFEST


def test_wheel_metadata_carries_the_manifest_version(tmp_path):
    spec = importlib.util.spec_from_file_location("lgf_build", ROOT / "build.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    whl = build.build_wheel(tmp_path)
    assert whl.name == f"legacy_game_formats-{MANIFEST}-py3-none-any.whl"
    with zipfile.ZipFile(whl) as z:
        meta = z.read(f"legacy_game_formats-{MANIFEST}.dist-info/METADATA").decode()
        stamped = z.read("legacy_game_formats_codec/_version.py").decode()
    assert f"\nVersion: {MANIFEST}\n" in meta
    assert stamped == f'VERSION = "{MANIFEST}"\n'


def test_changelog_keeps_the_keep_a_changelog_form():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert text.startswith("# Changelog\n")
    assert "## [Unreleased]" in text
    dates = re.findall(r"^## \[\d+\.\d+\.\d+\] - (\d{4}-\d{2}-\d{2})$", text, re.M)
    assert dates == sorted(dates, reverse=True), "releases run newest first"
    sections = set(re.findall(r"^### (\w+)$", text, re.M))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, sections
