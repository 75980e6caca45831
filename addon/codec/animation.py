"""The one evaluator of Scene animation: channels, transforms and vertices at any frame.

Every format's from_scene and the Blender-free converter sample animation
here, so that a file written from Blender and one converted without it get
the same frames. A channel holds its first and last values outside its keys
(Blender's constant extrapolation). Interpolation is per channel:
CONSTANT (the last key at or before the frame), LINEAR, or BEZIER (explicit
handles when given, else Blender's auto-clamped handles). Rotations come out
as unit quaternions on one hemisphere, so that interpolating them takes the
short way.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import axes
from .errors import UnsupportedFeature
from .scene import Animation, Channel, Mesh, Scene

TRS = ("location", "rotation_quaternion", "scale")
_BISECT = 40       # Bezier x(u) = t by bisection: 2^-40 of a segment


def _keys(ch: Channel) -> tuple[np.ndarray, np.ndarray]:
    f = np.asarray(ch.frames, np.float64).reshape(-1)
    v = np.asarray(ch.values, np.float64).reshape(len(f), -1)
    return f, v


def auto_handles(f: np.ndarray, v: np.ndarray) -> np.ndarray:
    """(N, D, 2, 2) Blender's auto-clamped handles: slope through the neighbours, flat at
    the ends and at local extremes, one third of each segment long."""
    n = len(f)
    slope = np.zeros_like(v)
    if n > 2:
        span = np.where(f[2:] > f[:-2], f[2:] - f[:-2], 1.0)[:, None]
        slope[1:-1] = (v[2:] - v[:-2]) / span
        extreme = (v[1:-1] - v[:-2]) * (v[2:] - v[1:-1]) <= 0
        slope[1:-1][extreme] = 0.0
    gaps = np.diff(f) if n > 1 else np.ones(1)
    left = np.r_[gaps[:1], gaps] / 3.0
    right = np.r_[gaps, gaps[-1:]] / 3.0
    h = np.empty(v.shape + (2, 2))
    h[:, :, 0, 0] = (f - left)[:, None]
    h[:, :, 0, 1] = v - slope * left[:, None]
    h[:, :, 1, 0] = (f + right)[:, None]
    h[:, :, 1, 1] = v + slope * right[:, None]
    return h


def _bezier(f, v, h, at, k) -> np.ndarray:
    """Cubic Bezier segments k..k+1 at frames `at` (already inside the keys)."""
    d = v.shape[1]
    t = at[:, None]
    x = np.stack([np.repeat(f[k, None], d, 1), h[k, :, 1, 0], h[k + 1, :, 0, 0], np.repeat(f[k + 1, None], d, 1)])
    y = np.stack([v[k], h[k, :, 1, 1], h[k + 1, :, 0, 1], v[k + 1]])
    # Blender keeps handles inside their segment in time, so that x(u) rises
    x[1] = np.clip(x[1], x[0], x[3])
    x[2] = np.clip(x[2], x[0], x[3])

    def bez(p, u):
        return (1 - u) ** 3 * p[0] + 3 * (1 - u) ** 2 * u * p[1] + 3 * (1 - u) * u * u * p[2] + u ** 3 * p[3]

    lo, hi = np.zeros_like(y[0]), np.ones_like(y[0])
    for _ in range(_BISECT):
        mid = (lo + hi) / 2
        below = bez(x, mid) < t
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return bez(y, (lo + hi) / 2)


def evaluate(ch: Channel, at) -> np.ndarray:
    """(T, D) float64: the channel's values at frames `at`, held before and after its keys."""
    f, v = _keys(ch)
    at = np.atleast_1d(np.asarray(at, np.float64))
    if len(f) == 0:
        return np.zeros((len(at), v.shape[1] if v.ndim == 2 else 1))
    if len(f) == 1:
        return np.repeat(v[:1], len(at), 0)
    if len(f) == len(at) and np.array_equal(f, at):
        return v.copy()               # a baked channel read at its own frames: its keys
    if ch.interpolation != "BEZIER" and (v == v[0]).all():
        return np.repeat(v[:1], len(at), 0)     # one value held: exactly it, not a blend of it with itself
    k = np.clip(np.searchsorted(f, at, side="right") - 1, 0, len(f) - 2)
    if ch.interpolation == "CONSTANT":
        return v[np.clip(np.searchsorted(f, at, side="right") - 1, 0, len(f) - 1)]
    t = np.clip(at, f[0], f[-1])
    if ch.interpolation == "BEZIER":
        h = np.asarray(ch.handles, np.float64).reshape(len(f), v.shape[1], 2, 2) if ch.handles is not None \
            else auto_handles(f, v)
        return _bezier(f, v, h, t, k)
    span = np.where(f[k + 1] > f[k], f[k + 1] - f[k], 1.0)
    u = ((t - f[k]) / span)[:, None]
    return v[k] * (1 - u) + v[k + 1] * u


