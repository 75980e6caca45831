"""The capability table (features.HOLDS) against real conversions: what it says is dropped never comes back,
and what it says is kept comes back from at least one real file."""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec import features, load, registered_formats, save
from addon.codec.scene import Light, Node
from addon.codec.errors import CodecError
from tests.conftest import ASSETS

SOURCES = [ASSETS / p for p in ("3ds/cube_hierarchy.3ds", "3ds/CameraRollAnim.3ds", "3ds/jeep1.3ds",
                                "3ds/cube_with_diffuse_texture.3DS", "unreal/box_d.3d", "unigine/tube_skinned.mesh",
                                "unigine/grid_static.mesh", "ultimate3d/skinned_v2.u3d", "ultimate3d/cube_v2.u3d")]
TARGETS = {"3ds": ".3ds", "unreal": "_d.3d", "unigine-mesh": ".mesh", "u3d": ".u3d", "unigine-anim": ".anim",
           "gltf": ".gltf", "glb": ".glb"}
# .mesh keeps its animations in .anim files beside it unless asked to embed them
OPTIONS = {"unigine-mesh": {"embed_animations": True}}


def test_every_format_has_a_row():
    assert set(features.HOLDS) == set(registered_formats()) == set(TARGETS)
    assert all(h <= set(features.FEATURES) for h in features.HOLDS.values())


def generated(tmp_path):
    """What no real test file has: a light, a second UV map, vertex colours (written as .mesh, which keeps
    the last two; the light is added to the loaded scene)."""
    from tests.bench_data import grid_scene
    s = grid_scene(200)
    m = s.meshes[0]
    m.uv_layers["Second"] = m.uv_layers["UVMap"][:, ::-1].copy()
    m.colors["Col"] = np.ones((len(m.corners), 4), np.float32)
    path = tmp_path / "generated.mesh"
    save(s, path)
    scene = load(path)
    scene.lights.append(Light("Lamp"))
    scene.add_node(Node("Lamp", "LIGHT", 0))
    return scene


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_table_matches_what_conversions_keep(target, tmp_path):
    kept_once, had = set(), set()
    for i, src in enumerate([*SOURCES, None]):
        scene = load(src) if src is not None else generated(tmp_path)
        before = features.count(scene)
        out = tmp_path / f"f{i}{TARGETS[target]}"
        try:
            save(scene, out, target, **OPTIONS.get(target, {}))
        except CodecError:
            continue                                   # e.g. an .anim from a scene without an armature
        after = features.count(load(out))
        had |= set(before)
        dropped = {k for k in before if k not in features.HOLDS[target]}
        assert not dropped & set(after), f"{src} -> {target}: the table says {dropped & set(after)} are dropped"
        assert features.losses(scene, target) == [f"{before[k]} {features.FEATURES[k][0]}"
                                                  for k in before if k in dropped]
        kept_once |= set(after) & set(before)
    claimed = had & features.HOLDS[target]
    assert claimed <= kept_once, f"{target}: the table says {claimed - kept_once} are kept, no file kept them"
