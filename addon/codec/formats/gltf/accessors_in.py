"""glTF accessors -> numpy arrays, and checked access to the JSON, for the reader.

Every byte range (buffer view in its buffer, accessor in its view, sparse indices and values) is
checked against the bytes really held before anything is allocated; an accessor with no buffer
view (zeros, then sparse values) may not be longer than the longest accessor the bytes back, so a
small JSON cannot ask for gigabytes; and the vertices, corners and morph-target vertices that
primitives build are counted before they are built, against the bytes held (`Accessors.charge`), so
that primitives naming the same accessors over and over cannot either. Errors name the JSON path (`accessors[3].count`) and the
offset in the buffer.
"""
from __future__ import annotations

import numpy as np

from ...errors import FormatError
from .model import COMPONENT_DTYPES, MESHOPT, TYPE_WIDTHS, Document

MIN_ZEROS = 1 << 16          # zero-filled accessors may always be this long
MIN_ITEMS = 1 << 22          # and a file may always give this many vertices and corners
MIN_TARGET_ITEMS = 1 << 23   # and morph-target vertices (sparse accessors back many with few bytes)
TARGETS_PER_BYTE = 8
_NORMALIZE = {"i1": 127.0, "u1": 255.0, "<i2": 32767.0, "<u2": 65535.0, "<u4": 4294967295.0}
_SPARSE_INDEX = {5121: "u1", 5123: "<u2", 5125: "<u4"}


def known(value, table) -> bool:
    """`value in table` for JSON values of any type (a list or an object is never a key)."""
    return isinstance(value, (str, int, float)) and value in table


def extension(o: dict, name: str) -> dict | None:
    """o.extensions[name] when it is an object."""
    e = o.get("extensions")
    e = e.get(name) if isinstance(e, dict) else None
    return e if isinstance(e, dict) else None


def items(tree: dict, key: str) -> list:
    v = tree.get(key, [])
    if not isinstance(v, list):
        raise FormatError(f"{key} is not a list", None, key)
    return v


def obj(tree: dict, key: str, index, path: str = "") -> dict:
    """tree[key][index], an object, or a FormatError naming `path` (the referring field)."""
    lst = items(tree, key)
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(lst):
        raise FormatError(f"{index!r} is not an index into {key} (0..{len(lst) - 1})", None, path or key)
    o = lst[index]
    if not isinstance(o, dict):
        raise FormatError("not an object", None, f"{key}[{index}]")
    return o


def num(o: dict, key: str, path: str, default=None, lo: float | None = None, integer: bool = False):
    v = o.get(key, default)
    ok = isinstance(v, int) if integer else isinstance(v, (int, float))
    if v is None or isinstance(v, bool) or not ok or (lo is not None and v < lo) or (not integer and not np.isfinite(v)):
        raise FormatError(f"{v!r} is not a {'count' if integer else 'number'}" + (f" >= {lo}" if lo is not None else ""),
                          None, f"{path}.{key}")
    return v


def floats(o: dict, key: str, n: int, path: str, default) -> list[float]:
    v = o.get(key, default)
    if not isinstance(v, list) or len(v) != n or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                         and np.isfinite(x) for x in v):
        raise FormatError(f"expected {n} numbers", None, f"{path}.{key}")
    return [float(x) for x in v]


