"""Scene animation -> U3D timeline: bone keys baked at integer frames, shape-key
frames, and action ranges (one per animation, else from timeline markers).

U3D has one timeline of nFrame frames starting at 0. The animations are laid
on it one after another (each where it starts when that is free or shows the
same there, so that a file's own ranges come back), each sampled on its own by codec.animation.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import animation, axes
from ...scene import Animation, Mesh as SMesh, Scene
from ...errors import UnsupportedFeature, Warnings
from .conventions import SWAP, quat_from_blender
from .model import ROT_KEY, SCALE_KEY
from .validate import MAX_FRAMES

@dataclass
class Timeline:
    """The file's one timeline, frames 0..last: each animation at its first file frame (`parts`).

    `frames` are the file frames that are sampled: every one, unless a part runs longer than
    animation.MAX_BAKED_SPAN (a range a file may have made up); such a part is sampled at its own
    key frames and ends only, since U3D interpolates between keys itself (`sparse`)."""
    parts: list[tuple[Animation, int, np.ndarray]]     # (animation, first file frame, its own frames)
    last: int
    frames: np.ndarray | None = None

    def __post_init__(self):
        if self.frames is None:
            self.frames = np.arange(self.last + 1)

    @property
    def sparse(self) -> bool:
        return len(self.frames) < self.last + 1

    def sample(self, fn, width: int) -> np.ndarray:
        """(len(frames), width) values: fn(animation, its frames) inside each part; a frame between
        parts holds the next part's first value (the last part's last one after them)."""
        out = np.full((len(self.frames), width), np.nan)
        for anim, first, frames in self.parts:
            inside = (self.frames >= first) & (self.frames < first + len(frames))
            if inside.any():
                out[inside] = fn(anim, frames[0] + (self.frames[inside] - first))
        known = np.flatnonzero(~np.isnan(out[:, 0]))
        if len(known) and len(known) < len(out):
            nxt = np.clip(np.searchsorted(known, np.arange(len(out))), 0, len(known) - 1)
            out = out[known[nxt]]
        return out


def _sampled_frames(parts: list[tuple[Animation, int, np.ndarray]], last: int) -> np.ndarray | None:
    """The file frames to sample when a part, or the gaps between parts, are longer than
    animation.MAX_BAKED_SPAN (None: all of them): such a part at its channels' whole key frames and its
    ends, the others at every frame; and the frame after each part, which holds the next part's first
    value (a gap holds it throughout)."""
    gaps = last + 1 - sum(len(frames) for _, _, frames in parts)
    if all(len(frames) <= animation.MAX_BAKED_SPAN for _, _, frames in parts) and gaps <= animation.MAX_BAKED_SPAN:
        return None
    out = [np.array([0, last])]
    for anim, first, frames in parts:
        end = first + len(frames) - 1
        out.append(np.array([first, end, min(end + 1, last)]))
        if len(frames) <= animation.MAX_BAKED_SPAN:
            out.append(np.arange(first, end + 1))
            continue
        for c in anim.channels:
            f = np.asarray(c.frames, np.float64).reshape(-1)
            f = f[np.isfinite(f) & (f >= frames[0]) & (f <= frames[-1])]
            out.append(np.unique(np.concatenate([np.floor(f), np.ceil(f)])).astype(np.int64) - int(frames[0]) + first)
    return np.unique(np.concatenate(out))


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
        if m.baked_frames:
            last = max(last, int(max(m.baked_frames)))
    if last >= MAX_FRAMES:
        raise UnsupportedFeature(f"the animation reaches frame {last}; at most {MAX_FRAMES - 1} can be exported")
    last = max(int(last), 0)
    return Timeline(parts, last, _sampled_frames(parts, last))


def bone_keys(scene: Scene, arm_node: int, bones: list[str], rest_locals: np.ndarray, line: Timeline) -> list[tuple]:
    """-> one (scaling, translation, rotation) triple of key arrays per bone: at the channels' own key
    frames where they replay the motion, else at every integer frame. All bones are sampled at once."""
    if not bones:
        return []

    def local(anim, frames):
        chans = _bone_channels(anim, arm_node)
        t, q, s = (np.stack(x, axis=1) for x in zip(*(animation.trs(chans.get(b, {}), frames) for b in bones)))
        lt, lq, ls = axes.decompose(rest_locals @ axes.compose(t, q, s))      # key = rest_local @ pose basis
        return np.concatenate([lt, lq, ls], -1).reshape(len(frames), -1)
    if not line.parts or _holds_one_pose(line, arm_node):
        # one key, however long the timeline claims to be (a lying range must not be sampled)
        v = local(line.parts[0][0] if line.parts else None, np.zeros(1))
    else:
        v = line.sample(local, 10 * len(bones))
    v = v.reshape(len(v), len(bones), 10)
    lt, lq, ls = v[..., :3], animation.continuous(v[..., 3:7]), v[..., 7:]
    src = _source_frames(line, arm_node, bones)
    at = line.frames if len(v) == len(line.frames) else np.zeros(1, np.int64)
    return list(zip(_keys(SCALE_KEY, ls[..., SWAP].astype(np.float32), src, at=at),
                    _keys(SCALE_KEY, lt[..., SWAP].astype(np.float32), src, at=at),
                    _keys(ROT_KEY, quat_from_blender(lq).astype(np.float32), src, rotation=True, at=at)))


def _holds_one_pose(line: Timeline, arm_node: int) -> bool:
    """True when every bone channel of every part is constant, at the same value in every part."""
    seen: dict[tuple, np.ndarray] = {}
    count: dict[tuple, int] = {}
    for anim, _, _ in line.parts:
        for c in anim.channels:
            if c.target != arm_node or not len(c.frames):
                continue
            k, v = (c.bone, c.path), np.asarray(c.values)
            if not np.all(v == v[:1]) or not np.array_equal(seen.setdefault(k, v[0]), v[0]):
                return False
            count[k] = count.get(k, 0) + 1
    # a channel keyed in one part but not in another moves between parts
    return all(n == len(line.parts) for n in count.values())


def _bone_channels(anim: Animation | None, target: int) -> dict[str, dict]:
    """bone -> its channels by path (animation.channel_map for every bone in one pass)."""
    out: dict[str, dict] = {}
    for c in anim.channels if anim is not None else []:
        if c.target == target and len(c.frames):
            out.setdefault(c.bone, {})[c.path] = c
    return out


def _source_frames(line: Timeline, arm_node: int, bones: list[str]) -> list[np.ndarray]:
    """For each bone, the file frames where its channels have keys, and each animation's first and
    last frame; none (bake every frame) where a key sits between frames."""
    ends = [np.array([first, first + len(frames) - 1], np.int64) for _, first, frames in line.parts]
    found: dict[str, list] = {name: list(ends) for name in bones}
    for anim, first, frames in line.parts:
        for name, chans in _bone_channels(anim, arm_node).items():
            if name not in found or found[name] is None:
                continue
            f = np.concatenate([np.asarray(c.frames, np.float64).reshape(-1) for c in chans.values()])
            inside = f[(f >= frames[0]) & (f <= frames[-1])]
            if np.any(inside != np.round(inside)):
                found[name] = None
                continue
            found[name].append((inside - frames[0] + first).astype(np.int64))
    return [np.unique(np.concatenate(found[n])) if found[n] else np.zeros(0, np.int64) for n in bones]


def _keys(dtype, values: np.ndarray, sources: list[np.ndarray], rotation: bool = False,
          at: np.ndarray | None = None) -> list[np.ndarray]:
    """(T, B, D) values of B bones -> each bone's keys: at its source's key frames when U3D's
    interpolation (linear; slerp for rotations) of them replays every frame; else one key per frame;
    one key when nothing changes. Row t is file frame `at[t]` (t itself by default); rows that are
    not whole consecutive frames are kept as they are (the replay checks count rows as frames)."""
    n_frames = len(values)
    frames = (np.arange(n_frames) if at is None else np.asarray(at)).astype(np.uint32)
    consecutive = at is None or len(at) < 2 or bool(np.all(np.diff(at) == 1))
    if not consecutive:
        sources = [np.zeros(0, np.int64)] * len(sources)
    still = np.all(values == values[:1], axis=(0, 2))
    tolerance = 1e-5 * np.fmax(1.0, np.abs(values).max(axis=(0, 2)).astype(np.float64))
    # a key on every frame replays them all by itself; fewer are checked, every bone at once
    check = [b for b, src in enumerate(sources) if not still[b] and 1 < len(src) < n_frames]
    replays = dict(zip(check, _replays_all([sources[b] for b in check], values[:, check], rotation,
                                           tolerance[check])))
    thin = [b for b, src in enumerate(sources) if not still[b] and 1 < len(src) <= n_frames
            and (len(src) == n_frames or replays[b])]
    between = _between_all([sources[b] for b in thin], values[:, thin], rotation)
    kept = _thin_all({b: (sources[b], e) for b, e in zip(thin, between)}, values, rotation, tolerance)
    out = []
    for b, src in enumerate(sources):
        f, v = frames, values[:, b]
        if still[b]:
            f, v = f[:1], v[:1]         # constant: one key says it all
        elif b in kept:
            f, v = f[kept[b]], v[kept[b]]
        keys = np.zeros(len(f), dtype)
        keys["frame"], keys["value"] = f, v
        out.append(keys)
    return out


def _replays_all(sources: list[np.ndarray], values: np.ndarray, rotation: bool, tolerance: np.ndarray) -> np.ndarray:
    """(B,) bool: does U3D's interpolation of each bone's (T, B, D) `values` at its `sources` frames
    give all its frames? The bones lie one after another on one axis, each held at its own ends."""
    n, count = len(sources), len(values)
    if not n:
        return np.zeros(0, bool)
    per_bone = values.transpose(1, 0, 2).astype(np.float64)             # (B, T, D)
    offset = np.arange(n) * count
    keys = np.concatenate([s + o for s, o in zip(sources, offset)])
    kv = _unit_keys(per_bone.reshape(-1, per_bone.shape[2])[keys], rotation)
    keys = keys.astype(np.float64)
    last = np.cumsum([len(s) for s in sources]) - 1
    first = last - np.array([len(s) for s in sources]) + 1
    at = np.clip(np.arange(count, dtype=np.float64)[None] + offset[:, None], keys[first, None], keys[last, None])
    i1 = np.clip(np.searchsorted(keys, at, side="right"), (first + 1)[:, None], last[:, None])
    replay = _interpolate(at[..., None], keys[i1 - 1][..., None], keys[i1][..., None], kv[i1 - 1], kv[i1], rotation)
    if rotation:
        replay *= np.where(np.sum(replay * per_bone, -1, keepdims=True) < 0, -1.0, 1.0)
    return _close(replay, per_bone, tolerance[:, None, None], axis=(1, 2))


def _spans_replay(values: np.ndarray, spans: list[tuple[int, int, int]], rotation: bool,
                  tolerance: np.ndarray) -> np.ndarray:
    """For each (bone, a, b) with a < b: does U3D's interpolation between the bone's keys at frames a
    and b give every frame between? (T, B, D) values; all the spans in one pass, row by row."""
    bone, a, b = (np.array(x, np.int64) for x in zip(*spans))
    count = b - a + 1
    first = np.cumsum(count) - count
    row = np.repeat(np.arange(len(spans)), count)
    frame = a[row] + np.arange(len(row)) - first[row]
    want = values[frame, bone[row]]
    v0 = _unit_keys(values[a, bone].astype(np.float64), rotation)[row]
    v1 = _unit_keys(values[b, bone].astype(np.float64), rotation)[row]
    replay = _interpolate(frame.astype(np.float64)[:, None], a[row, None].astype(np.float64),
                          b[row, None].astype(np.float64), v0, v1, rotation)
    if rotation:
        replay *= np.where(np.sum(replay * want, 1, keepdims=True) < 0, -1.0, 1.0)
    return np.logical_and.reduceat(_close(replay, want, tolerance[bone[row], None], axis=1), first)


def _close(replay: np.ndarray, want: np.ndarray, tolerance, axis=None):
    """np.allclose(replay, want, atol=tolerance), with one tolerance per bone, without its overhead."""
    with np.errstate(invalid="ignore"):
        return ((np.abs(replay - want) <= tolerance + 1e-5 * np.abs(want)) | (replay == want)).all(axis=axis)


def _unit_keys(v: np.ndarray, rotation: bool) -> np.ndarray:
    """Rotation keys as the file plays them: unit, a zero one no rotation (transforms.sample_quats)."""
    if not rotation:
        return v
    norm = np.linalg.norm(v, axis=-1, keepdims=True)
    return np.where(norm > 1e-12, v / np.where(norm > 1e-12, norm, 1.0), [0.0, 0.0, 0.0, 1.0])


def _interpolate(at, k0, k1, v0: np.ndarray, v1: np.ndarray, rotation: bool) -> np.ndarray:
    """U3D's interpolation between keys (k0, v0) and (k1, v1) at frames `at` inside them, with the
    arithmetic of transforms.sample_quats (slerp) and of the np.interp in sample_vectors."""
    span = k1 - k0
    if rotation:
        t = np.where(span > 0, (at - k0) / np.where(span > 0, span, 1.0), 0.0)
        d = np.sum(v0 * v1, -1, keepdims=True)
        v1 = np.where(d < 0, -v1, v1)
        theta = np.arccos(np.clip(np.abs(d), -1.0, 1.0))
        s = np.sin(theta)
        small = s < 1e-6
        wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / np.where(small, 1.0, s))
        wb = np.where(small, t, np.sin(t * theta) / np.where(small, 1.0, s))
        out = wa * v0 + wb * v1
        return out / np.linalg.norm(out, axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        slope = (v1 - v0) / span
        out = slope * (at - k0) + v0
        if np.isnan(out).any():            # np.interp tries from the other end, then a flat piece
            other = slope * (at - k1) + v1
            out = np.where(np.isnan(out), np.where(np.isnan(other) & (v0 == v1), v0, other), out)
    return np.where(at == k0, v0, np.where(at == k1, v1, out))


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


def _between_all(sources: list[np.ndarray], values: np.ndarray, rotation: bool) -> list[np.ndarray]:
    """_between of each bone's keys in its (T, B, D) values, every bone at once (one after another on
    one axis; the triples that straddle two bones are dropped)."""
    if not sources:
        return []
    flat = values.transpose(1, 0, 2).reshape(-1, values.shape[2])
    keys = np.concatenate([s + j * len(values) for j, s in enumerate(sources)])
    errors = _between(keys, flat, rotation) if len(keys) > 2 else np.zeros(0)
    starts = np.cumsum([0] + [len(s) for s in sources])
    return [errors[p:p + len(s) - 2] if len(s) > 2 else np.zeros(0) for p, s in zip(starts, sources)]


def _thin_all(jobs: dict[int, tuple[np.ndarray, np.ndarray]], values: np.ndarray, rotation: bool,
              tolerance: np.ndarray) -> dict[int, np.ndarray]:
    """bone -> the keys kept of its (source frames, _between of them): _walk for every bone at once,
    the spans each walk asks about tested together (_spans_replay) round after round."""
    done, walks = {}, {}
    for b, (keep, between) in jobs.items():
        keep = np.asarray(keep, np.int64)
        walk = _walk(keep, np.r_[False, between <= tolerance[b], False])
        try:
            walks[b] = (walk, keep, next(walk))
        except StopIteration as end:
            done[b] = end.value
    while walks:
        answers = _spans_replay(values, [(b, keep[i], keep[j]) for b, (_, keep, (i, j)) in walks.items()],
                                rotation, tolerance)
        for (b, (walk, keep, _)), ok in zip(list(walks.items()), answers):
            try:
                walks[b] = (walk, keep, walk.send(bool(ok)))
            except StopIteration as end:
                done[b] = end.value
                del walks[b]
    return done


def _walk(keep: np.ndarray, maybe: np.ndarray):
    """Drop the keys that interpolation between the kept ones replays (e.g. the in-betweens an import
    added where Blender's linear quaternions would leave the file's slerp). From each kept key i, the
    farthest next key j whose span replays everything between is found by galloping, asking (yield
    (i, j)) whether it does; a key its two neighbours do not replay (not `maybe`) is kept without a
    question, so curved motion costs one vectorised pass. Returns the kept keys."""
    if len(keep) < 3:
        return keep
    tested = np.flatnonzero(maybe)
    out, i, last = [0], 0, len(keep) - 1
    while i < last:
        # up to the next key worth a test, each next key is kept as it is
        nxt = tested[np.searchsorted(tested, i + 1)] if len(tested) and tested[-1] > i else last + 1
        if nxt > i + 1:
            out += range(i + 1, min(nxt, last + 1))
            i = min(nxt, last + 1) - 1
            continue
        good, step = i + 1, 1                   # the next key: replayed (the whole set replays)
        while maybe[good] and good + step <= last and (yield i, good + step):
            good, step = good + step, step * 2
        bad = min(good + step, last + 1)
        while maybe[good] and bad - good > 1:   # the farthest good one below the first bad one
            mid = (good + bad) // 2
            good, bad = (mid, bad) if (yield i, mid) else (good, mid)
        out.append(good)
        i = good
    return keep[out]


def shape_key_frames(scene: Scene, node: int, sm: SMesh, line: Timeline) -> list[np.ndarray] | None:
    """Positions at every frame from animated shape keys (Blender axes), or None if not animated."""
    keys = sm.shape_keys
    baked = sm.baked_frames
    is_baked = len(baked) == len(keys) > 1
    if not is_baked and (len(keys) < 2 or not any(animation.shape_key_weights(a, node, sm, [0.0]) is not None
                                                  for a, _, _ in line.parts)):
        return None
    if line.sparse:         # one mesh per frame: a made-up range must not be written out frame by frame
        raise UnsupportedFeature(f"shape keys of {sm.name!r} animate {line.last + 1} frames; U3D stores a mesh "
                                 f"per frame, and at most {animation.MAX_BAKED_SPAN} are written")
    if is_baked:
        # the bridge baked one absolute key per frame: take the frames of the timeline as they are
        by_frame = {int(f): k.positions for f, k in zip(baked, keys)}
        first_key = keys[0].positions
        return [np.asarray(by_frame.get(f, first_key), np.float32) for f in range(0, line.last + 1)]

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
