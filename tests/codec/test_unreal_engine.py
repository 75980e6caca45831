"""Unreal 1 as the engine sees it: placement, texture flags, merged export, the source's packing kept.

Expected matrices are written out from the engine's rotation (roll, then
pitch, then yaw; 256 units per turn), not computed by the codec.
"""
from __future__ import annotations

import struct

import numpy as np
import pytest

from addon.codec.errors import FormatError, UnsupportedFeature, Warnings
from addon.codec.formats.unreal import bmp, conventions, from_scene as export, pcx, read, to_scene as scene, ucscript, write
from addon.codec.formats.unreal.options import ExportOptions, ImportOptions
from addon.codec.scene import Image, Material, Mesh, Node, Scene, TextureSlot
from tests.codec.unreal_fixtures import (PITCH, ROLL, TETRA, YAW, a_file, bmp8, d_file, masked_pcx, tetra_pair, tri,
                                         write_set)



def _import(path, **kw):
    w = Warnings()
    return scene.to_scene(read.read(path, ImportOptions(**kw), w), ImportOptions(**kw), w), w


def _export(s, target, **kw):
    w = Warnings()
    return write.encode(export.from_scene(s, ExportOptions(**kw), w), target), w.as_list()


@pytest.mark.parametrize("angle", [64, -64])
@pytest.mark.parametrize("which", ["yaw", "pitch", "roll"])
def test_each_angle_alone_is_the_engine_matrix(which, angle):
    want = {"yaw": YAW, "pitch": PITCH, "roll": ROLL}[which][angle]
    args = {"yaw": (angle, 0, 0), "pitch": (0, angle, 0), "roll": (0, 0, angle)}[which]
    np.testing.assert_allclose(conventions.rotation_matrix(*args), want, atol=1e-12)
    assert conventions.rotation_angles(np.array(want, float)) == tuple(float(a) for a in args)


def test_roll_then_pitch_then_yaw():
    want = np.array(YAW[64]) @ np.array(PITCH[-64]) @ np.array(ROLL[-64])
    np.testing.assert_allclose(conventions.rotation_matrix(64, -64, -64), want, atol=1e-12)


def test_angles_invert_the_matrix_everywhere_including_straight_up():
    rng = np.random.default_rng(7)
    for yaw, pitch, roll in [*rng.uniform(-127, 127, (50, 3)), (10, 64, 0), (-30, -64, 0), (64, 0, -64)]:
        m = conventions.rotation_matrix(yaw, pitch, roll)
        np.testing.assert_allclose(conventions.rotation_matrix(*conventions.rotation_angles(m)), m, atol=1e-6)
        # Blender keeps matrices in float32: the angles still come back as written
        m32 = m.astype(np.float32).astype(np.float64)
        np.testing.assert_allclose(conventions.rotation_matrix(*conventions.rotation_angles(m32)), m, atol=1e-5)


WEDGE = [(0, 0, 0), (16, 0, 0), (0, 40, 0), (0, 0, 24)]     # raw: tall along +Y, nose along +Z (a UT model)


def test_ut_placement_stands_the_model_up(tmp_path):
    d = d_file([tri(f, tex=0) for f in ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))], 4)
    uc = ("#exec MESH IMPORT MESH=w ANIVFILE=w_a.3d DATAFILE=w_d.3d X=0 Y=0 Z=0\n"
          "#exec MESH ORIGIN MESH=w X=0 Y=0 Z=0 YAW=64 ROLL=-64\n"
          "#exec MESHMAP SCALE MESHMAP=w X=0.125 Y=0.125 Z=0.25\n")
    s, _ = _import(write_set(tmp_path, "w", d, a_file([WEDGE]), uc))
    mat = s.nodes[0].matrix
    world = s.meshes[0].positions.astype(np.float64) @ mat[:3, :3].T + mat[:3, 3]
    np.testing.assert_allclose(world[2], [0, 0, 5], atol=1e-6)       # head (raw Y 40 * 0.125) up
    np.testing.assert_allclose(world[3], [6, 0, 0], atol=1e-6)       # nose (raw Z 24 * 0.25) forward, +X