class Accessors:
    """Decodes a document's accessors, each once."""

    def __init__(self, doc: Document):
        self.doc = doc
        self.cache: dict[tuple[int, bool], np.ndarray] = {}
        # bound by what the buffers hold: the longest accessor they can back
        backed = [a["count"] for a in items(doc.json, "accessors")
                  if isinstance(a, dict) and "bufferView" in a and isinstance(a.get("count"), int)]
        self.zero_limit = max(MIN_ZEROS, min(max(backed, default=0), sum(len(b) for b in doc.buffers)))
        held = sum(len(b) for b in doc.buffers)
        self.limits = [max(MIN_ITEMS, held), max(MIN_TARGET_ITEMS, TARGETS_PER_BYTE * held)]
        self.items = [0, 0]

    def charge(self, items: int, targets: int, path: str) -> None:
        """Count, before they are built, the vertices and corners the Scene is given over the whole
        file (at most one per byte the buffers hold: a vertex takes 4 at least, a corner's index 1)
        and its morph-target vertices (sparse targets back many with few bytes), so that primitives
        and accessors naming the same bytes over and over cannot multiply them."""
        for k, (n, what) in enumerate(((items, "vertices and corners"), (targets, "morph-target vertices"))):
            self.items[k] += n
            if self.items[k] > self.limits[k]:
                raise FormatError(f"{self.items[k]} {what} from {sum(len(b) for b in self.doc.buffers)} bytes of "
                                  "buffers: accessors and primitives that share their bytes over and over", None, path)

    def get(self, index, path: str, as_float: bool = True) -> np.ndarray:
        """(count, width) array: float32 (normalized integers scaled to 0..1 or -1..1) when as_float,
        else the stored integer type."""
        a = obj(self.doc.json, "accessors", index, path)
        key = (index, as_float)
        if key not in self.cache:
            self.cache[key] = self._decode(a, f"accessors[{index}]", as_float)
        return self.cache[key]

    def _decode(self, a: dict, path: str, as_float: bool) -> np.ndarray:
        ct = a.get("componentType")
        if not known(ct, COMPONENT_DTYPES):
            raise FormatError(f"componentType {ct!r} is not a glTF one", None, f"{path}.componentType")
        if not known(a.get("type"), TYPE_WIDTHS):
            raise FormatError(f"type {a.get('type')!r} is not a glTF one", None, f"{path}.type")
        dt = np.dtype(COMPONENT_DTYPES[ct])
        width = TYPE_WIDTHS[a["type"]]
        count = num(a, "count", path, lo=1, integer=True)         # the standard: at least one
        if "bufferView" in a:
            out = self._view_items(a, dt, width, count, path)
        else:
            if count > self.zero_limit:
                raise FormatError(f"{count} items with no buffer view: more than the buffers back "
                                  f"({self.zero_limit})", None, f"{path}.count")
            out = np.zeros((count, width), dt)
        if "sparse" in a:
            out = self._sparse(a["sparse"], out, count, width, dt, f"{path}.sparse")
        if dt.kind == "f" and not np.isfinite(out).all():
            raise FormatError("NaN or infinite values (the standard allows neither)", None, path)
        if not as_float:
            return out
        if a.get("normalized") and COMPONENT_DTYPES[ct] in _NORMALIZE:
            scale = _NORMALIZE[COMPONENT_DTYPES[ct]]
            return np.maximum(out.astype(np.float32) / np.float32(scale), np.float32(-1.0))
        return out.astype(np.float32, copy=False)

    def view_bytes(self, index, path: str) -> bytes:
        """A buffer view's bytes (an embedded picture's)."""
        data, start, length, _ = self._view(index, path)
        return data[start:start + length]

    def _view(self, index, path: str) -> tuple[bytes, int, int, int | None]:
        """(the buffer's bytes, the view's start in it, its length, its byteStride or None)."""
        v = obj(self.doc.json, "bufferViews", index, path)
        vp = f"bufferViews[{index}]"
        for e in MESHOPT:
            if extension(v, e) is not None:
                raise FormatError(f"{e}: compressed buffer views are not read (decompress the file first, e.g. "
                                  "with gltf-transform)", None, vp)
        b = v.get("buffer")
        obj(self.doc.json, "buffers", b, f"{vp}.buffer")
        data = self.doc.buffers[b] if b < len(self.doc.buffers) else b""
        start = num(v, "byteOffset", vp, 0, 0, True)
        length = num(v, "byteLength", vp, None, 1, True)
        if start + length > len(data):
            raise FormatError(f"bytes {start}..{start + length} of buffer {b}, which holds {len(data)}",
                              start, f"{vp}.byteLength")
        stride = v.get("byteStride")
        if stride is not None:
            stride = num(v, "byteStride", vp, lo=4, integer=True)
            if stride > 252 or stride % 4:
                raise FormatError(f"byteStride {stride} is not a multiple of 4 in 4..252", start, f"{vp}.byteStride")
        return data, start, length, stride

    def _view_items(self, a: dict, dt: np.dtype, width: int, count: int, path: str) -> np.ndarray:
        data, start, length, stride = self._view(a["bufferView"], f"{path}.bufferView")
        offset = num(a, "byteOffset", path, 0, 0, True)
        rows, cols = _matrix_shape(a["type"])
        col_bytes = -(-dt.itemsize * rows // 4) * 4 if cols > 1 else dt.itemsize * rows
        elem = col_bytes * cols
        stride = stride or elem
        if stride < elem:
            raise FormatError(f"byteStride {stride} is less than the {elem}-byte element", start, f"{path}.bufferView")
        if offset % dt.itemsize or (stride % dt.itemsize):
            raise FormatError(f"offset {offset} / stride {stride} not aligned to the {dt.itemsize}-byte components",
                              start + offset, f"{path}.byteOffset")
        if count and offset + stride * (count - 1) + elem > length:
            raise FormatError(f"{count} items of {elem} bytes every {stride} from byte {offset} run past the "
                              f"buffer view's {length} bytes", start + offset, f"{path}.count")
        if not count:
            return np.zeros((0, width), dt)
        if cols == 1:        # a strided view of the bytes (checked above to lie inside the view)
            return np.ndarray((count, width), dt, data, start + offset, (stride, dt.itemsize))
        span = stride * (count - 1) + elem
        raw = np.frombuffer(data, np.uint8, span, start + offset)
        # rows of `stride` bytes (the last one short: the element only), then the columns' components
        padded = np.zeros(stride * count, np.uint8) if span < stride * count else None
        if padded is not None:
            padded[:span] = raw
            raw = padded
        table = raw.reshape(count, stride)
        parts = [table[:, c * col_bytes:c * col_bytes + dt.itemsize * rows] for c in range(cols)]
        block = np.ascontiguousarray(np.concatenate(parts, axis=1) if cols > 1 else parts[0])
        return block.view(dt).reshape(count, width)

    def _sparse(self, s, out: np.ndarray, count: int, width: int, dt: np.dtype, path: str) -> np.ndarray:
        if not isinstance(s, dict) or not isinstance(s.get("indices"), dict) or not isinstance(s.get("values"), dict):
            raise FormatError("sparse needs count, indices and values", None, path)
        n = num(s, "count", path, lo=1, integer=True)
        if n > count:
            raise FormatError(f"{n} sparse values for {count} items", None, f"{path}.count")
        ip, vp = s["indices"], s["values"]
        it = ip.get("componentType")
        if not known(it, _SPARSE_INDEX):
            raise FormatError(f"componentType {it!r} is not an unsigned index type", None, f"{path}.indices.componentType")
        idx = self._packed(ip, np.dtype(_SPARSE_INDEX[it]), n, f"{path}.indices").astype(np.int64)
        if len(idx) and int(idx.max()) >= count:
            raise FormatError(f"sparse index {int(idx.max())} is past the accessor's {count} items", None,
                              f"{path}.indices")
        vals = self._packed(vp, dt, n * width, f"{path}.values").reshape(n, width)
        out = np.array(out, copy=True)
        out[idx] = vals
        return out

    def _packed(self, ref: dict, dt: np.dtype, n: int, path: str) -> np.ndarray:
        data, start, length, _ = self._view(ref.get("bufferView"), f"{path}.bufferView")
        offset = num(ref, "byteOffset", path, 0, 0, True)
        if offset + n * dt.itemsize > length:
            raise FormatError(f"{n} items of {dt.itemsize} bytes from byte {offset} run past the buffer view's "
                              f"{length} bytes", start + offset, path)
        return np.frombuffer(data, dt, n, start + offset)


def _matrix_shape(kind: str) -> tuple[int, int]:
    """(rows per column, columns) of an accessor type: matrices' columns are 4-byte aligned."""
    return {"MAT2": (2, 2), "MAT3": (3, 3), "MAT4": (4, 4)}.get(kind, (TYPE_WIDTHS[kind], 1))
