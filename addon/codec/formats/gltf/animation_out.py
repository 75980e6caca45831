"""Scene animations -> glTF animations: each action one animation, its channels' own keys kept.

A channel keeps its key frames and interpolation: CONSTANT as STEP, LINEAR as LINEAR, BEZIER as
CUBICSPLINE (tangents from the handles) where that replays it to 1e-4, else sampled every frame.
Euler rotations, which glTF cannot hold, are sampled as quaternions. Shape-key values become the
node's morph-target weights. Times run from the animation's first frame, at the animation's own
frame rate (the export option overrides it); the Scene range and rate ride in its extras.
"""
from __future__ import annotations

import numpy as np

from ... import animation, axes
from ...scene import Animation, Channel
from .accessors_out import Buffer
from .conventions import own_frame

TRS_PATHS = {"location": "translation", "rotation_quaternion": "rotation", "rotation_euler": "rotation",
             "scale": "scale"}
INTERPOLATION = {"CONSTANT": "STEP", "LINEAR": "LINEAR", "BEZIER": "CUBICSPLINE"}
TOLERANCE = 1e-4


def _keys(ch: Channel, start: float, end: float):
    """(frames, values, interpolation, exact, held): the channel's keys inside [start, end], a key evaluated at
    each end it was cut at, and a key holding its first or last value at each end of the range it does not
    reach (glTF plays an animation as long as its last key: so it keeps the source's range); held says
    (before, after) whether such a key was added. exact is False when a cut Bezier would need new handles."""
    f = np.asarray(ch.frames, np.float64).reshape(-1)
    if not len(f):                            # a channel without keys (a damaged file's track): nothing to write
        return None
    v = np.asarray(ch.values, np.float64).reshape(len(f), -1)
    ok = np.isfinite(f) & np.isfinite(v).all(1)
    f, v = f[ok], v[ok]
    if not len(f):
        return None
    # one key per frame (the last one given), in order
    order = np.argsort(f, kind="stable")
    f, v = f[order], v[order]
    last = np.r_[f[1:] != f[:-1], True]
    f, v = f[last], v[last]
    inside = (f >= start) & (f <= end)
    cut = not inside.all()
    if cut:
        f = np.union1d(f[inside], [start, end])
        v = animation.evaluate(ch, f)
    before, after = bool(f[0] > start), bool(f[-1] < end)
    if before or after:
        f = np.r_[[start] * before, f, [end] * after]
        v = np.r_[v[:1].repeat(before, 0), v, v[-1:].repeat(after, 0)]
    return f, v, ch.interpolation, not (cut and ch.interpolation == "BEZIER"), (before, after)


def _hermite_tangents(ch: Channel, f: np.ndarray, v: np.ndarray):
    """(in, out) tangents per frame from a Bezier channel's handles (Blender's auto ones when it has none)."""
    h = np.asarray(ch.handles, np.float64).reshape(len(f), v.shape[1], 2, 2) if ch.handles is not None \
        and np.size(ch.handles) == len(f) * v.shape[1] * 4 else animation.auto_handles(f, v)
    with np.errstate(all="ignore"):
        left = (v - h[:, :, 0, 1]) / (f[:, None] - h[:, :, 0, 0])
        right = (h[:, :, 1, 1] - v) / (h[:, :, 1, 0] - f[:, None])
    return np.nan_to_num(left, posinf=0.0, neginf=0.0), np.nan_to_num(right, posinf=0.0, neginf=0.0)


def hermite(f, v, a, b, at) -> np.ndarray:
    """glTF's cubic spline at frames `at` (tangents per frame)."""
    k = np.clip(np.searchsorted(f, at, side="right") - 1, 0, len(f) - 2)
    td = (f[k + 1] - f[k])[:, None]
    t = ((at - f[k]) / (f[k + 1] - f[k]))[:, None]
    t2, t3 = t * t, t * t * t
    return ((2 * t3 - 3 * t2 + 1) * v[k] + (t3 - 2 * t2 + t) * td * b[k] + (-2 * t3 + 3 * t2) * v[k + 1]
            + (t3 - t2) * td * a[k + 1])


