"""Skin weights as both directions read them."""
from __future__ import annotations

import numpy as np


def sum_repeated(joints: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One influence per bone and vertex: a bone listed again adds its weight to its first place, and
    the repeat becomes unused (joint -1, weight 0). (V, K) in, (V, K) out, K small."""
    j = np.array(joints, np.int64)
    w = np.array(weights, np.float64)
    for k in range(1, j.shape[1]):
        done = np.zeros(len(j), bool)
        for i in range(k):
            same = ~done & (j[:, i] >= 0) & (j[:, i] == j[:, k])
            w[same, i] += w[same, k]
            done |= same
        w[done, k], j[done, k] = 0.0, -1
    return j, w
