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
_ROUNDS = 3               # table rounds before the exact sort takes what is left
_SORT_BELOW = 4096        # so few rows left: sort them
_SPARE_BITS = 2           # table size: the next power of two above the rows, times 2 ** (this - 1)
_MULTIPLIERS = np.array([0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1, 0xD3A2646C | 1,
                         0xFD7046C5, 0xB55A4F09, 0x7FEB352D, 0x846CA68B, 0xE7037ED1, 0x8EBC6AF1], np.uint32)


def _words(record: np.ndarray) -> np.ndarray:
    """(N, W) uint32 holding each row's bytes (zero-padded to whole words)."""
    record = np.ascontiguousarray(record)
    raw = record.reshape(len(record), -1).view(np.uint8) if record.size else \
        np.zeros((len(record), 0), np.uint8)
    width = raw.shape[1]
    if width % 4 == 0 and width:
        return raw.view(np.uint32)
    padded = np.zeros((len(raw), max(4, -(-width // 4) * 4)), np.uint8)
    padded[:, :width] = raw
    return padded.view(np.uint32)


def _hash_rows(words: np.ndarray, seed: int) -> np.ndarray:
    """A 32-bit hash per row (uint32); any hash works, equality is always checked on the bytes."""
    n, width = words.shape
    mult = np.roll(_MULTIPLIERS, seed)
    out = np.empty(n, np.uint32)
    acc = np.empty(min(n, _CHUNK), np.uint32)
    tmp = np.empty_like(acc)
    for start in range(0, n, _CHUNK):
        w = words[start:start + _CHUNK]
        a, t = acc[:len(w)], tmp[:len(w)]
        a[:] = np.uint32(seed * 0x61C88647 & 0xFFFFFFFF)
        for j in range(width):
            np.multiply(w[:, j], mult[j % len(mult)], out=t)
            a ^= t
            np.right_shift(a, np.uint32(15), out=t)
            a ^= t
            a *= np.uint32(0x2C1B3C6D)
        np.right_shift(a, np.uint32(16), out=t)
        np.bitwise_xor(a, t, out=out[start:start + len(w)])
    return out


def _first_in_slot(slot: np.ndarray, size: int) -> np.ndarray:
    """The smallest row index holding each row's slot."""
    rows = np.arange(len(slot), dtype=np.int32 if len(slot) < 1 << 31 else np.int64)
    table = np.empty(size, rows.dtype)
    # assigned back to front, so the front-most row of each slot is written last
    table[slot[::-1]] = rows[::-1]
    holder = table[slot]
    if (holder > rows).any():       # an assignment order numpy does not promise: take the minimum exactly
        table.fill(len(slot))
        np.minimum.at(table, slot, rows)
        holder = table[slot]
    return holder.astype(np.int64)


def _exact(words: np.ndarray) -> np.ndarray:
    """Per row, the first row with the same bytes (a sort; for few rows)."""
    void = np.ascontiguousarray(words).view(np.dtype((np.void, 4 * words.shape[1]))).reshape(-1)
    _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
    return first[inverse.reshape(-1)]


def _equal_rows(words: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The entries of `a` whose row equals the matching row of `b`: a column at a time, each
    on the pairs still equal (most different rows drop out at the first)."""
    for j in range(words.shape[1]):
        keep = words[a, j] == words[b, j]
        if not keep.all():
            a, b = a[keep], b[keep]
    return a


def representatives(record: np.ndarray) -> np.ndarray:
    """Per row, the index of the first row with the same bytes (int64)."""
    words = _words(record)
    n = len(words)
    rep = np.arange(n, dtype=np.int64)
    todo = None                      # rows still ungrouped (None: all of them)
    for round_ in range(_ROUNDS):
        count = n if todo is None else len(todo)
        if count < (_SORT_BELOW if round_ else 2):
            break
        w = words if todo is None else words[todo]
        bits = max(4, int(count).bit_length() + _SPARE_BITS)
        slot = (_hash_rows(w, round_) >> np.uint32(32 - bits)).astype(np.intp) if bits < 32 else \
            _hash_rows(w, round_).astype(np.intp)
        holder = _first_in_slot(slot, 1 << min(bits, 32))
        local = np.arange(count, dtype=np.int64)
        other = np.flatnonzero(holder != local)
        same = np.ones(count, bool)
        same[other] = False
        same[_equal_rows(w, other, holder[other])] = True
        if todo is None:
            rep = holder
            todo = np.flatnonzero(~same)
        else:
            rep[todo[same]] = todo[holder[same]]
            todo = todo[~same]
        if not len(todo):
            return rep
    if todo is not None and len(todo):
        rep[todo] = todo[_exact(words[todo])]
    return rep


def group(record: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal byte rows: (first row of each group, ascending; group per row, numbered in that order)."""
    n = len(record)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    rep = representatives(record)
    is_first = rep == np.arange(n)
    first = np.flatnonzero(is_first)
    return first, _labels(first, rep)


def _labels(first: np.ndarray, rep: np.ndarray) -> np.ndarray:
    """Group number per row: every representative is a first row, so a scatter does (a cumsum over a
    bool array casts element by element, several times slower)."""
    label = np.empty(len(rep), np.int64)
    label[first] = np.arange(len(first))
    return label[rep]


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
    first, inverse = group(_with_vertex(words, vertex) if within_vertex else words)
    return _in_vertex_order(first, inverse, vertex)


class _Rows:
    """Rows given as one (N, ...) array, or as several per-row arrays side by side (columns, which
    then need not be copied into one): their words a column at a time for comparisons, or as an
    (N, W) uint32 matrix for the rows that hashing needs."""

    def __init__(self, record):
        parts = list(record) if isinstance(record, (list, tuple)) else [record]
        self.parts = [_words(np.asarray(p)) for p in parts]
        self.n = len(self.parts[0])

    def columns(self) -> list[np.ndarray]:
        out = []
        for w in self.parts:
            out += [w.view(np.uint64).reshape(-1)] if w.shape[1] == 2 else [w[:, j] for j in range(w.shape[1])]
        return out

    def matrix(self, rows: np.ndarray | None = None) -> np.ndarray:
        sel = [w if rows is None else w[rows] for w in self.parts]
        return sel[0] if len(sel) == 1 else np.concatenate(sel, 1)


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


def _first_rows(vertex: np.ndarray, top: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """((top,) the first row of each vertex, n where none; (rows,) each row's vertex's first row)."""
    head = np.full(top, n, vertex.dtype)
    rows = np.arange(len(vertex), dtype=vertex.dtype)
    head[vertex[::-1]] = rows[::-1]            # the last write wins: the first row
    per_row = head[vertex]
    if (per_row > rows).any():                 # an assignment order numpy does not promise
        head.fill(n)
        np.minimum.at(head, vertex, rows)
        per_row = head[vertex]
    return head, per_row


def _by_vertex_heads(rows: _Rows, vertex: np.ndarray, within_vertex: bool):
    """unique_in_order when most rows equal the first row of their vertex (a smooth mesh): those
    join it by one comparison per word, and only the vertices' first rows and the rows that
    differ are hashed. None when that would not pay."""
    n = rows.n
    top = int(vertex.max(initial=0)) + 1
    if n < 2 * _PROBE or top > 2 * n or int(vertex.min(initial=0)) < 0:
        return None
    idx = np.int32 if n < 1 << 31 else np.int64           # 4-byte indices: half the memory traffic
    vertex = vertex.astype(idx)
    # a probe: do the first rows mostly repeat the first row of their vertex among them?
    probe = _first_rows(vertex[:_PROBE], top, _PROBE)[1]
    cols = rows.columns()
    agree = np.ones(_PROBE, bool)
    for col in cols:
        agree &= col[:_PROBE] == col[probe]
    if agree.sum() < _PROBE // 2:
        return None                            # mostly split: plain hashing
    head, per_row = _first_rows(vertex, top, n)
    is_head = per_row == np.arange(n, dtype=idx)
    same = ~is_head                            # a head is not joined to itself
    for col in cols:
        same &= col == col[per_row]
    if within_vertex:
        return _heads_then_seams(rows, vertex, head, same | is_head, n)
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
    out = offset[vertex]                                       # a head and the rows equal to it
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
