"""Unreal 1 as the engine sees it, through the real operators in real Blender.

Placement is checked against the engine's matrices written out by hand
(tests/codec/unreal_fixtures.py), skins against the PCX palette indices and a
Cycles render, round trips against the files and script the test wrote.
"""
import re
import struct

import numpy as np
import pytest

import bpy
from tests.blender.helpers import evaluated_positions
from tests.codec.unreal_fixtures import (PITCH, ROLL, TETRA, TETRA_FACES, YAW, a_file, d_file, masked_pcx, tetra_pair,
                                         tri, write_set)


def _import(path, **kw):
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(path), **kw) == {"FINISHED"}
    return bpy.context.view_layer.objects.active or next(o for o in bpy.context.scene.objects if o.type == "MESH")


def _export(path, **kw):
    assert bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(path), **kw) == {"FINISHED"}


def _exec_lines(path, *kinds):
    """The script's #exec lines of the given kinds ("MESH ORIGIN", ...), in order, line endings aside."""
    return [ln.strip() for ln in path.read_text().splitlines()
            if any(re.match(rf"#exec\s+{k}\b", ln.strip(), re.I) for k in kinds)]


# -- 1. placement -------------------------------------------------------------------------
WEDGE = [(0, 0, 0), (16, 0, 0), (0, 40, 0), (0, 0, 24)]     # raw: tall along +Y, nose along +Z, side +X
UT_SCRIPT = ("#exec MESH IMPORT MESH=w ANIVFILE=w_a.3d DATAFILE=w_d.3d X=0 Y=0 Z=0 UNMIRROR=1\n"
             "#exec MESH ORIGIN MESH=w X=0 Y=0 Z=0 YAW=64 ROLL=-64\n"
             "#exec MESHMAP NEW MESHMAP=w MESH=w\n"
             "#exec MESHMAP SCALE MESHMAP=w X=0.1 Y=0.1 Z=0.2\n")


def test_ut_model_arrives_upright_facing_x_and_goes_back_the_same(clean, tmp_path):
    d = d_file([tri(f, uv=((1, 2), (3, 4), (5, 6))) for f in TETRA_FACES], 4)
    a = a_file([WEDGE])
    ob = _import(write_set(tmp_path / "in", "w", d, a, UT_SCRIPT))
    world = evaluated_positions(ob, world=True)
    # engine: UNMIRROR negates raw X; roll -64 then yaw 64 take raw (x, y, z) to (z, -x, y); Blender (X, -Y, Z)
    np.testing.assert_allclose(world[2], [0, 0, 4], atol=1e-5)          # head: raw Y 40 * 0.1, up
    np.testing.assert_allclose(world[3], [4.8, 0, 0], atol=1e-5)        # nose: raw Z 24 * 0.2, forward +X
    np.testing.assert_allclose(world[1], [0, 1.6, 0], atol=1e-5)        # raw +X side: mirrored to Blender +Y
    _export(tmp_path / "out" / "w_d.3d")
    assert (tmp_path / "out" / "w_a.3d").read_bytes() == a
    assert (tmp_path / "out" / "w_d.3d").read_bytes() == d
    assert _exec_lines(tmp_path / "out" / "w.uc", "MESH ORIGIN", "MESHMAP SCALE") == \
        ["#exec MESH ORIGIN MESH=w X=0 Y=0 Z=0 YAW=64 ROLL=-64", "#exec MESHMAP SCALE MESHMAP=w X=0.1 Y=0.1 Z=0.2"]
    assert "UNMIRROR=1" in _exec_lines(tmp_path / "out" / "w.uc", "MESH IMPORT")[0]


