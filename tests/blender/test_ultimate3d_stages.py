"""Ultimate 3D texture stages in real Blender: each stage's colour operation, on its UV set, changes the
rendered colour as Direct3D's does; cube maps are looked up by the reflection; export gives the stages back.

Expected colours come from the Direct3D operations' formulas (arg 1 the texture, arg 2 the colour so
far), applied to the pictures' own values: never from the nodes under test.
"""
import importlib

import numpy as np
import pytest

import bpy
from addon.codec.scene import COMBINES, Material, TextureSlot
from tests.blender.helpers import render_plane_from_above, tiny_render
from tests.codec import u3d_fixtures as fx

MODULATE, MODULATE2X, ADD, ADDSIGNED, SUBTRACT, BLENDTEXTUREALPHA, DOTPRODUCT3 = 4, 5, 7, 8, 10, 13, 24


def _parse(path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    return parse(path.read_bytes(), Warnings())


def _png(path, rgba_of_u, size=16, rgba_of_uv=None):
    """A size x size PNG whose pixel colour is rgba_of_u(u) (u = 0..1 across, the same up every column),
    or rgba_of_uv(u, v) (v = 0 at the bottom, as Blender's)."""
    img = bpy.data.images.new(path.stem, size, size, alpha=True)
    c = (np.arange(size) + 0.5) / size
    f = rgba_of_uv or (lambda u, v: rgba_of_u(u))
    rows = np.array([[f(u, v) for u in c] for v in c], np.float32)        # bottom row first
    img.pixels.foreach_set(rows.ravel())
    img.filepath_raw, img.file_format = str(path), "PNG"
    img.save()
    bpy.data.images.remove(img)


def _linear(srgb):
    srgb = np.asarray(srgb, np.float64)
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _byte_linear(v: float) -> float:
    """What a shader reads from an 8-bit sRGB PNG pixel written as v."""
    return float(_linear(round(v * 255) / 255))


def _import(path):
    assert bpy.ops.import_scene.ultimate3d(filepath=str(path)) == {"FINISHED"}


def test_a_lightmap_on_the_second_uv_set_darkens_the_quad_where_it_is_dark(clean, tmp_path):
    _png(tmp_path / "base.png", lambda u: (0.8, 0.8, 0.8, 1.0))
    _png(tmp_path / "light.png", lambda u: (0.1, 0.1, 0.1, 1.0) if u < 0.5 else (1.0, 1.0, 1.0, 1.0))
    (tmp_path / "lit.u3d").write_bytes(fx.stage_quad(
        ops=(MODULATE2X, MODULATE) + (1,) * 6, tcs=(0, 1) + (0,) * 6,
        textures=[fx.texture(["base.png"], 16, 16), fx.texture(["light.png"], 16, 16)]))
    _import(tmp_path / "lit.u3d")
    px = render_plane_from_above(tmp_path, "lit")
    # UV set 1 runs against Blender x: the lightmap's dark half (u < 0.5) lies on the +x side
    left, right = px[5:25, 2:12].mean(), px[5:25, 18:28].mean()
    assert left > 0.3, left
    ratio = _linear(right) / _linear(left)
    assert ratio == pytest.approx(_byte_linear(0.1), rel=0.15), (left, right)


# (colour op, the stage texture's sRGB value and alpha, Direct3D's result from below d and texture t, a)
OPS = {
    "MODULATE": (MODULATE, 0.6, 1.0, lambda d, t, a: d * t),
    "MODULATE2X": (MODULATE2X, 0.6, 1.0, lambda d, t, a: min(2 * d * t, 1)),
    "ADD": (ADD, 0.4, 1.0, lambda d, t, a: min(d + t, 1)),
    "ADDSIGNED": (ADDSIGNED, 0.8, 1.0, lambda d, t, a: min(max(d + t - 0.5, 0), 1)),
    "SUBTRACT": (SUBTRACT, 0.95, 1.0, lambda d, t, a: max(t - d, 0)),
    "BLENDTEXTUREALPHA": (BLENDTEXTUREALPHA, 0.9, 0.25, lambda d, t, a: t * a + d * (1 - a)),
}
DIFFUSE = 0.3


@pytest.mark.parametrize("name", list(OPS))
def test_each_colour_operation_renders_as_direct3d_combines(clean, tmp_path, name):
    """No first-stage texture: the colour below stage 1 is the material's diffuse colour; the render's
    brightness over a render of the diffuse colour alone is the operation's result over it."""
    op, value, alpha, formula = OPS[name]
    _png(tmp_path / "t.png", lambda u: (value, value, value, alpha))
    grey = (DIFFUSE, DIFFUSE, DIFFUSE, 1)
    (tmp_path / "p.u3d").write_bytes(fx.stage_quad(diffuse=grey))
    _import(tmp_path / "p.u3d")
    base = _linear(render_plane_from_above(tmp_path, "p")[5:25, 5:25]).mean()
    bpy.ops.wm.read_homefile(use_empty=True)
    # stage 0 holds no texture and passes the colour on (SELECTARG2): stage 1 works on the diffuse colour
    (tmp_path / "s.u3d").write_bytes(fx.stage_quad(ops=(3, op) + (1,) * 6, tcs=(0, 1) + (0,) * 6, diffuse=grey,
                                                   textures=[fx.texture(), fx.texture(["t.png"], 16, 16)]))
    _import(tmp_path / "s.u3d")
    got = _linear(render_plane_from_above(tmp_path, "s")[5:25, 5:25]).mean()
    want = formula(DIFFUSE, _byte_linear(value), round(alpha * 255) / 255) / DIFFUSE
    assert got / base == pytest.approx(want, rel=0.08, abs=0.02), (got, base)


def test_stages_come_back_from_the_nodes_and_an_edited_node_is_exported(clean, tmp_path):
    cube = [f"sky{i}.png" for i in range(6)]
    (tmp_path / "m.u3d").write_bytes(fx.stage_quad(
        ops=(MODULATE2X, MODULATE, ADD, DOTPRODUCT3, 1, 1, 1, 1), tcs=(0, 1, 0x30000, 1, 0, 0, 0, 0),
        textures=[fx.texture(["base.png"], 16, 16), fx.texture(["light.png"], 16, 16),
                  fx.texture(cube, 16, 0, cube=1), fx.texture(["bumps.png"], 16, 16)]))
    _import(tmp_path / "m.u3d")
    mat = bpy.data.materials["mat"]
    nt = mat.node_tree
    uv_maps = {n.uv_map for n in nt.nodes if n.type == "UVMAP"}
    assert uv_maps == {"UVMap", "UVMap_1"}
    faces = sorted(n.image["source_name"] for n in nt.nodes if n.type == "TEX_IMAGE" and n.image)
    assert faces == sorted(["base.png", "light.png", "bumps.png"] + cube)
    assert any(n.type == "TEX_COORD" and n.outputs["Reflection"].is_linked for n in nt.nodes)
    bsdf = next(n for n in nt.nodes if n.type == "BSDF_PRINCIPLED")
    normal = bsdf.inputs["Normal"].links[0].from_node
    assert normal.type == "NORMAL_MAP" and normal.uv_map == "UVMap_1"
    assert normal.inputs["Color"].links[0].from_node.image["source_name"] == "bumps.png"
    assert bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "out.u3d")) == {"FINISHED"}
    m = _parse(tmp_path / "out.u3d").materials[0]
    assert m.color_op[:4] == (MODULATE2X, MODULATE, ADD, DOTPRODUCT3) and m.tex_coord_set[:4] == (0, 1, 0x30000, 1)
    assert [list(t.files) for t in m.textures[:4]] == [["base.png"], ["light.png"], cube, ["bumps.png"]]
    assert m.textures[2].is_cube
    # the user renames the cube map's group (still ours, found by its mark) and gives its top face a new picture
    lookup = next(n for n in nt.nodes if n.type == "GROUP")
    lookup.node_tree.name = "Sky lookup"
    top = lookup.outputs[2 * 2].links[0].to_node                # faces +X, -X, +Y: each a UV, then a weight
    top.image = bpy.data.images.new("day", 4, 4)
    top.image.filepath = "//day.png"
    assert bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "renamed.u3d")) == {"FINISHED"}
    assert list(_parse(tmp_path / "renamed.u3d").materials[0].textures[2].files) == cube[:2] + ["day.png"] + cube[3:]
    # the user turns the lightmap into an additive map and moves it to the first UV set
    light = next(n for n in nt.nodes if n.type == "TEX_IMAGE" and n.image and n.image["source_name"] == "light.png")
    stage = next(lk.to_node for lk in light.outputs["Color"].links if lk.to_node.type == "MIX")
    stage.blend_type = "ADD"
    uv = light.inputs["Vector"].links[0].from_node.inputs["Vector"].links[0].from_node
    uv.uv_map = "UVMap"
    assert bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "edited.u3d")) == {"FINISHED"}
    m = _parse(tmp_path / "edited.u3d").materials[0]
    assert m.color_op[:3] == (MODULATE2X, ADD, ADD) and m.tex_coord_set[:2] == (0, 0)