def test_texture_flags_and_mask_are_read():
    text = (b"#exec MESH IMPORT MESH=m ANIVFILE=m_a.3d DATAFILE=m_d.3d\n"
            b"#exec TEXTURE IMPORT NAME=A FILE=a.pcx GROUP=Skins FLAGS=2\n"
            b"#exec TEXTURE IMPORT NAME=B FILE=b.pcx GROUP=Skins MASK=1 LODSET=2\n"
            b"#exec TEXTURE IMPORT NAME=C FILE=c.pcx FLAGS=68\n"
            b"#exec MESHMAP SETTEXTURE MESHMAP=m NUM=0 TEXTURE=A\n"
            b"#exec MESHMAP SETTEXTURE MESHMAP=m NUM=1 TEXTURE=B\n"
            b"#exec MESHMAP SETTEXTURE MESHMAP=m NUM=2 TEXTURE=C\n")
    setup = ucscript.describe(ucscript.parse(text, Warnings()), "m", Warnings())
    assert setup.texture_flags == {0: 2, 1: 2, 2: 68}
    assert setup.texture_params[1] == "GROUP=Skins MASK=1 LODSET=2"
    assert scene.skin_blend(0, 68) == "MULTIPLY"                     # modulated wins over translucent
    assert scene.skin_blend(3, 0) == "CLIP" and scene.skin_blend(0, 4) == "ADD" and scene.skin_blend(4, 2) == "MULTIPLY"


def test_texture_lines_keep_their_parameters_and_new_flags():
    from addon.codec.formats.unreal.model import MeshSetup
    s = MeshSetup(mesh="m", textures={0: ("A", "a.pcx"), 1: ("B", "b.pcx"), 2: ("C", "c.pcx")},
                  texture_flags={0: 2, 1: 2, 2: 0}, texture_params={1: "GROUP=Skins MASK=1 LODSET=2",
                                                                    2: "GROUP=Skins MASK=1"})
    text = ucscript.compose(s).decode()
    assert "#exec TEXTURE IMPORT NAME=A FILE=a.pcx GROUP=Skins FLAGS=2\r\n" in text
    assert "#exec TEXTURE IMPORT NAME=B FILE=b.pcx GROUP=Skins MASK=1 LODSET=2\r\n" in text
    assert "#exec TEXTURE IMPORT NAME=C FILE=c.pcx GROUP=Skins\r\n" in text       # no longer masked


def test_masked_pcx_alpha_comes_from_index_zero():
    rgba = pcx.decode(masked_pcx(), masked=True)
    assert rgba[0, :, 3].tolist() == [0.0, 1.0]
    assert rgba[0, 0, :3].tolist() == [1.0, 1.0, 1.0]
    assert pcx.decode(masked_pcx())[0, :, 3].tolist() == [1.0, 1.0]


def test_masked_skin_by_triangle_type_or_flags(tmp_path):
    tris = [tri(f, tex=t, type_=k) for f, t, k in (((0, 2, 1), 0, 3), ((0, 1, 3), 1, 0), ((0, 3, 2), 2, 2),
                                                     ((1, 2, 3), 3, 0))]
    uc = ("#exec MESH IMPORT MESH=k ANIVFILE=k_a.3d DATAFILE=k_d.3d\n"
          "#exec TEXTURE IMPORT NAME=S0 FILE=s.pcx FLAGS=0\n#exec TEXTURE IMPORT NAME=S1 FILE=s.pcx FLAGS=2\n"
          "#exec TEXTURE IMPORT NAME=S3 FILE=s.pcx FLAGS=64\n"
          + "".join(f"#exec MESHMAP SETTEXTURE MESHMAP=k NUM={n} TEXTURE=S{n}\n" for n in (0, 1, 3)))
    write_set(tmp_path, "k", d_file(tris, 4), a_file([TETRA]), uc)
    (tmp_path / "s.pcx").write_bytes(masked_pcx())
    s, _ = _import(tmp_path / "k_d.3d")
    mats = {m.name: m for m in s.materials}
    assert [mats[n].blend for n in ("S0", "S1", "skin2", "S3")] == ["CLIP", "CLIP", "ADD", "MULTIPLY"]
    assert mats["S1"].extras["ue_texture_flags"] == 2 and mats["S0"].extras["ue_texture_flags"] == 0
    alpha = {m.name: s.images[m.textures[0].image].pixels[0, :, 3].tolist() for m in s.materials if m.textures}
    assert alpha == {"S0": [0.0, 1.0], "S1": [0.0, 1.0], "S3": [1.0, 1.0]}      # only masked skins get holes
    out, _ = _export(s, tmp_path / "o" / "k_d.3d")
    text = out[tmp_path / "o" / "k.uc"].decode()
    assert "NAME=S0 FILE=s.pcx FLAGS=0\r\n" in text and "NAME=S1 FILE=s.pcx FLAGS=2\r\n" in text
    assert "NAME=S3 FILE=s.pcx FLAGS=64\r\n" in text
    assert out[tmp_path / "o" / "k_d.3d"] == d_file(tris, 4)


