"""`lgf convert SRC... --to FORMAT -d OUTDIR`: trees mirrored, sets found, bad files reported, re-runs skipped,
the same bytes from one process, a pool of processes and a Dask LocalCluster."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from addon.codec import load
from addon.codec.cli import main
from tests.codec.cli_tree import make_tree
from tests.conftest import ROOT

GOOD = {"ships/CUBE", "ships/deep/box", "props/grid_static", "props/cube_v2"}


def outputs(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def convert(*args, capsys=None):
    code = main(["convert", *map(str, args)])
    return code, (capsys.readouterr() if capsys else None)


def test_tree_is_mirrored_sets_found_and_bad_files_reported(tmp_path, capsys):
    src, out, report = make_tree(tmp_path / "src"), tmp_path / "out", tmp_path / "r" / "report.json"
    code, io = convert(src, "--to", "3ds", "-d", out, "--report", report, capsys=capsys)
    assert code == 1                                   # one bad file; the others converted
    assert set(outputs(out)) == {f"{g}.3ds" for g in GOOD}
    assert "FAIL" in io.err and "wrong.3ds" in io.err and "wrong.3ds" not in io.out
    records = {Path(r["input"]).relative_to(src).as_posix(): r for r in json.loads(report.read_text())}
    assert set(records) == {"ships/CUBE.3DS", "ships/deep/box_d.3d", "props/grid_static.MESH", "props/cube_v2.u3d",
                            "props/broken/wrong.3ds"}
    bad = records.pop("props/broken/wrong.3ds")
    assert bad["status"] == "failed" and "not a 3DS file" in bad["error"] and bad["outputs"] == []
    for rec in records.values():
        assert rec["status"] == "ok" and rec["error"] is None and rec["seconds"] >= 0
        assert len(rec["outputs"]) == 1 and Path(rec["outputs"][0]).is_file()
        assert f"wrote {rec['outputs'][0]}" in io.out
    assert records["ships/deep/box_d.3d"]["losses"] == ["1 meshes with shape keys", "1 animations of shape keys"]
    assert len(load(out / "ships/deep/box.3ds").meshes[0].faces) == len(load(src / "ships/deep/box_d.3d").meshes[0].faces)


def test_rerun_skips_up_to_date_outputs_unless_forced(tmp_path, capsys):
    src, out = make_tree(tmp_path / "src"), tmp_path / "out"
    convert(src / "ships", "--to", "u3d", "-d", out, capsys=capsys)
    first = {p: p.stat().st_mtime_ns for p in out.rglob("*.u3d")}
    code, io = convert(src / "ships", "--to", "u3d", "-d", out, capsys=capsys)
    assert code == 0 and io.out.count("up to date: ") == 2 and "wrote" not in io.out
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*.u3d")} == first
    newer = src / "ships" / "CUBE.3DS"
    os.utime(newer, (newer.stat().st_atime + 10, max(first.values()) / 1e9 + 10))
    code, io = convert(src / "ships", "--to", "u3d", "-d", out, capsys=capsys)
    assert code == 1 and "refusing to overwrite" in io.err      # stale, and not asked to replace it
    code, io = convert(src / "ships", "--to", "u3d", "-d", out, "--force", capsys=capsys)
    assert code == 0 and io.out.count("wrote ") == 2


def test_globs_case_insensitive_extensions_and_partner_files(tmp_path, capsys):
    src, out = make_tree(tmp_path / "src"), tmp_path / "out"
    # a glob that names both files of the Unreal pair converts the set once
    code, io = convert(str(src / "ships" / "**" / "*"), "--to", ".mesh", "-d", out, capsys=capsys)
    assert code == 0, io.err
    assert set(outputs(out)) == {"CUBE.mesh", "deep/box.mesh"}


def test_converting_to_unreal_names_the_set_and_writes_its_partners(tmp_path, capsys):
    src, out = make_tree(tmp_path / "src"), tmp_path / "out"
    code, io = convert(src / "ships" / "CUBE.3DS", "--to", "unreal", "-d", out, capsys=capsys)
    assert code == 0, io.err
    assert set(outputs(out)) == {"CUBE_d.3d", "CUBE_a.3d", "CUBE.uc"}
    assert sorted(line[6:] for line in io.out.splitlines() if line.startswith("wrote ")) == \
        sorted(str(p) for p in out.iterdir())


def test_an_output_folder_inside_the_source_is_not_converted_again(tmp_path, capsys):
    src = make_tree(tmp_path / "src")
    for _ in range(2):
        code, io = convert(src / "ships", "--to", "3ds", "-d", src / "ships" / "out", capsys=capsys)
        assert code == 0, io.err
    assert set(outputs(src / "ships" / "out")) == {"CUBE.3ds", "deep/box.3ds"}
    assert io.out.count("up to date") == 2


def test_two_inputs_for_one_output_are_refused(tmp_path, capsys):
    (tmp_path / "a.3ds").write_bytes((ROOT / "test_assets/3ds/cube_hierarchy.3ds").read_bytes())
    (tmp_path / "a.u3d").write_bytes((ROOT / "test_assets/ultimate3d/cube_v2.u3d").read_bytes())
    code, io = convert(tmp_path, "--to", "mesh", "-d", tmp_path / "out", capsys=capsys)
    assert code == 1 and "same output" in io.err
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["a.mesh"]


def test_check_takes_folders_and_goes_on_past_missing_files(tmp_path, capsys):
    src = make_tree(tmp_path / "src")
    code = main(["check", str(tmp_path / "missing.3ds"), str(src / "ships"), str(src / "props" / "broken")])
    io = capsys.readouterr()
    assert code == 1
    assert "missing.3ds: no such file" in io.err
    assert io.out.count("OK ") == 3 and "box_a.3d" in io.out      # CUBE.3DS, and both files of the pair
    assert "FAIL" in io.err and "wrong.3ds" in io.err


def test_plain_line_per_file_when_not_a_terminal(tmp_path):
    src = make_tree(tmp_path / "src")
    r = subprocess.run([sys.executable, "-m", "addon.codec", "convert", str(src), "--to", "3ds", "-d",
                        str(tmp_path / "out"), "-j", "2"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 1
    assert "\r" not in r.stdout + r.stderr and "\033" not in r.stderr
    assert r.stdout.count("wrote ") == 4 and "5 files: 4 converted, 0 up to date, 1 failed" in r.stderr


def test_progress_bar_on_a_terminal(tmp_path, monkeypatch, capsys):
    from addon.codec.cli import progress
    src = make_tree(tmp_path / "src")

    class Tty:
        text = ""

        def write(self, s):
            Tty.text += s

        def flush(self):
            pass

        def isatty(self):
            return True

    real = progress.Progress.__init__
    monkeypatch.setattr(progress.Progress, "__init__", lambda self, total, quiet=False, stream=None:
                        real(self, total, quiet, Tty()))
    convert(src, "--to", "3ds", "-d", tmp_path / "out", capsys=capsys)
    assert "[" in Tty.text and "5/5" in Tty.text and "\r\033[K" in Tty.text


def test_process_pool_and_dask_write_the_same_bytes_as_one_process(tmp_path, capsys):
    pytest.importorskip("distributed")      # in the pinned test venv (build.py PINS); never skipped in CI
    src = make_tree(tmp_path / "src")
    runs = {}
    for name, extra in [("serial", ["-j", "1"]), ("pool", ["-j", "2"]), ("dask", ["--dask", "local", "-j", "2"])]:
        out, report = tmp_path / name, tmp_path / f"{name}.json"
        code, io = convert(src, "--to", "unreal", "-d", out, "--report", report, *extra, capsys=capsys)
        assert code == 1, io.err
        recs = json.loads(report.read_text())
        runs[name] = (outputs(out), [(r["input"], r["status"], [Path(o).relative_to(out).as_posix()
                                                                for o in r["outputs"]]) for r in recs])
    assert len(runs["serial"][0]) == 12                 # 4 sets of _d.3d, _a.3d, .uc
    assert runs["pool"] == runs["serial"]
    assert runs["dask"] == runs["serial"]


def test_a_set_with_a_deleted_partner_output_is_not_up_to_date(tmp_path, capsys):
    src, out = make_tree(tmp_path / "src"), tmp_path / "out"
    convert(src / "ships", "--to", "unreal", "-d", out, capsys=capsys)
    anims = sorted(out.rglob("*_a.3d"))
    assert anims
    anims[0].unlink()
    code, io = convert(src / "ships", "--to", "unreal", "-d", out, "--overwrite", capsys=capsys)
    assert code == 0 and anims[0].exists() and io.out.count("up to date: ") == len(anims) - 1


def test_unigine_anims_beside_their_mesh_are_its_partners_and_a_lone_anim_still_fails(tmp_path, capsys):
    from tests.conftest import ASSETS
    src, out, report = tmp_path / "src", tmp_path / "out", tmp_path / "report.json"
    (src / "tube").mkdir(parents=True)
    (src / "lone").mkdir()
    shutil.copy2(ASSETS / "unigine/tube_skinned.mesh", src / "tube/tube_skinned.mesh")
    for partner in ("tube_skinned_bend.anim", "TUBE_SKINNED.ANIM"):      # X_<name>.anim and X.anim, any case
        shutil.copy2(ASSETS / "unigine/tube_bend.anim", src / "tube" / partner)
    shutil.copy2(ASSETS / "unigine/tube_bend.anim", src / "tube/tube_bend.anim")   # not this mesh's prefix
    code, io = convert(src / "tube", "--to", "3ds", "-d", out, "--report", report, capsys=capsys)
    records = {Path(r["input"]).name: r for r in json.loads(report.read_text())}
    assert set(records) == {"tube_skinned.mesh", "tube_bend.anim"}
    assert records["tube_skinned.mesh"]["status"] == "ok" and code == 1
    # the partners' animation goes with the mesh: here the mesh embeds the same 'bend', so it is not doubled
    assert {w for w in records["tube_skinned.mesh"]["warnings"] if "already holds" in w} == {
        f"{n}: the mesh already holds animation 'bend'; the file's copy is left out"
        for n in ("TUBE_SKINNED.ANIM", "tube_skinned_bend.anim")}
    assert "only animation ('bend') and no mesh" in records["tube_bend.anim"]["error"]
    (src / "tube/tube_bend.anim").rename(src / "lone/tube_bend.anim")
    code, io = convert(src / "tube", "--to", "3ds", "-d", tmp_path / "out2", capsys=capsys)
    assert code == 0, io.err
    code, io = convert(src / "lone", "--to", "unigine-anim", "-d", tmp_path / "out3", capsys=capsys)
    assert code == 0 and (tmp_path / "out3/tube_bend.anim").is_file()    # a target that holds it
    # named on its own, a partner converts alone; a check of the tree still reads every .anim
    code, io = convert(src / "tube/tube_skinned_bend.anim", "--to", "unigine-anim", "-d", tmp_path / "out4",
                       capsys=capsys)
    assert code == 0 and (tmp_path / "out4/tube_skinned_bend.anim").is_file()
    assert main(["check", str(src)]) == 0
    assert "4 files: 4 identical" in capsys.readouterr().err               # the mesh and its three .anim


def test_a_mesh_converts_with_the_animation_of_its_anim_partner(tmp_path, capsys):
    """A .mesh written with its animation beside it as X.anim converts like the mesh that embeds it."""
    from addon.codec import save
    from tests.conftest import ASSETS
    split = tmp_path / "split"
    split.mkdir()
    save(load(ASSETS / "unigine/tube_skinned.mesh"), split / "tube.mesh", embed_animations=False)
    assert (split / "tube.anim").is_file() and not load(split / "tube.mesh").animations
    code, io = convert(split, "--to", "u3d", "-d", tmp_path / "out", capsys=capsys)
    assert code == 0, io.err
    code, io = convert(ASSETS / "unigine/tube_skinned.mesh", "--to", "u3d", "-d", tmp_path / "whole", capsys=capsys)
    assert code == 0, io.err
    joined, whole = load(tmp_path / "out/tube.u3d"), load(tmp_path / "whole/tube_skinned.u3d")
    assert [(a.name, a.frame_end) for a in joined.animations] == [(a.name, a.frame_end) for a in whole.animations]
    assert whole.animations and joined.animations[0].channels
    for a, b in zip(joined.animations[0].channels, whole.animations[0].channels):
        assert (a.bone, a.path) == (b.bone, b.path)
        np.testing.assert_allclose(a.values, b.values, atol=1e-4)
