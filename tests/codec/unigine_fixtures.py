"""Hand-built UNIGINE ms11/an10 bytes for the test_unigine*.py tests.

Written from the format page and the notes with struct, independently of the
codec's writer, so that the tests do not check the codec against itself.
"""
from __future__ import annotations

import struct


def cint(v: int) -> bytes:
    """The notes' compact int, spelled out: sign-magnitude, 6 bits then 7-bit groups."""
    mag, neg = abs(v), v < 0
    groups = [mag & 0x3F]
    mag >>= 6
    while mag:
        groups.append(mag & 0x7F)
        mag >>= 7
    out = bytearray()
    for i, g in enumerate(groups):
        more = 0x80 if i < len(groups) - 1 else 0
        sign = 0x40 if (i == 0 and neg) else 0
        out.append(g | more | sign)
    return bytes(out)


def string(s: str) -> bytes:
    raw = s.encode() + b"\0"
    return cint(len(raw)) + raw


def floats(*v) -> bytes:
    return struct.pack(f"<{len(v)}f", *v)


BOUNDS0 = floats(*[0.0] * 10)


def bone_headers(bones: list[tuple[str, int]]) -> bytes:
    return cint(len(bones)) + b"".join(string(n) + struct.pack("<h", p) for n, p in bones)


def bind(poses: list[tuple]) -> bytes:
    """Each pose: (t(3), r xyzw(4), s(3))."""
    return b"".join(floats(*t, *r, *s) for t, r, s in poses)


def idx(values, count: int) -> bytes:
    """An index list with the width the notes pick from `count` vertices."""
    fmt = "B" if count < 256 else ("H" if count < 65536 else "i")
    return cint(len(values)) + struct.pack(f"<{len(values)}{fmt}", *values)


def surface_header(name: str, bounds: bytes = BOUNDS0, targets=("base",)) -> bytes:
    return string(name) + bounds + cint(len(targets)) + b"".join(string(t) for t in targets)


def surface_geometry(targets: list[tuple[list, list]], weights: list[list[tuple[int, int]]] | None = None,
                     uv0=None, uv1=None, colors=None, coord=(), tri=(), coord_count=None, tri_count=None) -> bytes:
    """targets: [(positions [(x,y,z)], tangents [(x,y,z,w) shorts])]; weights: per vertex [(bone, weight)]."""
    out = b""
    for pos, tans in targets:
        out += cint(len(pos)) + b"".join(floats(*p) for p in pos)
        out += cint(len(tans)) + b"".join(struct.pack("<4h", *t) for t in tans)
    weights = weights or []
    out += cint(len(weights))
    for pairs in weights:
        out += bytes([len(pairs)]) + b"".join(struct.pack("<hH", b, w) for b, w in pairs)
    for uv in (uv0 or [], uv1 or []):
        out += cint(len(uv)) + b"".join(floats(*t) for t in uv)
    colors = colors or []
    out += cint(len(colors)) + b"".join(bytes(c) for c in colors)
    nc = len(targets[0][0]) if coord_count is None else coord_count
    nt = len(targets[0][1]) if tri_count is None else tri_count
    return out + idx(list(coord), nc) + idx(list(tri), nt)


def mesh_record(flag: int, t=None, q=None, s=None) -> bytes:
    """One .mesh frame record: flag, then the flagged float/short components in page order."""
    out = bytes([flag])
    for i in range(3):
        if flag & (1 << i):
            out += floats(t[i])
    if flag & 8:
        out += struct.pack("<4h", *q)
    for i in range(3):
        if flag & (16 << i):
            out += floats(s[i])
    return out


def anim_record(flag: int, t=None, q=None, s=None) -> bytes:
    """One .anim frame record: translation and scale are unsigned shorts."""
    out = bytes([flag])
    for i in range(3):
        if flag & (1 << i):
            out += struct.pack("<H", t[i])
    if flag & 8:
        out += struct.pack("<4h", *q)
    for i in range(3):
        if flag & (16 << i):
            out += struct.pack("<H", s[i])
    return out


def mesh_file(bones=(), poses=(), anims=(), surfaces=(), bounds: bytes = BOUNDS0, magic: bytes = b"ms11",
              trailing: bytes = b"") -> bytes:
    """anims: [(name, bone indices, flag, frames, records bytes)]; surfaces: [(header bytes, geometry bytes)]."""
    out = magic + bounds + bone_headers(list(bones))
    out += cint(len(anims)) + b"".join(string(a[0]) for a in anims)
    out += cint(len(surfaces)) + b"".join(h for h, _ in surfaces)
    out += magic + bind(list(poses))
    for name, bone_idx, flag, frames, records in anims:
        out += cint(len(bone_idx)) + struct.pack(f"<{len(bone_idx)}h", *bone_idx) + bytes([flag])
        out += cint(frames) + records
    out += b"".join(g for _, g in surfaces)
    return out + magic + trailing


def anim_file(bones=(), poses=(), anims=(), magic: bytes = b"an10") -> bytes:
    """anims: [(name, bone indices, t box (min3, size3), s box (min3, size3), flag, frames, records bytes)]."""
    out = magic + floats(1e9, 1e9, 1e9, -1e9, -1e9, -1e9, 0, 0, 0, -1) + bone_headers(list(bones))
    out += cint(len(anims)) + b"".join(string(a[0]) for a in anims)
    out += magic + bind(list(poses))
    for name, bone_idx, tbox, sbox, flag, frames, records in anims:
        out += cint(len(bone_idx)) + struct.pack(f"<{len(bone_idx)}h", *bone_idx)
        out += floats(*tbox[0], *tbox[1], *sbox[0], *sbox[1]) + bytes([flag]) + cint(frames) + records
    return out + magic


IDENT = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0, 1.0), (1.0, 1.0, 1.0))
Q_IDENTITY = (0, 0, 0, 32767)                  # normal +Z, tangent +X, sign +


def quad_surface(name: str = "quad", z: float = 0.0, tri_vertices: int = 4):
    """Two triangles over a unit square at height z; triangle vertex i follows coordinate vertex i."""
    pos = [(0, 0, z), (1, 0, z), (1, 1, z), (0, 1, z)]
    tans = [Q_IDENTITY] * tri_vertices
    uv = [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)][:tri_vertices]
    corners = [0, 1, 2, 0, 2, 3]
    geo = surface_geometry([(pos, tans)], uv0=uv, coord=corners, tri=[c % tri_vertices for c in corners])
    return surface_header(name, floats(0, 0, z, 1, 1, z, 0.5, 0.5, z, 0.5 ** 0.5)), geo
