"""The README's Blender batch script, run as Blender runs it: every extension in any case, past bad files."""
from __future__ import annotations

import sys

import pytest

from tests.codec.cli_tree import make_tree
from tests.codec.test_readme import batch_example


def test_readme_batch_script_converts_a_tree_and_goes_on_past_bad_files(lgf, tmp_path, monkeypatch, capsys):
    src, out = make_tree(tmp_path / "src"), tmp_path / "out"
    monkeypatch.setattr(sys, "argv", ["blender", "-b", "--python", "batch.py", "--", str(src), str(out)])
    with pytest.raises(SystemExit) as done:
        exec(compile(batch_example(), "batch.py", "exec"), {"__name__": "__main__"})
    assert done.value.code == 1                       # the one bad file
    got = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.mesh"))
    assert got == ["props/cube_v2.mesh", "props/grid_static.mesh", "ships/CUBE.mesh", "ships/deep/box.mesh"]
    err = capsys.readouterr().err
    assert "FAIL" in err and "wrong.3ds" in err and "1 failed" in err
