"""The 3DS environment as a Blender world: a world of its own, rendered by Cycles and EEVEE,
and written back on export."""
import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.read import read
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.options import ImportOptions
from tests.blender.helpers import tiny_render
from tests.codec.test_3ds_world import world_file


def _file(tmp_path, use=ids.USE_V_GRADIENT, name="env.3ds"):
    f = tmp_path / name
    f.write_bytes(world_file(use))
    return f


def _mine():
    mine = bpy.data.worlds.new("Mine")
    mine.color = (0.9, 0.8, 0.7)
    bpy.context.scene.world = mine
    return mine


def test_import_sets_a_world_of_its_own_and_leaves_the_users_alone(clean, tmp_path):
    mine = _mine()
    assert bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path))) == {"FINISHED"}
    world = bpy.context.scene.world
    assert world != mine and world.name.startswith("env")
    assert tuple(mine.color) == pytest.approx((0.9, 0.8, 0.7))
    nodes = world.node_tree.nodes
    assert tuple(nodes["Ambient"].inputs["Color"].default_value[:3]) == pytest.approx((0.05, 0.06, 0.07))
    assert any(n.type == "VALTORGB" for n in nodes)                       # the gradient
    assert "Fog" in nodes and nodes["Fog"].inputs["Density"].default_value > 0
    assert world.mist_settings.start == pytest.approx(1.0) and world.mist_settings.depth == pytest.approx(49.0)


def test_replace_rebuilds_the_scenes_world(clean, tmp_path):
    mine = _mine()
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path)), world="REPLACE")
    assert bpy.context.scene.world == mine and "Ambient" in mine.node_tree.nodes
    bpy.ops.wm.read_homefile(use_empty=True)
    mine = _mine()
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path)), world="NONE")
    assert bpy.context.scene.world == mine and len(bpy.data.worlds) == 1


def _eevee() -> str:
    items = {e.identifier for e in bpy.types.RenderSettings.bl_rna.properties["engine"].enum_items}
    return "BLENDER_EEVEE_NEXT" if "BLENDER_EEVEE_NEXT" in items else "BLENDER_EEVEE"


def _render(tmp_path, engine) -> np.ndarray:
    sc = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    sc.collection.objects.link(cam)
    cam.location = (0.0, -10.0, 1.0)
    cam.rotation_euler = (1.5708, 0.0, 0.0)
    sc.camera = cam
    sc.view_settings.view_transform = "Standard"
    return tiny_render(tmp_path, engine, 16, 2 if engine == "CYCLES" else 1, engine)   # bottom row first


@pytest.mark.parametrize("engine", ["CYCLES", "EEVEE"])
def test_the_gradient_background_renders(clean, tmp_path, engine):
    f = tmp_path / "env.3ds"
    # the gradient without fog, which would hide it
    from tests.codec.test_3ds_world import color
    from addon.codec.formats.studio3ds.model import Chunk
    from tests.codec.fixtures_3ds import build
    grad = Chunk(ids.V_GRADIENT, 0.5)
    for rgb in ((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (1.0, 0.0, 0.0)):      # top blue, middle green, bottom red
        grad.add(ids.COLOR_F, rgb)
    f.write_bytes(build(editor_extra=[grad, Chunk(ids.USE_V_GRADIENT), color(ids.AMBIENT_LIGHT, (0.1, 0.1, 0.1))]))
    bpy.ops.import_scene.studio3ds(filepath=str(f))
    px = _render(tmp_path, "CYCLES" if engine == "CYCLES" else _eevee())
    top, middle, bottom = px[-1].mean(0), px[8].mean(0), px[0].mean(0)
    assert np.argmax(top) == 2 and np.argmax(middle) == 1 and np.argmax(bottom) == 0


@pytest.mark.parametrize("use", [ids.USE_V_GRADIENT, ids.USE_SOLID_BGND])
def test_export_writes_the_environment_back(clean, tmp_path, use):
    src = _file(tmp_path, use)
    bpy.ops.import_scene.studio3ds(filepath=str(src))
    nodes = bpy.context.scene.world.node_tree.nodes
    nodes["Ambient"].inputs["Color"].default_value = (0.2, 0.2, 0.2, 1.0)     # edited in Blender
    bpy.ops.mesh.primitive_cube_add()
    out = tmp_path / "back.3ds"
    assert bpy.ops.export_scene.studio3ds(filepath=str(out)) == {"FINISHED"}
    w = Warnings()
    before = to_scene(read(src, None, w), ImportOptions(), w).world
    after = to_scene(read(out, None, w), ImportOptions(), w).world
    assert after.ambient == pytest.approx((0.2, 0.2, 0.2))
    assert after.background == before.background
    assert after.gradient == before.gradient and after.color == pytest.approx(before.color)
    assert after.fog == before.fog and after.layer_fog == before.layer_fog and after.distance_cue == before.distance_cue


def test_export_writes_a_users_world_as_its_background(clean, tmp_path):
    world = bpy.data.worlds.new("Mine")
    world.color = (0.2, 0.3, 0.4)               # what renders without nodes (before 5.0)
    if world.node_tree is not None:             # 5.0: a new world renders its Background node
        bg = next(n for n in world.node_tree.nodes if n.type == "BACKGROUND")
        bg.inputs["Color"].default_value = (0.2, 0.3, 0.4, 1.0)
    bpy.context.scene.world = world
    bpy.ops.mesh.primitive_cube_add()
    out = tmp_path / "mine.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    w = Warnings()
    sc = to_scene(read(out, None, w), ImportOptions(), w)
    assert sc.world.background == "SOLID" and sc.world.color == pytest.approx((0.2, 0.3, 0.4))