def sampled(ch: Channel, start: float, end: float):
    """The channel as glTF can replay it: (frames, values, in, out, glTF interpolation)."""
    got = _keys(ch, start, end)
    if got is None:
        return None
    f, v, interp, exact, (before, after) = got
    if interp == "CONSTANT" or len(f) < 2:
        return f, v, None, None, "STEP" if interp == "CONSTANT" else "LINEAR"
    if interp == "BEZIER" and exact:
        own = slice(int(before), len(f) - int(after))
        a, b = np.zeros_like(v), np.zeros_like(v)      # flat where a held key was added
        if len(f[own]) > 1:
            a[own], b[own] = _hermite_tangents(ch, f[own], v[own])
        if before:
            a[1] = 0.0
        if after:
            b[-2] = 0.0
        probe = (f[:-1, None] + np.diff(f)[:, None] * np.array([0.25, 0.5, 0.75])).reshape(-1)
        want = animation.evaluate(ch, probe)
        size = max(1.0, float(np.ptp(v, axis=0).max()))
        if np.abs(hermite(f, v, a, b, probe) - want).max() <= TOLERANCE * size:
            return f, v, a, b, "CUBICSPLINE"
    if interp == "BEZIER":
        fr = animation.bake_frames(f)
        fr = np.union1d(fr[(fr >= start) & (fr <= end)], f)
        return fr, animation.evaluate(ch, fr), None, None, "LINEAR"
    return f, v, None, None, "LINEAR"


class Track:
    """The glTF samplers and channels of one animation."""

    def __init__(self, buf: Buffer, start: float, fps: float) -> None:
        self.buf, self.start, self.fps = buf, start, fps
        self.samplers: list[dict] = []
        self.channels: list[dict] = []
        self._inputs: dict[bytes, int] = {}

    def add(self, node: int, path: str, frames, values, a=None, b=None, interp="LINEAR") -> None:
        times = ((np.asarray(frames, np.float64) - self.start) / self.fps).astype(np.float32)
        key = times.tobytes()
        if key not in self._inputs:
            self._inputs[key] = self.buf.accessor(times, bounds=True)
        vals = np.ascontiguousarray(values, np.float32)      # weights come frame by frame from key rows
        if interp == "CUBICSPLINE":
            out = np.stack([np.asarray(a) * self.fps, values, np.asarray(b) * self.fps], 1).astype(np.float32)
            vals = out.reshape(-1, out.shape[-1])
        if path == "weights":
            vals = vals.reshape(-1)
        self.samplers.append({"input": self._inputs[key], "interpolation": interp,
                              "output": self.buf.accessor(vals)})
        self.channels.append({"sampler": len(self.samplers) - 1, "target": {"node": node, "path": path}})


def _perm(p: np.ndarray) -> np.ndarray:
    """The |permutation| of a signed permutation matrix, as a (3, 3) map of scale vectors."""
    return np.abs(np.round(p[:3, :3])).T


class _Carry:
    """local = A @ TRS @ P for one node or bone (A affine, P a scaled signed permutation), taken apart
    once for all the animations that key it."""

    def __init__(self, A: np.ndarray, P: np.ndarray):
        self.A_lin, self.A_t = A[:3, :3], A[:3, 3]
        self.qa = axes.decompose(A)[1]
        s_p = float(np.cbrt(abs(np.linalg.det(P[:3, :3])))) or 1.0
        self.scale = (float(np.cbrt(abs(np.linalg.det(self.A_lin)))) or 1.0) * s_p
        p_rot = P[:3, :3] / s_p
        self.qp = axes.matrix_to_quat(p_rot)
        self.perm = _perm(p_rot)


def _transform_channels(track: Track, g: int, chans: dict[str, Channel], carry: _Carry,
                        rest_scale: np.ndarray, start: float, end: float) -> None:
    """One node's TRS channels, their values carried through local = A @ TRS @ P, each on its own keys."""
    A_lin, qa, qp, perm = carry.A_lin, carry.qa, carry.qp, carry.perm
    if "location" in chans:
        got = sampled(chans["location"], start, end)
        if got is not None:
            f, v, a, b, interp = got
            v = v[:, :3] @ A_lin.T + carry.A_t
            a, b = (None, None) if a is None else (a[:, :3] @ A_lin.T, b[:, :3] @ A_lin.T)
            track.add(g, "translation", f, v, a, b, interp)
    rot = chans.get("rotation_quaternion")
    if rot is not None:
        got = sampled(rot, start, end)
        if got is not None:
            f, v, a, b, interp = got
            q = animation.unit(axes.quat_multiply(axes.quat_multiply(qa, v[:, :4]), qp))
            if interp != "CUBICSPLINE":
                q = animation.continuous(q)
            to = lambda x: x[:, [1, 2, 3, 0]]       # noqa: E731  (w, x, y, z) -> glTF (x, y, z, w)
            if a is not None:
                a, b = (to(axes.quat_multiply(axes.quat_multiply(qa, t), qp)) for t in (a[:, :4], b[:, :4]))
            track.add(g, "rotation", f, to(q), a, b, interp)
    elif "rotation_euler" in chans:
        ch = chans["rotation_euler"]
        got = _keys(ch, start, end)
        if got is not None:
            f, _, interp, _, _ = got
            if interp != "CONSTANT":
                fr = animation.bake_frames(f)
                f = np.union1d(fr[(fr >= start) & (fr <= end)], f)
            q = axes.matrix_to_quat(axes.euler_to_matrix(animation.evaluate(ch, f)[:, :3]))
            q = animation.continuous(animation.unit(axes.quat_multiply(axes.quat_multiply(qa, q), qp)))
            track.add(g, "rotation", f, q[:, [1, 2, 3, 0]], interp="STEP" if interp == "CONSTANT" else "LINEAR")
    if "scale" in chans:
        got = sampled(chans["scale"], start, end)
        if got is not None:
            f, v, a, b, interp = got
            k = carry.scale
            v = v[:, :3] @ perm.T * k
            a, b = (None, None) if a is None else (a[:, :3] @ perm.T * k, b[:, :3] @ perm.T * k)
            track.add(g, "scale", f, v, a, b, interp)
    elif "hide_viewport" in chans:
        got = _keys(chans["hide_viewport"], start, end)
        if got is not None:
            f, v, _, _, _ = got
            track.add(g, "scale", f, np.outer(v[:, 0] < 0.5, rest_scale), interp="STEP")


