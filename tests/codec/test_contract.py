"""The typed Scene contract (codec/scene.py): what one layer hands another is a typed field, never a
string key; `extras` holds only a format's own prefixed fields; `Scene.metadata` is gone."""
import ast
import dataclasses
import re
import typing
from pathlib import Path

import numpy as np
import pytest

from addon.codec import info, load, save, scene as S
from tests.codec.test_ultimate3d_model import full_skinned_v2
from tests.codec.unreal_fixtures import tetra_pair, write_set

ROOT = Path(__file__).resolve().parents[2]
ADDON = ROOT / "addon"
ASSETS = ROOT / "test_assets"
PREFIXES = ("3ds_", "u3d_", "ue_", "unigine_")
# typed fields Blender has no home for: the bridge keeps them as custom properties named "lgf_..." or these
BRIDGE_PROPS = {"source_name", "fps", "use_attenuation", "attenuation_start", "attenuation_end"}
# the string keys the contract replaced
OLD_KEYS = {"placement", "baked_frames", "baked_animation", "unigine_rest", "unigine_unstored", "ue_script"}
# what the code calls a Scene (a dataclass Field's `.metadata` is something else)
SCENE_NAME = re.compile(r"(^|\.)(s|sc|scene|\w+_scene)$", re.IGNORECASE)
CONTRACT = {S.Animation: ["placement"], S.Mesh: ["baked_frames", "baked_animation"], S.Node: ["source_name"],
            S.TextureSlot: ["combine", "cube_faces"], S.Scene: ["rest_pose", "source_format", "source_version"],
            S.RestPose: None}


# -- the source scan ---------------------------------------------------------------------------
def _extras_names(tree: ast.AST) -> set[str]:
    """Local names that hold an extras dict: `extras` itself and aliases of some `x.extras`."""
    names = {"extras"}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute) and n.value.attr == "extras":
            names |= {t.id for t in n.targets if isinstance(t, ast.Name)}
    return names


