"""Grouping equal rows of bytes in bulk: split vertex records, tangent groups.

np.unique on wide void rows is slow; one 64-bit hash per row sorts fast,
and a second independent hash proves the grouping (falling back to exact
comparison if it ever disagrees).
"""
from __future__ import annotations

import numpy as np


def _hash_rows(words: np.ndarray, multiplier: int, shift: int) -> np.ndarray:
    h = np.zeros(len(words), np.uint64)
    with np.errstate(over="ignore"):
        for j in range(words.shape[1]):
            h ^= words[:, j]
            h *= np.uint64(multiplier)
            h ^= h >> np.uint64(shift)
    return h


def group(record: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Equal byte rows: (first row index of each group, group per row); groups in hash order.

    Rows are grouped by a 64-bit hash and the groups checked with a second,
    independent one; a mismatch falls back to comparing whole rows.
    """
    record = np.ascontiguousarray(record)
    if len(record) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    width = -(-record.shape[1] // 8) * 8
    padded = np.zeros((len(record), width), np.uint8)
    padded[:, :record.shape[1]] = record
    words = padded.view("<u8")
    h = _hash_rows(words, 0x100000001B3, 29)
    order = np.argsort(h)
    hs = h[order]
    new_group = np.empty(len(hs), bool)
    new_group[0] = True
    np.not_equal(hs[1:], hs[:-1], out=new_group[1:])
    starts = np.flatnonzero(new_group)
    first = np.minimum.reduceat(order, starts)
    inverse = np.empty(len(order), np.int64)
    inverse[order] = np.cumsum(new_group) - 1
    check = _hash_rows(words, 0x9E3779B97F4A7C15, 31)
    if not np.array_equal(check, check[first[inverse]]):
        void = np.ascontiguousarray(record).view(np.dtype((np.void, record.shape[1]))).reshape(-1)
        _, first, inverse = np.unique(void, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)


def unique_in_order(record: np.ndarray, vertex: np.ndarray):
    """Distinct byte rows: (first row of each distinct one, distinct index per row).

    Distinct rows are ordered by the coordinate vertex that first uses them,
    then by first use, so a file whose triangle vertices follow its
    coordinate vertices comes back in the same order.
    """
    if len(record) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    first, inverse = group(record)
    # one int64 key sorts faster than lexsort on two: vertex first, then first use
    order = np.argsort(vertex[first].astype(np.int64) * len(record) + first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse.reshape(-1)]