def _aims(w, a: Animation, track: Track, start: float, end: float) -> set[int]:
    """Nodes that look at a target (a camera's or lamp's Track To, which glTF cannot hold) whose aim an
    animation moves: their rotation sampled every frame of the motion. -> those scene nodes."""
    moved = {c.target for c in a.channels if c.path in TRS_PATHS and not c.bone}
    out = set()
    for i, g in w.node_of.items():
        node = w.sc.nodes[i]
        t = node.target
        if not (0 <= t < len(w.sc.nodes)) or t == i:
            continue
        chain = set()
        for k in (i, t):
            while 0 <= k < len(w.sc.nodes) and k not in chain:
                chain.add(k)
                k = w.sc.nodes[k].parent
        keys = [np.asarray(c.frames, np.float64) for c in a.channels if c.target in chain & moved
                and c.path in TRS_PATHS and not c.bone]
        if not keys:
            continue
        fr = animation.bake_frames(np.concatenate(keys))
        frames = np.union1d(fr[(fr >= start) & (fr <= end)], [start, end])
        world = animation.world_matrices(w.sc, a, i, frames)
        aim = animation.world_matrices(w.sc, a, t, frames)[:, :3, 3] - world[:, :3, 3]
        up = animation.world_matrices(w.sc, a, t, frames)[:, :3, 2] if node.target_up else np.array([0.0, 0.0, 1.0])
        z = -aim / np.maximum(np.linalg.norm(aim, axis=1, keepdims=True), 1e-12)
        y = up - np.sum(up * z, axis=1, keepdims=True) * z
        y /= np.maximum(np.linalg.norm(y, axis=1, keepdims=True), 1e-12)
        rot = np.stack([np.cross(y, z), y, z], axis=-1)
        scale = np.linalg.norm(world[:, :3, :3], axis=1)
        world[:, :3, :3] = rot * scale[:, None, :]
        parent = animation.world_matrices(w.sc, a, node.parent, frames) if node.parent >= 0 else np.eye(4)
        local = axes.inverse_or_identity(np.asarray(node.matrix_parent_inverse, np.float64)) \
            @ axes.inverse_or_identity(parent) @ world
        _, kp = w.parent_frame(i)
        glocal = kp @ w.fr.g @ local @ w.fr.g_inv @ own_frame(node.kind)
        q = animation.continuous(axes.decompose(glocal)[1])
        track.add(g, "rotation", frames, q[:, [1, 2, 3, 0]])
        out.add(i)
    return out


def _fps(w, a: Animation) -> float:
    for fps in (w.opts.fps, a.fps, w.sc.fps):
        if fps and np.isfinite(fps) and fps > 0:
            return float(fps)
    return 24.0


def _stepped_weights(mesh, chans: list[Channel], start: float, end: float):
    """(frames, (T, K) weights) of shape-key channels that are all CONSTANT with keys in order (Unreal's
    frames: one channel per key), in bulk; what the general path (_keys, then animation.shape_key_weights)
    gives, which costs a millisecond a channel. None for any other channels."""
    if any(c.interpolation != "CONSTANT" for c in chans):
        return None
    mine = [c for c in chans if len(c.frames)]
    f = [np.asarray(c.frames, np.float64).reshape(-1) for c in mine]
    v = [np.asarray(c.values, np.float64).reshape(-1) for c in mine]
    sizes = np.array([len(x) for x in f], np.int64)
    if not mine or len({c.path for c in mine}) < len(mine) or any(len(x) != len(y) for x, y in zip(f, v)):
        return None
    f, v = np.concatenate(f), np.concatenate(v)
    firsts = np.cumsum(sizes) - sizes
    later = np.ones(len(f), bool)
    later[firsts] = False
    if not (np.isfinite(f).all() and np.isfinite(v).all() and (np.diff(f)[later[1:]] > 0).all()):
        return None
    frames = np.union1d([start, end], f[(f >= start) & (f <= end)])
    # a key holds from its frame's row (a channel's first key from row 0) to the next key's of its channel (the
    # last key's to the end; a later key at the same row wins): each channel's values repeated over its rows
    row = np.searchsorted(frames, f)
    row[firsts] = 0
    until = np.empty_like(row)
    until[:-1] = row[1:]
    until[firsts + sizes - 1] = len(frames)
    by_channel = np.repeat(v, until - row).reshape(len(mine), len(frames))
    column_of = {c.path: k for k, c in enumerate(mine)}
    column = np.array([column_of.get(f'key_blocks["{k.name}"].value', -1) for k in mesh.shape_keys])
    if (column < 0).all():
        return None
    by_key = by_channel[np.maximum(column, 0)]
    by_key[column < 0] = np.array([k.value for k in mesh.shape_keys], np.float64)[column < 0, None]   # no channel
    return frames, by_key.T


