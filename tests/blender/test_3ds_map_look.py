"""3DS map flags that change the picture in the material nodes: decal, negative, luminance and RGB
tint; and that what the nodes show (edited or not) is what export writes back."""
import shutil

import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.read import read
from tests.blender.helpers import render_plane_from_above
from tests.blender.test_3ds_textures import _map
from tests.codec.fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, build, material, obj, trimesh

DIFFUSE = (255, 0, 0)
COLOURS = {ids.MAT_MAP_COL1: (255, 0, 0), ids.MAT_MAP_COL2: (0, 0, 255), ids.MAT_MAP_RCOL: (0, 255, 0),
           ids.MAT_MAP_GCOL: (0, 0, 255), ids.MAT_MAP_BCOL: (255, 255, 0)}


def _file(tmp_path, flags, name="look.3ds"):
    shutil.copy(ASSETS / "texture.png", tmp_path / "texture.png")
    m = _map(flags)
    for cid, rgb in COLOURS.items():
        m.add(cid, rgb)
    f = tmp_path / name
    f.write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Mat", range(12))]))],
                        materials=[material("Mat", diffuse=DIFFUSE, extra=[m])]))
    return f


def _nodes():
    nt = bpy.data.materials["Mat"].node_tree
    tex = next(n for n in nt.nodes if n.type == "TEX_IMAGE")
    bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
    return nt, tex, bsdf


def _feeds(socket):
    """The node linked into `socket`."""
    assert socket.links, socket.name
    return socket.links[0].from_node


def _map_chunk(path):
    return read(path, None, Warnings()).editor().find(ids.MAT_ENTRY).find(0xA200)


def test_a_decal_shows_the_base_colour_around_the_picture_and_through_its_alpha(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x11)))
    nt, tex, bsdf = _nodes()
    assert tex.extension == "CLIP"                  # outside the picture: colour and alpha 0
    decal = _feeds(bsdf.inputs["Base Color"])
    assert decal.label == "Decal" and decal.type == "MIX" and decal.blend_type == "MIX"
    # factor: the picture's alpha (0 outside it, its own alpha inside); A: the material's colour
    assert decal.inputs["Factor"].links[0].from_socket == tex.outputs["Alpha"]
    np.testing.assert_allclose(decal.inputs["A"].default_value[:3], np.array(DIFFUSE) / 255, atol=1e-6)
    assert decal.inputs["B"].links[0].from_socket == tex.outputs["Color"]
    assert not bsdf.inputs["Alpha"].links            # the decal is not a hole: the material stays opaque


def test_without_the_decal_flag_the_picture_feeds_the_bsdf_itself(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x10)))      # no tiling alone
    nt, tex, bsdf = _nodes()
    assert tex.extension == "CLIP" and _feeds(bsdf.inputs["Base Color"]) == tex
    assert not any(n.label for n in nt.nodes if n.type in ("MIX", "INVERT"))


def test_negative_then_luminance_tint(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x8 | 0x80)))
    nt, tex, bsdf = _nodes()
    tint = _feeds(bsdf.inputs["Base Color"])
    assert tint.label == "Tint" and tint.type == "MIX"
    # black (after the negative) is the first colour, white the second
    np.testing.assert_allclose(tint.inputs["A"].default_value[:3], (1, 0, 0), atol=1e-6)
    np.testing.assert_allclose(tint.inputs["B"].default_value[:3], (0, 0, 1), atol=1e-6)
    bw = _feeds(tint.inputs["Factor"])
    assert bw.type == "RGBTOBW"
    negative = _feeds(bw.inputs["Color"])
    assert negative.type == "INVERT" and negative.label == "Negative"
    assert negative.inputs["Fac"].default_value == 1.0 and _feeds(negative.inputs["Color"]) == tex


