"""glTF skins and animations -> Scene armatures and channels.

Every animated thing has a LocalMap: its Scene basis (an object's matrix, a pose bone's basis)
is `pre @ L @ post`, L the node's glTF local TRS, pre a rigid move times a uniform scale, post a
rotation times a uniform scale. Translation, rotation and scale keys then map one by one (and a
cubic spline's tangents with them), so that every source key stays a key.

Skins: the bones rest where the inverse bind matrices put the joints (their rigid part, in the
armature's space: the glTF node that holds the root joints, else the scene root), their frames
converted as every node's. A bone's basis is then, before that conversion, (rigid rest)^-1 @
(parent's rigid rest) @ (parent's scale residue) @ L @ (own residue)^-1, which plays the joints'
node animation as glTF does.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...axes import inverse_or_identity, matrix_to_quat, quat_multiply
from ...errors import FormatError, Warnings
from ...scene import Animation, Armature, Bone, Channel
from .accessors_in import Accessors, items, known, obj

INTERPOLATION = {"STEP": "CONSTANT", "LINEAR": "LINEAR", "CUBICSPLINE": "BEZIER"}
MAX_FRAME = 1048574             # Blender's last frame
PATHS = {"translation": "location", "rotation": "rotation_quaternion", "scale": "scale"}
NON_UNIFORM = ("a skin's bind pose scales bones unevenly, and Blender bones rest unscaled: its animation "
               "is fitted approximately (shear and uneven scale are dropped)")


def _uniform(m: np.ndarray) -> tuple[np.ndarray, float, bool]:
    """(rotation 3x3, scale, whether the scale is the same on every axis) of a 3x3."""
    norms = np.linalg.norm(m, axis=0)
    a = float(norms.mean())
    r = m / np.where(norms > 0, norms, 1.0)
    return r, a, bool(np.allclose(norms, a, rtol=1e-4, atol=1e-9))


@dataclass
class LocalMap:
    """A node's Scene basis from its glTF local TRS L: pre @ L @ post (see the module's docstring)."""
    pre: np.ndarray = field(default_factory=lambda: np.eye(4))
    post: np.ndarray = field(default_factory=lambda: np.eye(4))

    def __post_init__(self):
        ra, self.a, ok1 = _uniform(self.pre[:3, :3])
        rq, self.q, ok2 = _uniform(self.post[:3, :3])
        self.uniform = ok1 and ok2 and not self.post[:3, 3].any()
        self.ta = self.pre[:3, 3].copy()
        self.ra = ra
        self.qa = matrix_to_quat(ra)
        self.qq = matrix_to_quat(rq)
        self.perm = (rq.T ** 2)          # a scale along the axes, seen through post's rotation

    def matrix(self, local: np.ndarray) -> np.ndarray:
        return self.pre @ local @ self.post

    def values(self, kind: str, v: np.ndarray) -> np.ndarray:
        """Keys (N, D) of glTF `kind` (or Bezier handles' values: the map is affine) -> the Scene's;
        rotations (x, y, z, w) -> (w, x, y, z)."""
        v = np.asarray(v, np.float64)
        if kind == "translation":
            return self.ta + self.a * v @ self.ra.T
        if kind == "rotation":
            return quat_multiply(quat_multiply(self.qa, v[:, [3, 0, 1, 2]]), self.qq)
        return self.a * self.q * v @ self.perm.T


@dataclass
class Rig:
    """One armature: the joints of one or more skins that list the same joints and bind."""
    armature: int                    # Scene.armatures index
    joints: list[int]                # glTF node of each bone
    host: int                        # the glTF node that becomes the armature object, or -1 (a new one)
    frame: np.ndarray                # that node's rest world matrix (glTF), the armature's space
    maps: dict[int, LocalMap] = field(default_factory=dict)      # joint node -> its bone basis map
    residue: dict[int, np.ndarray] = field(default_factory=dict)  # joint node -> what its children's pre is
    names: dict[int, str] = field(default_factory=dict)          # joint node -> bone name
    node: int = -1                   # its Scene node


def skin_key(tree: dict, acc: Accessors, index: int) -> tuple[tuple[int, ...], bytes, np.ndarray]:
    s = obj(tree, "skins", index)
    path = f"skins[{index}]"
    joints = s.get("joints")
    if not isinstance(joints, list) or not joints:
        raise FormatError("a skin needs joints", None, f"{path}.joints")
    for k, j in enumerate(joints):
        obj(tree, "nodes", j, f"{path}.joints[{k}]")
    if len(set(joints)) != len(joints):
        raise FormatError("a joint is listed twice", None, f"{path}.joints")
    if "inverseBindMatrices" in s:
        m = acc.get(s["inverseBindMatrices"], f"{path}.inverseBindMatrices")
        if m.shape[1] != 16 or len(m) < len(joints):
            raise FormatError(f"{len(m)} matrices of width {m.shape[1]} for {len(joints)} joints", None,
                              f"{path}.inverseBindMatrices")
        ibm = m[:len(joints)].astype(np.float64).reshape(-1, 4, 4).transpose(0, 2, 1)
    else:
        ibm = np.tile(np.eye(4), (len(joints), 1, 1))
    return tuple(joints), ibm.tobytes(), ibm


def make_rig(tree: dict, joints: tuple[int, ...], ibm: np.ndarray, parent: list[int], world: np.ndarray,
             name: str, armature: int, basis4: np.ndarray, taken: set[int], warnings: Warnings) -> tuple[Rig, Armature]:
    """The armature of one skin; it lives on the node that holds its root joints when there is one
    such node, holding no mesh and no other armature (`taken`), else on a new node at the root."""
    jset = set(joints)
    roots = [j for j in joints if parent[j] not in jset]
    hosts = {parent[j] for j in roots}
    host = hosts.pop() if len(hosts) == 1 else -1
    if host in taken or host >= 0 and ("mesh" in tree["nodes"][host] or "camera" in tree["nodes"][host]):
        host = -1
    frame = world[host] if host >= 0 else np.eye(4)
    rest = inverse_or_identity(frame) @ inverse_or_identity(ibm, warnings, "a skin's inverse bind matrix")
    rigid = np.tile(np.eye(4), (len(joints), 1, 1))
    residue = np.tile(np.eye(4), (len(joints), 1, 1))
    uniform = True
    for k in range(len(joints)):
        r, _, ok = _uniform(rest[k, :3, :3])
        rigid[k, :3, :3], rigid[k, :3, 3] = r, rest[k, :3, 3]
        residue[k, :3, :3] = np.diag(np.linalg.norm(rest[k, :3, :3], axis=0))
        uniform &= ok
    rig = Rig(armature, list(joints), host, frame)
    index = {j: k for k, j in enumerate(joints)}
    arm = Armature(name)
    used: set[str] = set()
    for k, j in enumerate(joints):
        up = parent[j]
        while up >= 0 and up not in jset:
            up = parent[up]
        above = world[parent[j]] if parent[j] >= 0 else np.eye(4)
        if up >= 0:
            p = index[up]
            pre = inverse_or_identity(rigid[k]) @ rigid[p] @ residue[p] @ inverse_or_identity(world[up]) @ above
        else:
            pre = inverse_or_identity(rigid[k]) @ inverse_or_identity(frame) @ above
        # bone frames as any node's: conjugated by the basis change (so Blender's own exports come back
        # with their bones as Blender had them)
        rig.maps[j] = LocalMap(basis4 @ pre, inverse_or_identity(residue[k]) @ basis4.T)
        uniform &= rig.maps[j].uniform
        rig.residue[j] = basis4 @ residue[k]
        n = tree["nodes"][j].get("name")
        rig.names[j] = _unique(n if isinstance(n, str) and n else f"Bone{k}", used)
        arm.bones.append(Bone(rig.names[j], index[up] if up >= 0 else -1, basis4 @ rigid[k] @ basis4.T))
    if not uniform:
        warnings.warn(NON_UNIFORM)
    return rig, arm


def _unique(name: str, used: set[str]) -> str:
    out, i = name, 1
    while out in used:
        out, i = f"{name}.{i:03d}", i + 1
    used.add(out)
    return out


@dataclass
class Target:
    """Where a glTF node's animation goes: a Scene node's TRS, a bone's, or its shape keys."""
    node: int                        # Scene node
    map: LocalMap
    bone: str = ""
    rest: tuple | None = None        # the node's rest (t, q xyzw, s): a bone's unanimated parts
    shape_keys: list[str] = field(default_factory=list)
    moves: bool = True               # its translation, rotation and scale keys play


def read_animations(tree: dict, acc: Accessors, fps: float, targets: dict[int, list[Target]],
                    warnings: Warnings) -> list[Animation]:
    out = []
    for i, a in enumerate(items(tree, "animations")):
        path = f"animations[{i}]"
        if not isinstance(a, dict):
            raise FormatError("not an object", None, path)
        name = a.get("name") if isinstance(a.get("name"), str) and a.get("name") else f"Animation{i}"
        start, rate, span = _own_range(a, fps)
        anim = Animation(name, fps=rate)
        bones_keyed: dict[tuple[int, str], set[str]] = {}
        for c, ch in enumerate(items(a, "channels")):
            cp = f"{path}.channels[{c}]"
            t = ch.get("target") if isinstance(ch, dict) else None
            if not isinstance(t, dict):
                raise FormatError("a channel needs a target", None, cp)
            kind = t.get("path")
            if "node" not in t or kind not in ("translation", "rotation", "scale", "weights"):
                continue         # KHR_animation_pointer and the like: named once among the extensions
            obj(tree, "nodes", t["node"], f"{cp}.target.node")
            sampler = obj(a, "samplers", ch.get("sampler"), f"{cp}.sampler")
            for target in targets.get(t["node"], []):
                if kind != "weights" and not target.moves:
                    continue
                anim.channels += _channels(acc, sampler, f"{path}.samplers[{ch['sampler']}]", kind, target,
                                           start, rate)
                if target.bone:
                    bones_keyed.setdefault((target.node, target.bone), set()).add(kind)
        # a bone keyed in some of its parts, or in none while its node rests off the bind pose, holds the
        # node's own rest in the others (what glTF plays there), not the bind pose (where Blender's rest is)
        for target in (x for ts in targets.values() for x in ts if x.bone):
            kinds = bones_keyed.get((target.node, target.bone))
            if kinds is None and not off_bind(target):
                continue
            for kind, v in rest_keys(target).items():
                if kind not in (kinds or ()):
                    anim.channels.append(Channel(target.node, PATHS[kind], np.full(1, start), v, bone=target.bone))
        frames = [ch.frames for ch in anim.channels if len(ch.frames)]
        if span is not None:
            anim.frame_start, anim.frame_end = span
        elif frames:
            anim.frame_start = float(min(f.min() for f in frames))
            anim.frame_end = float(max(f.max() for f in frames))
        out.append(anim)
    return out


def rest_keys(target: Target) -> dict[str, np.ndarray]:
    """The bone basis its node's rest TRS gives, as one key (1, D) per glTF path."""
    return {kind: target.map.values(kind, np.asarray(v, np.float64)[None]).astype(np.float32)
            for kind, v in zip(("translation", "rotation", "scale"), target.rest)}


def off_bind(target: Target) -> bool:
    """Whether a joint's node rests elsewhere than its bind pose (a bone basis other than identity)."""
    k = rest_keys(target)
    return not (np.allclose(k["translation"], 0, atol=1e-5) and np.allclose(k["scale"], 1, atol=1e-5)
                and np.allclose(np.abs(k["rotation"]), [1, 0, 0, 0], atol=1e-5))


def _own_range(a: dict, fps: float) -> tuple[float, float, tuple[float, float] | None]:
    """(first frame, frame rate, (start, end) or None): what our writer keeps in an animation's extras
    (times run from its first frame at its own rate), else frame 0 at the import's rate."""
    ex = a.get("extras")
    ex = ex if isinstance(ex, dict) else {}

    def number(key, lo, hi):
        v = ex.get(key)
        return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and lo <= v <= hi else None

    rate = number("fps", 0.01, 1000.0) or fps
    first, last = number("frame_start", -MAX_FRAME, MAX_FRAME), number("frame_end", -MAX_FRAME, MAX_FRAME)
    if first is None or last is None or last < first:
        return 0.0, rate, None
    return first, rate, (first, last)


def _channels(acc: Accessors, s: dict, path: str, kind: str, target: Target, start: float,
              fps: float) -> list[Channel]:
    interp = s.get("interpolation", "LINEAR")
    if not known(interp, INTERPOLATION):
        raise FormatError(f"interpolation {interp!r} is not a glTF one", None, f"{path}.interpolation")
    times = acc.get(s.get("input"), f"{path}.input")
    if times.shape[1] != 1 or not len(times):
        raise FormatError("input is not a list of times", None, f"{path}.input")
    times = times[:, 0].astype(np.float64)
    if not np.isfinite(times).all() or (np.diff(times) < 0).any():
        raise FormatError("key times are not finite and increasing", None, f"{path}.input")
    if np.abs(times).max() * fps + abs(start) > MAX_FRAME:
        raise FormatError(f"key times past Blender's frames (+-{MAX_FRAME} at {fps:g} fps)", None, f"{path}.input")
    n = len(times)
    cubic = interp == "CUBICSPLINE"
    if kind == "weights" and not target.shape_keys:
        return []                   # a mesh whose primitives were not read (compressed) has no keys here
    out = acc.get(s.get("output"), f"{path}.output").astype(np.float64)
    width = len(target.shape_keys) if kind == "weights" else {"rotation": 4}.get(kind, 3)
    if out.size != n * width * (3 if cubic else 1) or (kind != "weights" and out.shape[1] != width):
        raise FormatError(f"{out.size} output values for {n} keys of {width}", None, f"{path}.output")
    out = out.reshape(n, 3, width) if cubic else out.reshape(n, 1, width)
    values = out[:, 1] if cubic else out[:, 0]
    frames = whole(start + times * fps)
    handles = _handles(times, fps, out) if cubic else None
    if handles is not None:
        handles[:, :, :, 0] += start
    if kind == "weights":
        return [Channel(target.node, f'key_blocks["{name}"].value', frames, values[:, [k]].astype(np.float32),
                        interpolation=INTERPOLATION[interp],
                        handles=None if handles is None else handles[:, [k]])
                for k, name in enumerate(target.shape_keys)]
    m = target.map
    mapped = m.values(kind, values)
    if handles is not None:
        for side in (0, 1):
            handles[:, :, side, 1] = m.values(kind, handles[:, :, side, 1])
    return [Channel(target.node, PATHS[kind], frames, mapped.astype(np.float32), bone=target.bone,
                    interpolation=INTERPOLATION[interp], handles=handles)]


def whole(frames: np.ndarray) -> np.ndarray:
    """Frames that float32 seconds put next to a whole frame are that frame (a key written at frame 3
    reads back as 3.0000001 otherwise); sub-frame keys stay where they are."""
    near = np.round(frames)
    return np.where(np.abs(frames - near) <= 1e-4 + np.abs(frames) * 1.2e-7, near, frames)


def _handles(times: np.ndarray, fps: float, out: np.ndarray) -> np.ndarray:
    """(N, D, 2, 2) Bezier handles of a glTF cubic spline: a third of each segment along its tangent
    (tangents are per second: the segment's length in seconds scales them)."""
    n, _, d = out.shape
    dt = np.diff(times)
    left, right = (np.r_[dt[:1], dt], np.r_[dt, dt[-1:]]) if n > 1 else (np.ones(1), np.ones(1))
    h = np.empty((n, d, 2, 2))
    h[:, :, 0, 0] = ((times - left / 3) * fps)[:, None]
    h[:, :, 1, 0] = ((times + right / 3) * fps)[:, None]
    h[:, :, 0, 1] = out[:, 1] - out[:, 0] * (left / 3)[:, None]
    h[:, :, 1, 1] = out[:, 1] + out[:, 2] * (right / 3)[:, None]
    return h