def _keyed(w, target: int, bone: str, cache: dict):
    """(glTF node, _Carry, rest scale) of a keyed Scene node or bone, or None when glTF has no node for
    it; each worked out once per document."""
    if (target, bone) not in cache:
        cache[target, bone] = None
        node = w.sc.nodes[target] if target in w.node_of else None
        if node is not None and not bone:
            _, kp = w.parent_frame(target)
            A = kp @ w.fr.g @ np.asarray(node.matrix_parent_inverse, np.float64)
            cache[target, bone] = (w.node_of[target], _Carry(A, w.fr.g_inv @ own_frame(node.kind)),
                                   axes.decompose(w.local(target))[2])
        elif node is not None and target in w.bone_nodes:
            names = {b.name: k for k, b in reversed(list(enumerate(w.sc.armatures[node.data].bones)))}
            b = names.get(bone)
            if b is not None:
                cache[target, bone] = (w.bone_nodes[target][b], _Carry(w.fr.g @ w.rest_local[target][b], w.fr.g_inv),
                                       axes.decompose(w.fr.conj(w.rest_local[target][b]))[2])
    return cache[target, bone]


def write_animations(w) -> None:
    """Each Scene animation with a channel glTF can hold -> one glTF animation (w: from_scene.Writer)."""
    out = []
    dropped: set[str] = set()
    carried: dict = {}
    for a in w.sc.animations:
        start = float(a.frame_start)
        end = max(float(a.frame_end), start)
        track = Track(w.buf, start, _fps(w, a))
        groups: dict[tuple[int, str], dict[str, Channel]] = {}
        shapes: dict[int, list[Channel]] = {}
        for c in a.channels:
            if c.path.startswith("key_blocks[") and not c.bone:
                shapes.setdefault(c.target, []).append(c)
            elif c.path in TRS_PATHS or (c.path.startswith("hide") and not c.bone):
                groups.setdefault((c.target, c.bone), {})[c.path] = c
            else:
                dropped.add(c.path)
        aimed = _aims(w, a, track, start, end)
        for (target, bone), chans in groups.items():
            found = _keyed(w, target, bone, carried)
            if found is None:
                continue
            if target in aimed and not bone:
                chans = {p: c for p, c in chans.items() if not p.startswith("rotation")}
            _transform_channels(track, *found[:1], chans, *found[1:], start, end)
        for target, chans in shapes.items():
            if target not in w.node_of or w.sc.nodes[target].kind != "MESH":
                continue
            mesh = w.sc.meshes[w.sc.nodes[target].data]
            if len(mesh.shape_keys) < 2:
                continue
            stepped = _stepped_weights(mesh, chans, start, end)
            kinds = {c.interpolation for c in chans}
            if stepped is not None:
                frames, weights = stepped
            else:
                keyed = [_keys(c, start, end) for c in chans]
                frames = np.union1d([start, end],
                                    np.concatenate([k[0] for k in keyed if k is not None] or [[start]]))
                if "BEZIER" in kinds:
                    fr = animation.bake_frames(frames)
                    frames = np.union1d(fr[(fr >= start) & (fr <= end)], frames)
                weights = animation.shape_key_weights(a, target, mesh, frames)
            if weights is None:
                continue
            track.add(w.node_of[target], "weights", frames, weights[:, 1:],
                      interp="STEP" if kinds == {"CONSTANT"} else "LINEAR")
        if track.channels:
            out.append({"name": a.name, "channels": track.channels, "samplers": track.samplers,
                        "extras": {"frame_start": a.frame_start, "frame_end": a.frame_end, "fps": track.fps}})
    if dropped:
        w.warnings.warn(f"glTF animates transforms and morph weights only: {', '.join(sorted(dropped))} "
                        "not written")
    if out:
        w.json["animations"] = out
