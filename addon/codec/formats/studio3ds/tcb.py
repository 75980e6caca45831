"""Kochanek-Bartels (TCB) tangents of 3DS keyframer tracks, as Hermite curves and Bezier handles.

3DS evaluates a position, scale, FOV, roll, colour or falloff track between keys k and k+1 as a
cubic Hermite curve in the segment parameter u = (t - f_k) / (f_k+1 - f_k):

    p(u) = h00(u) P_k + h10(u) DD_k + h01(u) P_k+1 + h11(u) DS_k+1

DS_i / DD_i are key i's incoming / outgoing tangents, in value change per segment (not per
frame). With tension T, continuity C and bias B of key i (each -1..1; 0 when the key header
leaves them out) and the neighbouring differences dm = P_i - P_i-1, dp = P_i+1 - P_i:

    DS_i = fp (1-T)/2 [(1-C)(1+B) dm + (1+C)(1-B) dp]
    DD_i = fn (1-T)/2 [(1+C)(1+B) dm + (1-C)(1-B) dp]

fp = 2 (f_i - f_i-1) / (f_i+1 - f_i-1) and fn = 2 (f_i+1 - f_i) / (f_i+1 - f_i-1) adjust for
uneven key spacing, each moved towards 1 by |C|. This is lib3ds' lib3ds_tcb, checked against
lib3ds in the tests. At T = C = B = 0 and even spacing DS = DD = (P_i+1 - P_i-1) / 2: the
Catmull-Rom spline, which is what 3ds Max plays for its default TCB keys. An end key has one
neighbour; its tangents are the one difference it has, whatever its TCB values (as lib3ds
does), so two keys give a straight line.

Ease to / ease from (0..1) reparameterise the segment in 3ds Max, slowing the motion into or
out of the key. A Bezier curve cannot carry a reparameterisation, so it is approximated by
scaling the tangent it slows: DS_i by (1 - ease to), DD_i by (1 - ease from). Full ease gives a
zero tangent (the motion stops at the key, as in 3ds Max); the key values are always exact.

Blender gets each segment as a Bezier curve with handles at one third of the segment in time
and P -/+ tangent / 3 in value, which is exactly the Hermite curve above.
"""
from __future__ import annotations

import numpy as np

TENSION, CONTINUITY, BIAS, EASE_TO, EASE_FROM = range(5)


def _safe_div(a, b) -> np.ndarray:
    b = np.asarray(b, np.float64)
    return np.asarray(a, np.float64) / np.where(b == 0, 1.0, b)


def tangents(frames, values, tcb=None) -> tuple[np.ndarray, np.ndarray]:
    """(DS, DD): (N, D) incoming and outgoing per-segment tangents. `tcb` (N, 5), NaN = absent."""
    f = np.asarray(frames, np.float64)
    p = np.asarray(values, np.float64).reshape(len(f), -1)
    n = len(f)
    if n < 2:
        return np.zeros_like(p), np.zeros_like(p)
    k = np.zeros((n, 5)) if tcb is None else np.nan_to_num(np.asarray(tcb, np.float64).reshape(n, 5), nan=0.0)
    d = np.diff(p, axis=0)
    dm = np.vstack([d[:1], d])                 # P_i - P_i-1 (the first key borrows the next difference)
    dp = np.vstack([d, d[-1:]])                # P_i+1 - P_i (the last key borrows the previous one)
    fp, fn = np.ones(n), np.ones(n)
    span = f[2:] - f[:-2]
    fp[1:-1] = _safe_div(2 * (f[1:-1] - f[:-2]), span)
    fn[1:-1] = _safe_div(2 * (f[2:] - f[1:-1]), span)
    c = np.abs(k[:, CONTINUITY])
    fp, fn = fp + c - c * fp, fn + c - c * fn
    tm = 0.5 * (1 - k[:, TENSION])
    cm, cp = 1 - k[:, CONTINUITY], 1 + k[:, CONTINUITY]
    bm, bp = 1 - k[:, BIAS], 1 + k[:, BIAS]
    ds = (tm * cm * bp * fp)[:, None] * dm + (tm * cp * bm * fp)[:, None] * dp
    dd = (tm * cp * bp * fn)[:, None] * dm + (tm * cm * bm * fn)[:, None] * dp
    ds[[0, -1]] = dd[[0, -1]] = d[[0, -1]]    # end keys: the one difference, whatever their TCB
    ds *= (1 - np.clip(k[:, EASE_TO], 0, 1))[:, None]
    dd *= (1 - np.clip(k[:, EASE_FROM], 0, 1))[:, None]
    return ds, dd


def bezier_handles(frames, values, ds, dd) -> np.ndarray:
    """(N, D, 2, 2) left/right handles (frame, value) per key: one third of each segment."""
    f = np.asarray(frames, np.float64)
    p = np.asarray(values, np.float64).reshape(len(f), -1)
    span = np.diff(f)
    if len(span) == 0:
        span = np.ones(1)
    left = np.r_[span[0], span] / 3.0
    right = np.r_[span, span[-1]] / 3.0
    h = np.empty(p.shape + (2, 2))
    h[:, :, 0, 0] = (f - left)[:, None]
    h[:, :, 0, 1] = p - np.asarray(ds).reshape(p.shape) / 3.0
    h[:, :, 1, 0] = (f + right)[:, None]
    h[:, :, 1, 1] = p + np.asarray(dd).reshape(p.shape) / 3.0
    return h


def segment(frames: np.ndarray, tt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each time: the key k starting its segment, and the 0..1 position u within it."""
    k = np.clip(np.searchsorted(frames, tt, side="right") - 1, 0, len(frames) - 2)
    return k, np.clip(_safe_div(tt - frames[k], frames[k + 1] - frames[k]), 0.0, 1.0)[:, None]


def evaluate(frames, values, ds, dd, t) -> np.ndarray:
    """The Hermite curve at frames t (scalar -> (D,), array -> (T, D)), held at the ends."""
    f = np.asarray(frames, np.float64)
    p = np.asarray(values, np.float64).reshape(len(f), -1)
    tt = np.atleast_1d(np.asarray(t, np.float64))
    if len(f) == 1:
        out = np.repeat(p[:1], len(tt), 0)
    else:
        k, u = segment(f, tt)
        u2, u3 = u * u, u * u * u
        out = ((2 * u3 - 3 * u2 + 1) * p[k] + (u3 - 2 * u2 + u) * dd[k]
               + (3 * u2 - 2 * u3) * p[k + 1] + (u3 - u2) * ds[k + 1])
    return out[0] if np.ndim(t) == 0 else out


def track_curve(track, t) -> np.ndarray:
    """A Track's values at frames t, through its TCB curve."""
    if len(track.frames) == 1:                  # held: no tangents to find (most static nodes' tracks)
        return evaluate(track.frames, track.values, None, None, t)
    ds, dd = tangents(track.frames, track.values, track.tcb)
    return evaluate(track.frames, track.values, ds, dd, t)
