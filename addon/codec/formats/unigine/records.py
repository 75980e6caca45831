"""Runs of variable-length records (skin weights, animation frames), in bulk.

Each record starts with a byte that fixes its length. Finding where record k
starts is a chain; instead of walking it in Python, `chain_offsets` jumps
with pointer doubling (log2(count) numpy gathers over the byte range), with
a fast path when every record has the same length.
"""
from __future__ import annotations

import numpy as np

from ...binary import Reader
from .model import ALL_BITS, MAX_WEIGHTS, R_BIT, S_BITS, T_BITS


def chain_offsets(r: Reader, count: int, length_of: np.ndarray, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (relative to r.pos) of `count` chained records and the region bytes.

    length_of: (256,) int64, the record length for each lead byte, or 0 when
    the lead byte is invalid. Reads nothing; the caller advances r.pos.
    """
    max_len = int(length_of.max())
    span = min(r.remaining, count * max_len)
    region = np.frombuffer(r.buf, np.uint8, span, r.pos)
    if count == 0:
        return np.zeros(0, np.int64), region
    if span == 0:
        r.fail(f"{what}: {count} records but no bytes left")
    step = length_of[region]
    first = int(step[0])
    if first and count * first <= span and np.all(region[0:count * first:first] == region[0]):
        offsets = np.arange(count, dtype=np.int64) * first
    else:
        sentinel = span
        nxt = np.arange(span, dtype=np.int64) + step
        nxt[(step == 0) | (nxt > span)] = sentinel
        jump = np.append(nxt, sentinel)
        offsets = np.empty(count, np.int64)
        offsets[0] = 0
        done = 1
        while done < count:
            k = min(done, count - done)
            offsets[done:done + k] = jump[offsets[:k]]
            done += k
            if done < count:
                jump = jump[jump]
    # where the chain broke: a record with an invalid lead byte, or one past the end
    broken = offsets >= span
    if broken.any():
        i = int(np.argmax(broken))
        prev = int(offsets[i - 1])
        if step[prev] == 0:
            r.fail(f"{what}: record {i - 1} has an invalid lead byte 0x{region[prev]:02X}", offset=r.pos + prev)
        r.fail(f"{what}: record {i} of {count} starts past the end of the data", offset=r.pos + prev)
    invalid = step[offsets] == 0
    if invalid.any():
        i = int(np.argmax(invalid))
        at = int(offsets[i])
        r.fail(f"{what}: record {i} has an invalid lead byte 0x{region[at]:02X}", offset=r.pos + at)
    last = int(offsets[-1])
    if last + int(step[last]) > span:
        r.fail(f"{what}: the last record runs past the end of the data", offset=r.pos + last)
    return offsets, region


def gather(region: np.ndarray, offsets: np.ndarray, dtype: str, n: int) -> np.ndarray:
    """(len(offsets), n) values of `dtype` starting at each offset (unaligned)."""
    size = np.dtype(dtype).itemsize * n
    idx = offsets[:, None] + np.arange(size)
    return np.ascontiguousarray(region[idx]).view(dtype).reshape(len(offsets), n)


def scatter(out: np.ndarray, offsets: np.ndarray, values: np.ndarray) -> None:
    """Write each row of `values` as raw bytes at the matching offset of `out`."""
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(len(offsets), -1)
    out[offsets[:, None] + np.arange(raw.shape[1])] = raw


# -- skin weights ----------------------------------------------------------------
WEIGHT_LENGTHS = np.zeros(256, np.int64)
WEIGHT_LENGTHS[:MAX_WEIGHTS + 1] = 1 + 4 * np.arange(MAX_WEIGHTS + 1)


def read_weights(r: Reader, count: int, bone_count: int):
    """`count` weight records; a bone index outside 0..bone_count-1 is a FormatError at its offset."""
    offsets, region = chain_offsets(r, count, WEIGHT_LENGTHS, "weights")
    counts = region[offsets].copy() if count else np.zeros(0, np.uint8)
    bones = np.zeros((count, MAX_WEIGHTS), np.int16)
    weights = np.zeros((count, MAX_WEIGHTS), np.uint16)
    for k in range(MAX_WEIGHTS):
        has = counts > k
        if has.any():
            at = offsets[has] + 1 + 4 * k
            bones[has, k] = gather(region, at, "<i2", 1)[:, 0]
            weights[has, k] = gather(region, at + 2, "<u2", 1)[:, 0]
            bad = (bones[has, k] < 0) | (bones[has, k] >= bone_count)
            if bad.any():
                i = int(np.argmax(bad))
                r.fail(f"weights: record {int(np.flatnonzero(has)[i])} names bone {int(bones[has, k][i])}, "
                       f"but there are {bone_count} bones", offset=r.pos + int(at[i]))
    r.pos += int(offsets[-1] + WEIGHT_LENGTHS[counts[-1]]) if count else 0
    return counts, bones, weights


def encode_weights(counts: np.ndarray, bones: np.ndarray, weights: np.ndarray) -> bytes:
    lengths = WEIGHT_LENGTHS[counts]
    offsets = (np.cumsum(lengths) - lengths).astype(np.int64)
    out = np.zeros(int(lengths.sum()), np.uint8)
    out[offsets] = counts
    for k in range(MAX_WEIGHTS):
        has = counts > k
        if has.any():
            pair = np.zeros((int(has.sum()), 2), np.uint16)
            pair[:, 0] = bones[has, k].astype("<i2").view("<u2")
            pair[:, 1] = weights[has, k]
            scatter(out, offsets[has] + 1 + 4 * k, pair.astype("<u2"))
    return out.tobytes()


# -- animation frame records --------------------------------------------------
# (bit, value size, column) for every component, in stored order
def _components(scalar_size: int):
    comps = [(b, scalar_size, ("t", i)) for i, b in enumerate(T_BITS)]
    comps.append((R_BIT, 8, ("r", None)))
    comps += [(b, scalar_size, ("s", i)) for i, b in enumerate(S_BITS)]
    return comps


def record_lengths(scalar_size: int) -> np.ndarray:
    flags = np.arange(256)
    length = np.ones(256, np.int64)
    for bit, size, _ in _components(scalar_size):
        length += np.where(flags & bit, size, 0)
    length[flags & ~ALL_BITS & 0xFF != 0] = 0   # bit 7 is not this layout's
    return length


def _value_offsets(flags: np.ndarray, scalar_size: int) -> dict:
    """Byte offset of each component within its record (valid where its bit is set)."""
    off = np.ones(flags.shape, np.int64)
    out = {}
    for bit, size, col in _components(scalar_size):
        out[bit] = (off.copy(), size, col)
        off += np.where(flags & bit, size, 0)
    return out


def read_frames(r: Reader, frames: int, bones: int, scalar: str):
    """Frame-major records -> (flags (F,N), translation (F,N,3), rotation (F,N,4), scale (F,N,3)), carried forward."""
    size = np.dtype(scalar).itemsize
    lengths = record_lengths(size)
    n = frames * bones
    offsets, region = chain_offsets(r, n, lengths, "frames")
    flags = region[offsets].copy() if n else np.zeros(0, np.uint8)
    t = np.zeros((n, 3), scalar)
    rot = np.zeros((n, 4), "<i2")
    s = np.zeros((n, 3), scalar)
    stored = {}
    for bit, (off, vsize, (kind, i)) in _value_offsets(flags, size).items():
        has = (flags & bit) != 0
        stored[bit] = has
        if not has.any():
            continue
        at = offsets[has] + off[has]
        if kind == "r":
            rot[has] = gather(region, at, "<i2", 4)
        else:
            (t if kind == "t" else s)[has, i] = gather(region, at, scalar, 1)[:, 0]
    if n:
        r.pos += int(offsets[-1] + lengths[flags[-1]])
    shape = (frames, bones)
    t, rot, s = t.reshape(shape + (3,)), rot.reshape(shape + (4,)), s.reshape(shape + (3,))
    for bit, has in stored.items():
        _carry_forward(bit, has.reshape(shape), t, rot, s)
    return flags.reshape(shape), t, rot, s


def _carry_forward(bit: int, has: np.ndarray, t, rot, s) -> None:
    frames = np.arange(has.shape[0])[:, None]
    last = np.maximum.accumulate(np.where(has, frames, -1), axis=0)
    src = np.maximum(last, 0)
    cols = np.arange(has.shape[1])[None, :]
    if bit == R_BIT:
        rot[:] = np.where((last >= 0)[..., None], rot[src, cols], rot)
        return
    arr, i = (t, T_BITS.index(bit)) if bit in T_BITS else (s, S_BITS.index(bit))
    arr[..., i] = np.where(last >= 0, arr[src, cols, i], arr[..., i])


def encode_frames(flags: np.ndarray, t: np.ndarray, rot: np.ndarray, s: np.ndarray, scalar: str) -> bytes:
    size = np.dtype(scalar).itemsize
    f = flags.reshape(-1)
    lengths = record_lengths(size)[f]
    if (lengths == 0).any():
        raise ValueError("a record flag uses bit 7, which ms11/an10 do not define")
    offsets = (np.cumsum(lengths) - lengths).astype(np.int64)
    out = np.zeros(int(lengths.sum()), np.uint8)
    out[offsets] = f
    t = t.reshape(-1, 3).astype(scalar)
    s = s.reshape(-1, 3).astype(scalar)
    rot = rot.reshape(-1, 4).astype("<i2")
    for bit, (off, _, (kind, i)) in _value_offsets(f, size).items():
        has = (f & bit) != 0
        if not has.any():
            continue
        at = offsets[has] + off[has]
        values = rot[has] if kind == "r" else (t if kind == "t" else s)[has, i:i + 1]
        scatter(out, at, values)
    return out.tobytes()