def test_deus_ex_and_unmirror_come_back_as_imported(tmp_path):
    d, _ = tetra_pair(frames=1)
    a = a_file([[(300, -512, 700), (1000, 0, 0), (0, 2000, -7), (0, 0, 900)]], deus_ex=True)
    uc = ("#exec MESH IMPORT MESH=dx ANIVFILE=dx_a.3d DATAFILE=dx_d.3d X=0 Y=0 Z=0 UNMIRROR=1\n"
          "#exec MESH ORIGIN MESH=dx X=-12 Y=3 Z=7 YAW=64 ROLL=-64\n"
          "#exec MESHMAP SCALE MESHMAP=dx X=0.00390625 Y=0.00390625 Z=0.00390625\n")
    s, _ = _import(write_set(tmp_path, "dx", d, a, uc))
    out, _ = _export(s, tmp_path / "o" / "dx_d.3d")
    assert out[tmp_path / "o" / "dx_d.3d"] == d and out[tmp_path / "o" / "dx_a.3d"] == a
    text = out[tmp_path / "o" / "dx.uc"].decode()
    assert "DATAFILE=dx_d.3d X=0 Y=0 Z=0 UNMIRROR=1\r\n" in text
    assert "#exec MESH ORIGIN MESH=dx X=-12 Y=3 Z=7 YAW=64 ROLL=-64\r\n" in text
    assert "#exec MESHMAP SCALE MESHMAP=dx X=0.00390625 Y=0.00390625 Z=0.00390625\r\n" in text
    # asked for the standard packing, it gets it
    out, _ = _export(s, tmp_path / "p" / "dx_d.3d", variant="STANDARD", scale=0)
    assert struct.unpack_from("<H", out[tmp_path / "p" / "dx_a.3d"], 2)[0] == 16



def test_mesh_import_parameters_the_exporter_does_not_write_come_back(tmp_path):
    """LOD and texture-number switches on MESH IMPORT (LODSTYLE=, LODFRAME=, ZEROTEX=) are kept as read."""
    d, a = tetra_pair(frames=1)
    uc = ("#exec MESH IMPORT MESH=lm ANIVFILE=lm_a.3d DATAFILE=lm_d.3d X=0 Y=0 Z=0 LODSTYLE=10 LODFRAME=3 ZEROTEX=1\n"
          "#exec MESHMAP SCALE MESHMAP=lm X=0.0625 Y=0.0625 Z=0.125\n")
    s, _ = _import(write_set(tmp_path, "lm", d, a, uc))
    out, _ = _export(s, tmp_path / "o" / "lm_d.3d")
    text = out[tmp_path / "o" / "lm.uc"].decode()
    assert "DATAFILE=lm_d.3d X=0 Y=0 Z=0 LODSTYLE=10 LODFRAME=3 ZEROTEX=1\r\n" in text
    assert out[tmp_path / "o" / "lm_a.3d"] == a      # (texture numbers may differ: ZEROTEX makes them all 0)

