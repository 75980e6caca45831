"""Embedded PNG pictures -> Scene image pixels, so that a .glb's textures travel (Blender cannot load
a picture from bytes held in the Scene; pixels it can).

8-bit PNG (grey, grey-alpha, RGB, RGBA, palette; not interlaced). The scanline filters are undone
along anti-diagonals: a byte depends on its left, upper and upper-left neighbours only, so every
pixel of one diagonal is found at once (W + H steps, not W x H). Sizes are checked before the
inflate, which stops at the picture's size: a small file cannot unpack into gigabytes.
"""
from __future__ import annotations

import struct
import zlib

import numpy as np

from ...errors import FormatError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
MAX_PIXELS = 1 << 24            # 4k x 4k
CHANNELS = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}


def png_pixels(data: bytes, max_pixels: int = MAX_PIXELS) -> np.ndarray:
    """(H, W, 4) float32 0..1, bottom row first (the Scene's Image.pixels); at most max_pixels."""
    if not data.startswith(PNG_MAGIC):
        raise FormatError("not a PNG", 0, "PNG")
    pos, idat, palette, alpha, head = 8, [], None, None, None
    while pos + 8 <= len(data):
        size, kind = struct.unpack_from(">I4s", data, pos)
        body = data[pos + 8:pos + 8 + size]
        if len(body) < size:
            raise FormatError(f"chunk {kind!r} runs past the end", pos, "PNG")
        if kind == b"IHDR" and size >= 13:
            head = struct.unpack_from(">IIBBBBB", body)
        elif kind == b"PLTE":
            palette = np.frombuffer(body[:size - size % 3], np.uint8).reshape(-1, 3)
        elif kind == b"tRNS":
            alpha = np.frombuffer(body, np.uint8)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + size
    if head is None:
        raise FormatError("no IHDR", 8, "PNG")
    w, h, depth, color, _, _, interlace = head
    if depth != 8 or color not in CHANNELS or interlace:
        raise FormatError(f"PNG of bit depth {depth}, colour type {color}, interlace {interlace}: only 8-bit, "
                          "not interlaced", 16, "PNG/IHDR")
    if not 0 < w * h <= min(max_pixels, MAX_PIXELS):
        raise FormatError(f"{w} x {h} pixels: more than the file's pictures may unpack to", 16, "PNG/IHDR")
    bpp = CHANNELS[color]
    stride = w * bpp
    need = h * (stride + 1)
    try:
        inflate = zlib.decompressobj()
        raw = inflate.decompress(b"".join(idat), need)
    except zlib.error as e:
        raise FormatError(f"the picture's data does not inflate: {e}", None, "PNG/IDAT") from None
    if len(raw) < need:
        raise FormatError(f"{len(raw)} bytes of scanlines, {need} needed", None, "PNG/IDAT")
    rows = np.frombuffer(raw, np.uint8, need).reshape(h, stride + 1)
    img = _unfilter(rows[:, 0], rows[:, 1:].reshape(h, w, bpp))
    return _rgba(img, color, palette, alpha)[::-1].astype(np.float32) / np.float32(255.0)


def _unfilter(kind: np.ndarray, f: np.ndarray) -> np.ndarray:
    """Scanlines of (H, W, bpp) filtered bytes with each row's filter type -> the picture's bytes."""
    h, w, _ = f.shape
    if (kind > 4).any():
        raise FormatError(f"scanline filter {int(kind.max())} (0-4 only)", None, "PNG/IDAT")
    # uint8 sums wrap as PNG's do; a zero row above and a zero column to the left
    out = np.zeros((h + 1, w + 1) + f.shape[2:], np.uint8)
    if not (kind >= 3).any():       # none, sub, up only: rows in turn, sub as a running sum
        for y in range(h):
            row = f[y] + out[y, 1:] if kind[y] == 2 else f[y]
            out[y + 1, 1:] = np.cumsum(row, 0, dtype=np.uint8) if kind[y] == 1 else row
        return out[1:, 1:]
    # an anti-diagonal at a time (x + y = d): its left, up and up-left neighbours lie on the two before;
    # gathers straight into `out`, so memory stays that of the picture
    kinds = kind.astype(np.int16)
    for d in range(h + w - 1):
        y = np.arange(max(0, d - w + 1), min(h, d + 1))
        x = d - y
        a = out[y + 1, x].astype(np.int16)
        b = out[y, x + 1].astype(np.int16)
        c = out[y, x].astype(np.int16)
        pa, pb, pc = np.abs(b - c), np.abs(a - c), np.abs(a + b - 2 * c)      # |p - a|, |p - b|, |p - c|
        paeth = np.where((pa <= pb) & (pa <= pc), a, np.where(pb <= pc, b, c))
        k = np.broadcast_to(kinds[y].reshape((-1,) + (1,) * (a.ndim - 1)), a.shape)
        pred = np.choose(k, (np.zeros_like(a), a, b, (a + b) >> 1, paeth))
        out[y + 1, x + 1] = f[y, x] + pred.astype(np.uint8)
    return out[1:, 1:]


def _rgba(img: np.ndarray, color: int, palette, alpha) -> np.ndarray:
    h, w, _ = img.shape
    out = np.full((h, w, 4), 255, np.uint8)
    if color == 3:
        if palette is None:
            raise FormatError("a palette picture without PLTE", None, "PNG")
        if not len(palette):
            raise FormatError("a palette picture with an empty PLTE", None, "PNG/PLTE")
        idx = np.minimum(img[..., 0], len(palette) - 1)
        out[..., :3] = palette[idx]
        if alpha is not None and len(alpha):
            table = np.full(256, 255, np.uint8)
            table[:len(alpha)] = alpha[:256]
            out[..., 3] = table[img[..., 0]]
    elif color in (0, 4):
        out[..., :3] = img[..., :1]
        if color == 4:
            out[..., 3] = img[..., 1]
    else:
        out[..., :img.shape[2]] = img
    return out
