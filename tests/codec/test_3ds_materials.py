"""3DS -> Scene: materials and maps, texture search, cameras, lights, world, import options."""
import math

import numpy as np
import pytest

from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ImportOptions, ids
from addon.codec.formats.studio3ds.read import read
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.formats.studio3ds.model import Chunk
from addon.codec.formats.studio3ds.read import parse

from .fixtures_3ds import ASSETS, CUBE_POINTS, CUBE_TRIS, build, kf_node, obj, track, trimesh


def load(data: bytes, **opts):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(**opts), w), w


def holder(cid, *children):
    return Chunk(cid, None, list(children))


def pct(cid, v, kind=ids.INT_PERCENT):
    return holder(cid, Chunk(kind, v))


def a_map(cid, name, **fields):
    m = holder(cid, Chunk(ids.INT_PERCENT, fields.get("strength", 100)), Chunk(ids.MAT_MAPNAME, name))
    for key, sub in (("flags", ids.MAT_MAP_TILING), ("u_scale", ids.MAT_MAP_USCALE), ("v_scale", ids.MAT_MAP_VSCALE),
                     ("u_off", ids.MAT_MAP_UOFFSET), ("v_off", ids.MAT_MAP_VOFFSET), ("angle", ids.MAT_MAP_ANG)):
        if key in fields:
            m.add(sub, fields[key])
    return m


def full_material():
    m = Chunk(ids.MAT_ENTRY)
    m.add(ids.MAT_NAME, "Full")
    m.children += [
        holder(ids.MAT_AMBIENT, Chunk(ids.COLOR_F, (0.1, 0.2, 0.3))),
        holder(ids.MAT_DIFFUSE, Chunk(ids.COLOR_24, (255, 0, 51)), Chunk(ids.LIN_COLOR_24, (1, 2, 3))),
        holder(ids.MAT_SPECULAR, Chunk(ids.LIN_COLOR_F, (0.5, 0.5, 0.25))),
        pct(ids.MAT_SHININESS, 40), pct(ids.MAT_SHIN2PCT, 0.3, ids.FLOAT_PERCENT), pct(ids.MAT_TRANSPARENCY, 25),
        pct(ids.MAT_XPFALL, 10), pct(ids.MAT_SELF_ILPCT, 50),
        Chunk(ids.MAT_TWO_SIDE), Chunk(ids.MAT_ADDITIVE), Chunk(ids.MAT_WIRE), Chunk(ids.MAT_SHADING, 2),
        a_map(0xA200, "DIFF.PNG", strength=80, flags=0x11, u_scale=2.0, v_scale=3.0, u_off=0.25, v_off=0.5, angle=90.0),
        a_map(0xA33A, "DIFF2.PNG"), a_map(0xA210, "OPAC.PNG"), a_map(0xA230, "BUMP.PNG"),
        a_map(0xA204, "SPEC.PNG"), a_map(0xA33C, "SHIN.PNG"), a_map(0xA33D, "ILLUM.PNG"),
        a_map(0xA220, "REFL.PNG"), a_map(0xA33E, "MASK1.PNG"),
    ]
    return m


def test_material_colours_percents_and_flags():
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("Full", range(12))]))],
                       materials=[full_material()]))
    m = sc.materials[0]
    assert m.name == "Full"
    np.testing.assert_allclose(m.ambient, (0.1, 0.2, 0.3), atol=1e-6)
    np.testing.assert_allclose(m.base_color, (1.0, 0.0, 0.2), atol=1e-6)       # plain 0x0011 before gamma 0x0012
    np.testing.assert_allclose(m.specular_color, (0.5, 0.5, 0.25))             # only a gamma float colour
    assert m.extras["3ds_shininess"] == 0.4
    assert abs(m.extras["3ds_shin_strength"] - 0.3) < 1e-6                      # 0x0031 read as a fraction
    assert m.alpha == 0.75 and m.extras["3ds_falloff"] == 0.1
    assert m.two_sided and m.blend == "ADD" and m.extras["3ds_wire"] == 1 and m.extras["3ds_shading"] == 2
    assert m.emission_strength == 0.5


