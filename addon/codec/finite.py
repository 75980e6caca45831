"""NaN, infinite and out-of-float32-range numbers in a Scene: found and replaced in one place.

`load` runs `clean` on every Scene a reader makes (a damaged file's numbers are replaced where
they enter), and `encode` runs it again on what any exporter is given (a Scene from Blender or a
script), so that no writer meets them where it converts to integers or packs float32. Neither
changes the Scene it is given: what holds a bad number is copied, everything else is shared.
Each kind of replacement is one warning.
"""
from __future__ import annotations

import functools
import math
from dataclasses import fields, is_dataclass, replace
from operator import attrgetter

import numpy as np

from .animation import MAX_FRAMES
from .binary import F32_MAX
from .errors import Warnings
from .scene import Animation, Channel, RestPose, Scene

LIMIT = F32_MAX                             # Blender holds float32: a larger number cannot be a value
_IDENTITY_ROTATION = (1.0, 0.0, 0.0, 0.0)
# what a bad number in a key of these channels becomes
_CHANNEL_DEFAULTS = {"rotation_quaternion": _IDENTITY_ROTATION, "scale": (1.0, 1.0, 1.0)}
_SKIP = {"extras", "warnings"}              # a format's own fields go back only to it, as they were read
_PLAIN = {str, int, bool, type(None)}       # fields that hold no number to clean


def _ok_scalar(x: float) -> bool:
    return -LIMIT <= x <= LIMIT             # False for NaN


def ok_array(a: np.ndarray) -> bool:
    """Every number finite and within float32's range, without a temporary array: a float32 array by its
    sum, one pass (NaN and infinity reach it; an overflowing sum is checked again), others by min and max."""
    if a.size == 0:
        return True
    if a.dtype == np.float32 and math.isfinite(np.add.reduce(a, None)):
        return True
    return bool(-LIMIT <= np.minimum.reduce(a, None) and np.maximum.reduce(a, None) <= LIMIT)


def _bad(a: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return ~(np.abs(a) <= LIMIT)


def _label(obj, field: str) -> str:
    name = getattr(obj, "name", None)
    kind = type(obj).__name__.lower()
    return f"{kind} {name!r} {field}" if isinstance(name, str) else f"{kind} {field}"


def _say(warnings: Warnings, what: str, count: int, to: str) -> None:
    warnings.warn(f"{what}: {count} NaN, infinite or out-of-range number{'s' if count != 1 else ''} "
                  f"set to {to}")


def _value(v, default, warnings: Warnings, what: str):
    """A float, a tuple of floats, or a tuple/list of such, cleaned; the same object when it is fine."""
    if isinstance(v, float):
        if _ok_scalar(v):
            return v
        d = default if isinstance(default, float) else 0.0
        _say(warnings, what, 1, f"{d:g}")
        return d
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, float) for x in v):
        bad = [not _ok_scalar(x) for x in v]
        if not any(bad):
            return v
        d = default if isinstance(default, tuple) and len(default) == len(v) else (0.0,) * len(v)
        _say(warnings, what, sum(bad), "the default" if d != (0.0,) * len(v) else "0")
        return type(v)(dv if b else x for x, b, dv in zip(v, bad, d))
    if isinstance(v, (tuple, list)) and v and all(isinstance(x, (tuple, list)) for x in v):
        out = [_value(x, None, warnings, what) for x in v]
        return v if all(a is b for a, b in zip(out, v)) else type(v)(out)
    return v


def _array(a: np.ndarray, warnings: Warnings, owner, field: str) -> np.ndarray:
    if a.dtype.kind != "f" or ok_array(a):
        return a
    what = _label(owner, field)
    bad = _bad(a)
    if a.shape == (4, 4):
        _say(warnings, what, int(bad.sum()), "the identity matrix")
        return np.eye(4, dtype=a.dtype)
    _say(warnings, what, int(bad.sum()), "0")
    return np.where(bad, 0, a).astype(a.dtype)


def _channel(ch: Channel, warnings: Warnings) -> Channel:
    f = np.asarray(ch.frames)
    v = np.asarray(ch.values)
    h = ch.handles
    if (not f.size or -MAX_FRAMES <= f.min() and f.max() <= MAX_FRAMES) and ok_array(v) \
            and (h is None or ok_array(np.asarray(h))):
        return ch
    what = f"channel {ch.bone + ' ' if ch.bone else ''}{ch.path}"
    with np.errstate(invalid="ignore"):
        keep = np.abs(f) <= MAX_FRAMES          # Blender's frames: a key beyond them is a number a file made up
    changed = {}
    if not keep.all():
        warnings.warn(f"{what}: {int((~keep).sum())} key(s) at a NaN frame or beyond frame {MAX_FRAMES} dropped")
        f, v = f[keep], v[keep]
        h = None if h is None else np.asarray(h)[keep]
        changed.update(frames=f, values=v, handles=h)
    if not ok_array(v):
        rows = _bad(v.reshape(len(v), -1)).any(1)
        d = np.asarray(_CHANNEL_DEFAULTS.get(ch.path, 0.0), v.dtype)
        if d.ndim and (v.ndim != 2 or d.shape[0] != v.shape[1]):
            d = np.zeros((), v.dtype)
        _say(warnings, what + " keys", int(rows.sum()), "the rest value")
        v = np.where(rows.reshape((-1,) + (1,) * (v.ndim - 1)), d, v).astype(v.dtype)
        changed["values"] = v
    if h is not None and not ok_array(np.asarray(h)):
        _say(warnings, what + " handles", int(_bad(np.asarray(h)).sum()), "automatic handles")
        changed["handles"] = None
    return replace(ch, **changed)


