"""Hand-built Unreal Engine 1 files for the test_unreal*.py tests.

Written from the format documents with struct, independently of the codec,
so that the tests do not check the codec against itself.
"""
from __future__ import annotations

import struct
from pathlib import Path

ASSETS = Path(__file__).resolve().parents[2] / "test_assets" / "unreal"


def pack_word(x: int, y: int, z: int) -> int:
    """Appendix C with the notes' signed fields: X bits 0-10, Y 11-21, Z 22-31."""
    return (x & 0x7FF) | ((y & 0x7FF) << 11) | ((z & 0x3FF) << 22)


def tri(v, type_=0, color=0, uv=((0, 0), (0, 0), (0, 0)), tex=0, flags=0) -> bytes:
    return struct.pack("<3H2B6B2B", *v, type_, color, *(b for c in uv for b in c), tex, flags)


def d_file(triangles: list[bytes], num_verts: int, junk: bytes = bytes(44), trailing: bytes = b"",
           num_polys: int | None = None) -> bytes:
    n = len(triangles) if num_polys is None else num_polys
    return struct.pack("<HH", n, num_verts) + junk + b"".join(triangles) + trailing


def a_file(frames: list[list[tuple[int, int, int]]], frame_size: int | None = None, num_frames: int | None = None,
           pad: bytes = b"", deus_ex: bool = False, trailing: bytes = b"") -> bytes:
    """Frames of (x, y, z) raw vertices; `pad` fills each frame up to frame_size."""
    body = b""
    for f in frames:
        if deus_ex:
            data = b"".join(struct.pack("<4h", x, y, z, 0) for x, y, z in f)
        else:
            data = b"".join(struct.pack("<I", pack_word(*v)) for v in f)
        body += data + pad
    size = frame_size if frame_size is not None else (len(body) // max(len(frames), 1))
    return struct.pack("<HH", len(frames) if num_frames is None else num_frames, size) + body + trailing


# A closed tetrahedron, positive right-handed signed volume on the raw
# coordinates in file order (as real files have, per the notes).
TETRA = [(0, 0, 0), (8, 0, 0), (0, 8, 0), (0, 0, 4)]
TETRA_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def tetra_pair(frames: int = 3, **tri_kw) -> tuple[bytes, bytes]:
    """Frame k lifts vertex 3 by 4*k raw Z units."""
    tris = [tri(f, uv=((10, 20), (30, 40), (50, 60)), tex=1, **tri_kw) for f in TETRA_FACES]
    anim = [[(x, y, z + (4 * k if i == 3 else 0)) for i, (x, y, z) in enumerate(TETRA)] for k in range(frames)]
    return d_file(tris, 4), a_file(anim)


def write_set(folder: Path, name: str, d: bytes, a: bytes, uc: str | None = None, uc_folder: Path | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}_d.3d").write_bytes(d)
    (folder / f"{name}_a.3d").write_bytes(a)
    if uc is not None:
        where = uc_folder or folder
        where.mkdir(parents=True, exist_ok=True)
        (where / f"{name}.uc").write_bytes(uc.encode("latin-1"))
    return folder / f"{name}_d.3d"


def signed_volume(positions, triangles) -> float:
    """Right-handed signed volume of a closed triangle mesh (divergence theorem)."""
    total = 0.0
    for a, b, c in triangles:
        pa, pb, pc = positions[a], positions[b], positions[c]
        cx = pb[1] * pc[2] - pb[2] * pc[1]
        cy = pb[2] * pc[0] - pb[0] * pc[2]
        cz = pb[0] * pc[1] - pb[1] * pc[0]
        total += pa[0] * cx + pa[1] * cy + pa[2] * cz
    return total / 6.0


# -- a PCX skin, written from the ZSoft PCX definition ----------------------------
# Header (128 bytes): manufacturer 10, version 5, encoding 1 (RLE), bits per pixel per
# plane, Xmin Ymin Xmax Ymax (inclusive), HDpi VDpi, 16-colour palette (48), reserved,
# planes, bytes per line per plane (even), palette info, screen size, filler (54).
# RLE: 0xC0 | n followed by a value repeats it n times; bytes below 0xC0 stand for themselves.
# 8-bit images end with 0x0C and a 256-colour RGB palette.
def pcx_header(width: int, height: int, bits: int, planes: int, bytes_per_line: int) -> bytes:
    return struct.pack("<BBBBHHHHHH48sBBHHHH54s", 10, 5, 1, bits, 0, 0, width - 1, height - 1, 72, 72,
                       bytes(48), 0, planes, bytes_per_line, 1, 0, 0, bytes(54))


PCX_COLOURS = {1: (255, 0, 0), 3: (0, 255, 0), 7: (10, 20, 30), 200: (0, 0, 255)}


def pcx_skin() -> bytes:
    """3 x 2, 8-bit paletted. Scanlines are 4 bytes (even): indices
    row 0: 1 1 200 | pad 7     row 1: 7 3 3 | pad 0
    encoded as runs (2 x 1), (1 x 200: an index >= 0xC0 must be a run), (2 x 7: the pad
    and the next row's first pixel, a run across scanlines), (2 x 3), literal 0."""
    body = bytes([0xC2, 1, 0xC1, 200, 0xC2, 7, 0xC2, 3, 0])
    palette = bytearray(768)
    for index, rgb in PCX_COLOURS.items():
        palette[index * 3:index * 3 + 3] = bytes(rgb)
    return pcx_header(3, 2, 8, 1, 4) + body + b"\x0c" + bytes(palette)


# top row first, as the file holds them
PCX_SKIN_ROWS = [[(255, 0, 0), (255, 0, 0), (0, 0, 255)], [(10, 20, 30), (0, 255, 0), (0, 255, 0)]]


def masked_pcx() -> bytes:
    """2 x 1, 8-bit: index 0 (palette white, not black: alpha must come from the index) and index 5."""
    palette = bytearray(768)
    palette[0:3] = b"\xff\xff\xff"
    palette[15:18] = b"\x10\x20\x30"
    return pcx_header(2, 1, 8, 1, 2) + bytes([0, 5]) + b"\x0c" + bytes(palette)


# The engine's rotation matrices (Unreal axes) at a quarter turn, written out from
# yaw [[c, -s, 0], [s, c, 0], [0, 0, 1]], pitch [[c, 0, -s], [0, 1, 0], [s, 0, c]],
# roll [[1, 0, 0], [0, c, s], [0, -s, c]] with c = 0, s = +-1.
YAW = {64: [[0, -1, 0], [1, 0, 0], [0, 0, 1]], -64: [[0, 1, 0], [-1, 0, 0], [0, 0, 1]]}
PITCH = {64: [[0, 0, -1], [0, 1, 0], [1, 0, 0]], -64: [[0, 0, 1], [0, 1, 0], [-1, 0, 0]]}
ROLL = {64: [[1, 0, 0], [0, 0, 1], [0, -1, 0]], -64: [[1, 0, 0], [0, 0, -1], [0, 1, 0]]}


def bmp8(rows_bottom_first: list[list[int]], palette: dict[int, tuple[int, int, int]], top_down: bool = False) -> bytes:
    """An uncompressed 8-bit BMP (BITMAPINFOHEADER, BGRX palette of 256), rows padded to 4 bytes."""
    h, w = len(rows_bottom_first), len(rows_bottom_first[0])
    stride = (w + 3) & ~3
    rows = rows_bottom_first[::-1] if top_down else rows_bottom_first
    pixels = b"".join(bytes(r).ljust(stride, b"\0") for r in rows)
    pal = bytearray(1024)
    for i, (r, g, b) in palette.items():
        pal[4 * i:4 * i + 3] = bytes((b, g, r))
    offset = 14 + 40 + 1024
    info = struct.pack("<IiiHHIIiiII", 40, w, -h if top_down else h, 1, 8, 0, len(pixels), 2835, 2835, 256, 0)
    return struct.pack("<2sIHHI", b"BM", offset + len(pixels), 0, 0, offset) + info + bytes(pal) + pixels


# A weapon's package, laid out as Unreal 1's sources are: Classes/QuadShot.uc imports three meshes
# with prototype names (DATAnn.3D / ANIVnn.3D), two of whose files are there.
QUADSHOT_UC = r"""class QuadShot extends Weapon;
#exec MESH IMPORT MESH=QuadShotPickup ANIVFILE=MODELS\aniv25.3D DATAFILE=MODELS\data25.3D X=0 Y=0 Z=0
#exec MESH ORIGIN MESH=QuadShotPickup X=0 Y=0 Z=0 YAW=64
#exec MESH SEQUENCE MESH=QuadShotPickup SEQ=All STARTFRAME=0 NUMFRAMES=3
#exec MESH SEQUENCE MESH=QuadShotPickup SEQ=Spin STARTFRAME=1 NUMFRAMES=2
#exec MESHMAP NEW MESHMAP=QuadShotPickup MESH=QuadShotPickup
#exec MESHMAP SCALE MESHMAP=QuadShotPickup X=0.125 Y=0.125 Z=0.25
#exec MESH IMPORT MESH=QuadShotHeld ANIVFILE=MODELS\aniv20.3D DATAFILE=MODELS\data20.3D X=0 Y=0 Z=0
#exec MESH SEQUENCE MESH=QuadShotHeld SEQ=All STARTFRAME=0 NUMFRAMES=5
#exec MESH SEQUENCE MESH=QuadShotHeld SEQ=Fire STARTFRAME=1 NUMFRAMES=3
#exec MESHMAP NEW MESHMAP=QuadShotHeld MESH=QuadShotHeld
#exec MESHMAP SCALE MESHMAP=QuadShotHeld X=0.2 Y=0.2 Z=0.4
#exec MESH IMPORT MESH=QuadShot3rd ANIVFILE=MODELS\aniv26.3D DATAFILE=MODELS\data26.3D X=0 Y=0 Z=0
"""


def quadshot_package(root: Path) -> Path:
    """The package folder: the pickup's 3 frames and the held mesh's 5 (vertex 3 rises 4 raw Z per frame)."""
    (root / "Models").mkdir(parents=True)
    (root / "Classes").mkdir()
    for n, frames in ((25, 3), (20, 5)):
        d, a = tetra_pair(frames)
        (root / "Models" / f"data{n}.3D").write_bytes(d)
        (root / "Models" / f"ANIV{n}.3D").write_bytes(a)       # names on disk differ in case from the script's
    (root / "Classes" / "QuadShot.uc").write_bytes(QUADSHOT_UC.encode("latin-1"))
    return root