def test_every_map_kind_with_its_parameters():
    sc, w = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], materials=[full_material()]))
    slots = {s.extras["3ds_map"]: s for s in sc.materials[0].textures}
    assert set(slots) == {"texture1", "texture2", "opacity", "bump", "specular", "shininess", "self_illum",
                          "reflection", "mask_texture1"}
    kinds = {k: s.kind for k, s in slots.items()}
    assert kinds["texture1"] == "base_color" and kinds["opacity"] == "alpha" and kinds["bump"] == "bump"
    assert kinds["mask_texture1"] == "other"
    d = slots["texture1"]
    assert d.strength == 0.8 and d.extras["3ds_map_flags"] == 0x11
    assert d.scale == (2.0, 3.0)                   # 0xA354 is U, 0xA356 is V
    assert d.offset == (0.25, -0.5) and d.pivot == (0.5, 0.5)       # a V offset moves the picture down
    assert abs(d.rotation - math.pi / 2) < 1e-6    # stored in degrees
    assert sc.images[d.image].name == "DIFF.PNG"
    assert sum("not found" in x for x in w.as_list()) == 9      # missing textures are warnings


def test_textures_found_case_insensitively_next_to_the_file():
    w = Warnings()
    sc = to_scene(read(ASSETS / "mp5_sil.3ds", None, w), ImportOptions(), w)
    img = sc.images[0]
    assert img.name == "MP5SIL.BMP" and img.filepath.endswith("mp5sil.bmp")
    assert not any("not found" in x for x in w.as_list())


def test_missing_texture_is_a_warning_not_an_error():
    w = Warnings()
    sc = to_scene(read(ASSETS / "cube_with_diffuse_texture.3DS", None, w), ImportOptions(), w)
    assert sc.images[0].filepath == ""
    assert any("'TEST.PNG'" in x and "not found" in x for x in w.as_list())


def test_user_folder_is_searched_recursively_and_83_names_match_long_ones(tmp_path):
    (tmp_path / "model").mkdir()
    deep = tmp_path / "textures" / "more"
    deep.mkdir(parents=True)
    (deep / "LongTextureName.png").write_bytes(b"x")
    (deep / "other.PNG").write_bytes(b"y")
    m = Chunk(ids.MAT_ENTRY)
    m.add(ids.MAT_NAME, "M")
    m.children += [a_map(0xA200, "LONGTE~1.PNG"), a_map(0xA230, "OTHER.png")]
    f = tmp_path / "model" / "x.3ds"
    f.write_bytes(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], materials=[m]))
    w = Warnings()
    sc = to_scene(read(f, None, w), ImportOptions(image_search_folder=str(tmp_path / "textures")), w)
    paths = sorted(i.filepath for i in sc.images)
    assert paths == sorted([str(deep / "LongTextureName.png"), str(deep / "other.PNG")])
    w2 = Warnings()
    to_scene(read(f, None, w2), ImportOptions(), w2)
    assert sum("not found" in x for x in w2.as_list()) == 2


def test_camera_with_target_roll_lens_and_ranges():
    cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, -10.0, 0.0, 0.0, 0.0, 0.0, 5.0, 48.0),
                           [Chunk(ids.CAM_RANGES, (1.0, 500.0))]))
    sc, _ = load(build([cam]))
    c = sc.cameras[0]
    fov = 2400.0 / 48.0                                              # 50 degrees
    assert abs(c.lens - 18.0 / math.tan(math.radians(fov) / 2)) < 1e-4
    assert (c.clip_start, c.clip_end) == (1.0, 500.0)
    node = sc.nodes[next(i for i, n in enumerate(sc.nodes) if n.kind == "CAMERA")]
    target = sc.nodes[node.target]
    assert target.kind == "EMPTY" and target.name == "Cam.Target"
    # the roll rides on the target's Z axis: the camera's up vector, turned 5 degrees about the view
    assert node.target_up
    np.testing.assert_allclose(target.matrix[:3, 2], node.matrix[:3, 1], atol=1e-9)
    a = math.radians(5.0)
    np.testing.assert_allclose(target.matrix[:3, 2], (-math.sin(a), 0, math.cos(a)), atol=1e-9)
    np.testing.assert_allclose(node.matrix[:3, 3], (0, -10, 0))
    np.testing.assert_allclose(node.matrix[:3, 2], (0, -1, 0), atol=1e-6)   # camera -Z looks at the target


