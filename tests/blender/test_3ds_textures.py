"""3DS texture maps in Blender: tiling, mirror, alpha source and the placement about the centre."""
import math
import shutil

import numpy as np
import pytest

import bpy
from mathutils import Euler, Matrix, Vector

from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.formats.studio3ds.read import read
from tests.codec.fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, build, material, obj, trimesh


def _map(flags, uoff=0.0, voff=0.0, ang=0.0, scale=(1.0, 1.0), name="texture.png"):
    m = Chunk(0xA200)
    m.add(ids.INT_PERCENT, 100)
    m.add(ids.MAT_MAPNAME, name)
    m.add(ids.MAT_MAP_TILING, flags)
    m.add(ids.MAT_MAP_USCALE, scale[0])
    m.add(ids.MAT_MAP_VSCALE, scale[1])
    m.add(ids.MAT_MAP_UOFFSET, uoff)
    m.add(ids.MAT_MAP_VOFFSET, voff)
    m.add(ids.MAT_MAP_ANG, ang)
    return m


def _file(tmp_path, flags, **kw):
    shutil.copy(ASSETS / "texture.png", tmp_path / "texture.png")
    f = tmp_path / "mapped.3ds"
    f.write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Mat", range(12))]))],
                        materials=[material("Mat", extra=[_map(flags, **kw)])]))
    return f


def _tex():
    nt = bpy.data.materials["Mat"].node_tree
    return nt, next(n for n in nt.nodes if n.type == "TEX_IMAGE")


@pytest.mark.parametrize("flags,extension",
                         [(0, "REPEAT"), (0x10, "CLIP"), (0x11, "CLIP"), (0x1, "REPEAT"), (0x2, "MIRROR")])
def test_tiling_flags_set_the_image_extension(clean, tmp_path, flags, extension):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, flags)))
    assert _tex()[1].extension == extension


def test_alpha_source_feeds_the_pictures_alpha(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0x40)))
    nt, tex = _tex()
    bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
    assert bsdf.inputs["Alpha"].links and bsdf.inputs["Alpha"].links[0].from_socket == tex.outputs["Alpha"]
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0)))
    nt, tex = _tex()
    assert not next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED").inputs["Alpha"].links


def test_the_picture_turns_and_moves_about_its_centre(clean, tmp_path):
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0, uoff=0.25, voff=0.1, ang=30.0, scale=(2.0, 2.0))))
    nt, tex = _tex()
    mapping = tex.inputs["Vector"].links[0].from_node
    m = Matrix.LocRotScale(Vector(mapping.inputs["Location"].default_value),
                           Euler(mapping.inputs["Rotation"].default_value),
                           Vector(mapping.inputs["Scale"].default_value))      # the node's POINT mapping
    # the UV where the picture's centre now lies: moved by +U offset and -V offset (3D Studio, assimp)
    centre_uv = Vector((0.5 + 0.25, 0.5 - 0.1, 0.0))
    np.testing.assert_allclose((m @ centre_uv)[:2], (0.5, 0.5), atol=1e-6)
    # a step along U from there reaches the picture turned by +30 degrees (counter-clockwise)
    step = (m @ (centre_uv + Vector((0.1, 0.0, 0.0)))) - (m @ centre_uv)
    assert math.degrees(math.atan2(step.y, step.x)) == pytest.approx(-30.0, abs=1e-4)


# One field at a time, what 3D Studio's map parameters mean (3ds Max's own .3ds importer and assimp read
# them so; test_assets/3ds/MAP_PARAMETERS.md): (field, value, a point of the picture, the surface UV
# where it must appear). Tiling and angle work about the picture's centre (0.5, 0.5).
ONE_FIELD = [
    ("uoff", 0.25, (0.5, 0.5), (0.75, 0.5)),          # a U offset moves the picture toward +U
    ("voff", 0.1, (0.5, 0.5), (0.5, 0.4)),             # a V offset moves it toward -V
    ("ang", 90.0, (1.0, 0.5), (0.5, 1.0)),             # the angle turns it counter-clockwise
    ("uscale", 2.0, (1.0, 0.5), (0.75, 0.5)),          # U scale 2: two pictures across one UV unit
    ("vscale", 4.0, (0.5, 1.0), (0.5, 0.625)),         # V scale 4: four
]


