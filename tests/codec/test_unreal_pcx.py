"""PCX skins: decoded by the codec (Blender cannot read PCX), from files written byte by byte here."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from addon.codec import load
from addon.codec.errors import FormatError, UnsupportedFeature
from addon.codec.formats.unreal import pcx
from tests.codec.unreal_fixtures import (PCX_SKIN_ROWS, pcx_header, pcx_skin, tetra_pair, write_set)

UC = r"""#exec MESH IMPORT MESH=t ANIVFILE=MODELS\t_a.3d DATAFILE=MODELS\t_d.3d X=0 Y=0 Z=0
#exec TEXTURE IMPORT NAME=Sk FILE=Textures\skin.pcx GROUP=Skins
#exec MESHMAP SETTEXTURE MESHMAP=t NUM=1 TEXTURE=Sk
"""


def _expected(rows_top_first, alpha=None):
    """(H, W, 4) 0..1 floats, bottom row first, from 0..255 RGB rows listed top first."""
    rgb = np.array(rows_top_first, np.float64)
    a = np.full(rgb.shape[:2] + (1,), 255.0) if alpha is None else np.array(alpha, np.float64)[..., None]
    return (np.concatenate([rgb, a], axis=-1) / 255.0)[::-1]


def test_8bit_paletted_rle_decodes_to_rgba_bottom_row_first():
    out = pcx.decode(pcx_skin())
    assert out.shape == (2, 3, 4) and out.dtype == np.float32
    np.testing.assert_allclose(out, _expected(PCX_SKIN_ROWS), atol=1e-7)
    # the bottom-left pixel is palette entry 7 = (10, 20, 30)
    assert (np.rint(out[0, 0] * 255)).tolist() == [10, 20, 30, 255]


def test_24bit_three_planes_and_32bit_four_planes():
    # 2 x 1 pixels, 2 bytes per plane scanline; each scanline holds R, then G, then B (then A)
    rgb = pcx_header(2, 1, 8, 3, 2) + bytes([10, 11, 0xC2, 20, 0xC1, 0xF0, 31])      # R 10 11, G 20 20, B 240 31
    np.testing.assert_allclose(pcx.decode(rgb), _expected([[(10, 20, 240), (11, 20, 31)]]), atol=1e-7)
    rgba = pcx_header(2, 1, 8, 4, 2) + bytes([1, 2, 3, 4, 5, 6, 0xC2, 128])
    np.testing.assert_allclose(pcx.decode(rgba), _expected([[(1, 3, 5), (2, 4, 6)]], alpha=[[128, 128]]), atol=1e-7)


def test_uncompressed_encoding_0():
    raw = bytearray(pcx_header(2, 1, 8, 3, 2) + bytes([0xC5, 0, 1, 2, 3, 4]))
    raw[2] = 0
    np.testing.assert_allclose(pcx.decode(bytes(raw)), _expected([[(0xC5, 1, 3), (0, 2, 4)]]), atol=1e-7)


def test_unsupported_and_damaged_pcx_raise_codec_errors():
    with pytest.raises(UnsupportedFeature, match="4 bits per pixel"):
        pcx.decode(pcx_header(4, 1, 4, 1, 2) + bytes(8))
    with pytest.raises(FormatError, match="not a PCX"):
        pcx.decode(b"\x0b" + pcx_skin()[1:])
    with pytest.raises(FormatError, match="128-byte"):
        pcx.decode(pcx_skin()[:100])
    skin = pcx_skin()
    with pytest.raises(FormatError, match="truncated"):                     # a run lost, palette kept
        pcx.decode(skin[:128 + 6] + skin[-769:])
    with pytest.raises(FormatError, match="256-colour palette"):
        pcx.decode(skin[:-769])
    with pytest.raises(FormatError, match="not an image"):                  # Xmax < Xmin
        pcx.decode(skin[:4] + struct.pack("<4H", 5, 0, 1, 1) + skin[12:])


def _package(tmp_path, skin: bytes | None, bmp: bool = False):
    d, a = tetra_pair(frames=1)
    write_set(tmp_path / "Models", "t", d, a, UC, uc_folder=tmp_path / "Classes")
    (tmp_path / "Textures").mkdir()
    if skin is not None:
        (tmp_path / "Textures" / "skin.pcx").write_bytes(skin)
    if bmp:
        (tmp_path / "Textures" / "skin.bmp").write_bytes(b"BM")
    return tmp_path / "Classes" / "t.uc"


def test_script_skin_pcx_is_decoded_and_keeps_its_name(tmp_path):
    s = load(_package(tmp_path, pcx_skin(), bmp=True), fmt="unreal")
    image = s.images[s.materials[s.meshes[0].materials[0]].textures[0].image]
    # the PCX the script names wins over a .bmp beside it: it is what the engine imports
    assert image.name == "Textures\\skin.pcx" and image.filepath == str(tmp_path / "Textures" / "skin.pcx")
    np.testing.assert_allclose(image.pixels, _expected(PCX_SKIN_ROWS), atol=1e-7)
    assert not s.warnings


def test_undecodable_pcx_warns_and_falls_back_to_a_readable_file(tmp_path):
    ega = pcx_header(4, 1, 4, 1, 2) + bytes(8)
    s = load(_package(tmp_path, ega, bmp=True), fmt="unreal")
    image = s.images[0]
    assert image.pixels is None and image.filepath == str(tmp_path / "Textures" / "skin.bmp")
    assert image.name == "Textures\\skin.pcx"
    assert any("skin.pcx cannot be decoded" in w and "using skin.bmp" in w for w in s.warnings)

    s = load(_package(tmp_path / "alone", ega), fmt="unreal")
    assert s.images[0].pixels is None
    assert any("skin.pcx cannot be decoded" in w and "image is empty" in w for w in s.warnings)
