"""The command line as a user meets it: options checked, exit codes, stdout/stderr, refusals."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from addon.codec import load
from addon.codec.cli import main
from addon.codec.cli.options import OptionField, UsageError, parse_options, parse_value
from addon.codec.formats.unreal.options import ExportOptions as UnrealExport
from tests.conftest import ASSETS, ROOT

CUBE = ASSETS / "3ds" / "cube_hierarchy.3ds"


def run(*args, **kw):
    return subprocess.run([sys.executable, "-m", "addon.codec", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, **kw)


def test_version_names_the_project_version():
    import tomllib
    want = tomllib.loads((ROOT / "blender_manifest.toml").read_text())["version"]
    out = run("--version")
    assert out.returncode == 0 and out.stdout.split() == ["python", "-m", "addon.codec", want]


@pytest.mark.parametrize("raw,want", [("true", True), ("False", False), ("yes", True), ("NO", False),
                                      ("1", True), ("0", False)])
def test_booleans_parse_every_spelling(raw, want):
    assert parse_options([f"write_uc={raw}"], [UnrealExport]) == {"write_uc": want}


@pytest.mark.parametrize("pair,message", [
    ("write_uc=maybe", "write_uc: 'maybe' is not a boolean"),
    ("scale=big", "scale: 'big' is not a number"),
    ("frame_start=1.5", "frame_start: '1.5' is not an integer"),
    ("write_uc", "must be NAME=VALUE"),
])
def test_a_bad_value_is_a_one_line_usage_error(pair, message):
    with pytest.raises(UsageError, match=message):
        parse_options([pair], [UnrealExport])


def test_sets_and_strings_keep_their_type():
    assert parse_value(OptionField("k", "set", frozenset(), ""), "MESH, CAMERA") == frozenset({"MESH", "CAMERA"})
    assert parse_value(OptionField("v", "str", "2.0", ""), "1.0") == "1.0"


def test_a_mistyped_choice_of_a_set_option_is_a_usage_error():
    from addon.codec.formats.studio3ds.options import ImportOptions
    with pytest.raises(UsageError, match="'CAMREA' not among ARMATURE,CAMERA,EMPTY,LIGHT,MESH"):
        parse_options(["object_types=MESH,CAMREA"], [ImportOptions])
    assert parse_options(["object_types=mesh,Light"], [ImportOptions]) == {"object_types": frozenset({"MESH", "LIGHT"})}


def test_mistyped_option_is_an_error_listing_the_valid_ones(tmp_path):
    out = run("convert", ASSETS / "ultimate3d" / "cube_v2.u3d", tmp_path / "x.u3d", "-o", "pasword=secret")
    assert out.returncode == 2
    assert "unknown option 'pasword'" in out.stderr and "password" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not (tmp_path / "x.u3d").exists()


@pytest.mark.parametrize("src,to,pair,allowed", [
    (CUBE, "u3d", "normals=FOO", "SHARP_EDGES|EXACT|KEEP"),
    (CUBE, "unreal", "variant=foo", "AS_IMPORTED|STANDARD|DEUS_EX"),
    (CUBE, "unreal", "sequence_source=frames", "ANIMATIONS|MARKERS|ALL"),
    (CUBE, "u3d", "version=3.0", "2.0|1.0"),
    (CUBE, "unreal", "scale=-1", ">= 0.0"),
    (CUBE, "3ds", "name_limit=20", "10 to 16"),
    (CUBE, "unigine-mesh", "surfaces_from=faces", "MATERIAL|OBJECT"),
])
def test_a_value_outside_the_declared_choices_is_a_usage_error_before_any_file(tmp_path, src, to, pair, allowed):
    tree = tmp_path / "in"
    tree.mkdir()
    for i in range(2):
        (tree / f"c{i}.3ds").write_bytes(src.read_bytes())
    out = run("convert", tree, "--to", to, "-d", tmp_path / "out", "-o", pair)
    assert out.returncode == 2, out
    assert len(out.stderr.strip().splitlines()) == 1 and allowed in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == "" and not (tmp_path / "out").exists()


def test_choices_match_case_insensitively_and_keep_their_declared_spelling():
    from addon.codec.formats.studio3ds.options import ImportOptions
    assert parse_options(["normals=keep"], [ImportOptions]) == {"normals": "KEEP"}
    assert parse_options(["variant=deus_ex", "scale=0"], [UnrealExport]) == {"variant": "DEUS_EX", "scale": 0.0}


def test_allowed_values_are_declared_once_in_the_dataclasses():
    from typing import get_args
    from addon.codec.formats.studio3ds.mesh_in import NORMAL_MODES
    from addon.codec.option_rules import Normals, choices
    from addon.codec.registry import registered_formats
    assert NORMAL_MODES == get_args(Normals)
    for name in ("3ds", "u3d", "unigine-mesh"):
        assert choices(registered_formats()[name].import_options)["normals"] == get_args(Normals)


def test_false_is_false(tmp_path):
    out = run("convert", CUBE, tmp_path / "cube_d.3d", "-o", "write_uc=False")
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cube_a.3d", "cube_d.3d"]


def test_convert_names_every_file_it_writes(tmp_path):
    out = run("convert", CUBE, tmp_path / "cube.3d")
    assert out.returncode == 0, out.stderr
    written = sorted(line.split(" ", 1)[1] for line in out.stdout.splitlines() if line.startswith("wrote "))
    assert written == sorted(str(p) for p in tmp_path.iterdir())
    assert len(written) == 3                        # _d.3d, _a.3d and the .uc
    assert "warning:" in out.stderr and "warning" not in out.stdout


def test_convert_refuses_to_overwrite_an_existing_output_or_an_input(tmp_path):
    target = tmp_path / "cube.mesh"
    target.write_bytes(b"keep me")
    out = run("convert", CUBE, target)
    assert out.returncode == 1 and "refusing to overwrite" in out.stderr and "--overwrite" in out.stderr
    assert target.read_bytes() == b"keep me"
    assert run("convert", CUBE, target, "--overwrite").returncode == 0
    assert load(target).meshes
    src = tmp_path / "in.3ds"
    src.write_bytes(CUBE.read_bytes())
    out = run("convert", src, src)
    assert out.returncode == 1 and "refusing to overwrite the input" in out.stderr
    assert src.read_bytes() == CUBE.read_bytes()


@pytest.mark.parametrize("args", [["convert", "a.3ds"], ["convert", "a.3ds", "b.xyz"], ["frobnicate"],
                                  ["convert", "a.3ds", "--to", "obj", "-d", "x"], ["check"]])
def test_usage_errors_exit_2_on_stderr(args):
    out = run(*args)
    assert out.returncode == 2, out
    assert out.stdout == "" and "error:" in out.stderr and "Traceback" not in out.stderr


def test_a_missing_or_bad_file_exits_1(tmp_path):
    assert run("info", tmp_path / "nope.3ds").returncode == 1
    assert run("convert", tmp_path / "nope.3ds", tmp_path / "out.u3d").returncode == 1


def test_broken_pipe_is_quiet():
    proc = subprocess.Popen([sys.executable, "-m", "addon.codec", "formats"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.read(10)
    proc.stdout.close()                             # the reader goes away, as `| head -c 10` does
    err = proc.stderr.read().decode()
    proc.wait()
    assert err == "", err
    assert proc.returncode in (0, 1)


def test_formats_lists_extensions_holdings_and_typed_options(capsys):
    assert main(["formats", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["u3d"]["extensions"] == [".u3d"]
    pw = {o["name"]: o for o in d["u3d"]["import_options"]}["password"]
    assert pw["type"] == "str" and pw["help"].startswith("Password of an encrypted (AES) file")
    wuc = {o["name"]: o for o in d["unreal"]["export_options"]}["write_uc"]
    assert (wuc["type"], wuc["default"]) == ("bool", "true")
    assert "cameras" in d["3ds"]["holds"] and "cameras" not in d["unreal"]["holds"]
    assert main(["formats"]) == 0
    text = capsys.readouterr().out
    assert "unreal: Unreal Engine 1 Vertex Mesh (.3d, .uc)" in text and "write_uc=true  (bool)" in text
    assert "variant=AS_IMPORTED  (str: AS_IMPORTED|STANDARD|DEUS_EX)" in text and "scale=1.0  (float: >= 0.0)" in text
    variant = {o["name"]: o for o in d["unreal"]["export_options"]}["variant"]
    assert variant["choices"] == ["AS_IMPORTED", "STANDARD", "DEUS_EX"]
