"""The .3ds environment (backgrounds, ambient, fogs) <-> the neutral World, both ways."""
import numpy as np

from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.from_scene import from_scene
from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.formats.studio3ds.options import ExportOptions, ImportOptions
from addon.codec.formats.studio3ds.read import parse
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.write import encode_bytes
from tests.codec.fixtures_3ds import build


def color(cid, rgb, data=None):
    c = Chunk(cid, data)
    c.add(ids.COLOR_F, rgb)
    return c


def world_file(use=ids.USE_V_GRADIENT) -> bytes:
    grad = Chunk(ids.V_GRADIENT, 0.25)
    for rgb in ((0.0, 0.0, 1.0), (0.5, 0.5, 0.5), (1.0, 0.0, 0.0)):
        grad.add(ids.COLOR_F, rgb)
        grad.add(ids.LIN_COLOR_F, (0.9, 0.9, 0.9))              # gamma copies: not read
    fog = color(ids.FOG, (0.7, 0.7, 0.8), (1.0, 0.1, 50.0, 0.9))
    fog.add(ids.FOG_BGND)
    cue = Chunk(ids.DISTANCE_CUE, (2.0, 0.0, 40.0, 0.75))
    layer = color(ids.LAYER_FOG, (0.2, 0.3, 0.4), (0.0, 5.0, 0.5, 0x100002))
    extra = [Chunk(ids.BIT_MAP, "SKY.JPG"), color(ids.SOLID_BGND, (0.1, 0.2, 0.3)), grad, Chunk(use),
             color(ids.AMBIENT_LIGHT, (0.05, 0.06, 0.07)), fog, Chunk(ids.USE_FOG), cue, layer,
             Chunk(ids.USE_LAYER_FOG)]
    return build(editor_extra=extra)


def load(data):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(), w), w


def test_every_part_of_the_environment_is_read():
    sc, w = load(world_file())
    world = sc.world
    assert world.background == "GRADIENT"
    assert world.gradient == [(0.0, 0.0, 1.0), (0.5, 0.5, 0.5), (1.0, 0.0, 0.0)] and world.gradient_middle == 0.25
    np.testing.assert_allclose(world.color, (0.1, 0.2, 0.3))
    np.testing.assert_allclose(world.ambient, (0.05, 0.06, 0.07))
    assert sc.images[world.image].name == "SKY.JPG"
    assert any("SKY.JPG" in x and "not found" in x for x in w.as_list())
    f = world.fog
    assert (f.near, f.far, f.use, f.background) == (1.0, 50.0, True, True)
    np.testing.assert_allclose((f.near_density, f.far_density), (0.1, 0.9))
    np.testing.assert_allclose(f.color, (0.7, 0.7, 0.8))
    c = world.distance_cue
    assert (c.near, c.far, c.use, c.color) == (2.0, 40.0, False, (0.0, 0.0, 0.0))
    lf = world.layer_fog
    assert lf.layer == (0.0, 5.0) and lf.use and lf.background and lf.falloff == "TOP"
    np.testing.assert_allclose(lf.far_density, 0.5)


def test_the_environment_is_written_back():
    sc, _ = load(world_file(ids.USE_BIT_MAP))
    model = from_scene(sc, ExportOptions(), Warnings())
    back, _ = load(encode_bytes(model))
    assert back.world == sc.world
    ed = parse(encode_bytes(model), Warnings()).editor()
    assert ed.has(ids.USE_BIT_MAP) and not ed.has(ids.USE_V_GRADIENT) and not ed.has(ids.USE_SOLID_BGND)


def test_a_file_without_environment_has_no_world():
    sc, _ = load(build())
    assert sc.world is None
