"""Vertex packing: raw frame bytes <-> integer (X, Y, Z) per vertex, in bulk.

Standard: one little-endian 32-bit word, X in bits 0-10, Y in 11-21, Z in
22-31, each field signed two's complement (the notes correct the original
document, which treats them as unsigned). Deus Ex: int16 X, Y, Z, pad.
"""
from __future__ import annotations

import numpy as np

from .model import BYTES_PER_VERTEX, DEUS_EX, STANDARD, AnimationFile

# Inclusive raw limits per axis.
LIMITS = {
    STANDARD: (np.array([-1024, -1024, -512]), np.array([1023, 1023, 511])),
    DEUS_EX: (np.array([-32768] * 3), np.array([32767] * 3)),
}


def vertices_present(body_size: int, frames: int, frame_size: int, variant: str, num_verts: int) -> int:
    """How many of the mesh's vertices the last frame has bytes for, vertex j of frame i
    being at i * frame_size + j * bytes_per_vertex in a body of `body_size` bytes."""
    if frames == 0:
        return num_verts
    return max(0, min(num_verts, (body_size - (frames - 1) * frame_size) // BYTES_PER_VERTEX[variant]))


def frame_vertices(animation: AnimationFile, variant: str, num_verts: int) -> np.ndarray:
    """(F, num_verts * bytes_per_vertex) uint8: each whole frame's vertex bytes.

    FrameSize is only the stride (the notes). A frame stores the vertices its
    stride holds; the last frame's may run on into the bytes after it (one
    frame of NumVerts*3 bytes in a file that holds all NumVerts*4). A vertex a
    frame does not store is never read from the next frame's bytes: it keeps
    the position the last frame gives it, or the origin when no frame stores it.
    """
    frames, size = animation.frames, animation.frame_size
    count = len(frames)
    bpv = BYTES_PER_VERTEX[variant]
    width = num_verts * bpv
    if count == 0 or width == 0:
        return np.zeros((count, width), np.uint8)
    if size >= width:
        return frames[:, :width]
    stored = min(num_verts, size // bpv) * bpv
    last = np.concatenate([frames[-1], np.frombuffer(animation.trailing, np.uint8)])[:width]
    last = last[:len(last) // bpv * bpv]
    out = np.zeros((count, width), np.uint8)
    out[:, :stored] = frames[:, :stored]
    out[:, stored:len(last)] = last[stored:]
    return out


def stored_vertices(frame_size: int, variant: str, num_verts: int) -> int:
    """How many vertices every frame stores within its stride."""
    return min(num_verts, frame_size // BYTES_PER_VERTEX[variant])


def is_deus_ex(frames: np.ndarray, frame_size: int, num_verts: int) -> bool:
    """FrameSize == 8 * NumVerts and every int16 pad is zero (the notes' test)."""
    if num_verts == 0 or frame_size != 8 * num_verts or len(frames) == 0:
        return False
    pads = np.ascontiguousarray(frames).view("<i2").reshape(len(frames), num_verts, 4)[:, :, 3]
    return not pads.any()


def unpack(frames: np.ndarray, variant: str, num_verts: int, scale=None) -> np.ndarray:
    """(F, S) uint8 vertex bytes (see frame_vertices) -> (F, num_verts, 3) raw coordinates:
    int32, or float32 times the per-axis `scale` when one is given (one pass instead of two
    on big meshes). Vertices past S bytes come out as 0."""
    count, size = frames.shape
    bpv = BYTES_PER_VERTEX[variant]
    n = min(num_verts, size // bpv)
    out = np.zeros((count, num_verts, 3), np.int32 if scale is None else np.float32)
    if n == 0 or count == 0:
        return out
    body = np.ascontiguousarray(frames[:, :n * bpv])
    if variant == DEUS_EX:
        fields = body.view("<i2").reshape(count, n, 4)
        columns = [fields[:, :, 0], fields[:, :, 1], fields[:, :, 2]]
    else:
        # signed fields: shift each to the top of an int32, then shift back arithmetically
        w = body.view("<i4").reshape(count, n)
        columns = [(w << 21) >> 21, (w << 10) >> 21, w >> 22]
    for a, column in enumerate(columns):
        if scale is None:
            out[:, :n, a] = column
        else:
            np.multiply(column, np.float32(scale[a]), out=out[:, :n, a], casting="unsafe")
    return out


def quantize(values: np.ndarray, variant: str) -> tuple[np.ndarray, int]:
    """(..., 3) float raw coordinates -> (..., 3) int32, rounded and clamped; also the clamped count."""
    axes_first = np.moveaxis(np.asarray(values, np.float64), -1, 0).copy()
    raw, clamped = quantize_axes(axes_first, variant)
    return np.moveaxis(raw, 0, -1), clamped


def quantize_axes(values: np.ndarray, variant: str) -> tuple[np.ndarray, int]:
    """(3, ...) float raw coordinates, one contiguous block per axis, rounded in place and
    clamped to the field range (never wrapped); returns (int32, number clamped)."""
    lo, hi = LIMITS[variant]
    clamped = 0
    np.rint(values, out=values)
    for a in range(3):
        axis = values[a]
        if axis.size and (axis.min() < lo[a] or axis.max() > hi[a]):
            clamped += int(np.count_nonzero((axis < lo[a]) | (axis > hi[a])))
            np.clip(axis, lo[a], hi[a], out=axis)
    return values.astype(np.int32), clamped


def pack(raw: np.ndarray, variant: str) -> np.ndarray:
    """(F, V, 3) in-range integers -> (F, V * bytes_per_vertex) uint8 frames."""
    return pack_axes(np.moveaxis(np.asarray(raw, np.int32), -1, 0), variant)


def pack_axes(raw: np.ndarray, variant: str) -> np.ndarray:
    """(3, F, V) in-range integers -> (F, V * bytes_per_vertex) uint8 frames."""
    x, y, z = (np.asarray(raw[a], np.int32) for a in range(3))
    count, nv = x.shape
    if variant == DEUS_EX:
        body = np.zeros((count, nv, 4), "<i2")
        body[:, :, 0], body[:, :, 1], body[:, :, 2] = x, y, z
    else:
        # int32 shifts wrap, which is the two's complement packing we want for Z
        body = z << 22
        body |= (y & 0x7FF) << 11
        body |= x & 0x7FF
        body = body.astype("<i4", copy=False)
    return np.ascontiguousarray(body).view(np.uint8).reshape(count, nv * BYTES_PER_VERTEX[variant])