def test_camera_nodes_animate_fov():
    cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, -10.0, 0.0, 0.0, 0.0, 0.0, 0.0, 50.0)))
    cnode = kf_node(0, "Cam", tag=ids.CAMERA_NODE_TAG, pos=(0, -10, 0),
                    extra=[track(ids.FOV_TRACK, [0, 10], [[60.0], [30.0]])])
    tnode = kf_node(1, "Cam", tag=ids.TARGET_NODE_TAG, pos=(0, 0, 0))
    sc, _ = load(build([cam], kf_nodes=[cnode, tnode]))
    ch = next(c for c in sc.animations[0].channels if c.path == "data.lens")
    np.testing.assert_allclose(ch.values[:, 0], [18 / math.tan(math.radians(30)), 18 / math.tan(math.radians(15))])
    cam_i = next(i for i, n in enumerate(sc.nodes) if n.kind == "CAMERA")
    assert sc.nodes[sc.nodes[cam_i].target].name == "Cam.Target"


def test_spot_and_omni_lights():
    spot = Chunk(ids.N_DIRECT_LIGHT, (1.0, 2.0, 3.0), [
        Chunk(ids.COLOR_F, (1.0, 0.5, 0.25)), Chunk(ids.DL_MULTIPLIER, 2.0), Chunk(ids.DL_ATTENUATE),
        Chunk(ids.DL_INNER_RANGE, 10.0), Chunk(ids.DL_OUTER_RANGE, 100.0),
        Chunk(ids.DL_SPOTLIGHT, (1.0, 2.0, 0.0, 30.0, 60.0), [Chunk(ids.DL_SHADOWED)])])
    omni = Chunk(ids.N_DIRECT_LIGHT, (0.0, 0.0, 5.0), [Chunk(ids.COLOR_24, (255, 255, 255)), Chunk(ids.DL_OFF)])
    sc, _ = load(build([obj("Spot", spot), obj("Omni", omni)]))
    s, o = sc.lights
    assert s.type == "SPOT" and s.color == (1.0, 0.5, 0.25) and s.energy == 2000.0
    assert abs(s.spot_size - math.radians(60)) < 1e-6 and abs(s.spot_blend - 0.5) < 1e-6
    assert s.cast_shadow and s.use_attenuation and (s.attenuation_start, s.attenuation_end) == (10.0, 100.0)
    assert o.type == "POINT" and o.extras["3ds_off"] == 1 and o.energy == 0.0 and not o.cast_shadow
    spot_node = next(n for n in sc.nodes if n.kind == "LIGHT" and n.name == "Spot")
    assert sc.nodes[spot_node.target].name == "Spot.Target"


def test_world_ambient_and_background():
    extra = [holder(ids.AMBIENT_LIGHT, Chunk(ids.COLOR_F, (0.1, 0.1, 0.2))),
             holder(ids.SOLID_BGND, Chunk(ids.COLOR_F, (0.0, 0.5, 1.0))), Chunk(ids.USE_SOLID_BGND)]
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], editor_extra=extra))
    assert sc.world.ambient == pytest.approx((0.1, 0.1, 0.2)) and sc.world.color == (0.0, 0.5, 1.0)