def _rest(r: RestPose, warnings: Warnings) -> RestPose:
    changed = {}
    for name, rest in (("translation", 0.0), ("rotation", _IDENTITY_ROTATION), ("scale", 1.0)):
        a = np.asarray(getattr(r, name))
        if ok_array(a):
            continue
        rows = _bad(a.reshape(len(a), -1)).any(1)
        _say(warnings, f"rest pose {name}", int(rows.sum()), "the identity")
        changed[name] = np.where(rows[:, None], np.asarray(rest, a.dtype), a).astype(a.dtype)
    return replace(r, **changed) if changed else r


def _arrays_fine(arrays: list[np.ndarray]) -> bool:
    """No bad number in any of `arrays`: those that are views of one array (a reader's frames) by that array,
    small ones joined, so that thousands of them cost a few numpy calls."""
    arrays = [a for a in arrays if a.dtype.kind == "f" and a.size]
    if not arrays:
        return True
    whole = arrays[0].base
    if isinstance(whole, np.ndarray) and whole.dtype == arrays[0].dtype \
            and all(a.base is whole and a.dtype == whole.dtype for a in arrays) \
            and whole.size <= sum(a.size for a in arrays):
        return ok_array(whole)             # each one's numbers lie inside it: its check covers theirs
    if sum(a.size for a in arrays) <= 1 << 20:
        return ok_array(np.concatenate(arrays, axis=None))
    return all(ok_array(a) for a in arrays)


def _fine(items: list) -> bool:
    """True when no item of a list of one plain class (shape keys, channels: a vertex-animated mesh has
    thousands) holds a bad number, checked field by field for all items at once; False when one may, or
    when the items are not plain (nested objects, lists, dicts): _clean then takes them one by one."""
    cls = type(items[0])
    if cls is RestPose or set(map(type, items)) != {cls}:
        return False
    for name, _ in _plan(cls):
        values = list(map(attrgetter(name), items))
        kinds = set(map(type, values))             # a subclass is no plain type: the items go one by one
        if cls is Channel and name == "frames":
            if kinds != {np.ndarray}:
                return False
            f = np.concatenate(values, axis=None)
            if f.size and not (-MAX_FRAMES <= f.min() and f.max() <= MAX_FRAMES):   # NaN fails too
                return False
        elif kinds <= _PLAIN:
            continue
        elif kinds <= {np.ndarray, type(None)}:
            if not _arrays_fine([v for v in values if v is not None]):
                return False
        elif kinds <= {float, int, bool}:
            if not ok_array(np.array([v for v in values if type(v) is float], np.float64)):
                return False
        else:
            return False
    return True


@functools.cache
def _plan(cls) -> tuple[tuple[str, object], ...]:
    """(field name, its default or None) of a Scene class, once per class (fields() is slow per object)."""
    return tuple((f.name, f.default if not callable(f.default_factory) else None) for f in fields(cls)
                 if f.name not in _SKIP)


def _clean(obj, warnings: Warnings):
    """obj, or a copy of it with its bad numbers replaced (recursively through dataclasses and lists)."""
    if isinstance(obj, Channel):
        return _channel(obj, warnings)
    if isinstance(obj, RestPose):
        return _rest(obj, warnings)
    changed = {}
    for name, default in _plan(type(obj)):
        v = getattr(obj, name)
        if isinstance(v, np.ndarray):
            new = _array(v, warnings, obj, name)
        elif isinstance(v, (str, int, bool)) or v is None:
            continue
        elif is_dataclass(v):
            new = _clean(v, warnings)
        elif isinstance(v, dict):
            items = {k: _array(x, warnings, obj, f"{name} {k!r}") if isinstance(x, np.ndarray) else x
                     for k, x in v.items()}
            new = v if all(items[k] is v[k] for k in v) else items
        elif isinstance(v, list) and v and is_dataclass(v[0]):
            if len(v) > 1 and _fine(v):
                continue
            items = [_clean(x, warnings) for x in v]
            new = v if all(a is b for a, b in zip(items, v)) else items
        else:
            new = _value(v, default, warnings, _label(obj, name))
        if new is not v:
            changed[name] = new
    if isinstance(obj, Animation):
        span = [min(max(x, -MAX_FRAMES), MAX_FRAMES) for x in (changed.get("frame_start", obj.frame_start),
                                                               changed.get("frame_end", obj.frame_end))]
        if span != [obj.frame_start, obj.frame_end]:
            warnings.warn(f"animation {obj.name!r}: frame range {obj.frame_start:g}..{obj.frame_end:g} cut to "
                          f"Blender's frames, {span[0]:g}..{span[1]:g}")
            changed.update(frame_start=span[0], frame_end=span[1])
    return replace(obj, **changed) if changed else obj


def clean(scene: Scene, warnings: Warnings) -> Scene:
    """The scene, or a copy that shares all it can, without NaN, infinite or out-of-range numbers."""
    return _clean(scene, warnings)
