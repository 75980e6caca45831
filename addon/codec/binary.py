"""Bounds-checked little-endian reading and writing.

Every read checks the bytes left first, so a lying count raises FormatError
instead of allocating. The reader keeps a chunk path for error messages.
"""
from __future__ import annotations

import struct
from contextlib import contextmanager
from typing import Iterator

import numpy as np

from .errors import FormatError

_SCALARS = {
    "i8": "<b", "u8": "<B", "i16": "<h", "u16": "<H",
    "i32": "<i", "u32": "<I", "i64": "<q", "u64": "<Q",
    "f32": "<f", "f64": "<d",
}
_STRUCTS = {k: struct.Struct(v) for k, v in _SCALARS.items()}


F32_MAX = 3.4028234663852886e38
SMALL = 4096                         # Writer.buffer copies an array of fewer bytes at once


def _f32(v: float) -> float:
    """A float32 field's value: a finite one beyond float32 (a product of large ones) is its largest, not
    struct's OverflowError; NaN stays NaN."""
    return min(max(v, -F32_MAX), F32_MAX) if v == v else v


class Reader:
    """A cursor over bytes. `end` limits reads (a chunk's end), `path` names where we are."""

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None, path: str = ""):
        self.buf = bytes(data) if not isinstance(data, bytes) else data
        self.pos = pos
        self.end = len(self.buf) if end is None else end
        self._path = [path] if path else []

    # -- where we are ------------------------------------------------------
    @property
    def path(self) -> str:
        return "/".join(self._path)

    @property
    def remaining(self) -> int:
        return self.end - self.pos

    @contextmanager
    def chunk(self, name: str, end: int | None = None) -> Iterator["Reader"]:
        """Enter a named section; with `end`, reads are limited to it."""
        if end is not None and (end > self.end or end < self.pos):
            self.fail(f"{name} claims to end at {end}, outside its parent (which ends at {self.end})")
        saved = self.end
        self._path.append(name)
        if end is not None:
            self.end = end
        try:
            yield self
        finally:
            self._path.pop()
            self.end = saved

    def fail(self, message: str, offset: int | None = None) -> "FormatError":
        raise FormatError(message, self.pos if offset is None else offset, self.path)

    def need(self, n: int, what: str = "data") -> None:
        if n < 0 or n > self.remaining:
            self.fail(f"{what} needs {n} bytes, {self.remaining} left")

    # -- scalars -------------------------------------------------------------
    def scalar(self, kind: str):
        st = _STRUCTS[kind]
        self.need(st.size, kind)
        (value,) = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return value

    def u8(self) -> int: return self.scalar("u8")
    def i8(self) -> int: return self.scalar("i8")
    def u16(self) -> int: return self.scalar("u16")
    def i16(self) -> int: return self.scalar("i16")
    def u32(self) -> int: return self.scalar("u32")
    def i32(self) -> int: return self.scalar("i32")
    def f32(self) -> float: return self.scalar("f32")
    def f64(self) -> float: return self.scalar("f64")

    def unpack(self, fmt: str) -> tuple:
        st = struct.Struct("<" + fmt.lstrip("<"))
        self.need(st.size, f"struct {fmt}")
        out = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return out

    def bytes(self, n: int) -> bytes:
        self.need(n, "raw bytes")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def rest(self) -> bytes:
        return self.bytes(self.remaining)

    def cstring(self, max_len: int | None = None, encoding: str = "latin-1") -> str:
        """A NUL-terminated string; the NUL is consumed."""
        limit = self.end if max_len is None else min(self.end, self.pos + max_len + 1)
        nul = self.buf.find(b"\0", self.pos, limit)
        if nul < 0:
            self.fail("string has no terminating NUL" + (f" within {max_len} characters" if max_len else ""))
        out = self.buf[self.pos:nul].decode(encoding)
        self.pos = nul + 1
        return out

    # -- bulk ----------------------------------------------------------------
    def array(self, dtype, count: int, shape: tuple[int, ...] | None = None) -> np.ndarray:
        """`count` items of `dtype` (explicit-endian), read-only, checked before allocating."""
        dt = np.dtype(dtype)
        if count < 0:
            self.fail(f"negative count {count} of {dt}")
        need = dt.itemsize * count
        if need > self.remaining:
            self.fail(f"{count} items of {dt} need {need} bytes, {self.remaining} left")
        out = np.frombuffer(self.buf, dt, count, self.pos)
        self.pos += need
        return out.reshape(shape) if shape is not None else out

    def check_count(self, count: int, item_size: int, what: str) -> int:
        """Check that `count` items of `item_size` bytes can still be present."""
        if count < 0 or count * item_size > self.remaining:
            self.fail(f"{what}: count {count} x {item_size} bytes exceeds the {self.remaining} bytes left")
        return count


class Writer:
    """Little-endian output into a growing buffer; `tell()` for patching sizes."""

    def __init__(self) -> None:
        self.parts = bytearray()
        self._before: list = []         # pieces before `parts`: bytearrays and large arrays' own buffers
        self._base = 0                  # their total length

    def tell(self) -> int:
        return self._base + len(self.parts)

    def scalar(self, kind: str, value) -> None:
        if kind == "f32":
            value = _f32(value)
        self.parts += _STRUCTS[kind].pack(value)

    def u8(self, v: int) -> None: self.scalar("u8", v)
    def i8(self, v: int) -> None: self.scalar("i8", v)
    def u16(self, v: int) -> None: self.scalar("u16", v)
    def i16(self, v: int) -> None: self.scalar("i16", v)
    def u32(self, v: int) -> None: self.scalar("u32", v)
    def i32(self, v: int) -> None: self.scalar("i32", v)
    def f32(self, v: float) -> None: self.scalar("f32", v)
    def f64(self, v: float) -> None: self.scalar("f64", v)

    def pack(self, fmt: str, *values) -> None:
        if "f" in fmt:
            values = [_f32(v) if isinstance(v, float) else v for v in values]
        self.parts += struct.pack("<" + fmt.lstrip("<"), *values)

    def bytes(self, b: bytes) -> None:
        self.parts += b

    def cstring(self, s: str, encoding: str = "latin-1") -> None:
        """A NUL-terminated string; a character the encoding lacks is written as "?" (losses.report
        warns about such names before any writer runs)."""
        self.parts += s.encode(encoding, "replace") + b"\0"

    def array(self, arr: np.ndarray, dtype=None) -> None:
        a = np.asarray(arr)
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        self.parts += np.ascontiguousarray(a).tobytes()

    def buffer(self, arr: np.ndarray, dtype=None) -> None:
        """Like `array`, for large arrays: their bytes stay in the array (which must not change) until
        getvalue, so that the file's bytes are copied once, not into a buffer and then out of it."""
        a = np.asarray(arr)
        a = np.ascontiguousarray(a if dtype is None else a.astype(dtype, copy=False))
        if a.nbytes < SMALL:           # a copy costs less than a piece of its own (many small morph targets)
            self.parts += a.tobytes()
        else:
            self._before += [self.parts, memoryview(a.reshape(-1)).cast("B")]
            self._base += len(self.parts) + a.nbytes
            self.parts = bytearray()

    def patch(self, offset: int, kind: str, value) -> None:
        """Overwrite a value written since the last `buffer`."""
        if offset < self._base:
            raise ValueError("patch before a buffer() piece")
        _STRUCTS[kind].pack_into(self.parts, offset - self._base, value)

    def getvalue(self) -> bytes:
        return b"".join(self._before + [self.parts]) if self._before else bytes(self.parts)
