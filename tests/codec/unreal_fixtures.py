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
