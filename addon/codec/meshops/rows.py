"""Grouping equal rows of bytes in bulk (the corner -> vertex split of meshops), in O(rows).

Rows are hashed to a slot of an open table; each slot keeps its first row,
and every row is compared byte for byte with the first row of its slot. A
row whose slot belongs to a different row goes round again with another
hash; the few left after that are grouped by an exact sort. No hash is ever
trusted: equal means equal bytes.

Most corners of a smooth mesh repeat the first corner of their vertex: those
join it by one comparison per word, and only the rest are hashed (within a
vertex, not even the vertices' first corners: they differ by definition).
"""
from __future__ import annotations

import numpy as np

_CHUNK = 1 << 15          # rows hashed at a time, so that a chunk stays in cache
_ROUNDS = 5               # table rounds before the exact sort takes what is left
_SORT_BELOW = 512         # so few rows left: sort them (a sort of void rows is slow: above this, a round is cheaper)
_SPARE_BITS = 1           # table size: the next power of two above the rows, times 2 ** (this - 1)
_CACHED_ROWS = 1 << 16    # below this many rows a table twice as sparse still fits in the cache: fewer collisions
_MIX = (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93)


def _words(record: np.ndarray) -> np.ndarray:
    """(N, W) uint32 holding each row's bytes (zero-padded to whole words)."""
    raw = _raw(record)
    width = raw.shape[1]
    if width % 4 == 0 and width:
        return raw.view(np.uint32)
    padded = np.zeros((len(raw), max(4, -(-width // 4) * 4)), np.uint8)
    padded[:, :width] = raw
    return padded.view(np.uint32)


def _hash_rows(words: np.ndarray, seed: int) -> np.ndarray:
    """A 64-bit hash per row (uint64) whose top bits pick the slot: multiply and xor, eight bytes at a
    time where the rows are whole pairs of words. Any hash works: equality is always checked on the bytes."""
    n, width = words.shape
    mul = np.uint64(_MIX[seed % len(_MIX)])
    wide = words.view(np.uint64) if width % 2 == 0 and width and words.flags.c_contiguous else None
    out = np.empty(n, np.uint64)
    for start in range(0, n, _CHUNK):
        o = out[start:start + _CHUNK]
        if wide is not None:
            w = wide[start:start + _CHUNK]
            np.multiply(w[:, 0], mul, out=o)
            for j in range(1, w.shape[1]):
                np.bitwise_xor(o, w[:, j], out=o)
                np.multiply(o, mul, out=o)
        else:
            w = words[start:start + _CHUNK]
            o[:] = w[:, 0] if width else 0
            for j in range(1, width):
                np.multiply(o, mul, out=o)
                np.bitwise_xor(o, w[:, j], out=o, casting="unsafe")
            np.multiply(o, mul, out=o)
    return out


def _first_in_slot(slot: np.ndarray, size: int, none: int | None = None, index=None) -> tuple[np.ndarray, np.ndarray]:
    """(the smallest row holding each of the `size` slots, `none` where no row does (None: the row count);
    per row, the smallest row index holding its slot). index: their type (default int32, half the traffic
    of a hash table; intp for rows that go on to index: take() converts narrower ones slowly)."""
    rows = np.arange(len(slot), dtype=index or (np.int32 if len(slot) < 1 << 31 else np.int64))
    table = np.full(size, len(slot) if none is None else none, rows.dtype)
    np.minimum.at(table, slot, rows)            # exact, in one pass (numpy's fast path for 1-D ufunc.at)
    return table, np.take(table, slot)


def _exact(words: np.ndarray) -> np.ndarray:
    """Per row, the first row with the same bytes (a sort; for few rows)."""
    void = np.ascontiguousarray(words).view(np.dtype((np.void, 4 * words.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


def _equal_rows(words: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(len(a),) bool: whether row a[i] equals row b[i]: whole rows gathered (one random access per
    row, not one per word), then compared a column at a time."""
    if not len(a):
        return np.zeros(0, bool)
    if words.shape[1] % 2 == 0 and words.flags.c_contiguous:
        words = words.view(np.uint64)                  # half the columns to compare
    ra, rb = np.take(words, a, axis=0), np.take(words, b, axis=0)
    same = ra[:, 0] == rb[:, 0]
    for j in range(1, words.shape[1]):
        same &= ra[:, j] == rb[:, j]
    return same


def representatives(record: np.ndarray) -> np.ndarray:
    """Per row, the index of the first row with the same bytes (int32 below 2 ** 31 rows, else int64):
    the one row grouping of the kernel (the corner split, welding, tangent sharing)."""
    words = _words(record)
    n = len(words)
    rep = np.arange(n, dtype=np.int32 if n < 1 << 31 else np.int64)
    todo = None                      # rows still ungrouped (None: all of them)
    for round_ in range(_ROUNDS):
        count = n if todo is None else len(todo)
        if count < (_SORT_BELOW if round_ else 2):
            break
        w = words if todo is None else words[todo]
        bits = max(4, int(count).bit_length() + _SPARE_BITS + (count < _CACHED_ROWS))
        slot = (_hash_rows(w, round_) >> np.uint64(64 - bits)).view(np.int64)
        holder = _first_in_slot(slot, 1 << bits)[1]
        local = np.arange(count, dtype=holder.dtype)
        other = np.flatnonzero(holder != local)
        differ = other[~_equal_rows(w, other, holder[other])]     # a different row took the slot
        if todo is None:                   # every other row joins its slot's row (itself, or one equal to it)
            rep = holder
            todo = differ
        else:
            same = np.ones(count, bool)
            same[differ] = False
            rep[todo[same]] = todo[holder[same]]
            todo = todo[~same]
        if not len(todo):
            return rep
    if todo is not None and len(todo):
        rep[todo] = todo[_exact(words[todo])]
    return rep


def stable_order(key: np.ndarray) -> np.ndarray:
    """np.argsort(key, kind="stable") for non-negative integer keys, in O(n) when the keys are disordered."""
    key = np.asarray(key, np.int64)
    n = len(key)
    if n < 2:
        return np.arange(n, dtype=np.int64)
    top = int(key.max())
    if top < 1 << 16:
        return np.argsort(key.astype(np.uint16), kind="stable")
    # nearly ordered keys (the usual mesh: corners follow faces, faces follow vertices)
    # merge fast; scattered ones take an LSD radix sort, 16 bits at a time
    behind = np.maximum.accumulate(key) - key
    if float(behind.mean()) * 64 < top:
        return np.argsort(key, kind="stable")
    order = np.argsort(key.astype(np.uint16), kind="stable")
    shift = 16
    while top >> shift:
        digit = (key[order] >> shift).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
    return order


def unique_in_order(record: np.ndarray, vertex: np.ndarray, within_vertex: bool = False):
    """Distinct byte rows: (first row of each distinct one, distinct index per row).

    Distinct rows are ordered by the vertex that first uses them, then by
    first use, so a file whose triangle vertices follow its coordinate
    vertices comes back in the same order. within_vertex: rows of different
    vertices are never the same (as if the vertex were part of the row).
    """
    rows = _Rows(record)
    if rows.n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    vertex = np.asarray(vertex, np.int64)
    fast = _by_vertex_heads(rows, vertex, within_vertex)
    if fast is not None:
        return fast
    words = rows.matrix()
    rep = representatives(_with_vertex(words, vertex) if within_vertex else words)
    first = np.flatnonzero(rep == np.arange(rows.n, dtype=rep.dtype))
    first = first[stable_order(vertex[first])]
    rank = np.empty(rows.n, np.int64)              # each row's group, numbered in the output order
    rank[first] = np.arange(len(first))
    return first, np.take(rank, rep)


class _Rows:
    """Rows given as one (N, ...) array, or as several per-row arrays side by side (columns, which
    then need not be copied into one): their bytes a column at a time for comparisons (the widest
    integer that divides a part's row, no copy), or as an (N, W) uint32 matrix for the rows that
    hashing needs (only those rows are copied and padded)."""

    def __init__(self, record):
        parts = list(record) if isinstance(record, (list, tuple)) else [record]
        self.parts = [_raw(np.asarray(p)) for p in parts]
        self.n = len(self.parts[0])

    def columns(self) -> list[np.ndarray]:
        out = []
        for raw in self.parts:
            width = raw.shape[1]
            size = next(k for k in (8, 4, 2, 1) if width % k == 0) if width else 1
            cols = raw.view(np.dtype(f"u{size}")) if width else np.zeros((self.n, 1), np.uint8)
            out += [cols[:, j] for j in range(cols.shape[1])]
        return out

    def matrix(self, rows: np.ndarray | None = None) -> np.ndarray:
        sel = [_words(raw if rows is None else np.take(raw, rows, axis=0)) for raw in self.parts]
        return sel[0] if len(sel) == 1 else np.concatenate(sel, 1)


def _raw(a: np.ndarray) -> np.ndarray:
    """(N, bytes) uint8 view of each row's bytes (a copy only when `a` is not contiguous)."""
    a = np.ascontiguousarray(a)
    return a.reshape(len(a), -1).view(np.uint8) if a.size else np.zeros((len(a), 0), np.uint8)


def _with_vertex(words: np.ndarray, vertex: np.ndarray) -> np.ndarray:
    """The rows with their vertex as one more word (two past 2 ** 32 vertices)."""
    wide = len(vertex) and int(vertex.max()) >= 1 << 32
    v = vertex.astype(np.int64 if wide else np.uint32).reshape(len(vertex), 1).view(np.uint32)
    out = np.empty((len(words), words.shape[1] + v.shape[1]), np.uint32)
    out[:, :words.shape[1]] = words
    out[:, words.shape[1]:] = v
    return out


def _in_vertex_order(first: np.ndarray, inverse: np.ndarray, vertex: np.ndarray):
    order = stable_order(vertex[first])
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse]


_PROBE = 1 << 12          # rows sampled to decide whether most rows repeat their vertex's first


def _by_vertex_heads(rows: _Rows, vertex: np.ndarray, within_vertex: bool):
    """unique_in_order when most rows equal the first row of their vertex (a smooth mesh): those
    join it by one comparison per word, and only the vertices' first rows and the rows that
    differ are hashed. None when that would not pay."""
    n = rows.n
    top = int(vertex.max(initial=0)) + 1
    if n < 2 * _PROBE or top > 2 * n or int(vertex.min(initial=0)) < 0:
        return None
    idx = np.intp                                          # take() converts narrower indices slowly
    # a probe: do the first rows mostly repeat the first row of their vertex among them?
    probe = _first_in_slot(vertex[:_PROBE].astype(idx), top, _PROBE, idx)[1]
    cols = rows.columns()
    agree = np.ones(_PROBE, bool)
    for col in cols:
        agree &= col[:_PROBE] == col[probe]
    if agree.sum() < _PROBE // 2:
        return None                            # mostly split: plain hashing
    if not within_vertex and agree.sum() - np.count_nonzero(probe == np.arange(_PROBE)) < _PROBE // 2:
        return None                            # the heads and the rows that differ are most rows: plain hashing
    vertex = vertex.astype(idx, copy=False)
    head, per_row = _first_in_slot(vertex, top, n, idx)
    if within_vertex:                          # a head equals itself: kept as it is
        kept = cols[0] == np.take(cols[0], per_row)
        for col in cols[1:]:
            kept &= col == np.take(col, per_row)
        if kept.all():
            return _one_per_vertex(vertex, head, n)
        return _heads_then_seams(rows, vertex, head, kept, n)
    same = per_row != np.arange(n, dtype=idx)  # a head is not joined to itself
    for col in cols:
        same &= col == np.take(col, per_row)
    todo = np.flatnonzero(~same)               # the heads and the rows that differ
    # per todo row, its first equal todo row (local); no row that joined a head comes before that
    # one, or its head, a todo row with the same bytes, would come before it too
    rep = representatives(rows.matrix(todo))
    is_first = rep == np.arange(len(todo))
    local = np.empty(len(todo), np.int64)
    local[is_first] = np.arange(int(is_first.sum()))
    first, ordered = _in_vertex_order(todo[is_first], local[rep], vertex)
    heads = head[head < n]                     # ascending by vertex; all of them in todo
    at_head = np.zeros(top, np.int64)
    at_head[vertex[heads]] = ordered[np.searchsorted(todo, heads)]
    out = at_head[vertex]
    out[todo] = ordered
    return first, out


def _one_per_vertex(vertex: np.ndarray, head: np.ndarray, n: int):
    """unique_in_order within vertices when each vertex's rows all agree: one value per used vertex,
    in vertex order, at its first row; no hashing and no sort."""
    used = head < n
    if used.all():
        return head.astype(np.int64), vertex.astype(np.int64)
    rank = np.cumsum(used, dtype=np.int64) - 1
    return head[used].astype(np.int64), rank[vertex]


def _heads_then_seams(rows: _Rows, vertex: np.ndarray, head: np.ndarray, kept: np.ndarray, n: int):
    """unique_in_order within vertices, given each vertex's first row (`head`, n where unused) and
    the rows that are a head or equal their head (`kept`): a head differs from every other row's
    group (another vertex, or other bytes), so only the other rows (seams) are grouped; then each
    vertex's head comes first and its seam groups after it, in first-use order. No sort of all rows."""
    seams = np.flatnonzero(~kept)
    used = head < n
    counts = used.astype(np.int64)
    if len(seams):
        rep = representatives(_with_vertex(rows.matrix(seams), vertex[seams]))
        is_first = rep == np.arange(len(seams))
        firsts = seams[is_first]                               # ascending: first use
        fv = vertex[firsts]
        order = stable_order(fv)                               # by (vertex, first use)
        counts += np.bincount(fv, minlength=len(head))
    offset = np.cumsum(counts) - counts                        # each vertex's first place
    first = np.empty(int(counts.sum()), np.int64)
    first[offset[used]] = head[used]
    out = np.take(offset, vertex)                              # a head and the rows equal to it
    if len(seams):
        fo = fv[order]
        run = np.flatnonzero(np.r_[True, fo[1:] != fo[:-1]])       # each vertex's seam groups
        within = np.arange(len(fo)) - np.repeat(run, np.diff(np.r_[run, len(fo)]))
        place = np.empty(len(fo), np.int64)
        place[order] = offset[fo] + 1 + within
        first[place] = firsts
        local = np.empty(len(seams), np.int64)
        local[is_first] = np.arange(len(firsts))
        out[seams] = place[local[rep]]
    return first, out
