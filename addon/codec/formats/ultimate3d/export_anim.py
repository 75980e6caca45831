"""Scene animation -> U3D timeline: bone keys baked at integer frames, shape-key
frames, and action ranges (one per animation, else from timeline markers).

U3D has one timeline of nFrame frames starting at 0. The animations are laid
on it one after another (each where it starts when that is free, so that a
file's own ranges come back), each sampled on its own by codec.animation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import animation, axes
from ...scene import Animation, Mesh as SMesh, Scene
from ...errors import UnsupportedFeature, Warnings
from .model import ROT_KEY, SCALE_KEY
from .transforms import SWAP, quat_from_blender, sample_quats, sample_vectors
from .validate import MAX_FRAMES

@dataclass
class Timeline:
    """The file's one timeline, frames 0..last: each animation at its first file frame (`parts`)."""
    parts: list[tuple[Animation, int, np.ndarray]]     # (animation, first file frame, its own frames)
    last: int

    def sample(self, fn, width: int) -> np.ndarray:
        """(last + 1, width) values: fn(animation, its frames) inside each part; a frame between
        parts holds the next part's first value (the last part's last one after them)."""
        out = np.full((self.last + 1, width), np.nan)
        for anim, first, frames in self.parts:
            out[first:first + len(frames)] = fn(anim, frames)
        known = np.flatnonzero(~np.isnan(out[:, 0]))
        if len(known) and len(known) < len(out):
            nxt = np.clip(np.searchsorted(known, np.arange(len(out))), 0, len(known) - 1)
            out = out[known[nxt]]
        return out


def _animations(scene: Scene) -> list[Animation]:
    return [a for a in scene.animations if a.channels or "u3d_action_range" in a.extras]


def timeline(scene: Scene) -> Timeline:
    """Animations one after another (codec.animation.layout, from frame 0 on); frames the bridge baked
    into shape keys keep their numbers; a still scene has one frame."""
    anims = _animations(scene)
    parts = []
    if anims:
        starts = animation.layout(anims)
        shift = max(0, -min(starts))
        parts = [(a, start + shift, animation.frames_of(a)) for a, start in zip(anims, starts)]
    last = max([first + len(frames) - 1 for _, first, frames in parts] + [0])
    for m in scene.meshes:       # frames the bridge baked into shape keys
        if m.extras.get("baked_frames"):
            last = max(last, int(max(m.extras["baked_frames"])))
    if last >= MAX_FRAMES:
        raise UnsupportedFeature(f"the animation reaches frame {last}; at most {MAX_FRAMES - 1} can be exported")
    return Timeline(parts, max(int(last), 0))


def _keys(dtype, frames: np.ndarray, values: np.ndarray, source: np.ndarray, rotation: bool = False) -> np.ndarray:
    """Keys at the source's key frames when U3D's interpolation (linear; slerp for rotations) of them
    replays every frame; else one key per frame; one key when nothing changes."""
    if len(values) and np.all(values == values[0]):
        frames, values = frames[:1], values[:1]     # constant: one key says it all
    elif 1 < len(source) <= len(frames):
        tolerance = 1e-5 * max(1.0, float(np.abs(values).max()))
        # a key on every frame replays them all by itself
        if len(source) == len(frames) or _replays(source, values, 0, len(values), rotation, tolerance):
            keep = _thin(list(source), values, rotation, tolerance)
            frames, values = frames[keep], values[keep]
    out = np.zeros(len(frames), dtype)
    out["frame"], out["value"] = frames, values
    return out


def _replays(keys, values: np.ndarray, lo: int, hi: int, rotation: bool, tolerance: float) -> bool:
    """Does U3D's interpolation of `values` at frames `keys` give values[lo:hi]?"""
    keys = np.asarray(keys, np.int64)
    at = np.arange(lo, hi, dtype=np.float64)
    if rotation:
        replay = sample_quats(keys.astype(np.float64), values[keys], at)
        replay *= np.where(np.sum(replay * values[lo:hi], 1, keepdims=True) < 0, -1.0, 1.0)
    else:
        replay = sample_vectors(keys.astype(np.float64), values[keys], at, values[0])
    return np.allclose(replay, values[lo:hi], atol=tolerance)


def _between(keys: np.ndarray, values: np.ndarray, rotation: bool) -> np.ndarray:
    """(K - 2,) for each interior key: does interpolating its two neighbours give its value?"""
    a, k, b = keys[:-2], keys[1:-1], keys[2:]
    t = ((k - a) / (b - a))[:, None]
    va, vb = values[a].astype(np.float64), values[b].astype(np.float64)
    if not rotation:
        return np.abs(va + t * (vb - va) - values[k]).max(1)
    vb = vb * np.where(np.sum(va * vb, 1, keepdims=True) < 0, -1.0, 1.0)
    theta = np.arccos(np.clip(np.abs(np.sum(va * vb, 1, keepdims=True)), -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-6
    wa = np.where(small, 1 - t, np.sin((1 - t) * theta) / np.where(small, 1.0, s))
    wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, s))
    q = wa * va + wb * vb
    q /= np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
    q *= np.where(np.sum(q * values[k], 1, keepdims=True) < 0, -1.0, 1.0)
    return np.abs(q - values[k]).max(1)


