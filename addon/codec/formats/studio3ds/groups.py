"""Custom split normals -> smoothing group masks, in bulk (export side).

Faces are joined where their corner normals agree along a shared edge; each
joined patch gets one group bit, chosen so that patches touching at a point
get different bits (3DS smooths every face of a group around a point).
A patch whose corner normals are all their own face normals is flat: group 0.
"""
from __future__ import annotations

import numpy as np

from ...meshops import components, face_normals, weld_ids

COS_SAME = 0.9995
MAX_AT_POINT = 64


def corners_agree(cn: np.ndarray) -> bool:
    """True when each face's three corner normals point the same way (within COS_SAME):
    a flat-shaded mesh, as Blender returns it (custom normals come back slightly rounded)."""
    return bool((np.einsum("fj,fj->f", cn[:, 0], cn[:, 1]) > COS_SAME).all()
                and (np.einsum("fj,fj->f", cn[:, 0], cn[:, 2]) > COS_SAME).all())


def smoothing_groups(positions: np.ndarray, tris: np.ndarray, normals: np.ndarray | None) -> np.ndarray:
    """(F,) uint32 masks for triangles with (F*3, 3) corner normals."""
    nf = len(tris)
    if nf == 0:
        return np.zeros(0, np.uint32)
    if normals is None:
        return np.ones(nf, np.uint32)
    cn = np.asarray(normals, np.float32).reshape(nf, 3, 3)
    if corners_agree(cn):
        return np.zeros(nf, np.uint32)                      # flat shaded throughout
    fn = face_normals(positions, tris)
    length = np.sqrt(np.einsum("ij,ij->i", fn, fn))[:, None]
    fn /= np.where(length > 0, length, 1).astype(np.float32)
    own = (np.einsum("fkj,fj->fk", cn, fn) > COS_SAME).all(1)
    point = weld_ids(positions)[tris]                       # (F, 3)
    # edges k: corners (k, k+1) of each face, keyed by their welded points
    e0, e1 = point, np.roll(point, -1, axis=1)
    n0, n1 = cn, np.roll(cn, -1, axis=1)
    lo, hi = np.minimum(e0, e1).ravel(), np.maximum(e0, e1).ravel()
    swap = (e0 > e1).ravel()
    nlo = np.where(swap[:, None], n1.reshape(-1, 3), n0.reshape(-1, 3))
    nhi = np.where(swap[:, None], n0.reshape(-1, 3), n1.reshape(-1, 3))
    face = np.repeat(np.arange(nf), 3)
    key = lo.astype(np.int64) * (int(point.max()) + 1) + hi
    order = np.argsort(key, kind="stable")
    ks = key[order]
    same = np.flatnonzero(ks[1:] == ks[:-1])            # consecutive corners of the same edge
    i, j = order[same], order[same + 1]
    ok = ((nlo[i] * nlo[j]).sum(1) > COS_SAME) & ((nhi[i] * nhi[j]).sum(1) > COS_SAME) & (face[i] != face[j])
    fa, fb = face[i[ok]], face[j[ok]]
    comp = components(nf, fa, fb)
    # a patch whose every corner carries its own face normal is planar-shaded: group 0 gives the same
    curved = np.bincount(comp, weights=~own, minlength=nf) > 0
    flat = ~curved[comp]
    groups = np.zeros(nf, np.uint32)
    smooth = ~flat
    if not smooth.any():
        return groups
    roots, comp_id = np.unique(comp[smooth], return_inverse=True)
    # patches touching at a point must differ: greedy colouring, one step per patch
    cp = np.unique(np.column_stack([point[smooth].ravel(), np.repeat(comp_id, 3)]), axis=0)
    starts = np.r_[0, np.flatnonzero(np.diff(cp[:, 0])) + 1]
    counts = np.diff(np.r_[starts, len(cp)])
    # only earlier patches constrain a later one: each is paired with the (at most MAX_AT_POINT) patches
    # before it at the same point (more could not all differ in 32 bits; all of them made a mesh welded
    # to one point cost F^2)
    take = np.minimum(np.arange(len(cp)) - np.repeat(starts, counts), MAX_AT_POINT)
    a = np.repeat(np.arange(len(cp)), take)
    b = a - 1 - (np.arange(len(a)) - np.repeat(np.cumsum(take) - take, take))
    pairs = np.unique(np.column_stack([cp[a, 1], cp[b, 1]]), axis=0)
    split = np.searchsorted(pairs[:, 0], np.arange(len(roots) + 1))
    colour = np.zeros(len(roots), np.int64)
    for c in range(len(roots)):
        used = set(colour[pairs[split[c]:split[c + 1], 1]].tolist())
        colour[c] = next((k for k in range(32) if k not in used), c % 32)
    groups[smooth] = (np.uint32(1) << colour[comp_id].astype(np.uint32))
    return groups