# -- merged export -----------------------------------------------------------------------
def _two_objects() -> Scene:
    a = Mesh.from_triangles("a", [(0, 0, 0), (1, 0, 0), (0, 1, 0)], [(0, 1, 2)], face_material=np.array([0]),
                            materials=[0], face_attributes={"ue_type": np.array([3]), "ue_texture": np.array([1])})
    b = Mesh.from_triangles("b", [(0, 0, 0), (1, 0, 0), (0, 0, 1), (0, 1, 1)], [(0, 1, 2), (1, 3, 2)],
                            face_material=np.array([0, 1]), materials=[1, 2])
    mats = [Material("imported", extras={"ue_texture": 1}), Material("paint"),
            Material("UE1 weapon triangle", extras={"ue_weapon": True, "ue_type": 8})]
    s = Scene(meshes=[a, b], materials=mats)
    s.add_node(Node("A", "MESH", 0, matrix=np.diag([2.0, 2.0, 2.0, 1.0])))
    moved = np.eye(4)
    moved[:3, 3] = (4, 0, 0)
    s.add_node(Node("B", "MESH", 1, matrix=moved))
    return s


def test_every_object_merges_into_one_mesh(tmp_path):
    s = _two_objects()
    s.meshes[0].extras["ue_variant"] = "STANDARD"           # A was imported: it places the merged mesh
    out, _ = _export(s, tmp_path / "m_d.3d")
    d = out[tmp_path / "m_d.3d"]
    assert struct.unpack_from("<HH", d) == (3, 7)
    recs = np.frombuffer(d, np.uint8, 3 * 16, 48).reshape(3, 16)
    assert recs[:, 6].tolist() == [3, 1, 8]                  # masked, two-sided (the material's), weapon
    assert recs[:, 14].tolist()[:2] == [1, 0]                # kept number; the new material takes a free one
    idx = np.array([struct.unpack_from("<3H", d, 48 + 16 * k) for k in range(3)])
    assert idx[2].tolist() == [4, 6, 5]                      # weapon corner order kept (b's 1, 3, 2)
    raw = np.frombuffer(out[tmp_path / "m_a.3d"], "<i4", offset=4)
    x = (raw << 21) >> 21
    # B sits 4 to the right of A, whose scale 2 goes to the script: B's vertices at (4 + x) / 2 in A's space
    assert x.tolist() == [0, 8, 0, 16, 20, 16, 16]
    text = out[tmp_path / "m.uc"].decode()
    assert "#exec MESHMAP SCALE MESHMAP=m X=0.25 Y=0.25 Z=0.5" in text
    assert "NUM=0 TEXTURE=paint" in text and "NUM=1 TEXTURE=imported" in text


def test_a_skin_drawn_two_ways_gets_a_material_for_each(tmp_path):
    tris = [tri(f, tex=0, type_=k) for f, k in zip(((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)), (1, 1, 3, 1 | 16))]
    uc = ("#exec MESH IMPORT MESH=k ANIVFILE=k_a.3d DATAFILE=k_d.3d\n"
          "#exec TEXTURE IMPORT NAME=S FILE=s.pcx\n#exec MESHMAP SETTEXTURE MESHMAP=k NUM=0 TEXTURE=S\n")
    write_set(tmp_path, "k", d_file(tris, 4), a_file([TETRA]), uc)
    (tmp_path / "s.pcx").write_bytes(masked_pcx())
    s, _ = _import(tmp_path / "k_d.3d")
    m = s.meshes[0]
    mats = [s.materials[i] for i in m.materials]
    assert [(x.name, x.blend, x.extras["ue_texture"]) for x in mats] == [("S", "OPAQUE", 0), ("S masked", "CLIP", 0)]
    assert m.face_material.tolist() == [0, 0, 1, 0]
    assert mats[0].textures[0].image == mats[1].textures[0].image    # one image: its holes show only when masked
    out, _ = _export(s, tmp_path / "o" / "k_d.3d")
    assert out[tmp_path / "o" / "k_d.3d"] == d_file(tris, 4)
    text = out[tmp_path / "o" / "k.uc"].decode()
    assert "#exec TEXTURE IMPORT NAME=S FILE=s.pcx\r\n" in text and "NUM=0 TEXTURE=S\r\n" in text


@pytest.mark.parametrize("top_down", [False, True])
def test_masked_8bit_bmp_alpha_comes_from_index_zero(top_down):
    data = bmp8([[0, 5, 0], [5, 5, 0]], {0: (255, 255, 255), 5: (16, 32, 48)}, top_down)
    rgba = bmp.decode(data)
    assert rgba[:, :, 3].tolist() == [[0, 1, 0], [1, 1, 0]]            # bottom row first, as listed
    np.testing.assert_allclose(rgba[0, 1, :3], np.array([16, 32, 48]) / 255)


