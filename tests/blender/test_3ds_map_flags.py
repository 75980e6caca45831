"""3DS map tiling ("Tile", "Decal", "Both"), ignore alpha and the map amount in the material nodes,
in a Cycles render, and back in the file as they were read or as the nodes were edited."""
import struct
import zlib

import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.read import read
from tests.blender.helpers import render_plane_from_above
from tests.codec.fixtures_3ds import CUBE_POINTS, CUBE_TRIS, build, material, obj, trimesh
from tests.blender.test_3ds_textures import _map

DIFFUSE = (255, 0, 0)
GREEN, CLEAR_BLUE = (0, 255, 0, 255), (0, 0, 255, 0)


def _png(path, rows) -> None:
    """An RGBA PNG from rows of (r, g, b, a) pixels, top row first."""
    raw = b"".join(b"\0" + bytes(v for px in row for v in px) for row in rows)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    head = struct.pack(">IIBBBBB", len(rows[0]), len(rows), 8, 6, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw))
                     + chunk(b"IEND", b""))


def _half_clear(folder) -> None:
    """half.png, 8 x 8: its left half opaque green, its right half blue with alpha 0."""
    _png(folder / "half.png", [[GREEN] * 4 + [CLEAR_BLUE] * 4 for _ in range(8)])


def _map_with(flags, percent=100, name="half.png"):
    m = _map(flags, name=name)
    m.find(ids.INT_PERCENT).data = percent
    return m


def _file(tmp_path, maps_by_material, name="flags.3ds", plane=False):
    """A box (or the render plane) with one material per entry of `maps_by_material`: {material: [maps]}."""
    _half_clear(tmp_path)
    mats = [material(n, diffuse=DIFFUSE, extra=maps) for n, maps in maps_by_material.items()]
    if plane:           # 2 x 2, its UVs from -1 to 2: the picture's tile in the middle third
        pts = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
        uv = np.array([[-1, -1], [2, -1], [2, 2], [-1, 2]], np.float32)
        mesh = trimesh(pts, [[0, 1, 2], [0, 2, 3]], uv=uv, materials=[(next(iter(maps_by_material)), [0, 1])])
    else:
        n = len(mats)
        mesh = trimesh(CUBE_POINTS, CUBE_TRIS, materials=[(m, range(k * 12 // n, (k + 1) * 12 // n))
                                                            for k, m in enumerate(maps_by_material)])
    f = tmp_path / name
    f.write_bytes(build([obj("Box", mesh)], materials=mats))
    return f


def _nodes(mat="Mat"):
    nt = bpy.data.materials[mat].node_tree
    tex = next(n for n in nt.nodes if n.type == "TEX_IMAGE")
    return nt, tex, next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")


def _feeds(socket):
    assert socket.links, socket.name
    return socket.links[0].from_node


def _export(tmp_path):
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    ed = read(out, None, Warnings()).editor()
    return {m.value(ids.MAT_NAME): m for m in ed.children if m.cid == ids.MAT_ENTRY}


def _flags(tmp_path, mat="Mat"):
    return _export(tmp_path)[mat].find(0xA200).value(ids.MAT_MAP_TILING)


# -- tiling ----------------------------------------------------------------------------------------
def test_both_tiles_the_picture_and_lays_it_over_the_base_colour(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0x1)]})))
    nt, tex, bsdf = _nodes()
    assert tex.extension == "REPEAT"
    decal = _feeds(bsdf.inputs["Base Color"])
    assert decal.label == "Decal" and decal.inputs["Factor"].links[0].from_socket == tex.outputs["Alpha"]
    np.testing.assert_allclose(decal.inputs["A"].default_value[:3], np.array(DIFFUSE) / 255, atol=1e-6)


@pytest.mark.parametrize("flags", [0x1, 0x11, 0x10, 0x3, 0x100, 0x101, 0x111, 0x140, 0x1 | 0x20 | 0x100])
def test_map_flags_come_back_as_read(clean, tmp_path, flags):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(flags)]})))
    assert _flags(tmp_path) == flags


def test_the_extension_chosen_in_blender_picks_decal_or_both(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0x1)]})))
    nt, tex, bsdf = _nodes()
    tex.extension = "CLIP"
    assert _flags(tmp_path) == 0x11
    tex.extension = "REPEAT"
    assert _flags(tmp_path) == 0x1
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0x11)]})))
    _nodes()[1].extension = "REPEAT"
    assert _flags(tmp_path) == 0x1