def test_rgb_tint_scales_three_colours_by_the_pictures_channels(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x200)))
    nt, tex, bsdf = _nodes()
    by_label = {n.label: n for n in nt.nodes if n.label}
    sep = next(n for n in nt.nodes if n.type == "SEPARATE_COLOR")
    assert sep.mode == "RGB" and _feeds(sep.inputs["Color"]) == tex
    for label, channel, cid in (("Tint R", "Red", ids.MAT_MAP_RCOL), ("Tint G", "Green", ids.MAT_MAP_GCOL),
                                ("Tint B", "Blue", ids.MAT_MAP_BCOL)):
        node = by_label[label]
        assert node.operation == "SCALE" and node.inputs["Scale"].links[0].from_socket == sep.outputs[channel]
        np.testing.assert_allclose(node.inputs[0].default_value, np.array(COLOURS[cid]) / 255, atol=1e-6)
    total = _feeds(bsdf.inputs["Base Color"])
    assert total.label == "Tint" and total.operation == "ADD"


@pytest.mark.parametrize("flags", [0x11, 0x8 | 0x80, 0x200 | 0x1 | 0x10, 0x2 | 0x8])
def test_flags_and_tint_colours_come_back_unedited(clean, tmp_path, flags):
    src = _file(tmp_path, flags)
    bpy.ops.import_scene.studio3ds(filepath=str(src))
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    a, b = _map_chunk(src), _map_chunk(out)
    for cid in (ids.MAT_MAP_TILING, *COLOURS):
        assert b.value(cid) == a.value(cid), hex(cid)


def test_edited_tint_and_removed_negative_are_written(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x8 | 0x80)))
    nt, tex, bsdf = _nodes()
    tint = next(n for n in nt.nodes if n.label == "Tint")
    tint.inputs["B"].default_value = (0.0, 1.0, 0.0, 1.0)
    negative = next(n for n in nt.nodes if n.label == "Negative")
    bw = negative.outputs["Color"].links[0].to_node
    nt.nodes.remove(negative)                        # as Ctrl+X does: deleted, its input reconnected
    nt.links.new(tex.outputs["Color"], bw.inputs["Color"])
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    m = _map_chunk(out)
    assert m.value(ids.MAT_MAP_TILING) == 0x80
    assert tuple(m.value(ids.MAT_MAP_COL2)) == (0, 255, 0) and tuple(m.value(ids.MAT_MAP_COL1)) == (255, 0, 0)
    nt.nodes.remove(tint)
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    assert _map_chunk(out).value(ids.MAT_MAP_TILING) == 0


def test_an_invert_node_added_in_blender_is_written_as_the_negative(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0)))
    nt, tex, bsdf = _nodes()
    inv = nt.nodes.new("ShaderNodeInvert")                   # no label: as a user adds it
    nt.links.new(tex.outputs["Color"], inv.inputs["Color"])
    nt.links.new(inv.outputs["Color"], bsdf.inputs["Base Color"])
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    assert _map_chunk(out).value(ids.MAT_MAP_TILING) == 0x8


def _plane_render(tmp_path, flags) -> np.ndarray:
    """A Cycles render, from straight above, of a 2 x 2 plane whose UVs run from -1 to 2: the picture
    covers its middle third; the material's colour is red."""
    shutil.copy(ASSETS / "texture.png", tmp_path / "texture.png")
    pts = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    uv = np.array([[-1, -1], [2, -1], [2, 2], [-1, 2]], np.float32)
    f = tmp_path / f"plane{flags}.3ds"
    f.write_bytes(build([obj("Plane", trimesh(pts, [[0, 1, 2], [0, 2, 3]], uv=uv, materials=[("Mat", [0, 1])]))],
                        materials=[material("Mat", diffuse=DIFFUSE, extra=[_map(flags)])]))
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(f))
    return render_plane_from_above(tmp_path, f.stem)


def test_a_decal_renders_the_material_colour_around_the_picture(clean, tmp_path):
    decal, clipped = _plane_render(tmp_path, 0x11), _plane_render(tmp_path, 0x10)
    corner = (slice(1, 8), slice(1, 8))                 # outside the picture's tile
    middle = (slice(12, 18), slice(12, 18))             # inside it
    r, g, b = decal[corner].reshape(-1, 3).mean(0)
    assert r > 0.2 and r > 10 * max(g, b)               # the red material colour shows around the decal
    assert clipped[corner].reshape(-1, 3).mean(0).max() < 0.1 * r     # no decal: black outside the picture
    np.testing.assert_allclose(decal[middle], clipped[middle], atol=0.05)    # the picture itself, the same