def test_object_type_filter_keeps_world_placement_of_children():
    nodes = [kf_node(0, "$$$DUMMY", instance="Parent", pos=(1, 2, 3)), kf_node(1, "Box", parent=0)]
    data = build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=nodes)
    sc, _ = load(data, object_types="MESH")
    assert [n.kind for n in sc.nodes] == ["MESH"] and sc.nodes[0].parent == -1
    np.testing.assert_allclose(sc.nodes[0].matrix[:3, 3], (1, 2, 3))


def test_apply_transform_bakes_world_points_into_meshes():
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))],
                       kf_nodes=[kf_node(0, "Box", pos=(5, 0, 0), pivot=(1, 0, 0))]), apply_transform=True)
    np.testing.assert_allclose(sc.nodes[0].matrix, np.eye(4))
    np.testing.assert_allclose(sc.meshes[0].positions, CUBE_POINTS + [4, 0, 0], atol=1e-6)


def test_master_scale_option():
    data = build([obj("Box", trimesh(CUBE_POINTS + 1, CUBE_TRIS))])
    data = data.replace(b"\x00\x01\x0a\x00\x00\x00\x00\x00\x80\x3f", b"\x00\x01\x0a\x00\x00\x00\x00\x00\x20\x41")  # 10.0
    off, _ = load(data)
    on, _ = load(data, use_master_scale=True)
    w_off = off.nodes[0].matrix[:3, :3] @ off.meshes[0].positions.T
    w_on = on.nodes[0].matrix[:3, :3] @ on.meshes[0].positions.T
    np.testing.assert_allclose(w_on, w_off * 10, atol=1e-5)            # the file's master scale, 10, applied


CAMERA_C = r"""
#include <stdio.h>
#include <lib3ds/matrix.h>
int main(void) {
    Lib3dsMatrix m; Lib3dsVector p = {0, -10, 2}, t = {1, 0, 0};
    lib3ds_matrix_camera(m, p, t, 0.5235988f);     /* 30 degrees: lib3ds takes radians here */
    for (int c = 0; c < 4; c++) for (int r = 0; r < 4; r++) printf("%.6f\n", m[c][r]);
    return 0;
}
"""


def test_camera_roll_turns_the_way_lib3ds_turns_it(tmp_path):
    import subprocess
    (tmp_path / "cam.c").write_text(CAMERA_C)
    subprocess.run(["gcc", "-o", str(tmp_path / "cam"), str(tmp_path / "cam.c"), "-l3ds"], check=True)
    out = subprocess.run([str(tmp_path / "cam")], capture_output=True, text=True, check=True).stdout
    view = np.array(out.split(), float).reshape(4, 4).T          # lib3ds: world -> camera, Y forward, Z up
    cam = Chunk(ids.N_CAMERA, (0.0, -10.0, 2.0, 1.0, 0.0, 0.0, 30.0, 50.0))
    sc, _ = load(build([obj("Cam", cam)]))
    m = next(n for n in sc.nodes if n.kind == "CAMERA").matrix       # ours: camera -> world, -Z forward, Y up
    np.testing.assert_allclose(m[:3, 0], view[0, :3], atol=1e-4)     # right
    np.testing.assert_allclose(m[:3, 1], view[2, :3], atol=1e-4)     # up
    np.testing.assert_allclose(-m[:3, 2], view[1, :3], atol=1e-4)    # forward


def test_hierarchy_off_places_the_stored_objects_only():
    nodes = [kf_node(0, "$$$DUMMY", instance="Parent", pos=(1, 2, 3)), kf_node(1, "Box", parent=0, pos=(5, 0, 0))]
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS))], kf_nodes=nodes), use_hierarchy=False)
    assert [(n.name, n.kind, n.parent) for n in sc.nodes] == [("Box", "MESH", -1)]
    np.testing.assert_allclose(sc.nodes[0].matrix, np.eye(4))
    np.testing.assert_allclose(sc.meshes[0].positions, CUBE_POINTS)