def continuous(q) -> np.ndarray:
    """(T, ..., 4) quaternions flipped where needed so that each is on the previous one's
    hemisphere (along the first axis)."""
    q = np.array(q, np.float64)
    if len(q) < 2:
        return q
    dots = np.sum(q[1:] * q[:-1], axis=-1)
    flip = np.cumprod(np.where(dots < 0, -1.0, 1.0), axis=0)
    q[1:] *= flip[..., None]
    return q


def unit(q) -> np.ndarray:
    q = np.asarray(q, np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    return np.where(n > 1e-12, q / np.where(n > 1e-12, n, 1.0), [1.0, 0.0, 0.0, 0.0])


def channel_map(anim: Animation | None, target: int, bone: str = "") -> dict[str, Channel]:
    """The channels of one node (or one of its bones), by path."""
    if anim is None:
        return {}
    return {c.path: c for c in anim.channels if c.target == target and c.bone == bone and len(c.frames)}


def trs(channels: dict[str, Channel], at, rest: np.ndarray | None = None):
    """(loc (T, 3), unit quat (T, 4), scale (T, 3)) from a node's or bone's channels; what they do not
    animate comes from `rest` (a 4x4; identity for pose bones). The quaternions keep each frame's own
    sign: axes.compose, which their users hand them to, gives q and -q the same matrix."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    t0, q0, s0 = (np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]), np.ones(3)) if rest is None else axes.decompose(rest)
    loc = evaluate(channels["location"], at) if "location" in channels else np.tile(t0, (len(at), 1))
    if "rotation_quaternion" in channels:
        rot = unit(evaluate(channels["rotation_quaternion"], at))
    elif "rotation_euler" in channels:
        rot = axes.matrix_to_quat(axes.euler_to_matrix(evaluate(channels["rotation_euler"], at)))
    else:
        rot = np.tile(q0, (len(at), 1))
    scale = evaluate(channels["scale"], at) if "scale" in channels else np.tile(s0, (len(at), 1))
    return loc, rot, scale


def moves(anim: Animation | None, target: int, bone: str = "") -> bool:
    return any(p in channel_map(anim, target, bone) for p in TRS + ("rotation_euler",))


def local_matrices(scene: Scene, anim: Animation | None, node: int, at) -> np.ndarray:
    """(T, 4, 4) the node's local matrix at each frame (its rest matrix where it has no channels)."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    n = scene.nodes[node]
    if not moves(anim, node):
        return np.broadcast_to(np.asarray(n.matrix, np.float64), (len(at), 4, 4)).copy()
    return axes.compose(*trs(channel_map(anim, node), at, n.matrix))


def world_matrices(scene: Scene, anim: Animation | None, node: int, at) -> np.ndarray:
    """(T, 4, 4) the node's world matrix at each frame, through its animated parents."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    out = np.broadcast_to(np.eye(4), (len(at), 4, 4)).copy()
    seen: set[int] = set()
    while 0 <= node < len(scene.nodes) and node not in seen:
        seen.add(node)
        n = scene.nodes[node]
        out = np.asarray(n.matrix_parent_inverse, np.float64) @ local_matrices(scene, anim, node, at) @ out
        node = n.parent
    return out


def pose_bases(anim: Animation | None, target: int, bones: list[str], at) -> np.ndarray:
    """(T, B, 4, 4) pose-bone matrix_basis of each bone at each frame."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    out = np.broadcast_to(np.eye(4), (len(at), len(bones), 4, 4)).copy()
    for b, name in enumerate(bones):
        ch = channel_map(anim, target, name)
        if ch:
            out[:, b] = axes.compose(*trs(ch, at))
    return out


def shape_key_weights(anim: Animation | None, node: int, mesh: Mesh, at) -> np.ndarray | None:
    """(T, K) the value of each shape key at each frame, or None when none is animated."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    chans = channel_map(anim, node)
    paths = [f'key_blocks["{k.name}"].value' for k in mesh.shape_keys]
    if not any(p in chans for p in paths):
        return None
    w = np.tile(np.array([k.value for k in mesh.shape_keys], np.float64), (len(at), 1))
    for i, p in enumerate(paths):
        if p in chans:
            w[:, i] = evaluate(chans[p], at)[:, 0]
    return w


def mix_shape_keys(mesh: Mesh, weights: np.ndarray) -> np.ndarray:
    """(T, V, 3) float32 relative shape keys mixed: basis + sum w * (key - its reference)."""
    keys = mesh.shape_keys
    basis = np.asarray(keys[0].positions, np.float32)
    out = np.empty((len(weights), len(basis), 3), np.float32)
    for f, w in enumerate(weights):              # per frame, the few keys that act on it, in bulk
        nz = [k for k in np.flatnonzero(w) if k > 0]
        if len(nz) == 1 and w[nz[0]] == 1.0 and keys[nz[0]].relative_to == 0:
            out[f] = keys[nz[0]].positions        # exactly the key, no float noise
            continue
        out[f] = basis
        for k in nz:
            ref = keys[keys[k].relative_to].positions if 0 <= keys[k].relative_to < len(keys) else basis
            out[f] += np.float32(w[k]) * (np.asarray(keys[k].positions, np.float32) - ref)
    return out


def skinned(scene: Scene, anim: Animation | None, node: int, mesh: Mesh, positions: np.ndarray, at) -> np.ndarray:
    """(T, V, 3) positions deformed by the mesh's armature at each frame (linear blend skinning),
    in the mesh node's space."""
    skin = mesh.skin
    arm_node = next((i for i, n in enumerate(scene.nodes) if n.kind == "ARMATURE" and n.data == skin.armature), -1)
    bones = scene.armatures[skin.armature].bones
    rest = np.stack([np.asarray(b.matrix, np.float64) for b in bones]) if bones else np.zeros((0, 4, 4))
    basis = pose_bases(anim, arm_node, [b.name for b in bones], at)
    posed = np.empty_like(basis)
    posed_yet: set[int] = set()
    for i in parents_first([b.parent for b in bones]):      # a few bones: one step each
        p = bones[i].parent if bones[i].parent in posed_yet else -1      # a cycle's parent counts as none
        posed_yet.add(i)
        local = rest[i] if p < 0 else axes.inverse_or_identity(rest[p]) @ rest[i]
        posed[:, i] = (local if p < 0 else posed[:, p] @ local) @ basis[:, i]
    # mesh space -> armature space -> posed -> back to mesh space
    mesh_world = scene.world_matrix(node)
    arm_world = scene.world_matrix(arm_node) if arm_node >= 0 else np.eye(4)
    to_arm = axes.inverse_or_identity(arm_world) @ mesh_world
    deform = axes.inverse_or_identity(to_arm) @ posed @ axes.inverse_or_identity(rest) @ to_arm        # (T, B, 4, 4)
    joints = np.clip(skin.joints, 0, max(len(bones) - 1, 0))
    w = np.where(skin.joints >= 0, skin.weights, 0.0).astype(np.float64)
    total = w.sum(1, keepdims=True)
    w = np.where(total > 0, w / np.where(total > 0, total, 1.0), 0.0)
    free = total[:, 0] <= 0
    out = np.empty((len(at),) + positions.shape[-2:], np.float32)
    for f in range(len(at)):
        p = np.asarray(positions[f] if positions.ndim == 3 else positions, np.float64)
        m = np.einsum("vk,vkij->vij", w, deform[f][joints])                 # (V, 4, 4) blended
        q = np.einsum("vij,vj->vi", m[:, :3, :3], p) + m[:, :3, 3]
        q[free] = p[free]
        out[f] = q
    return out


def parents_first(parents: list[int]) -> list[int]:
    """Bone indices with every parent before its children (files may list children first);
    a parent out of range or in a cycle counts as none."""
    n, out, done = len(parents), [], set()
    for start in range(n):
        chain, i = [], start
        while 0 <= i < n and i not in done and i not in chain:
            chain.append(i)
            i = parents[i]
        for j in reversed(chain):
            done.add(j)
            out.append(j)
    return out


def mesh_frames(scene: Scene, anim: Animation | None, node: int, at) -> np.ndarray:
    """(T, V, 3) float32 the mesh of `node` at each frame, in the node's rest space: shape keys
    mixed, armature deformation, and the motion of the object and its parents relative to its
    rest placement."""
    at = np.atleast_1d(np.asarray(at, np.float64))
    mesh = scene.meshes[scene.nodes[node].data]
    weights = shape_key_weights(anim, node, mesh, at) if mesh.shape_keys else None
    if weights is not None:
        out = mix_shape_keys(mesh, weights)
    else:
        base = mesh.shape_keys[0].positions if mesh.shape_keys else mesh.positions
        out = np.repeat(np.asarray(base, np.float32)[None], len(at), 0)
    if mesh.skin is not None and 0 <= mesh.skin.armature < len(scene.armatures):
        out = skinned(scene, anim, node, mesh, out, at)
    world = world_matrices(scene, anim, node, at)
    rel = axes.inverse_or_identity(scene.world_matrix(node)) @ world
    if not np.allclose(rel, np.eye(4), atol=1e-7):
        out = (np.einsum("fij,fvj->fvi", rel[:, :3, :3], out) + rel[:, None, :3, 3]).astype(np.float32)
    return out


def is_animated(scene: Scene) -> bool:
    return any(a.channels for a in scene.animations) or any(m.baked_frames for m in scene.meshes)


MAX_FRAMES = 1_048_574          # Blender's last frame: no animation plays longer
MAX_BAKED_SPAN = 20_000         # whole frames one channel is baked over; more comes from a key frame a file made up


def bake_frames(keys) -> np.ndarray:
    """Frames to sample a channel on when its keys must be replaced by one key per frame: every whole
    frame from its first key on, for at most MAX_BAKED_SPAN frames, then its own key frames only (so a
    lying key frame costs a key, not gigabytes; warn_cut says so)."""
    f = np.asarray(keys, np.float64).reshape(-1)
    f = f[np.isfinite(f)]
    if not len(f):
        return np.zeros(1)
    lo, hi = np.floor(f.min()), np.ceil(f.max())
    whole = np.arange(lo, min(hi, lo + MAX_BAKED_SPAN) + 1)
    return np.union1d(whole, f[f > whole[-1]])


def warn_cut(keys, what: str, warnings) -> None:
    """The one warning for a channel bake_frames did not sample frame by frame to its last key."""
    f = np.asarray(keys, np.float64).reshape(-1)
    f = f[np.isfinite(f)]
    if len(f) and np.ceil(f.max()) - np.floor(f.min()) > MAX_BAKED_SPAN:
        lo = np.floor(f.min())
        warnings.warn(f"{what} has keys from frame {lo:g} to {f.max():g}; after frame {lo + MAX_BAKED_SPAN:g} "
                      f"it is written at its own keys only (at most {MAX_BAKED_SPAN} frames are baked per channel)")


def frame_span(anim: Animation) -> tuple[int, int]:
    """(first whole frame, frame count) an animation plays (one frame when its range is empty)."""
    lo, hi = float(anim.frame_start), float(anim.frame_end)
    if not np.isfinite(lo) or not np.isfinite(hi) or abs(lo) > MAX_FRAMES or abs(hi) > MAX_FRAMES:
        raise UnsupportedFeature(f"animation {anim.name!r} runs from frame {lo:g} to {hi:g}; "
                                 f"frames reach at most {MAX_FRAMES}")
    first = int(np.floor(lo + 1e-6))
    return first, max(int(np.ceil(hi - 1e-6)), first) - first + 1


def cut_to_keys(scene: Scene, warnings) -> Scene:
    """The scene, or a copy of it whose animations play no longer than their keys reach: a frame range
    of more than MAX_BAKED_SPAN frames past its keys (a number a file claims) is cut to them, so that an
    export that samples every frame works for what the animation holds."""
    anims = []
    for i, a in enumerate(scene.animations):
        first, count = frame_span(a)
        if count > MAX_BAKED_SPAN:
            f = [np.asarray(c.frames, np.float64).reshape(-1) for c in a.channels]
            f += [np.asarray(m.baked_frames, np.float64)[np.asarray(m.baked_animation) == i] for m in scene.meshes
                  if len(m.baked_animation) == len(m.baked_frames)]
            f = np.concatenate(f) if f else np.zeros(0)
            lo, hi = (max(float(f.min()), first), min(float(f.max()), first + count - 1)) if len(f) else (first, first)
            if hi - lo + 1 < count - MAX_BAKED_SPAN:
                if lo > hi:
                    lo = hi = first
                warnings.warn(f"animation {a.name!r} runs from frame {a.frame_start:g} to {a.frame_end:g}, but its keys "
                              f"reach frames {lo:g} to {hi:g} only: written over those")
                a = replace(a, frame_start=lo, frame_end=hi)
        anims.append(a)
    return scene if all(a is b for a, b in zip(anims, scene.animations)) else replace(scene, animations=anims)


def frames_of(anim: Animation) -> np.ndarray:
    """The whole frames an animation plays, first to last (one frame when its range is empty)."""
    first, count = frame_span(anim)
    return np.arange(first, first + count, dtype=np.float64)


def every_frame(anim: Animation, warnings) -> np.ndarray:
    """frames_of for a format that stores every frame: at most MAX_BAKED_SPAN of them (keys a file put
    further apart than that cost frames, not gigabytes), with a warning when the animation is longer."""
    f = frames_of(anim)
    if len(f) > MAX_BAKED_SPAN:
        warnings.warn(f"animation {anim.name!r} plays {len(f)} frames; its first {MAX_BAKED_SPAN} are written "
                      f"(frames {f[0]:g} to {f[MAX_BAKED_SPAN - 1]:g}), one key each")
        f = f[:MAX_BAKED_SPAN]
    return f


_LAYOUT_CHECKS = 4096        # channels one layout compares (tens of ms); past them, ranges are laid after


def layout(anims: list[Animation]) -> list[int]:
    """Where each animation starts on a single timeline: at its own first frame when that is free, or when
    the animations already there show the same values over the frames they would share (ranges cut
    from one timeline, such as [0, 10] and [10, 20], keep the file's frame numbers), else right after
    the frames taken. The channels compared are bounded (_LAYOUT_CHECKS), so that a file with thousands
    of overlapping ranges, or of channels, cannot make them quadratic."""
    n = len(anims)
    starts, ends = np.zeros(n, np.int64), np.zeros(n, np.int64)     # placed spans, end exclusive
    out, free, budget = [], None, _LAYOUT_CHECKS
    for i, a in enumerate(anims):
        first, count = frame_span(a)
        start = first
        if free is not None and first < free:
            start = free
            if budget > 0:
                shared = np.flatnonzero((starts[:i] < first + count) & (first < ends[:i]))
                budget -= (1 + len(shared)) * max(1, len(a.channels))
                if budget >= 0 and all(_agree(anims[j], a, int(starts[j]), first, int(ends[j] - starts[j]), count)
                                       for j in shared):
                    start = first
        out.append(start)
        starts[i], ends[i] = start, start + count
        free = start + count if free is None else max(free, start + count)
    return out


def _same_keys(c: Channel, d: Channel) -> bool:
    return c.interpolation == d.interpolation and np.array_equal(c.frames, d.frames) and \
        np.array_equal(c.values, d.values) and (c.handles is None) == (d.handles is None) and \
        (c.handles is None or np.array_equal(c.handles, d.handles))


def _agree(a: Animation, b: Animation, a_start: int, b_start: int, a_count: int, b_count: int) -> bool:
    """Do two animations placed at a_start and b_start key the same channels to the same values on the
    frames they share? Compared at both animations' keys and the shared ends (exact for linear keys)."""
    if len(a.channels) != len(b.channels):
        return False
    lo, hi = max(a_start, b_start), min(a_start + a_count, b_start + b_count) - 1
    shift_a, shift_b = a_start - frame_span(a)[0], b_start - frame_span(b)[0]   # timeline frame - own frame
    theirs = {(c.target, c.bone, c.path): c for c in b.channels}
    for c in a.channels:
        d = theirs.get((c.target, c.bone, c.path))
        if d is None:
            return False
        if shift_a == shift_b and _same_keys(c, d):      # one range read twice: the same keys, no sampling
            continue
        at = np.concatenate([np.asarray(c.frames, np.float64).reshape(-1) + shift_a,
                             np.asarray(d.frames, np.float64).reshape(-1) + shift_b, [lo, hi]])
        at = np.unique(at[(at >= lo) & (at <= hi)])
        va, vb = evaluate(c, at - shift_a), evaluate(d, at - shift_b)
        if va.shape != vb.shape:
            return False
        if c.path == "rotation_quaternion":     # q and -q are one rotation
            vb = np.where(np.sum(va * vb, -1, keepdims=True) < 0, -vb, vb)
        if not np.allclose(va, vb, rtol=1e-5, atol=1e-5):
            return False
    return True