@pytest.mark.parametrize("field,value,picture,uv", ONE_FIELD, ids=[f[0] for f in ONE_FIELD])
def test_each_map_parameter_moves_the_picture_as_3d_studio_does(clean, tmp_path, field, value, picture, uv):
    kw = {"scale": (value, 1.0) if field == "uscale" else (1.0, value) if field == "vscale" else (1.0, 1.0)}
    if field in ("uoff", "voff", "ang"):
        kw[field] = value
    bpy.ops.import_scene.studio3ds(filepath=str(_file(tmp_path, 0, **kw)))
    mapping = _tex()[1].inputs["Vector"].links[0].from_node
    assert mapping.vector_type == "POINT"
    # Blender's Point mapping: the picture coordinate looked up at a surface UV is Location + Rotation(Scale * UV)
    m = Matrix.LocRotScale(Vector(mapping.inputs["Location"].default_value),
                           Euler(mapping.inputs["Rotation"].default_value),
                           Vector(mapping.inputs["Scale"].default_value))
    np.testing.assert_allclose((m @ Vector((*uv, 0.0)))[:2], picture, atol=1e-6)


def test_flags_and_placement_are_written_back_and_follow_edits(clean, tmp_path):
    src = _file(tmp_path, 0x11, uoff=0.25, voff=0.1, ang=30.0, scale=(2.0, 3.0))
    bpy.ops.import_scene.studio3ds(filepath=str(src))
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))

    def map_chunk(path):
        return read(path, None, Warnings()).editor().find(ids.MAT_ENTRY).find(0xA200)
    a, b = map_chunk(src), map_chunk(out)
    for cid in (ids.MAT_MAP_TILING, ids.MAT_MAP_USCALE, ids.MAT_MAP_VSCALE, ids.MAT_MAP_UOFFSET,
                ids.MAT_MAP_VOFFSET, ids.MAT_MAP_ANG):
        assert b.value(cid) == pytest.approx(a.value(cid), abs=1e-5), hex(cid)
    _tex()[1].extension = "MIRROR"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    assert map_chunk(out).value(ids.MAT_MAP_TILING) == 0x2 | 0x1        # mirrored, still a decal (its Mix node)
    nt = _tex()[0]
    nt.nodes.remove(next(n for n in nt.nodes if n.label == "Decal"))
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    assert map_chunk(out).value(ids.MAT_MAP_TILING) == 0x2


def _exported_map_names(path):
    ed = read(path, None, Warnings()).editor()
    return sorted({m.value(ids.MAT_MAPNAME) for mat in ed.find_all(ids.MAT_ENTRY) for m in mat.children
                   if m.cid in ids.MAPS})


def test_path_modes_name_and_copy_the_pictures(clean, tmp_path):
    src = tmp_path / "src"
    (src / "maps").mkdir(parents=True)
    shutil.copy(ASSETS / "mp5_sil.3ds", src / "mp5_sil.3ds")
    shutil.copy(ASSETS / "mp5sil.bmp", src / "maps" / "mp5 silencer.bmp")    # found below, by its 8.3 stem
    bpy.ops.import_scene.studio3ds(filepath=str(src / "mp5_sil.3ds"))
    out = tmp_path / "out"
    out.mkdir()
    f = out / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(f))                               # default: the file name
    assert _exported_map_names(f) == ["mp5 silencer.bmp"]
    bpy.ops.export_scene.studio3ds(filepath=str(f), path_mode="RELATIVE")
    assert _exported_map_names(f) == ["../src/maps/mp5 silencer.bmp".replace("/", __import__("os").sep)]
    bpy.ops.export_scene.studio3ds(filepath=str(f), path_mode="ABSOLUTE")
    assert _exported_map_names(f) == [str(src / "maps" / "mp5 silencer.bmp")]
    bpy.ops.export_scene.studio3ds(filepath=str(src / "back.3ds"), path_mode="AUTO")     # below: relative
    assert _exported_map_names(src / "back.3ds") == [__import__("os").path.join("maps", "mp5 silencer.bmp")]
    bpy.ops.export_scene.studio3ds(filepath=str(f), path_mode="COPY", texture_names_83=True)
    assert _exported_map_names(f) == ["MP5SILEN.BMP"]
    assert (out / "MP5SILEN.BMP").read_bytes() == (ASSETS / "mp5sil.bmp").read_bytes()
