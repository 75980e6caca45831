"""Scene animation -> U3D timeline: bone keys baked at integer frames, shape-key
frames, and action ranges (from actions, else from timeline markers).

U3D has one timeline of nFrame frames starting at 0. Every Animation keeps
its channels inside its own frame range, so several actions laid one after
the other bake into that single timeline.
"""
from __future__ import annotations

import numpy as np

from ...axes import compose, decompose
from ...scene import Channel, Mesh as SMesh, Scene
from ...errors import UnsupportedFeature, Warnings
from .model import ROT_KEY, SCALE_KEY
from .transforms import SWAP, quat_from_blender
from .validate import MAX_FRAMES

DEFAULTS = {"location": (0.0, 0.0, 0.0), "rotation_quaternion": (1.0, 0.0, 0.0, 0.0), "scale": (1.0, 1.0, 1.0)}


def timeline(scene: Scene) -> tuple[int, int]:
    """U3D frames run from 0 to the last animated frame (a still scene has one frame)."""
    last = 0
    for a in scene.animations:
        for c in a.channels:
            if len(c.frames):
                last = max(last, int(np.ceil(np.max(c.frames))))
    for m in scene.meshes:       # frames the bridge baked into shape keys
        if m.extras.get("baked_frames"):
            last = max(last, int(max(m.extras["baked_frames"])))
    if last >= MAX_FRAMES:
        raise UnsupportedFeature(f"the animation reaches frame {last}; at most {MAX_FRAMES - 1} can be exported")
    return 0, max(int(last), 0)


def evaluate(c: Channel, at: np.ndarray) -> np.ndarray:
    f = np.asarray(c.frames, np.float64)
    v = np.asarray(c.values, np.float64).reshape(len(f), -1)
    if c.interpolation == "CONSTANT":
        idx = np.clip(np.searchsorted(f, at, side="right") - 1, 0, len(f) - 1)
        return v[idx]
    return np.stack([np.interp(at, f, v[:, i]) for i in range(v.shape[1])], 1)


def sample(scene: Scene, target: int, bone: str, path: str, at: np.ndarray, default) -> np.ndarray:
    """One property over the timeline: each animation rules inside its frame range."""
    out = np.tile(np.asarray(default, np.float64), (len(at), 1))
    covered = np.zeros(len(at), bool)
    fallback = None
    for a in scene.animations:
        ch = next((c for c in a.channels if c.target == target and c.bone == bone and c.path == path), None)
        if ch is None or not len(ch.frames):
            continue
        fallback = fallback or ch
        whole = a.frame_end <= a.frame_start
        mask = ~covered & (whole | ((at >= a.frame_start) & (at <= a.frame_end)))
        if mask.any():
            out[mask] = evaluate(ch, at[mask])
            covered |= mask
    if fallback is not None and not covered.all():
        out[~covered] = evaluate(fallback, at[~covered])
    return out


def _keys(dtype, frames: np.ndarray, values: np.ndarray) -> np.ndarray:
    if len(values) and np.all(values == values[0]):
        frames, values = frames[:1], values[:1]     # constant: one key says it all
    out = np.zeros(len(frames), dtype)
    out["frame"], out["value"] = frames, values
    return out


def bone_keys(scene: Scene, arm_node: int, bone: str, rest_local: np.ndarray, first: int, last: int):
    """-> (scaling, translation, rotation) key arrays baked at every integer frame."""
    at = np.arange(first, last + 1, dtype=np.float64)
    t = sample(scene, arm_node, bone, "location", at, DEFAULTS["location"])
    q = sample(scene, arm_node, bone, "rotation_quaternion", at, DEFAULTS["rotation_quaternion"])
    s = sample(scene, arm_node, bone, "scale", at, DEFAULTS["scale"])
    local = rest_local @ compose(t, q, s)          # key = rest_local @ pose basis
    lt, lq, ls = decompose(local)
    f = at.astype(np.uint32)
    return (_keys(SCALE_KEY, f, ls[:, SWAP].astype(np.float32)),
            _keys(SCALE_KEY, f, lt[:, SWAP].astype(np.float32)),
            _keys(ROT_KEY, f, quat_from_blender(lq).astype(np.float32)))


