"""The one binary buffer of a written glTF, and its buffer views and accessors, from numpy arrays.

Every view starts at a multiple of 4 bytes (glTF wants accessors aligned to their component size,
and vertex attributes to 4); vertex attributes of fewer than 4 bytes per element get a stride of 4.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .model import Document

ARRAY_BUFFER = 34962
ELEMENT_ARRAY_BUFFER = 34963
COMPONENT = {np.dtype("i1"): 5120, np.dtype("u1"): 5121, np.dtype("<i2"): 5122, np.dtype("<u2"): 5123,
             np.dtype("<u4"): 5125, np.dtype("<f4"): 5126}
TYPES = {1: "SCALAR", 2: "VEC2", 3: "VEC3", 4: "VEC4", 16: "MAT4"}


class Buffer:
    def __init__(self, json: dict) -> None:
        self.json = json
        self.parts: list[bytes] = []
        self.size = 0

    def view(self, data, target: int | None = None, stride: int | None = None) -> int:
        """A buffer view over `data` (bytes, or a C-contiguous array: kept as it is until bytes() joins)."""
        if isinstance(data, np.ndarray):
            data = memoryview(np.ascontiguousarray(data)).cast("B") if data.size else b""
        pad = -self.size % 4
        if pad:
            self.parts.append(b"\0" * pad)
            self.size += pad
        view = {"buffer": 0, "byteOffset": self.size, "byteLength": len(data)}
        if stride:
            view["byteStride"] = stride
        if target:
            view["target"] = target
        self.parts.append(data)
        self.size += len(data)
        views = self.json.setdefault("bufferViews", [])
        views.append(view)
        return len(views) - 1

    def accessor(self, a: np.ndarray, target: int | None = None, normalized: bool = False,
                 bounds: bool = False, kind: str = "") -> int:
        """An accessor over a copy of `a` ((N,) or (N, k), little-endian): min/max when `bounds`."""
        a = np.ascontiguousarray(a, a.dtype.newbyteorder("<") if a.dtype.itemsize > 1 else a.dtype)
        width = 1 if a.ndim == 1 else int(np.prod(a.shape[1:]))
        rows = a.reshape(len(a), width)
        item = rows.dtype.itemsize * width
        stride = None
        if target == ARRAY_BUFFER and item % 4:
            stride = item + (-item % 4)            # vertex attributes: each element on 4 bytes
            padded = np.zeros((len(rows), stride), np.uint8)
            padded[:, :item] = rows.view(np.uint8).reshape(len(rows), item)
            data = padded
        else:
            data = rows
        acc = {"bufferView": self.view(data, target, stride), "componentType": COMPONENT[rows.dtype],
               "count": int(len(rows)), "type": kind or TYPES[width]}
        if normalized:
            acc["normalized"] = True
        if bounds and len(rows):         # column by column: numpy reduces (N, 3) along N some 30 times slower
            acc["min"] = _plain(np.array([rows[:, k].min() for k in range(width)], rows.dtype))
            acc["max"] = _plain(np.array([rows[:, k].max() for k in range(width)], rows.dtype))
        return self._add(acc)

    def sparse(self, values: np.ndarray, rows: np.ndarray, count: int, bounds) -> int:
        """A (count, k) accessor of zeros but `values` at `rows` (sorted): sparse, no base view; bounds (lo, hi)."""
        values = np.ascontiguousarray(values)
        index = np.ascontiguousarray(rows, "<u2" if count <= 0xFFFF else "<u4")
        acc = {"componentType": COMPONENT[values.dtype], "count": int(count), "type": TYPES[values.shape[1]],
               "sparse": {"count": int(len(rows)),
                          "indices": {"bufferView": self.view(index), "componentType": COMPONENT[index.dtype]},
                          "values": {"bufferView": self.view(values)}}}
        return self._add(self._bounds(acc, values.dtype, *bounds, zero=len(rows) < count))

    def block(self, block: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> list[int]:
        """One vertex-attribute view over a (n, count, width) block, and an accessor over each of its n parts:
        the first 3 components of its rows, with bounds lo[j] and hi[j] ((n, 3): one call for thousands)."""
        n, count, width = block.shape
        stride = width * block.dtype.itemsize
        view, kind = self.view(block, ARRAY_BUFFER, stride), COMPONENT[block.dtype]
        lows, highs = lo.astype(block.dtype).tolist(), hi.astype(block.dtype).tolist()    # as _plain gives them
        return [self._add({"bufferView": view, "byteOffset": j * count * stride, "componentType": kind,
                           "count": int(count), "type": "VEC3", "min": lows[j], "max": highs[j]}) for j in range(n)]

    @staticmethod
    def _bounds(acc: dict, dtype, lo, hi, zero: bool = False) -> dict:
        lo, hi = np.asarray(lo).astype(dtype), np.asarray(hi).astype(dtype)
        if zero:                                   # the rows a sparse accessor leaves at zero count too
            lo, hi = np.minimum(lo, 0), np.maximum(hi, 0)
        acc["min"], acc["max"] = _plain(lo), _plain(hi)
        return acc

    def zeros(self, count: int) -> int:
        """A VEC3 float accessor of zeros: no buffer view at all."""
        return self._add({"componentType": 5126, "count": int(count), "type": "VEC3", "min": [0.0] * 3,
                          "max": [0.0] * 3})

    def _add(self, acc: dict) -> int:
        accessors = self.json.setdefault("accessors", [])
        accessors.append(acc)
        return len(accessors) - 1

    def pieces(self) -> list:
        """The buffer as the pieces it is joined from, padded to 4 bytes (as a .glb's BIN chunk must be)."""
        return self.parts + [b"\0" * (-self.size % 4)]


@dataclass
class Built(Document):
    """A Document that from_scene made: buffer 0 as the pieces of its Buffer (`buffers` stays empty), so that
    a .glb copies them once, behind its JSON chunk (morph targets can make it hundreds of MB)."""
    pieces: list = field(default_factory=list)


def _plain(v: np.ndarray) -> list:
    """JSON numbers: ints stay ints; floats as the float32 the accessor holds (shortest repr that reads back)."""
    if v.dtype.kind == "f":
        return [float(np.float32(x)) for x in v.tolist()]
    return [int(x) for x in v.tolist()]
