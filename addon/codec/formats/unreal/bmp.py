"""8-bit paletted BMP skins, decoded for masked skins only (palette index 0 is transparent).

Blender reads BMP files itself but drops the palette index, which a masked
skin needs. Handled: uncompressed (BI_RGB) 8 bits per pixel, bottom-up or
top-down rows padded to 4 bytes, a palette of BGRX entries after the info
header. Anything else raises UnsupportedFeature (the caller lets Blender
load the file); a damaged file raises FormatError.
"""
from __future__ import annotations

import struct

import numpy as np

from ...errors import FormatError, UnsupportedFeature

_FILE_HEADER = 14


def decode(data: bytes, masked: bool = True) -> np.ndarray:
    """BMP bytes -> (H, W, 4) float32 RGBA 0..1, bottom row first; index 0 transparent when `masked`."""
    if len(data) < _FILE_HEADER + 40 or data[:2] != b"BM":
        raise FormatError("not a BMP file (no 'BM' and 40-byte info header)", 0, "BMP")
    offset = struct.unpack_from("<I", data, 10)[0]
    info, width, height, _planes, bits, compression = struct.unpack_from("<IiiHHI", data, _FILE_HEADER)
    colours = struct.unpack_from("<I", data, 46)[0] or 256
    if bits != 8 or compression != 0:
        raise UnsupportedFeature(f"BMP with {bits} bits per pixel, compression {compression}: not 8-bit paletted")
    palette_at = _FILE_HEADER + info
    if info < 40 or colours > 256 or palette_at + 4 * colours > len(data):
        raise FormatError(f"a {info}-byte info header and {colours} palette entries do not fit "
                          f"in {len(data)} bytes", _FILE_HEADER, "BMP/HEADER")
    h = abs(height)
    stride = (width + 3) & ~3
    if width <= 0 or h == 0 or offset + stride * h > len(data):
        raise FormatError(f"{width} x {h} pixels at byte {offset} need {stride * h} bytes, "
                          f"{max(len(data) - offset, 0)} left: truncated", offset, "BMP/PIXELS")
    palette = np.zeros((256, 3), np.uint8)
    palette[:colours] = np.frombuffer(data, np.uint8, 4 * colours, palette_at).reshape(colours, 4)[:, 2::-1]
    rows = np.frombuffer(data, np.uint8, stride * h, offset).reshape(h, stride)[:, :width]
    if height < 0:
        rows = rows[::-1]                                  # top-down file: Blender wants the bottom row first
    rgba = np.empty((h, width, 4), np.uint8)
    rgba[:, :, :3] = palette[rows]
    rgba[:, :, 3] = np.where(masked & (rows == 0), 0, 255)
    return rgba.astype(np.float32) / np.float32(255.0)