@pytest.mark.parametrize("flags,decal,invert,tint", [
    (0x11, True, False, ()),
    (0x10, False, False, ()),
    (0x08 | 0x80, False, True, ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))),             # COL1 to COL2
    (0x200, False, False, ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0))),  # R, G, B colours
    (0x80 | 0x200, False, False, ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0), (1.0, 1.0, 0.0))),  # RGB tint wins
])
def test_map_flags_set_decal_negative_and_tint(flags, decal, invert, tint):
    m = a_map(0xA200, "DIFF.PNG", flags=flags)
    for cid, rgb in ((ids.MAT_MAP_COL1, (255, 0, 0)), (ids.MAT_MAP_COL2, (0, 0, 255)), (ids.MAT_MAP_RCOL, (0, 255, 0)),
                     (ids.MAT_MAP_GCOL, (0, 0, 255)), (ids.MAT_MAP_BCOL, (255, 255, 0))):
        m.add(cid, rgb)
    mat = holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), m)
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))], materials=[mat]))
    (slot,) = sc.materials[0].textures
    assert (slot.decal, slot.invert, slot.tint) == (decal, invert, tint)


def test_a_tint_flag_without_its_colours_is_black_to_white():
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))],
                       materials=[holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), a_map(0xA200, "D.PNG", flags=0x80))]))
    assert sc.materials[0].textures[0].tint == ((0.0, 0.0, 0.0), (1.0, 1.0, 1.0))


def test_decal_negative_and_tint_made_in_the_scene_are_written(tmp_path):
    from addon.codec import load as load_file, save
    from addon.codec.scene import Image, Material, Mesh, Node, Scene, TextureSlot
    m = Mesh.from_triangles("Box", CUBE_POINTS, CUBE_TRIS)
    m.materials, m.face_material = [0], np.zeros(12, np.int32)
    slot = TextureSlot("base_color", 0, extension="CLIP", decal=True, invert=True,
                       tint=((0.2, 0.4, 0.6), (1.0, 0.5, 0.0)))
    sc = Scene(meshes=[m], materials=[Material("M", textures=[slot])], images=[Image("d.png", "d.png")])
    sc.add_node(Node("Box", "MESH", 0))
    save(sc, tmp_path / "t.3ds")
    ed = read(tmp_path / "t.3ds", None, Warnings()).editor()
    mp = ed.find(ids.MAT_ENTRY).find(0xA200)
    assert mp.value(ids.MAT_MAP_TILING) == 0x1 | 0x10 | 0x8 | 0x80
    assert tuple(mp.value(ids.MAT_MAP_COL1)) == (51, 102, 153) and tuple(mp.value(ids.MAT_MAP_COL2)) == (255, 128, 0)
    back = load_file(tmp_path / "t.3ds").materials[0].textures[0]
    assert (back.decal, back.invert, back.extension) == (True, True, "CLIP")
    np.testing.assert_allclose(back.tint, [[0.2, 0.4, 0.6], [1.0, 0.5, 0.0]], atol=1 / 255)


def test_the_materials_decal_flag_makes_every_map_a_decal():
    mat = holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), Chunk(ids.MAT_DECAL),
                 a_map(0xA200, "D.PNG", flags=0), a_map(0xA210, "O.PNG", flags=0x2))
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))], materials=[mat]))
    assert [(t.decal, t.extension) for t in sc.materials[0].textures] == [(True, "CLIP"), (True, "MIRROR")]


def _one_map(flags, *extra):
    mat = holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), *extra, a_map(0xA200, "D.PNG", flags=flags))
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))], materials=[mat]))
    return sc