# -- ignore alpha ----------------------------------------------------------------------------------
def test_ignore_alpha_leaves_the_pictures_alpha_unused(clean, tmp_path):
    f = _file(tmp_path, {"Mat": [_map_with(0x140)], "Keep": [_map_with(0x40)]})
    bpy.ops.import_scene.studio3ds(filepath=str(f))
    nt, tex, bsdf = _nodes()
    assert tex.image.alpha_mode == "NONE" and not bsdf.inputs["Alpha"].links
    # the same file in a map that uses its alpha: its own image, alpha on, linked
    nt, keep, bsdf = _nodes("Keep")
    assert keep.image != tex.image and keep.image.alpha_mode != "NONE"
    assert bsdf.inputs["Alpha"].links[0].from_socket == keep.outputs["Alpha"]
    assert bpy.path.abspath(keep.image.filepath) == bpy.path.abspath(tex.image.filepath)
    written = _export(tmp_path)
    assert [written[m].find(0xA200).value(ids.MAT_MAP_TILING) for m in ("Mat", "Keep")] == [0x140, 0x40]
    assert written["Mat"].find(0xA200).value(ids.MAT_MAPNAME) == written["Keep"].find(0xA200).value(ids.MAT_MAPNAME)


def test_an_opacity_map_that_ignores_alpha_uses_the_pictures_colour(clean, tmp_path):
    opacity = _map_with(0x140)
    opacity.cid = 0xA210
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [opacity]})))
    nt, tex, bsdf = _nodes()
    assert bsdf.inputs["Alpha"].links[0].from_socket == tex.outputs["Color"]


def test_the_images_alpha_mode_set_in_blender_is_written(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0x101)]})))
    nt, tex, bsdf = _nodes()
    tex.image.alpha_mode = "STRAIGHT"
    assert _flags(tmp_path) == 0x1
    tex.image.alpha_mode = "NONE"
    assert _flags(tmp_path) == 0x101


# -- amount ----------------------------------------------------------------------------------------
def test_a_half_amount_mixes_the_base_colour_and_the_picture(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0, percent=50)]})))
    nt, tex, bsdf = _nodes()
    amount = _feeds(bsdf.inputs["Base Color"])
    assert amount.type == "MIX" and amount.label == "Amount" and amount.blend_type == "MIX"
    assert amount.inputs["Factor"].default_value == pytest.approx(0.5)
    np.testing.assert_allclose(amount.inputs["A"].default_value[:3], np.array(DIFFUSE) / 255, atol=1e-6)
    assert amount.inputs["B"].links[0].from_socket == tex.outputs["Color"]
    assert _export(tmp_path)["Mat"].find(0xA200).value(ids.INT_PERCENT) == 50
    amount.inputs["Factor"].default_value = 0.25
    assert _export(tmp_path)["Mat"].find(0xA200).value(ids.INT_PERCENT) == 25
    nt.nodes.remove(amount)                       # the picture straight into the BSDF: all of it
    nt.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    assert _export(tmp_path)["Mat"].find(0xA200).value(ids.INT_PERCENT) == 100


def test_a_full_amount_needs_no_mix_and_a_decal_comes_before_the_amount(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0)]})))
    nt, tex, bsdf = _nodes()
    assert _feeds(bsdf.inputs["Base Color"]) == tex
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0x11, percent=40)]})))
    nt, tex, bsdf = _nodes()
    amount = _feeds(bsdf.inputs["Base Color"])
    assert amount.label == "Amount" and _feeds(amount.inputs["B"]).label == "Decal"
    written = _export(tmp_path)["Mat"].find(0xA200)
    assert (written.value(ids.INT_PERCENT), written.value(ids.MAT_MAP_TILING)) == (40, 0x11)


def test_second_map_and_bump_amounts_are_read_from_their_nodes(clean, tmp_path):
    second, bump = _map_with(0, percent=70), _map_with(0, percent=30)
    second.cid, bump.cid = 0xA33A, 0xA230
    # the first map at 100%: the Amount Mix it reaches (through A) is the second map's, not its own
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [_map_with(0), second, bump]})))
    nt = bpy.data.materials["Mat"].node_tree
    over = next(n for n in nt.nodes if n.label == "Amount" and n.inputs["A"].links)
    over.inputs["Factor"].default_value = 0.2
    next(n for n in nt.nodes if n.type == "BUMP").inputs["Strength"].default_value = 0.9
    written = _export(tmp_path)["Mat"]
    assert [written.find(cid).value(ids.INT_PERCENT) for cid in (0xA200, 0xA33A, 0xA230)] == [100, 20, 90]


