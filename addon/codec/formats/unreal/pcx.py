"""PCX skins, decoded in bulk (Blender cannot read PCX, and UE1 skins are PCX files).

Handled: 8 bits per pixel in 1 plane with the 256-colour palette at the end
of the file (0x0C + 768 RGB bytes: what UE1 skins are), and 8 bits in 3 or 4
planes (24-bit RGB, 32-bit RGBA: one scanline per plane, R then G then B).
Anything else (1/2/4-bit EGA images) raises UnsupportedFeature; a damaged
file raises FormatError. The caller turns both into a warning.

The 128-byte header: manufacturer 10, version, encoding (1 = RLE), bits per
pixel per plane, Xmin, Ymin, Xmax, Ymax (WORDs, inclusive), DPI, a 16-colour
palette, a reserved byte, the plane count, bytes per scanline per plane
(even, may exceed the width), palette info, screen size, filler.
RLE: a byte with its two top bits set repeats the next byte (its low six
bits) times; any other byte is itself. Runs may cross scanlines.
"""
from __future__ import annotations

import struct

import numpy as np

from ...errors import FormatError, UnsupportedFeature

HEADER_SIZE = 128
PALETTE_SIZE = 769            # 0x0C then 256 RGB triples


def _rle(data: np.ndarray) -> tuple[np.ndarray, bool]:
    """Decode a PCX RLE stream without a per-byte loop; also whether the last run lost its value.

    A byte >= 0xC0 that starts a token is a run marker and the byte after it its
    value. In a maximal stretch of bytes >= 0xC0 the first one starts a token
    (the byte before the stretch ends one), so the markers are the stretch's
    even offsets and the values its odd ones, plus the byte after an odd stretch.
    """
    n = len(data)
    hi = data >= 0xC0
    idx = np.arange(n)
    starts = hi & ~np.concatenate([[False], hi[:-1]])          # first byte of each stretch
    stretch_start = np.maximum.accumulate(np.where(starts, idx, 0))
    marker = hi & ((idx - stretch_start) % 2 == 0)
    cut = bool(n and marker[-1])
    if cut:
        marker[-1] = False
    is_value = np.concatenate([[False], marker[:-1]])
    token = marker | ~(hi | is_value)                          # markers and literals
    pos = np.flatnonzero(token)
    counts = np.where(marker[pos], data[pos] & 0x3F, 1)
    values = np.where(marker[pos], data[np.minimum(pos + 1, n - 1)], data[pos])
    return np.repeat(values.astype(np.uint8), counts), cut


def decode(data: bytes, masked: bool = False) -> np.ndarray:
    """PCX bytes -> (H, W, 4) float32 RGBA 0..1, bottom row first (Blender's order).

    `masked`: palette index 0 is transparent, as the engine draws a masked
    skin (alpha comes from the index, whatever colour the palette gives it)."""
    if len(data) < HEADER_SIZE:
        raise FormatError(f"{len(data)} bytes: shorter than the 128-byte PCX header", 0, "PCX")
    (maker, _version, encoding, bits, x0, y0, x1, y1) = struct.unpack_from("<4B4H", data, 0)
    planes, line = data[65], struct.unpack_from("<H", data, 66)[0]
    if maker != 10:
        raise FormatError(f"manufacturer byte {maker}, not 10: not a PCX file", 0, "PCX/HEADER")
    if encoding not in (0, 1):
        raise FormatError(f"encoding {encoding} is neither 0 (raw) nor 1 (RLE)", 2, "PCX/HEADER")
    w, h = x1 - x0 + 1, y1 - y0 + 1
    if w <= 0 or h <= 0 or line < w * bits // 8:
        raise FormatError(f"window {x0},{y0}..{x1},{y1} with {line} bytes per scanline is not an image",
                          4, "PCX/HEADER")
    if bits != 8 or planes not in (1, 3, 4):
        raise UnsupportedFeature(f"PCX with {bits} bits per pixel in {planes} planes; only 8-bit paletted "
                                 "and 24/32-bit PCX skins are decoded")
    paletted = planes == 1
    end = len(data)
    palette = None
    if paletted:
        if len(data) >= HEADER_SIZE + PALETTE_SIZE and data[-PALETTE_SIZE] == 0x0C:
            palette = np.frombuffer(data, np.uint8, 768, len(data) - 768).reshape(256, 3)
            end = len(data) - PALETTE_SIZE
        else:
            raise FormatError("8-bit PCX without the 256-colour palette (0x0C + 768 bytes) at its end",
                              len(data) - PALETTE_SIZE, "PCX/PALETTE")
    need = h * planes * line
    body = np.frombuffer(data, np.uint8, end - HEADER_SIZE, HEADER_SIZE)
    if encoding == 1:
        stream, cut = _rle(body)
        if cut and len(stream) < need:
            raise FormatError("the last RLE run has no value byte: truncated", end - 1, "PCX/PIXELS")
    else:
        stream = body
    if len(stream) < need:
        raise FormatError(f"{h} scanlines of {planes} x {line} bytes need {need} bytes, the data gives "
                          f"{len(stream)}: truncated", end, "PCX/PIXELS")
    rows = stream[:need].reshape(h, planes, line)[:, :, :w]           # top row first
    rgba = np.empty((h, w, 4), np.uint8)
    if paletted:
        rgba[:, :, :3] = palette[rows[:, 0]]
        rgba[:, :, 3] = np.where(masked & (rows[:, 0] == 0), 0, 255)
    else:
        rgba[:, :, :3] = rows[:, :3].transpose(0, 2, 1)
        rgba[:, :, 3] = rows[:, 3] if planes == 4 else 255
    return (rgba[::-1].astype(np.float32) / np.float32(255.0))