def shape_key_frames(scene: Scene, node: int, sm: SMesh, first: int, last: int) -> list[np.ndarray] | None:
    """Positions at every frame from animated shape keys (Blender axes), or None if not animated."""
    keys = sm.shape_keys
    baked = sm.extras.get("baked_frames")
    if baked is not None and len(baked) == len(keys) and len(keys) > 1:
        # the bridge baked one absolute key per frame: take the frames of the timeline as they are
        by_frame = {int(f): k.positions for f, k in zip(baked, keys)}
        first_key = keys[0].positions
        return [np.asarray(by_frame.get(f, first_key), np.float32) for f in range(first, last + 1)]
    if len(keys) < 2:
        return None
    paths = {f'key_blocks["{k.name}"].value': i for i, k in enumerate(keys) if i}
    animated = any(c.target == node and c.path in paths for a in scene.animations for c in a.channels)
    if not animated:
        return None
    at = np.arange(first, last + 1, dtype=np.float64)
    weights = np.stack([sample(scene, node, "", p, at, (keys[i].value,))[:, 0] for p, i in paths.items()], 1)
    basis = np.asarray(keys[0].positions, np.float32)
    deltas = np.stack([np.asarray(keys[i].positions, np.float32) -
                       np.asarray(keys[keys[i].relative_to].positions, np.float32) for i in paths.values()])
    out = []
    for w in weights:                      # per frame; only the keys that act on it
        nz = np.nonzero(w)[0]
        if len(nz) == 1 and w[nz[0]] == 1.0 and keys[list(paths.values())[nz[0]]].relative_to == 0:
            out.append(np.asarray(keys[list(paths.values())[nz[0]]].positions, np.float32))   # exact
        else:
            out.append(basis + np.tensordot(w[nz].astype(np.float32), deltas[nz], 1))
    return out


def _from_collected(ranges: list[dict]) -> list[tuple[str, int, int]]:
    """The bridge's named ranges: actions and NLA strips first, timeline markers only when there are none."""
    pick = [r for r in ranges if r.get("source") in ("ACTION", "NLA")]
    if not pick:
        starts = [r for r in ranges if r.get("source") == "MARKER" and not str(r["name"]).endswith("_end")]
        ends = {str(r["name"])[:-4]: r["start"] for r in ranges if str(r["name"]).endswith("_end")}
        pick = [dict(r, end=ends.get(r["name"], r["end"])) for r in starts]
    out = {}
    for r in pick:
        out.setdefault(str(r["name"]), (str(r["name"]), max(int(round(r["start"])), 0), max(int(round(r["end"])), 0)))
    return sorted(out.values(), key=lambda t: (t[1], t[2]))


def action_ranges(scene: Scene, n_frame: int, warnings: Warnings | None = None) -> list[tuple[str, int, int]]:
    """Named ranges inside the file's frames 0 .. n_frame - 1: a range reaching past them is cut to them,
    one starting after them is dropped (with a warning each)."""
    out = []
    for name, first, last in _ranges(scene, n_frame):
        last = max(first, last)
        if first > n_frame - 1:
            if warnings is not None:
                warnings.warn(f"action range {name!r} [{first}, {last}] starts after the file's last frame "
                              f"({n_frame - 1}): not exported")
            continue
        if last > n_frame - 1:
            if warnings is not None:
                warnings.warn(f"action range {name!r} [{first}, {last}] cut to the file's last frame ({n_frame - 1})")
            last = n_frame - 1
        out.append((name, first, last))
    return out


def _ranges(scene: Scene, n_frame: int) -> list[tuple[str, int, int]]:
    if scene.metadata.get("ranges"):
        return _from_collected(scene.metadata["ranges"])
    anims = [a for a in scene.animations if a.channels or "u3d_action_range" in a.extras]
    whole = len(anims) == 1 and "u3d_action_range" not in anims[0].extras and \
        anims[0].frame_start <= 0 and anims[0].frame_end >= n_frame - 1
    if anims and not whole:
        return [(a.name, max(int(round(a.frame_start)), 0), max(int(round(a.frame_end)), 0)) for a in anims]
    starts = sorted((m.frame, m.name) for m in scene.markers if not m.name.endswith("_end"))
    ends = {m.name[:-4]: m.frame for m in scene.markers if m.name.endswith("_end")}
    out = []
    for i, (frame, name) in enumerate(starts):
        nxt = starts[i + 1][0] - 1 if i + 1 < len(starts) else n_frame - 1
        out.append((name, max(frame, 0), max(ends.get(name, nxt), 0)))
    return out