def test_bmp_that_is_not_8bit_or_is_cut_short():
    good = bmp8([[0, 5]], {5: (1, 2, 3)})
    with pytest.raises(UnsupportedFeature):
        bmp.decode(good[:28] + struct.pack("<H", 24) + good[30:])
    with pytest.raises(FormatError):
        bmp.decode(good[:-2])
    with pytest.raises(FormatError):
        bmp.decode(good[:18] + struct.pack("<i", 1 << 30) + good[22:])    # a lying width


def test_masked_bmp_skin_imports_with_holes(tmp_path):
    tris = [tri(f, tex=0, type_=3) for f in ((0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3))]
    uc = ("#exec MESH IMPORT MESH=k ANIVFILE=k_a.3d DATAFILE=k_d.3d\n"
          "#exec TEXTURE IMPORT NAME=S FILE=s.bmp\n#exec MESHMAP SETTEXTURE MESHMAP=k NUM=0 TEXTURE=S\n")
    write_set(tmp_path, "k", d_file(tris, 4), a_file([TETRA]), uc)
    (tmp_path / "s.bmp").write_bytes(bmp8([[0, 7]], {7: (9, 9, 9)}))
    s, w = _import(tmp_path / "k_d.3d")
    assert s.images[0].pixels[0, :, 3].tolist() == [0.0, 1.0] and not w.as_list()


def test_edited_custom_properties_warn_instead_of_failing(tmp_path):
    s = _two_objects()
    s.meshes[0].extras["ue_variant"] = "N64"
    s.materials[0].extras["ue_texture_flags"] = "lots"
    out, warnings = _export(s, tmp_path / "m_d.3d")
    assert struct.unpack_from("<H", out[tmp_path / "m_a.3d"], 2)[0] == 7 * 4         # standard packing
    assert "NAME=imported FILE=Textures\\imported.pcx GROUP=Skins FLAGS=0" in out[tmp_path / "m.uc"].decode()
    assert any("N64" in w for w in warnings) and any("lots" in w for w in warnings)


def test_two_merged_imports_with_the_same_skin_number_get_two_numbers(tmp_path):
    s = _two_objects()
    s.images = [Image("one.pcx"), Image("two.pcx")]
    s.materials[0].textures = [TextureSlot("base_color", 0)]
    s.materials[1] = Material("other", textures=[TextureSlot("base_color", 1)], extras={"ue_texture": 1})
    s.materials.append(Material("imported masked", blend="CLIP", textures=[TextureSlot("base_color", 0)],
                                extras={"ue_texture": 1, "ue_type": 3}))
    s.meshes[0].materials, s.meshes[0].face_material = [0, 3], np.array([1])
    out, warnings = _export(s, tmp_path / "m_d.3d", write_uc=True)
    recs = np.frombuffer(out[tmp_path / "m_d.3d"], np.uint8, 3 * 16, 48).reshape(3, 16)
    assert recs[:, 14].tolist()[:2] == [1, 0]           # same image as skin 1: shares it; another image: renumbered
    assert "NUM=0 TEXTURE=other" in out[tmp_path / "m.uc"].decode()
    assert any("'other'" in w and "skin number 1" in w for w in warnings)


def test_empty_meshes_are_left_out_of_the_merge(tmp_path):
    s = _two_objects()
    s.meshes += [Mesh.from_triangles("e", np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int64)),
                 Mesh.from_triangles("f", np.zeros((0, 3), np.float32), np.zeros((0, 3), np.int64))]
    s.add_node(Node("E", "MESH", 2))
    out, _ = _export(s, tmp_path / "m_d.3d", write_uc=False)
    assert struct.unpack_from("<HH", out[tmp_path / "m_d.3d"]) == (3, 7)
    only_empty = Scene(meshes=s.meshes[2:])
    only_empty.add_node(Node("E", "MESH", 0))
    out, _ = _export(only_empty, tmp_path / "e_d.3d", write_uc=False)
    assert struct.unpack_from("<HH", out[tmp_path / "e_d.3d"]) == (0, 0)
