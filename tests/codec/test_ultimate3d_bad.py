"""Ultimate 3D bad input: a clear FormatError (or WrongPassword / UnsupportedFeature), never a traceback."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from addon.codec import load
from addon.codec.errors import FormatError, UnsupportedFeature, Warnings, WrongPassword
from addon.codec.formats.ultimate3d.read import parse
from tests.codec import u3d_fixtures as fx
from tests.codec.test_ultimate3d_model import full_skinned_v2, v1_full


def _parse(data: bytes, password: str = ""):
    return parse(data, Warnings(), password)


def test_universal_3d_is_named(tmp_path):
    # ECMA-363 files start with the block type 0x00443355 ("U3D\0")
    data = b"U3D\0" + struct.pack("<I", 36) + bytes(40)
    (tmp_path / "x.u3d").write_bytes(data)
    with pytest.raises(FormatError) as e:
        load(tmp_path / "x.u3d")
    assert "Universal 3D" in str(e.value) and e.value.offset == 0 and e.value.file.endswith("x.u3d")


def test_unknown_magic():
    with pytest.raises(FormatError, match="neither"):
        _parse(b"hello world, not a model")


@pytest.mark.parametrize("cut", [1, 10, 17, 30, 60, 200, -1])
def test_truncated_v2(cut):
    data = full_skinned_v2()
    with pytest.raises(FormatError) as e:
        _parse(data[:cut])
    assert e.value.offset is not None


def test_truncated_inside_a_chunk_names_the_chunk():
    data = fx.file_header() + fx.model_header() + fx.mesh() + fx.material()
    at = data.index(b"$U3D_MESH")
    # keep the mesh header (ident + size) but cut the body: the size now lies
    with pytest.raises(FormatError) as e:
        _parse(data[:at + 30])
    assert "claims" in str(e.value) and "$U3D_MESH" in str(e.value)


def test_lying_vertex_count_is_checked_before_allocating():
    body = fx.u32(0, 0, 0) + fx.s("m") + fx.f32(1.0) + b"\0" + fx.u32(0xFFFFFFF0) + bytes(64)
    data = fx.file_header() + fx.model_header() + fx.chunk("$U3D_MESH", body) + fx.material()
    with pytest.raises(FormatError) as e:
        _parse(data)
    assert "left" in str(e.value) and "$U3D_MESH[0]" in e.value.path


def test_lying_key_count():
    b = bytearray(fx.bone(meshes=[0], matrices=[fx.IDENTITY]))
    data = fx.file_header() + fx.model_header(n_bone=1) + fx.mesh() + fx.material()
    # the scaling key count sits after the matrix: set it to a huge number
    at = len(b) - 12
    b[at:at + 4] = struct.pack("<I", 10 ** 9)
    with pytest.raises(FormatError, match="scaling keys"):
        _parse(data + bytes(b))


@pytest.mark.parametrize("tri", [(0, 1, 3), (0, 7, 1)])
def test_bad_vertex_index(tri):
    data = fx.file_header() + fx.model_header() + fx.mesh(tris=[tri]) + fx.material()
    with pytest.raises(FormatError, match="out of range"):
        _parse(data)


def test_bad_skin_bone_index():
    data = (fx.file_header() + fx.model_header(n_bone=1, nsw=1) + fx.mesh(weights=[(0.5,)] * 3,
                                                                          indices=[(0, 5, 0, 0)] * 3)
            + fx.material() + fx.bone(meshes=[0], matrices=[fx.IDENTITY]))
    with pytest.raises(FormatError, match="skin bone index 5"):
        _parse(data)


def test_bone_parent_cycle():
    data = (fx.file_header() + fx.model_header(n_bone=2) + fx.mesh() + fx.material()
            + fx.bone(0, "a", parent=1) + fx.bone(1, "b", parent=0))
    with pytest.raises(FormatError, match="cycle"):
        _parse(data)


def test_bone_parent_out_of_range_and_self():
    data = fx.file_header() + fx.model_header(n_bone=1) + fx.mesh() + fx.material() + fx.bone(0, "a", parent=3)
    with pytest.raises(FormatError, match="parent 3"):
        _parse(data)
    data = fx.file_header() + fx.model_header(n_bone=1) + fx.mesh() + fx.material() + fx.bone(0, "a", parent=0)
    with pytest.raises(FormatError, match="cycle"):
        _parse(data)


@pytest.mark.parametrize("kw,match", [({"n_mesh": 7}, "announces 7 mesh"), ({"n_mat": 0}, "at least 1"),
                                      ({"n_lod": 0, "lod_dist": ()}, "at least 1"),
                                      ({"dims": (9, 0, 0, 0, 0, 0, 0, 0)}, "0 to 4"), ({"nsw": 4}, "0 to 3"),
                                      ({"n_bone": 2}, "announces 2 bone")])
def test_nonsense_counts(kw, match):
    data = fx.file_header() + fx.model_header(**kw) + fx.mesh() + fx.material()
    with pytest.raises(FormatError, match=match):
        _parse(data)


def test_mesh_outside_header_ranges_and_before_header():
    with pytest.raises(FormatError, match="outside the header"):
        _parse(fx.file_header() + fx.model_header() + fx.mesh(lod=3) + fx.material())
    with pytest.raises(FormatError, match="before \\$U3D_MODEL_HEADER"):
        _parse(fx.file_header() + fx.mesh() + fx.model_header() + fx.material())
    with pytest.raises(FormatError, match="no \\$U3D_MODEL_HEADER"):
        _parse(fx.file_header())


def test_not_owned_without_frame_zero():
    data = fx.file_header() + fx.model_header(n_frame=2) + fx.mesh(frame=1, owned=0) + fx.material()
    with pytest.raises(FormatError, match="TrianglesOwned"):
        _parse(data)


def test_encryption_version_1_and_compression_are_refused():
    with pytest.raises(UnsupportedFeature, match="encryption version 1"):
        _parse(fx.file_header(enc=1) + bytes(32))
    with pytest.raises(UnsupportedFeature, match="compression"):
        _parse(fx.file_header(comp=1) + bytes(32))
    with pytest.raises(UnsupportedFeature, match="newer"):
        _parse(fx.file_header(major=3) + bytes(32))


def _encrypted(password: bytes) -> bytes:
    from Crypto.Cipher import AES
    plain = fx.model_header() + fx.mesh() + fx.material()
    n = 16 - len(plain) % 16
    return fx.file_header(enc=2) + AES.new(password.ljust(16, b"\0"), AES.MODE_ECB).encrypt(plain + bytes([n]) * n)


def test_password_needed_and_wrong_password():
    data = _encrypted(b"right")
    with pytest.raises(WrongPassword, match="password is needed"):
        _parse(data)
    with pytest.raises(WrongPassword, match="wrong password"):
        _parse(data, "wrong")
    assert _parse(data, "right").meshes[0].name == "m"


def test_password_is_utf8_and_at_most_16_bytes():
    word = "pässwört€"                                   # 9 characters, 13 UTF-8 bytes, not Latin-1
    data = _encrypted(word.encode("utf-8"))
    assert _parse(data, word).meshes[0].name == "m"
    with pytest.raises(WrongPassword, match="at most 16 bytes"):
        _parse(data, "é" * 9)                           # 9 characters but 18 bytes: cannot be a key
    with pytest.raises(WrongPassword, match="at most 16 bytes"):
        _parse(data, "x" * 17)


def test_encrypted_data_not_a_block_multiple():
    with pytest.raises(FormatError, match="multiple of 16"):
        _parse(_encrypted(b"k")[:-3], "k")


@pytest.mark.parametrize("cut", [5, 13, 20, 40, 80, 150, -8])
def test_truncated_v1(cut):
    with pytest.raises(FormatError):
        _parse(v1_full()[:cut])


def test_v1_cycle_and_bad_parent():
    pos = [(0, 0, 0), (1, 0, 0), (0, 1, 0)]
    base = fx.v1_header(n_bone=2) + fx.v1_mesh("m", pos) + fx.v1_material()
    with pytest.raises(FormatError, match="cycle"):
        _parse(base + fx.v1_bone("a", parent=1) + fx.v1_bone("b", parent=0))
    with pytest.raises(FormatError, match="parent 9"):
        _parse(base + fx.v1_bone("a", parent=9) + fx.v1_bone("b"))


def test_v1_header_neither_word_nor_dword():
    data = fx.v1_header() + b"$U3D_XXXX\0" + bytes(40)
    with pytest.raises(FormatError, match="nLOD"):
        _parse(data)


@pytest.mark.parametrize("matrix", [(0.0,) * 16, (float("nan"),) * 16])
def test_singular_mesh_to_bone_is_a_warning(matrix):
    from addon.codec.formats.ultimate3d.to_scene import to_scene
    from addon.codec.formats.ultimate3d.options import ImportOptions
    data = (fx.file_header() + fx.model_header(n_bone=1, nsw=1) + fx.mesh(weights=[(0.5,)] * 3,
                                                                          indices=[(0, 0, 0, 0)] * 3)
            + fx.material() + fx.bone(0, "a", meshes=[0], matrices=[matrix], rkeys=[(0, (0, 0, 0, 0))]))
    w = Warnings()
    sc = to_scene(parse(data, w), ImportOptions(), w)
    assert any("cannot be inverted" in x for x in w.as_list())
    assert sc.armatures[0].bones[0].matrix.tolist() == np.eye(4).tolist()   # frame 0: no keys, a zero quaternion
