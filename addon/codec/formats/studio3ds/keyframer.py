"""The keyframer (0xB000) read as nodes: ids, parents, pivots, tracks.

Rotation keys are deltas: each 0xB021 key (angle, axis) turns relative to
the previous key, with the angle sign inverted; the orientation at key i is
the product of all keys up to i, each new key multiplied on the left
(q_i = d_i * q_(i-1)), which is what lib3ds evaluates (checked on RotatingCube.3DS).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import animation, axes
from ...errors import Warnings
from . import ids
from .model import Chunk, Track
from .tcb import segment, track_curve

NO_PARENT = 0xFFFF
MAX_TURN = 8 * np.pi        # radians; a key angle beyond this is split no further
DUMMY = "$$$DUMMY"


@dataclass
class KfNode:
    tag: int                       # 0xB001..0xB007
    node_id: int
    name: str
    parent_id: int = NO_PARENT
    flags1: int = 0
    flags2: int = 0
    instance: str = ""             # 0xB011: instance name, or the dummy's name
    pivot: tuple = (0.0, 0.0, 0.0)
    tracks: dict[int, Track] = field(default_factory=dict)
    chunk: Chunk | None = None
    parent: int = -1               # index into the node list, after resolving

    @property
    def is_dummy(self) -> bool:
        return self.tag == ids.OBJECT_NODE_TAG and self.name == DUMMY

    @property
    def display_name(self) -> str:
        if self.is_dummy:
            return self.instance or DUMMY
        return f"{self.name}.{self.instance}" if self.instance else self.name


def read_nodes(kf: Chunk, warnings: Warnings) -> list[KfNode]:
    nodes: list[KfNode] = []
    for order, c in enumerate(ch for ch in kf.children if ch.cid in ids.NODE_TAGS):
        hdr = c.value(ids.NODE_HDR)
        node = KfNode(c.cid, c.value(ids.NODE_ID, order), hdr[0] if hdr else "", chunk=c)
        if hdr:
            node.flags1, node.flags2, node.parent_id = hdr[1], hdr[2], hdr[3]
        else:
            warnings.warn("keyframer node without a header (0xB010) ignored", c.offset, "KEYFRAMER")
            continue
        node.instance = c.value(ids.INSTANCE_NAME, "") or ""
        pivot = c.value(ids.PIVOT)
        if pivot is not None:
            node.pivot = tuple(pivot)
        node.tracks = {t.cid: t.data for t in c.children if t.cid in ids.TRACKS}
        nodes.append(node)
    _resolve_parents(nodes, warnings)
    return nodes


def _resolve_parents(nodes: list[KfNode], warnings: Warnings) -> None:
    by_id: dict[int, int] = {}
    for i, n in enumerate(nodes):
        if n.node_id in by_id:
            warnings.warn(f"keyframer node id {n.node_id} used twice; the first one is the parent target",
                          n.chunk.offset, "KEYFRAMER")
        by_id.setdefault(n.node_id, i)
    for i, n in enumerate(nodes):
        if n.parent_id == NO_PARENT:
            continue
        p = by_id.get(n.parent_id, -1)
        if p < 0 or p == i:
            warnings.warn(f"node {n.name!r} has parent id {n.parent_id}, which no node has; placed at the root",
                          n.chunk.offset, "KEYFRAMER")
            continue
        n.parent = p
    # break cycles: walk up from each node; a revisit means a loop
    for i, n in enumerate(nodes):
        seen, j = {i}, n.parent
        while j >= 0:
            if j in seen:
                warnings.warn(f"cycle in the keyframer hierarchy at node {n.name!r}; it is placed at the root",
                              n.chunk.offset, "KEYFRAMER")
                n.parent = -1
                break
            seen.add(j)
            j = nodes[j].parent


def order_parents_first(nodes: list[KfNode]) -> list[int]:
    """Node indices so that every parent comes before its children."""
    done: set[int] = set()
    out: list[int] = []
    for i in range(len(nodes)):
        chain = []
        j = i
        while j >= 0 and j not in done:
            chain.append(j)
            j = nodes[j].parent
        for k in reversed(chain):
            done.add(k)
            out.append(k)
    return out


# -- track values -------------------------------------------------------------
def rotation_keys(track: Track) -> np.ndarray:
    """(N, 4) absolute quaternions (w, x, y, z) from delta keys, sign-continuous."""
    return animation.continuous(_running_product(_turns(track.values)))


def _turns(values) -> np.ndarray:
    """(N, 4) quaternions of (angle, axis) keys, each on its own (rotation_keys chains them)."""
    v = np.nan_to_num(np.asarray(values, np.float64).reshape(-1, 4), nan=0.0, posinf=0.0, neginf=0.0)
    return axes.axis_angle_to_quat(v[:, 1:4], -v[:, 0])


def _running_product(deltas: np.ndarray) -> np.ndarray:
    """q_i = d_i * d_(i-1) * ... * d_0 for every i, in log2(N) whole-array steps (a prefix
    scan: the product is associative), so 1 MB of keys takes milliseconds, not seconds."""
    out = np.array(deltas, np.float64)
    step = 1
    while step < len(out):
        out[step:] = axes.quat_multiply(out[step:], out[:-step])
        norm = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.where(norm > 0, norm, 1.0)
        step *= 2
    return out


def rotation_path(track: Track, max_step: float = np.pi / 2) -> tuple[np.ndarray, np.ndarray]:
    """(frames, quaternions) for a rotation track, with extra keys inside any delta over
    `max_step`, so that a 357-degree key really turns 357 degrees (as 3ds Max plays it)
    instead of the short way back."""
    frames = np.asarray(track.frames, np.float64)
    v = np.nan_to_num(np.asarray(track.values, np.float64).reshape(-1, 4), nan=0.0, posinf=0.0, neginf=0.0)
    # a real key turns at most a few times; cap the split so a junk angle cannot allocate without bound
    pieces = np.clip(np.ceil(np.minimum(np.abs(v[:, 0]), MAX_TURN) / max_step - 1e-6), 1, None).astype(np.int64)
    pieces[0] = 1
    if (pieces == 1).all():
        return frames, rotation_keys(track)
    # split key i into pieces[i] equal sub-rotations about its axis, at evenly spaced frames
    key = np.repeat(np.arange(len(v)), pieces)
    k = np.arange(len(key)) - np.repeat(np.cumsum(pieces) - pieces, pieces) + 1
    frac = k / pieces[key]
    prev = np.r_[frames[0], frames[:-1]][key]
    sub_frames = prev + (frames[key] - prev) * frac
    sub = Track(values=np.column_stack([v[key, 0] / pieces[key], v[key, 1:]]).astype(np.float32),
                frames=sub_frames)
    return sub_frames, rotation_keys(sub)


def deltas_from_rotations(quats: np.ndarray) -> np.ndarray:
    """Inverse of rotation_keys: (N, 4) absolute quaternions -> (N, 4) keys (angle, axis)."""
    q = np.asarray(quats, np.float64).reshape(-1, 4)
    prev = np.vstack([[1.0, 0.0, 0.0, 0.0], q[:-1]])
    conj = prev * np.array([1.0, -1.0, -1.0, -1.0])
    d = axes.quat_multiply(q, conj)
    d *= np.where(d[:, :1] < 0, -1.0, 1.0)
    s = np.linalg.norm(d[:, 1:], axis=1)
    angle = 2 * np.arctan2(s, d[:, 0])
    axis = np.where(s[:, None] > 1e-12, d[:, 1:] / np.where(s > 1e-12, s, 1.0)[:, None], [0.0, 0.0, 1.0])
    return np.column_stack([-angle, axis]).astype(np.float32)


def sample(frames: np.ndarray, values: np.ndarray, t) -> np.ndarray:
    """Linear interpolation of key values at frame(s) t, held at the ends."""
    frames = np.asarray(frames, np.float64)
    values = np.asarray(values, np.float64).reshape(len(frames), -1)
    tt = np.atleast_1d(np.asarray(t, np.float64))
    if len(frames) == 1:
        out = np.repeat(values[:1], len(tt), 0)
    else:
        k, a = segment(frames, tt)
        out = values[k] * (1 - a) + values[k + 1] * a
    return out[0] if np.ndim(t) == 0 else out


def node_trs(node: KfNode, t=0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Translation, rotation (w,x,y,z) and scale of a node at frame(s) t (its own tracks only).
    Position and scale follow their TCB curves (tcb.py), rotation goes linearly between keys."""
    shape = np.shape(t)
    loc = np.zeros(shape + (3,))
    rot = np.broadcast_to(np.array([1.0, 0.0, 0.0, 0.0]), shape + (4,)).copy()
    scl = np.ones(shape + (3,))
    tr = node.tracks.get(ids.POS_TRACK)
    if tr is not None and len(tr):
        loc = track_curve(tr, t)
    tr = node.tracks.get(ids.ROT_TRACK)
    if tr is not None and len(tr):
        rot = _unit(sample(tr.frames, rotation_keys(tr), t))
    tr = node.tracks.get(ids.SCL_TRACK)
    if tr is not None and len(tr):
        scl = track_curve(tr, t)
    return loc, rot, scl


