"""Bounds as the notes define them: computed on write, checked (never trusted) on read.

A surface's box is the min/max of its target-0 positions; its sphere is
centred on the box centre with the largest vertex distance as radius. The
mesh box is the union of the surface boxes; its sphere is centred on that
box and encloses every surface's vertices.
"""
from __future__ import annotations

import numpy as np

from ...errors import Warnings
from .model import Bounds, MeshFile, Surface

# float32 arithmetic in the writer that made the file: relative slack
_TOLERANCE = 1e-4


def of_points(points: np.ndarray) -> Bounds:
    if len(points) == 0:
        return Bounds()
    p = np.asarray(points, np.float32)
    cols = [p[:, i] for i in range(3)]         # a column at a time: reductions over (N, 3) rows are slow
    lo = np.array([c.min() for c in cols], np.float32)
    hi = np.array([c.max() for c in cols], np.float32)
    centre = (lo.astype(np.float64) + hi) / 2
    d2 = None
    for c, m in zip(cols, centre):             # (x - cx)^2 + (y - cy)^2 + (z - cz)^2 in float64, in that order
        d = c - m
        d *= d
        d2 = d if d2 is None else d2.__iadd__(d)
    radius = np.sqrt(d2.max())
    return Bounds(np.concatenate([lo, hi, centre, [radius]]).astype(np.float32))


def of_surfaces(surfaces: list[Surface]) -> Bounds:
    pts = [s.targets[0].positions for s in surfaces if s.targets and len(s.targets[0].positions)]
    if not pts:
        return Bounds()
    lo = np.min([p.min(0) for p in pts], 0)
    hi = np.max([p.max(0) for p in pts], 0)
    centre = (lo.astype(np.float64) + hi) / 2
    radius = max(np.sqrt(((p - centre) ** 2).sum(1).max()) for p in pts)
    return Bounds(np.concatenate([lo, hi, centre, [radius]]).astype(np.float32))


def _mismatch(stored: Bounds, points: list[np.ndarray], box: Bounds) -> str:
    """Why `stored` does not bound `points` as `box` does ("" when it does)."""
    scale = max(1.0, float(np.abs(box.values[:6]).max()))
    tol = _TOLERANCE * scale
    if not np.allclose(stored.values[:6], box.values[:6], rtol=0, atol=tol):
        return (f"box {stored.box_min.tolist()}..{stored.box_max.tolist()} differs from the vertices' "
                f"{box.box_min.tolist()}..{box.box_max.tolist()}")
    far = max((float(np.sqrt(((p - stored.center) ** 2).sum(1).max())) for p in points if len(p)), default=0.0)
    if far > stored.radius + tol:
        return f"sphere radius {stored.radius} leaves a vertex {far} from its centre outside"
    return ""


def check_mesh(m: MeshFile, warnings: Warnings) -> None:
    for s in m.surfaces:
        if not s.coordinate_count:
            continue
        why = _mismatch(s.bounds, [s.targets[0].positions], of_points(s.targets[0].positions))
        if why:
            warnings.warn(f"surface {s.name!r}: stored bounds do not match its vertices ({why}); recomputed on export")
    pts = [s.targets[0].positions for s in m.surfaces if s.coordinate_count]
    if pts:
        why = _mismatch(m.bounds, pts, of_surfaces(m.surfaces))
        if why:
            warnings.warn(f"mesh bounds do not match its surfaces ({why}); recomputed on export")