@pytest.mark.parametrize("cid,socket", [(0xA204, "Specular IOR Level"), (0xA210, "Alpha"),
                                        (0xA33D, "Emission Color")])
def test_other_maps_below_100_percent_mix_over_the_inputs_own_value(clean, tmp_path, cid, socket):
    m = _map_with(0, percent=40)
    m.cid = cid
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, {"Mat": [m]})))
    nt, tex, bsdf = _nodes()
    amount = _feeds(bsdf.inputs[socket])
    assert amount.label == "Amount" and amount.inputs["Factor"].default_value == pytest.approx(0.4)
    np.testing.assert_allclose(np.ravel(amount.inputs["A"].default_value)[:3],
                               np.ravel(bsdf.inputs[socket].default_value)[:3], atol=1e-6)
    assert amount.inputs["B"].links[0].from_node == tex
    amount.inputs["Factor"].default_value = 0.75
    assert _export(tmp_path)["Mat"].find(cid).value(ids.INT_PERCENT) == 75


# -- renders ---------------------------------------------------------------------------------------
def _engine(name: str) -> str:
    items = {e.identifier for e in bpy.types.RenderSettings.bl_rna.properties["engine"].enum_items}
    return name if name == "CYCLES" else "BLENDER_EEVEE_NEXT" if "BLENDER_EEVEE_NEXT" in items else "BLENDER_EEVEE"


def _render(tmp_path, engine, flags, percent=100) -> np.ndarray:
    """A 30 x 30 render from straight above the plane: 10 pixels a tile, the picture's own tile in
    the middle; in each tile its left half is opaque green, its right half clear blue."""
    f = _file(tmp_path, {"Mat": [_map_with(flags, percent)]}, name=f"plane{flags}_{percent}.3ds", plane=True)
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(f))
    return render_plane_from_above(tmp_path, f"{f.stem}_{engine}", _engine(engine))


def _mean(img, cols, rows=slice(2, 8)):
    return img[rows, cols].reshape(-1, 3).mean(0)


CORNER_LEFT, CORNER_RIGHT = slice(1, 3), slice(7, 9)         # a tile outside the picture's own
MIDDLE_LEFT, MIDDLE_RIGHT = slice(11, 13), slice(17, 19)     # the picture's own tile
MIDDLE_ROWS = slice(12, 18)


@pytest.mark.parametrize("engine", ["CYCLES", "EEVEE"])
def test_both_renders_the_base_colour_through_the_tiled_pictures_alpha(clean, tmp_path, engine):
    both, decal, ignored = (_render(tmp_path, engine, flags) for flags in (0x1, 0x11, 0x101))
    for img in (both, decal):
        r, g, b = _mean(img, MIDDLE_RIGHT, MIDDLE_ROWS)        # clear half of the picture: the material's red
        assert r > 0.2 and r > 10 * max(g, b)
        r, g, b = _mean(img, MIDDLE_LEFT, MIDDLE_ROWS)         # opaque half: the picture's green
        assert g > 0.2 and g > 10 * max(r, b)
    r, g, b = _mean(both, CORNER_LEFT)                         # "Both": the picture tiles
    assert g > 0.2 and g > 10 * max(r, b)
    r, g, b = _mean(both, CORNER_RIGHT)                        # and the base colour shows through its alpha
    assert r > 0.2 and r > 10 * max(g, b)
    r, g, b = _mean(decal, CORNER_LEFT)                        # "Decal": only the base colour outside
    assert r > 0.2 and r > 10 * max(g, b)
    r, g, b = _mean(ignored, CORNER_RIGHT)                     # alpha ignored: the picture's blue, no red
    assert b > 0.2 and b > 10 * max(r, g)


def test_half_amount_renders_half_base_colour_half_picture(clean, tmp_path):
    full, half = _render(tmp_path, "CYCLES", 0, 100), _render(tmp_path, "CYCLES", 0, 50)
    r, g, b = _mean(full, MIDDLE_LEFT, MIDDLE_ROWS)
    assert g > 0.2 and r < 0.05 * g
    r, g, b = _mean(half, MIDDLE_LEFT, MIDDLE_ROWS)
    assert g > 0.1 and r == pytest.approx(g, rel=0.1) and b < 0.05 * g