def world_matrices(nodes: list[KfNode], t=0.0, locals_: list | None = None) -> list[np.ndarray]:
    """Each node's parent chain product of T*R*S at frame t ((4, 4)), or at frames t ((T, 4, 4)).
    locals_: each node's own T*R*S at t when the caller has them already (local_matrices)."""
    locals_ = local_matrices(nodes, t) if locals_ is None else locals_
    out: list[np.ndarray | None] = [None] * len(nodes)
    for i in order_parents_first(nodes):
        p = nodes[i].parent
        out[i] = locals_[i].copy() if p < 0 else out[p] @ locals_[i]    # never the caller's array
    return out


def _unit(q: np.ndarray) -> np.ndarray:
    return q / np.linalg.norm(q, axis=-1, keepdims=True)


def local_matrices(nodes: list[KfNode], t=0.0) -> list[np.ndarray]:
    """Each node's own T*R*S at frame(s) t."""
    if np.ndim(t) or not nodes:
        return [axes.compose(*node_trs(n, t)) for n in nodes]
    return list(axes.compose(*_trs_at(nodes, t)))


def _trs_at(nodes: list[KfNode], t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """node_trs of every node at one frame, as (N, 3), (N, 4), (N, 3) arrays. A one-key track (a
    static node has only those) is its key, and its rotation is found with all the others at once:
    per node, numpy's fixed cost per call would be most of the work."""
    loc, scl = np.zeros((len(nodes), 3)), np.ones((len(nodes), 3))
    rot = np.zeros((len(nodes), 4))
    rot[:, 0] = 1.0
    turns, turned = [], []
    for i, node in enumerate(nodes):
        for cid, out in ((ids.POS_TRACK, loc), (ids.SCL_TRACK, scl)):
            tr = node.tracks.get(cid)
            if tr is not None and len(tr):
                out[i] = track_curve(tr, t)
        tr = node.tracks.get(ids.ROT_TRACK)
        if tr is not None and len(tr) == 1:
            turns.append(np.reshape(tr.values, 4))
            turned.append(i)
        elif tr is not None and len(tr):
            rot[i] = _unit(sample(tr.frames, rotation_keys(tr), t))
    if turns:
        rot[turned] = _unit(_turns(turns))
    return loc, rot, scl