@pytest.mark.parametrize("angle", [64, -64])
@pytest.mark.parametrize("which", ["YAW", "PITCH", "ROLL"])
def test_each_angle_alone_places_as_the_engine_matrix(clean, tmp_path, which, angle):
    d, a = tetra_pair(frames=1)
    script = ("#exec MESH IMPORT MESH=r ANIVFILE=r_a.3d DATAFILE=r_d.3d X=0 Y=0 Z=0\n"
              f"#exec MESH ORIGIN MESH=r X=0 Y=0 Z=0 {which}={angle}\n")
    ob = _import(write_set(tmp_path / "in", "r", d, a, script))
    rot = np.array({"YAW": YAW, "PITCH": PITCH, "ROLL": ROLL}[which][angle], float)
    unit = np.diag([1.0, -1.0, 1.0])                       # Unreal -> Blender axes
    # vertices 1, 2, 3 are raw (8, 0, 0), (0, 8, 0), (0, 0, 4): one unit along each engine axis
    want = (unit @ rot @ np.eye(3)).T
    np.testing.assert_allclose(evaluated_positions(ob, world=True)[1:], want, atol=1e-6)
    _export(tmp_path / "out" / "r_d.3d")
    want_line = f"#exec MESH ORIGIN MESH=r X=0 Y=0 Z=0 {which}={angle}"
    assert _exec_lines(tmp_path / "out" / "r.uc", "MESH ORIGIN") == [want_line]
    assert (tmp_path / "out" / "r_a.3d").read_bytes() == a


def test_turned_object_exports_the_rotation_that_gives_the_same_raw_vertices(clean, tmp_path):
    d, a = tetra_pair(frames=1)
    ob = _import(write_set(tmp_path / "in", "t", d, a))
    ob.rotation_euler = (0.0, 0.0, np.pi / 2)              # turned in Blender: the engine is told, raw stays
    _export(tmp_path / "out" / "t_d.3d")
    assert (tmp_path / "out" / "t_a.3d").read_bytes() == a
    origin = _exec_lines(tmp_path / "out" / "t.uc", "MESH ORIGIN")[0]
    assert origin == "#exec MESH ORIGIN MESH=t X=0 Y=0 Z=0 YAW=-64"       # Blender +Z turn = engine -yaw (Y mirrored)
    placed = np.array(ob.matrix_world)
    bpy.ops.wm.read_homefile(use_empty=True)
    again = _import(tmp_path / "out" / "t_d.3d")
    np.testing.assert_allclose(np.array(again.matrix_world), placed, atol=1e-6)


# -- 2. several objects, one mesh --------------------------------------------------------------
def _scene_of_two(clean, tmp_path):
    """A: an imported tetrahedron (masked skin 1, a weapon triangle) whose vertex 3 rises per frame;
    B: a cube made in Blender, with its own material, sliding +X from frame 0 to 2."""
    tris = [tri(f, tex=1, type_=3) for f in TETRA_FACES] + [tri((3, 1, 0), type_=8, tex=1)]
    anim = [[(x, y, z + (4 * k if i == 3 else 0)) for i, (x, y, z) in enumerate(TETRA)] for k in range(3)]
    a_ob = _import(write_set(tmp_path / "in", "a", d_file(tris, 4), a_file(anim)))
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(4.0, 0.0, 0.0))
    b_ob = bpy.context.active_object
    b_ob.data.materials.append(bpy.data.materials.new("Paint"))
    b_ob.keyframe_insert("location", frame=0)
    b_ob.location.x = 6.0
    b_ob.keyframe_insert("location", frame=2)
    for fc in _fcurves(b_ob):
        for k in fc.keyframe_points:
            k.interpolation = "LINEAR"
    clean.scene.frame_start, clean.scene.frame_end = 0, 2
    return a_ob, b_ob


def _fcurves(ob):
    from tests.blender.test_unreal import _fcurves as f
    return f(ob)


