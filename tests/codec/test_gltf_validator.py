"""Every sample of every format, converted to .glb and to .gltf, passes the Khronos glTF validator with
0 errors; its warnings are printed (pytest -s, or in the report of a failure).

The validator is the npm package gltf-validator, a test-only dependency that `.ci/run` installs under
build/node (or $GLTF_VALIDATOR_DIR); tests/gltf_validate.js runs it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from addon.codec import load, save
from tests.conftest import ROOT
from tests.gltf_write_samples import samples

SCRIPT = ROOT / "tests" / "gltf_validate.js"
PACKAGE = Path(os.environ.get("GLTF_VALIDATOR_DIR", ROOT / "build" / "node" / "node_modules")) / "gltf-validator"


def validate(files: list[Path]) -> dict[str, dict]:
    """file -> the validator's report (errors, warnings, messages)."""
    assert shutil.which("node"), "node is missing: the glTF tests need Node.js and `npm install gltf-validator`"
    assert PACKAGE.is_dir(), (f"{PACKAGE} is missing: run `npm install --prefix build/node gltf-validator` "
                              "(.ci/run does)")
    out = subprocess.run(["node", str(SCRIPT), *map(str, files)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    reports = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    return {r["file"]: r for r in reports}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """(source, written file, report) for every sample, to .glb and to .gltf (each in its own folder)."""
    tmp = tmp_path_factory.mktemp("gltf")
    rows = []
    for i, src in enumerate(samples(tmp / "made")):
        scene = load(src, with_companions=True)
        for ext in (".glb", ".gltf"):
            out = tmp / f"{i}{ext[1:]}" / (src.name.split(".")[0] + ext)
            save(scene, out)
            rows.append((src, out))
    reports = validate([out for _, out in rows])
    return [(src, out, reports.get(str(out))) for src, out in rows]


def test_every_sample_passes_the_validator(converted):
    bad = []
    for src, out, report in converted:
        assert report is not None, f"{out}: the validator gave no report"
        shown = [m for m in report["messages"] if m.startswith(("error", "warning"))]
        print(f"{src.name} -> {out.suffix}: {report['errors']} errors, {report['warnings']} warnings")
        for m in shown:
            print("   ", m)
        if report["errors"]:
            bad.append(f"{src.name} -> {out.name}: " + "; ".join(m for m in shown if m.startswith("error")))
    assert not bad, "\n".join(bad)
    assert len(converted) >= 2 * 25


def test_the_validator_sees_a_broken_file(converted, tmp_path):
    """The check itself: a .glb whose accessor runs past its buffer view is an error."""
    _, out, _ = next(row for row in converted if row[1].suffix == ".glb")
    from addon.codec.formats.gltf import read, write
    from addon.codec.errors import Warnings
    doc = read.parse(out.read_bytes(), Warnings())
    doc.json["accessors"][0]["count"] += 1000
    doc.json_text = b""
    bad = tmp_path / "bad.glb"
    bad.write_bytes(write.encode_bytes(doc))
    assert validate([bad])[str(bad)]["errors"] > 0
