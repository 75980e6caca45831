"""What the registry's FormatSpecs say reaches the command line's `formats` listing, and the
option dataclasses declare each option once, with what a user interface shows."""
from __future__ import annotations

import ast
import json
from dataclasses import dataclass, fields, replace
from typing import Literal

import pytest

from addon import codec
from addon.codec import registry
from addon.codec.cli import formats_text, main
from addon.codec.option_rules import choices, option
from tests.conftest import ROOT


@pytest.fixture
def changed_unreal(monkeypatch):
    """The registry with the Unreal FormatSpec's label, extensions and limits changed."""
    table = dict(registry._scan())
    table["unreal"] = replace(table["unreal"], label="Changed Label", extensions=(".zz3d", ".uc"),
                              limits=codec.Limits(vertices=123, frames=45, note="changed note"))
    monkeypatch.setattr(registry, "_scan", lambda: table)
    return table["unreal"]


def test_formats_listing_follows_the_spec(changed_unreal, capsys):
    text = formats_text.as_text()
    assert "unreal: Changed Label (.zz3d, .uc)" in text
    assert "  limits: 123 vertices per mesh, 45 frames; changed note" in text
    assert main(["formats", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["unreal"]
    assert (d["label"], d["extensions"]) == ("Changed Label", [".zz3d", ".uc"])
    assert d["limits"] == {"vertices": 123, "frames": 45, "note": "changed note"}


def test_limits_are_the_formats_own_constants():
    """The listing shows the limits the writers enforce, not copies of them."""
    from addon.codec.formats.studio3ds import mesh_out
    from addon.codec.formats.unreal import from_scene, merge, model
    specs = codec.registered_formats()
    assert specs["unreal"].limits.vertices == model.MAX_VERTICES[model.STANDARD] == 16383
    assert specs["unreal"].limits.frames == merge.MAX_FRAMES
    assert specs["unreal"].limits.faces == from_scene.MAX_TRIANGLES
    assert specs["3ds"].limits.vertices == specs["3ds"].limits.faces == mesh_out.LIMIT == 65535
    assert "16383 vertices per mesh" in formats_text.as_text()


def test_every_spec_with_operators_has_a_unique_operator_id():
    ids = [s.operator_id for s in codec.registered_formats().values() if s.operator_id]
    assert len(set(ids)) == len(ids) >= 5
    assert all(i.split(".")[0] in ("scene", "anim") for i in ids)


def test_gltf_has_no_blender_operators():
    """Blender has its own glTF add-on: glTF is in the codec and `lgf formats`, not in the File menus."""
    specs = codec.registered_formats()
    assert specs["gltf"].operator_id == specs["glb"].operator_id == ""
    assert "glb: glTF 2.0 Binary (.glb)" in formats_text.as_text()


@pytest.mark.parametrize("name", sorted(codec.registered_formats()))
def test_every_option_is_shown_with_a_label_and_help(name):
    """Each option's label, help and choice labels are declared on its field (option_rules.option):
    the CLI, the README and the Blender properties all read them there."""
    spec = codec.registered_formats()[name]
    for cls in (spec.import_options, spec.export_options):
        for o in codec.shown_options(cls):
            f = next(f for f in fields(cls) if f.name == o.name)
            assert f.metadata.get("label") and f.metadata.get("help"), f"{cls.__name__}.{o.name}"
            if o.name in choices(cls):
                assert tuple(i[0] for i in o.items) == choices(cls)[o.name]
                assert all(i[1] for i in o.items), f"{cls.__name__}.{o.name}: a choice without a label"


def test_shown_items_must_match_the_choices():
    @dataclass(frozen=True)
    class Bad:
        pick: Literal["A", "B"] = option("A", "Pick", "one", items={"A": ("A", "")})
    with pytest.raises(TypeError, match="differ"):
        codec.shown_options(Bad)


def test_3ds_shares_the_scene_content_options_with_the_bridge():
    """use_keyframes, object_types and apply_transform of .3ds import are declared once
    (codec/scene_options.py), which the bridge's BuildOptions also extends."""
    from addon.codec.formats.studio3ds.options import ExportOptions, ImportOptions
    from addon.codec.scene_options import ExportContent, ImportContent
    assert issubclass(ImportOptions, ImportContent)
    assert fields(ExportOptions)[0].metadata == next(f for f in fields(ExportContent)
                                                     if f.name == "use_keyframes").metadata
    source = (ROOT / "addon" / "bridge" / "scene_build.py").read_text()
    build = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.ClassDef) and n.name == "BuildOptions")
    assert [b.id for b in build.bases] == ["ImportContent"]
    assert not {"use_keyframes", "object_types", "apply_transform"} & {
        s.target.id for s in build.body if isinstance(s, ast.AnnAssign)}


def _handlers(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ExceptHandler):
            types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            yield node.lineno, [None if t is None else t.attr if isinstance(t, ast.Attribute) else t.id
                                for t in types]


def test_operators_catch_only_codec_errors_and_os_errors():
    """A bug (IndexError, ValueError...) must surface as one, not as a reported 'cannot import'."""
    allowed = {"CodecError", "WrongPassword", "OSError"}      # WrongPassword is a CodecError
    assert issubclass(codec.WrongPassword, codec.CodecError)
    seen = []
    for path in sorted((ROOT / "addon" / "operators").glob("*.py")):
        for line, names in _handlers(path):
            seen.append(names)
            assert set(names) <= allowed, f"{path.name}:{line} catches {names}"
    assert ["CodecError", "OSError"] in seen          # the walk sees the operators' handlers


def test_the_handler_check_sees_a_broad_except(tmp_path):
    p = tmp_path / "op.py"
    p.write_text("try:\n    pass\nexcept (CodecError, ValueError):\n    pass\ntry:\n    pass\nexcept:\n    pass\n")
    assert list(_handlers(p)) == [(3, ["CodecError", "ValueError"]), (7, [None])]
