"""The same input and options give the same bytes: every bundled sample converted to every format
by `python -m addon.codec convert` in two processes (each with its own string hash seed, so that
nothing may hang on set or dict order), then by a pool of two processes and on a Dask LocalCluster;
every output file of every run is compared, byte for byte, with the first run's."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from addon.codec.registry import registered_formats
from tests.conftest import ASSETS, ROOT

RUNS = {"first": ["-j", "1"], "again": ["-j", "1"], "pool": ["-j", "2"], "dask": ["--dask", "local", "-j", "2"]}


def _convert(target: str, out: Path, seed: int, extra: list[str]) -> list[tuple]:
    """Every sample of test_assets to `target` under `out`, in a process of its own; (input,
    status, outputs) per input, from the report."""
    report = out.with_suffix(".json")
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    done = subprocess.run([sys.executable, "-m", "addon.codec", "convert", str(ASSETS), "--to", target,
                           "-d", str(out), "--report", str(report), "-q", *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), done.stderr             # 1: the deliberately broken samples fail
    return sorted((Path(r["input"]).relative_to(ASSETS).as_posix(), r["status"],
                   sorted(Path(o).relative_to(out).as_posix() for o in r["outputs"]))
                  for r in json.loads(report.read_text()))


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("target", sorted(registered_formats()))
def test_every_sample_converts_to_the_same_bytes_in_every_process(tmp_path, target):
    pytest.importorskip("distributed")      # in the pinned test venv (build.py PINS); never skipped in CI
    runs = {}
    for seed, (name, extra) in enumerate(RUNS.items(), 1):
        records = _convert(target, tmp_path / name, seed, extra)
        runs[name] = (records, _files(tmp_path / name))
    records, files = runs["first"]
    written = [o for _, status, outs in records if status == "ok" for o in outs]
    assert written and sorted(written) == sorted(files)          # every output file is compared below
    assert all(f for f in files.values())
    for name in RUNS:
        assert runs[name][0] == records, name
        assert set(runs[name][1]) == set(files), name
        differ = [k for k in files if runs[name][1][k] != files[k]]
        assert not differ, f"{name}: {differ}"