@pytest.mark.parametrize("flags,extension,decal,alpha_source,ignore_alpha", [
    (0x0, "REPEAT", False, False, False),      # "Tile"
    (0x11, "CLIP", True, False, False),        # "Decal": the picture once, the material's colour around it
    (0x1, "REPEAT", True, False, False),       # "Both": tiled, the material's colour through its alpha
    (0x10, "CLIP", False, False, False),       # 3ds Max's "no wrap"
    (0x3, "MIRROR", True, False, False),
    (0x100, "REPEAT", False, False, True),
    (0x141, "REPEAT", True, True, True),
])
def test_tiling_and_alpha_flags_read_as_3d_studio_names_them(flags, extension, decal, alpha_source, ignore_alpha):
    (slot,) = _one_map(flags).materials[0].textures
    assert (slot.extension, slot.decal, slot.alpha_source, slot.ignore_alpha) == (
        extension, decal, alpha_source, ignore_alpha)


def _written_maps(sc, tmp_path):
    from addon.codec import save
    save(sc, tmp_path / "t.3ds")
    mat = read(tmp_path / "t.3ds", None, Warnings()).editor().find(ids.MAT_ENTRY)
    return mat, [m for m in mat.children if m.cid in (0xA200, 0xA210)]


@pytest.mark.parametrize("flags", [0x0, 0x1, 0x11, 0x10, 0x3, 0x100, 0x101, 0x140, 0x1 | 0x8 | 0x80 | 0x100 | 0x20])
def test_map_flags_are_written_back_as_read(tmp_path, flags):
    mat, (m,) = _written_maps(_one_map(flags), tmp_path)
    assert m.value(ids.MAT_MAP_TILING) == flags


@pytest.mark.parametrize("read_flags,edit,written", [
    (0x1, {"extension": "CLIP"}, 0x11),                  # "Both" clipped: "Decal"
    (0x11, {"extension": "REPEAT"}, 0x1),                # "Decal" tiled: "Both"
    (0x11, {"decal": False}, 0x10),
    (0x0, {"decal": True}, 0x1),
    (0x0, {"extension": "EXTEND"}, 0x10),                # one picture, its edge stretched: no tiling
    (0x20, {"ignore_alpha": True}, 0x120),               # the summed-area bit is kept
    (0x141, {"ignore_alpha": False}, 0x41),
])
def test_map_flags_follow_the_slot(tmp_path, read_flags, edit, written):
    sc = _one_map(read_flags)
    for k, v in edit.items():
        setattr(sc.materials[0].textures[0], k, v)
    mat, (m,) = _written_maps(sc, tmp_path)
    assert m.value(ids.MAT_MAP_TILING) == written


def test_the_materials_decal_flag_is_written_back_while_its_maps_show_it(tmp_path):
    mat = holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), Chunk(ids.MAT_DECAL),
                 a_map(0xA200, "D.PNG", flags=0), a_map(0xA210, "O.PNG", flags=0x40))
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))], materials=[mat]))
    out, maps = _written_maps(sc, tmp_path)
    assert out.has(ids.MAT_DECAL) and [m.value(ids.MAT_MAP_TILING) for m in maps] == [0, 0x40]
    # one map tiled again: the material flag would clip it, so each map says what it is
    sc.materials[0].textures[0].extension = "REPEAT"
    out, maps = _written_maps(sc, tmp_path)
    assert not out.has(ids.MAT_DECAL) and [m.value(ids.MAT_MAP_TILING) for m in maps] == [0x1, 0x51]


@pytest.mark.parametrize("percent", [100, 50, 0])
def test_a_maps_amount_is_its_strength_both_ways(tmp_path, percent):
    mat = holder(ids.MAT_ENTRY, Chunk(ids.MAT_NAME, "M"), a_map(0xA200, "D.PNG", strength=percent))
    sc, _ = load(build([obj("Box", trimesh(CUBE_POINTS, CUBE_TRIS, materials=[("M", range(12))]))], materials=[mat]))
    assert sc.materials[0].textures[0].strength == percent / 100
    sc.materials[0].textures[0].strength = 0.3
    out, (m,) = _written_maps(sc, tmp_path)
    assert m.value(ids.INT_PERCENT) == 30