def _thin(keep: list[int], values: np.ndarray, rotation: bool, tolerance: float) -> list[int]:
    """Drop the keys that interpolation between the kept ones replays (e.g. the in-betweens an import
    added where Blender's linear quaternions would leave the file's slerp). From each kept key, the
    farthest next key that replays everything between is found by galloping; a key its two
    neighbours do not replay is kept without a test, so curved motion costs one vectorised pass."""
    if len(keep) < 3:
        return keep
    maybe = np.r_[False, _between(np.asarray(keep), values, rotation) <= tolerance, False]
    out, i, last = [keep[0]], 0, len(keep) - 1

    def ok(j: int) -> bool:
        return _replays([keep[i], keep[j]], values, keep[i], keep[j] + 1, rotation, tolerance)

    while i < last:
        good, step = i + 1, 1                   # the next key: replayed (the whole set replays)
        while maybe[good] and good + step <= last and ok(good + step):
            good, step = good + step, step * 2
        bad = min(good + step, last + 1)
        while maybe[good] and bad - good > 1:   # the farthest good one below the first bad one
            mid = (good + bad) // 2
            good, bad = (mid, bad) if ok(mid) else (good, mid)
        out.append(keep[good])
        i = good
    return out


def _source_frames(line: Timeline, arm_node: int, bone: str) -> np.ndarray:
    """File frames where the bone's channels have keys, and each animation's first and last frame."""
    out = set()
    for anim, first, frames in line.parts:
        out |= {first, first + len(frames) - 1}
        for c in animation.channel_map(anim, arm_node, bone).values():
            f = np.asarray(c.frames, np.float64)
            inside = f[(f >= frames[0]) & (f <= frames[-1])]
            if np.any(inside != np.round(inside)):
                return np.zeros(0, np.int64)              # keys between frames: bake every frame
            out |= set((inside - frames[0] + first).astype(np.int64).tolist())
    return np.array(sorted(out), np.int64)


def bone_keys(scene: Scene, arm_node: int, bone: str, rest_local: np.ndarray, line: Timeline):
    """-> (scaling, translation, rotation) key arrays: at the channels' own key frames where they
    replay the motion, else at every integer frame."""
    def local(anim, frames):
        lt, lq, ls = axes.decompose(rest_local @ axes.compose(*animation.trs(
            animation.channel_map(anim, arm_node, bone), frames)))      # key = rest_local @ pose basis
        return np.hstack([lt, lq, ls])
    still = [local(anim, frames[:1]) for anim, _, frames in line.parts
             if all(np.all(c.values == c.values[0]) for c in animation.channel_map(anim, arm_node, bone).values())]
    if len(still) == len(line.parts) and all(np.array_equal(x, still[0]) for x in still):
        v = still[0] if still else local(None, np.zeros(1))     # one key, however long the timeline
    else:
        v = line.sample(local, 10)
    lt, lq, ls = v[:, :3], animation.continuous(v[:, 3:7]), v[:, 7:]
    f = np.arange(len(v), dtype=np.uint32)
    src = _source_frames(line, arm_node, bone)
    return (_keys(SCALE_KEY, f, ls[:, SWAP].astype(np.float32), src),
            _keys(SCALE_KEY, f, lt[:, SWAP].astype(np.float32), src),
            _keys(ROT_KEY, f, quat_from_blender(lq).astype(np.float32), src, rotation=True))


def shape_key_frames(scene: Scene, node: int, sm: SMesh, line: Timeline) -> list[np.ndarray] | None:
    """Positions at every frame from animated shape keys (Blender axes), or None if not animated."""
    keys = sm.shape_keys
    baked = sm.extras.get("baked_frames")
    if baked is not None and len(baked) == len(keys) and len(keys) > 1:
        # the bridge baked one absolute key per frame: take the frames of the timeline as they are
        by_frame = {int(f): k.positions for f, k in zip(baked, keys)}
        first_key = keys[0].positions
        return [np.asarray(by_frame.get(f, first_key), np.float32) for f in range(0, line.last + 1)]
    if len(keys) < 2 or not any(animation.shape_key_weights(a, node, sm, [0.0]) is not None for a, _, _ in line.parts):
        return None

    def weights(anim, frames):
        w = animation.shape_key_weights(anim, node, sm, frames)
        return np.tile([k.value for k in keys], (len(frames), 1)) if w is None else w
    return list(animation.mix_shape_keys(sm, line.sample(weights, len(keys))))


def action_ranges(scene: Scene, line: Timeline, n_frame: int,
                  warnings: Warnings | None = None) -> list[tuple[str, int, int]]:
    """Named ranges inside the file's frames 0 .. n_frame - 1: a range reaching past them is cut to them,
    one starting after them is dropped (with a warning each)."""
    out = []
    for name, first, last in _ranges(scene, line, n_frame):
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


def _ranges(scene: Scene, line: Timeline, n_frame: int) -> list[tuple[str, int, int]]:
    """One range per animation where it sits on the timeline (none for the one animation a file
    without ranges imports as); without animations, the timeline markers ("X" to "X_end")."""
    whole = len(line.parts) == 1 and line.parts[0][0].extras.get("u3d_whole")
    if line.parts and not whole:
        return [(a.name, first, first + len(frames) - 1) for a, first, frames in line.parts]
    starts = sorted((m.frame, m.name) for m in scene.markers if not m.name.endswith("_end"))
    ends = {m.name[:-4]: m.frame for m in scene.markers if m.name.endswith("_end")}
    out = []
    for i, (frame, name) in enumerate(starts):
        nxt = starts[i + 1][0] - 1 if i + 1 < len(starts) else n_frame - 1
        out.append((name, max(frame, 0), max(ends.get(name, nxt), 0)))
    return out