def test_a_cube_map_shows_the_face_the_reflection_points_at(clean, tmp_path):
    """Seen straight down, the quad (facing up) reflects straight up: U3D +Y, the cube's "top" face
    (the third file: right, left, top, bottom, back, front)."""
    colours = [(0, 0, 1), (0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 0, 1), (0, 0, 1)]
    for i, c in enumerate(colours):
        _png(tmp_path / f"sky{i}.png", lambda u, c=c: (*c, 1.0))
    (tmp_path / "c.u3d").write_bytes(fx.stage_quad(
        ops=(3, 2) + (1,) * 6, tcs=(0, 0x30000) + (0,) * 6,          # stage 1: the cube map alone (SELECTARG1)
        textures=[fx.texture(), fx.texture([f"sky{i}.png" for i in range(6)], 16, 0, cube=1)]))
    _import(tmp_path / "c.u3d")
    r, g, b = render_plane_from_above(tmp_path, "c")[5:25, 5:25].reshape(-1, 3).mean(0)
    assert g > 0.2 and g > 10 * max(r, b), (r, g, b)



# Direct3D's (and OpenGL's) cube face table, for a direction (rx, ry, rz) in the cube's axes: the face of
# the major axis, and its picture coordinates s = (sc / |ma| + 1) / 2, t = (tc / |ma| + 1) / 2 (t down)
D3D_FACES = {  # face: (index in the file, major axis, sc, tc) with sc, tc as (axis, sign)
    "+X": (0, 0, (2, -1), (1, -1)), "-X": (1, 0, (2, 1), (1, -1)), "+Y": (2, 1, (0, 1), (2, 1)),
    "-Y": (3, 1, (0, 1), (2, -1)), "+Z": (4, 2, (0, 1), (1, -1)), "-Z": (5, 2, (0, -1), (1, -1)),
}