def _key(node) -> str | None:
    """A literal key, or the literal start of "prefix" + something."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _key(node.left)
    return None


def scan(source: str) -> tuple[list[str], list[str], list[str]]:
    """(literal extras keys read or written, `.metadata` uses, old contract key strings) in the source."""
    tree = ast.parse(source)
    names = _extras_names(tree)

    def is_extras(e) -> bool:
        return (isinstance(e, ast.Attribute) and e.attr == "extras") or (isinstance(e, ast.Name) and e.id in names)

    keys, meta, old = [], [], []
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and is_extras(n.value):
            keys.append(_key(n.slice))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and is_extras(n.func.value):
            if n.func.attr in ("get", "pop", "setdefault") and n.args:
                keys.append(_key(n.args[0]))
            elif n.func.attr == "update":
                keys += [k.arg for k in n.keywords]
                keys += [_key(k) for a in n.args if isinstance(a, ast.Dict) for k in a.keys]
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "dict" and n.args \
                and is_extras(n.args[0]):
            keys += [k.arg for k in n.keywords]
        elif isinstance(n, ast.Compare) and isinstance(n.ops[0], (ast.In, ast.NotIn)) and is_extras(n.comparators[0]):
            keys.append(_key(n.left))
        elif isinstance(n, ast.keyword) and n.arg == "extras" and isinstance(n.value, ast.Dict):
            keys += [_key(k) for k in n.value.keys]
        elif isinstance(n, ast.Assign) and isinstance(n.value, ast.Dict) and any(is_extras(t) for t in n.targets):
            keys += [_key(k) for k in n.value.keys]
        elif isinstance(n, ast.Attribute) and n.attr == "metadata" and SCENE_NAME.search(ast.unparse(n.value)):
            meta.append(ast.unparse(n))
        elif isinstance(n, ast.Constant) and n.value in OLD_KEYS:
            old.append(n.value)
    return [k for k in keys if k is not None], meta, old


def _sources(*parts):
    for path in sorted((ADDON.joinpath(*parts)).rglob("*.py")):
        yield path.relative_to(ADDON).as_posix(), path.read_text(encoding="utf-8")


def test_the_scan_finds_the_old_ways():
    # the scan itself: every way the code used to carry a contract datum is caught
    src = '''
def f(scene, a, m, node, ex):
    a.extras["placement"] = "NLA"
    if m.extras.get("baked_frames"): pass
    if "baked_animation" in m.extras: pass
    rest = scene.metadata.get("unigine_rest")
    self.sc.metadata["ue_script"] = "x.uc"
    low, high = f.metadata.get("min"), field_.metadata["max"]      # a dataclass field's: fine
    extras = {"source_name": node.name}
    ex = node.extras
    ex.update(name="n")
    return Animation("a", extras={"u3d_action_range": [0, 1], "placement": "NLA"}), dict(extras, tag=1)
'''
    keys, meta, old = scan(src)
    assert sorted(keys) == sorted(["placement", "baked_frames", "baked_animation", "source_name", "name",
                                   "u3d_action_range", "placement", "tag"])
    assert sorted(meta) == ["scene.metadata", "self.sc.metadata"]
    assert sorted(set(old)) == ["baked_animation", "baked_frames", "placement", "ue_script", "unigine_rest"]


def test_codec_extras_keys_are_the_formats_own():
    found = {}
    for rel, text in _sources("codec"):
        keys, meta, old = scan(text)
        bad = [k for k in keys if not k.startswith(PREFIXES)]
        assert not bad, f"{rel}: extras keys {bad} are not a format's own fields: make them typed Scene fields"
        assert not old, f"{rel}: {old} are typed Scene fields now"
        assert not meta, f"{rel}: {meta}: Scene has no metadata"
        found[rel] = keys
    # the scan sees what the formats keep (so that an empty scan cannot pass)
    assert "u3d_lod" in found["codec/formats/ultimate3d/to_scene.py"]
    assert "ue_group" in found["codec/formats/unreal/to_scene.py"]
    assert "3ds_color" in found["codec/formats/studio3ds/mesh_in.py"]
    assert sum(map(len, found.values())) > 100


def test_bridge_and_operators_read_no_format_key():
    seen = set()
    for rel, text in [*_sources("bridge"), *_sources("operators")]:
        keys, meta, old = scan(text)
        bad = {k for k in keys if k not in BRIDGE_PROPS and not k.startswith("lgf_")}
        assert not bad, f"{rel}: reads extras keys {bad}"
        assert not meta and not old, f"{rel}: {meta + old}"
        seen |= set(keys)
    assert {"fps", "use_attenuation"} <= seen


# -- the fields -----------------------------------------------------------------------------------
def test_scene_has_no_metadata():
    assert "metadata" not in {f.name for f in dataclasses.fields(S.Scene)}
    assert not hasattr(S.Scene(), "metadata")


@pytest.mark.parametrize("cls", list(CONTRACT), ids=lambda c: c.__name__)
def test_contract_fields_are_typed_documented_and_commented(cls):
    names = CONTRACT[cls] or [f.name for f in dataclasses.fields(cls)]
    hints = typing.get_type_hints(cls)
    lines = Path(S.__file__).read_text(encoding="utf-8").splitlines()
    body = lines[next(i for i, ln in enumerate(lines) if ln.startswith(f"class {cls.__name__}")):]
    for name in names:
        assert hints[name] is not typing.Any, name
        at = next(i for i, ln in enumerate(body) if ln.lstrip().startswith(f"{name}:"))
        # a comment on its line or right above it
        assert "#" in body[at] or body[at - 1].lstrip().startswith("#"), name
        if cls is not S.RestPose:
            assert f"{cls.__name__}.{name}" in S.__doc__, f"{cls.__name__}.{name} missing from the contract docs"
    assert typing.get_args(hints["placement"]) == ("ACTIVE", "NLA", "STASH") if cls is S.Animation else True


# -- the fields on the paths that use them -------------------------------------------------------
def test_source_format_and_version_feed_info():
    sc = load(ASSETS / "3ds" / "cube_hierarchy.3ds")
    assert sc.source_format == "3ds" and sc.source_version
    got = info(ASSETS / "3ds" / "cube_hierarchy.3ds")
    assert (got["format"], got["version"]) == (sc.source_format, sc.source_version)
    assert info(ASSETS / "unigine" / "tube_bend.anim")["format"] == "unigine-anim"


def test_formats_place_several_animations_on_nla_strips(tmp_path):
    (tmp_path / "a.u3d").write_bytes(full_skinned_v2())
    u3d = load(tmp_path / "a.u3d")
    assert [a.placement for a in u3d.animations] == ["NLA", "NLA"]
    assert all("placement" not in a.extras for a in u3d.animations)
    d, a = tetra_pair(frames=4)
    uc = ("class t extends Actor;\r\n#exec MESH IMPORT MESH=t ANIVFILE=t_a.3d DATAFILE=t_d.3d\r\n"
          "#exec MESH SEQUENCE MESH=t SEQ=All STARTFRAME=0 NUMFRAMES=4\r\n"
          "#exec MESH SEQUENCE MESH=t SEQ=Wave STARTFRAME=1 NUMFRAMES=3\r\n")
    ue = load(write_set(tmp_path, "t", d, a, uc))
    assert [(x.name, x.placement) for x in ue.animations] == [("All", "NLA"), ("Wave", "NLA")]
    alone = load(write_set(tmp_path / "alone", "t", d, a))          # one animation: the active action
    assert [x.placement for x in alone.animations] == ["ACTIVE"]


def test_anim_rest_pose_is_what_its_export_writes(tmp_path):
    from addon.codec.formats.unigine import read
    from addon.codec.errors import FormatError, Warnings
    src = ASSETS / "unigine" / "tube_bend.anim"
    sc = load(src)
    rest = sc.rest_pose
    assert isinstance(rest, S.RestPose) and rest.bones and len(rest.parents) == len(rest.bones)
    assert rest.rotation.shape == (len(rest.bones), 4) and set(rest.unstored) == {a.name for a in sc.animations}
    save(sc, tmp_path / "again.anim")
    again = read.read_anim((tmp_path / "again.anim").read_bytes(), Warnings())
    assert [b.name for b in again.bones] == rest.bones
    assert [b.parent for b in again.bones] == rest.parents
    np.testing.assert_array_equal(again.bind["t"], rest.translation)
    np.testing.assert_array_equal(again.bind["r"], rest.rotation[:, [1, 2, 3, 0]])     # the file's x, y, z, w
    sc.rest_pose = None                  # without it, an armature-less animation has no bones to write
    with pytest.raises(FormatError, match="rest pose"):
        save(sc, tmp_path / "bare.anim")