def _raw(path):
    data = path.read_bytes()
    count, size = struct.unpack_from("<HH", data)
    w = np.frombuffer(data, "<i4", count * size // 4, 4).reshape(count, -1)
    return np.stack([(w << 21) >> 21, (w << 10) >> 21, w >> 22], axis=-1)


def _triangles(path):
    data = path.read_bytes()
    n = struct.unpack_from("<H", data)[0]
    return np.frombuffer(data, np.uint8, n * 16, 48).reshape(n, 16)


def test_every_object_merges_into_one_mesh_with_its_animation(clean, tmp_path):
    a_ob, b_ob = _scene_of_two(clean, tmp_path)
    a_ob.select_set(False)
    clean.view_layer.objects.active = b_ob                 # the active object does not matter when merging
    _export(tmp_path / "out" / "m_d.3d")
    recs = _triangles(tmp_path / "out" / "m_d.3d")
    assert struct.unpack_from("<HH", (tmp_path / "out" / "m_d.3d").read_bytes()) == (5 + 12, 4 + 8)
    types = recs[:, 6].tolist()
    assert types[:5] == [3, 3, 3, 3, 8] and set(types[5:]) == {1}       # kept types; B two-sided
    assert recs[4, :6].view("<u2").tolist() == [3, 1, 0]                # weapon triangle, corners as read
    assert recs[:5, 14].tolist() == [1] * 5 and set(recs[5:, 14].tolist()) == {0}   # Paint: a free skin number
    raw = _raw(tmp_path / "out" / "m_a.3d")
    assert raw.shape == (3, 12, 3)
    assert raw[:, 3, 2].tolist() == [4, 8, 12]                          # A's own frames
    # B's vertices, in A's space: x from 4 +- 0.5 at frame 0 to 6 +- 0.5 at frame 2 (raw = x * 8)
    assert sorted(set(raw[0, 4:, 0].tolist())) == [28, 36]
    assert sorted(set(raw[1, 4:, 0].tolist())) == [36, 44]
    assert sorted(set(raw[2, 4:, 0].tolist())) == [44, 52]
    lines = _exec_lines(tmp_path / "out" / "m.uc", "MESHMAP SETTEXTURE")
    assert lines == ["#exec MESHMAP SETTEXTURE MESHMAP=m NUM=0 TEXTURE=Paint",
                     "#exec MESHMAP SETTEXTURE MESHMAP=m NUM=1 TEXTURE=skin1"]


def test_limits_and_active_object_only(clean, tmp_path):
    a_ob, b_ob = _scene_of_two(clean, tmp_path)
    clean.view_layer.objects.active = a_ob
    _export(tmp_path / "act" / "m_d.3d", use_active_object=True)
    assert struct.unpack_from("<HH", (tmp_path / "act" / "m_d.3d").read_bytes()) == (5, 4)
    for ob in (a_ob, b_ob):
        ob.select_set(ob is b_ob)
    _export(tmp_path / "sel" / "m_d.3d", use_selection=True)
    assert struct.unpack_from("<HH", (tmp_path / "sel" / "m_d.3d").read_bytes()) == (12, 8)


# -- 3. skins ------------------------------------------------------------------------------------
def _skin_set(tmp_path, flags: str, type_: int = 0):
    tris = [tri(f, tex=0, type_=type_, uv=((0, 0), (255, 0), (0, 255))) for f in TETRA_FACES]
    script = ("#exec MESH IMPORT MESH=s ANIVFILE=s_a.3d DATAFILE=s_d.3d X=0 Y=0 Z=0\n"
              f"#exec TEXTURE IMPORT NAME=Skin FILE=skin.pcx GROUP=Skins {flags}\n"
              "#exec MESHMAP SETTEXTURE MESHMAP=s NUM=0 TEXTURE=Skin\n")
    path = write_set(tmp_path / "in", "s", d_file(tris, 4), a_file([TETRA]), script)
    (tmp_path / "in" / "skin.pcx").write_bytes(masked_pcx())
    return path, d_file(tris, 4)


def _render_alpha(mat) -> np.ndarray:
    """Cycles, looking straight down at a 2 x 2 plane with `mat`, on a transparent film: alpha per pixel column."""
    sc = bpy.context.scene
    bpy.ops.mesh.primitive_plane_add(size=2)
    plane = bpy.context.active_object
    plane.data.materials.append(mat)
    for ob in sc.objects:
        ob.hide_render = ob is not plane
    cam = bpy.data.objects.new("cam", bpy.data.cameras.new("cam"))
    sc.collection.objects.link(cam)
    sc.camera, cam.data.type, cam.data.ortho_scale, cam.location = cam, "ORTHO", 2.0, (0, 0, 5)
    sc.render.engine = "CYCLES"
    sc.cycles.device, sc.cycles.samples, sc.cycles.filter_width = "CPU", 16, 0.01
    sc.render.resolution_x = sc.render.resolution_y = 4
    sc.render.resolution_percentage = 100
    sc.render.film_transparent = True
    sc.render.image_settings.file_format = "PNG"
    sc.render.image_settings.color_mode = "RGBA"
    sc.render.filepath = str(bpy.app.tempdir) + "/mask.png"
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(sc.render.filepath, check_existing=False)
    w, h = img.size
    return np.array(img.pixels[:]).reshape(h, w, 4)[..., 3].mean(axis=0)


@pytest.mark.parametrize("flags, type_", [("FLAGS=2", 0), ("MASK=1", 0), ("FLAGS=0", 3)])
def test_masked_skin_has_holes_where_index_zero_is(clean, tmp_path, flags, type_):
    path, d = _skin_set(tmp_path, flags, type_)
    ob = _import(path)
    mat = ob.material_slots[0].material
    tex = next(n for n in mat.node_tree.nodes if n.type == "TEX_IMAGE")
    px = np.array(tex.image.pixels[:]).reshape(1, 2, 4)
    assert px[0, :, 3].tolist() == [0.0, 1.0]               # index 0 transparent although its colour is white
    bsdf = next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")
    cut = bsdf.inputs["Alpha"].links[0].from_node
    assert (cut.type, cut.operation) == ("MATH", "GREATER_THAN")
    assert cut.inputs[0].links[0].from_socket == tex.outputs["Alpha"]
    assert mat.surface_render_method == "DITHERED"
    # both kept, both written back
    _export(tmp_path / "out" / "s_d.3d")
    assert (tmp_path / "out" / "s_d.3d").read_bytes() == d
    line = _exec_lines(tmp_path / "out" / "s.uc", "TEXTURE IMPORT")[0]
    assert line == f"#exec TEXTURE IMPORT NAME=Skin FILE=skin.pcx GROUP=Skins {flags}"
    alpha = _render_alpha(mat)
    np.testing.assert_allclose(alpha, [0, 0, 1, 1], atol=0.02)          # left texel cut out, right kept


def test_translucent_adds_and_modulated_multiplies(clean, tmp_path):
    path, _ = _skin_set(tmp_path, "FLAGS=4")
    mat = _import(path).material_slots[0].material
    out = next(n for n in mat.node_tree.nodes if n.type == "OUTPUT_MATERIAL")
    add = out.inputs["Surface"].links[0].from_node
    assert add.type == "ADD_SHADER"
    assert {ln.from_node.type for s in add.inputs for ln in s.links} == {"BSDF_TRANSPARENT", "BSDF_PRINCIPLED"}
    assert mat.surface_render_method == "BLENDED"
    bpy.ops.wm.read_homefile(use_empty=True)
    path, _ = _skin_set(tmp_path / "mod", "FLAGS=64")
    mat = _import(path).material_slots[0].material
    out = next(n for n in mat.node_tree.nodes if n.type == "OUTPUT_MATERIAL")
    clear = out.inputs["Surface"].links[0].from_node
    assert clear.type == "BSDF_TRANSPARENT"
    assert clear.inputs["Color"].links[0].from_node.type == "TEX_IMAGE"
    assert mat.surface_render_method == "BLENDED"
    _export(tmp_path / "mod" / "out" / "s_d.3d")
    assert _exec_lines(tmp_path / "mod" / "out" / "s.uc", "TEXTURE IMPORT") == \
        ["#exec TEXTURE IMPORT NAME=Skin FILE=skin.pcx GROUP=Skins FLAGS=64"]


# -- 4. the source kept --------------------------------------------------------------------------
DX_SCRIPT = r"""#exec MESH IMPORT MESH=dx ANIVFILE=MODELS\dx_a.3d DATAFILE=MODELS\dx_d.3d X=0 Y=0 Z=0 UNMIRROR=1
#exec MESH ORIGIN MESH=dx X=-12 Y=3 Z=7 YAW=64 ROLL=-64
#exec MESH SEQUENCE MESH=dx SEQ=All STARTFRAME=0 NUMFRAMES=3
#exec MESH SEQUENCE MESH=dx SEQ=Walk STARTFRAME=1 NUMFRAMES=2 RATE=15
#exec MESHMAP NEW MESHMAP=dx MESH=dx
#exec MESHMAP SCALE MESHMAP=dx X=0.00390625 Y=0.00390625 Z=0.00390625
#exec TEXTURE IMPORT NAME=JSkin FILE=Textures\skin.pcx GROUP=Skins FLAGS=2 LODSET=2
#exec MESHMAP SETTEXTURE MESHMAP=dx NUM=0 TEXTURE=JSkin
"""


def test_deus_ex_mesh_comes_back_as_it_was(clean, tmp_path):
    tris = [tri(f, tex=0, uv=((10, 20), (30, 40), (50, 60))) for f in TETRA_FACES]
    frames = [[(300 + 7 * k, -512, 700), (1000, 0, -3 * k), (0, 2000, -7), (0, 0, 900 + k)] for k in range(3)]
    d, a = d_file(tris, 4), a_file(frames, deus_ex=True)
    write_set(tmp_path / "Pkg" / "Models", "dx", d, a, DX_SCRIPT, uc_folder=tmp_path / "Pkg" / "Classes")
    (tmp_path / "Pkg" / "Textures").mkdir()
    (tmp_path / "Pkg" / "Textures" / "skin.pcx").write_bytes(masked_pcx())
    _import(tmp_path / "Pkg" / "Classes" / "dx.uc")
    _export(tmp_path / "Out" / "Classes" / "dx.uc")                     # every option at its default
    assert (tmp_path / "Out" / "Models" / "dx_a.3d").read_bytes() == a    # 16-bit, same raw vertices
    assert (tmp_path / "Out" / "Models" / "dx_d.3d").read_bytes() == d    # same triangles and UVs
    kinds = ("MESH IMPORT", "MESH ORIGIN", "MESH SEQUENCE", "MESHMAP SCALE", "TEXTURE IMPORT", "MESHMAP SETTEXTURE")
    assert _exec_lines(tmp_path / "Out" / "Classes" / "dx.uc", *kinds) == \
        [ln for ln in DX_SCRIPT.splitlines() if "MESHMAP NEW" not in ln]


def test_ut_packing_and_scale_come_back_within_one_raw_unit(clean, tmp_path):
    rng = np.random.default_rng(3)
    frames = [[tuple(int(v) for v in row) for row in rng.integers([-1024, -1024, -512], [1024, 1024, 512], (4, 3))]
              for _ in range(4)]
    d, a = tetra_pair(frames=1)[0], a_file(frames)
    ob = _import(write_set(tmp_path / "in", "ut", d, a, UT_SCRIPT.replace("=w", "=ut").replace("w_", "ut_")))
    ob.data.shape_keys.key_blocks[2].data[1].co.x += 0.01              # a nudge smaller than half a raw unit
    _export(tmp_path / "out" / "ut_d.3d")
    got = _raw(tmp_path / "out" / "ut_a.3d")
    want = np.array(frames)
    assert np.abs(got - want).max() <= 1
    assert (tmp_path / "out" / "ut_d.3d").read_bytes() == d