@pytest.mark.parametrize("face", list(D3D_FACES))
def test_a_cube_face_is_sampled_the_way_up_direct3d_samples_it(clean, tmp_path, face):
    """The quad turned to face the camera along one U3D axis reflects the view back at that axis's face,
    each point as Direct3D's table says. That face's picture: red on its right half, green on its upper
    half; the other faces blue."""
    from mathutils import Matrix, Vector
    index, major, (s_axis, s_sign), (t_axis, t_sign) = D3D_FACES[face]
    for i in range(6):
        _png(tmp_path / f"sky{i}.png", None, 64, (lambda u, v: (float(u > 0.5), float(v > 0.5), 0.0, 1.0))
             if i == index else (lambda u, v: (0.0, 0.0, 1.0, 1.0)))
    (tmp_path / "c.u3d").write_bytes(fx.stage_quad(
        ops=(3, 2) + (1,) * 6, tcs=(0, 0x30000) + (0,) * 6,
        textures=[fx.texture(), fx.texture([f"sky{i}.png" for i in range(6)], 16, 0, cube=1)]))
    _import(tmp_path / "c.u3d")
    d3d = np.zeros(3)
    d3d[major] = 1.0 if face[0] == "+" else -1.0
    n = Vector((d3d[0], d3d[2], d3d[1]))                    # Blender (x, y, z) = U3D (X, Z, Y)
    quad = bpy.data.objects["quad"]
    quad.rotation_mode = "QUATERNION"
    quad.rotation_quaternion = Vector((0, 0, 1)).rotation_difference(n)
    sc = bpy.context.scene
    # the camera at 3 n looking back at the quad, its up world z (world y when it looks along z)
    back = np.array(n)
    right = np.cross((0.0, 1.0, 0.0) if abs(n.z) > 0.5 else (0.0, 0.0, 1.0), back)
    right /= np.linalg.norm(right)
    look = np.identity(4)
    look[:3, 0], look[:3, 1], look[:3, 2], look[:3, 3] = right, np.cross(back, right), back, 3 * back
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    cam.matrix_world = Matrix(look.tolist())
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.matrix_world = Matrix(look.tolist())                            # lit from the camera
    for ob in (cam, sun):
        sc.collection.objects.link(ob)
    sc.camera = cam
    sc.view_settings.view_transform = "Standard"
    bpy.context.view_layer.update()
    px = tiny_render(tmp_path, "CYCLES", 32, 4, f"face{index}")      # bottom row first
    world = np.array(cam.matrix_world)
    right, up = world[:3, 0], world[:3, 1]
    half = 3 * 18 / cam.data.lens                                     # half the view's width at the quad
    for a, b in ((0.4, 0.4), (0.4, -0.4), (-0.4, 0.4), (-0.4, -0.4)):
        r = a * right + b * up + 3 * np.array(n)          # the view ray to that point, reflected
        r = r[[0, 2, 1]]                                  # in the cube's axes
        s = (s_sign * r[s_axis] / abs(r[major]) + 1) / 2
        t = (t_sign * r[t_axis] / abs(r[major]) + 1) / 2
        col, row = (int(16 + 16 * c / half) for c in (a, b))
        rgb = px[row - 1:row + 1, col - 1:col + 1].reshape(-1, 3).mean(0)
        assert rgb[2] < 0.05, (a, b, rgb)                                 # the face itself, not another
        assert (rgb[0] > 0.1, rgb[1] > 0.1) == (s > 0.5, t < 0.5), (a, b, s, t, rgb)


@pytest.mark.parametrize("combine", sorted(COMBINES))
def test_every_combine_has_nodes_that_read_back_as_it(clean, lgf, combine):
    build = importlib.import_module(f"{lgf.__name__}.bridge.material_build")
    image = bpy.data.images.new("t", 4, 4)
    m = Material("m", textures=[TextureSlot("base_color", 0), TextureSlot("base_color", 0, combine=combine)])
    mat = build.build_material(m, [image])
    images = []
    back = build.collect_material(mat, lambda im: images.append(im) or len(images) - 1)
    assert [s.combine for s in back.textures] == ["", combine]
