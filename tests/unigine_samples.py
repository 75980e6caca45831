"""Generated UNIGINE models for tests and benchmarks (no redistributable real file exists).

    static_mesh(triangles)                 a flat grid, one surface, UVs, colours
    skinned_mesh(vertices, bones, frames)  a tube around a bone chain listed child-first,
                                           4 weights per vertex, one embedded animation
Bytes come from write.write_mesh / write.write_anim.
"""
from __future__ import annotations

import numpy as np

from addon.codec.formats.unigine import bounds
from addon.codec.formats.unigine.animation_out import make_track
from addon.codec.formats.unigine.model import BIND_DTYPE, BoneHeader, MeshFile, MorphTarget, Surface, Weights

IDENTITY_TANGENT = np.array([0, 0, 0, 32767], np.int16)   # normal +Z, tangent +X


def grid(nx: int, ny: int, size: float = 1.0):
    """(V, 3) positions on z = 0 and (T, 3) counter-clockwise (seen from +Z) triangles."""
    xs, ys = np.meshgrid(np.linspace(0, size, nx + 1), np.linspace(0, size, ny + 1))
    pos = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], 1).astype(np.float32)
    i = (np.arange(ny)[:, None] * (nx + 1) + np.arange(nx)[None, :]).ravel()
    a, b, c, d = i, i + 1, i + nx + 2, i + nx + 1
    tris = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)])
    return pos, tris.astype(np.uint32)


def static_mesh(triangles: int = 2000) -> MeshFile:
    n = max(1, int(np.sqrt(triangles / 2)))
    pos, tris = grid(n, max(1, triangles // (2 * n)))
    s = Surface("grid", targets=[MorphTarget("base", pos, np.tile(IDENTITY_TANGENT, (len(pos), 1)))])
    s.uv0 = pos[:, :2].copy()
    s.colors = np.tile(np.array([255, 128, 0, 255], np.uint8), (len(pos), 1))
    s.coord_indices = tris.reshape(-1)
    s.tri_indices = tris.reshape(-1)
    s.bounds = bounds.of_points(pos)
    m = MeshFile(bounds=bounds.of_surfaces([s]), surfaces=[s], name="static")
    return m


def skinned_mesh(vertices: int = 2000, bones: int = 8, frames: int = 30) -> MeshFile:
    """Bone k sits 1 unit above bone k+1's... listed child first: bone i's parent is i + 1."""
    rings = max(2, vertices // 16)
    pos, tris = grid(15, rings - 1, 1.0)
    angle = pos[:, 0] * 2 * np.pi
    height = pos[:, 1] * bones
    tube = np.stack([np.cos(angle) * 0.2, np.sin(angle) * 0.2, height], 1).astype(np.float32)
    s = Surface("skin", targets=[MorphTarget("base", tube, np.tile(IDENTITY_TANGENT, (len(tube), 1)))])
    s.uv0 = pos[:, :2].copy()
    s.coord_indices = tris.reshape(-1)
    s.tri_indices = tris.reshape(-1)
    # chain from the root (last in the list) upwards: file bone i is at height bones-1-i
    level = np.clip(np.floor(height).astype(np.int64), 0, bones - 1)
    # four distinct bones per vertex, heaviest first (the exporter's order)
    idx = np.stack([bones - 1 - (level + k) % bones for k in range(4)], 1).astype(np.int16)
    w = np.tile(np.array([45875, 6554, 6553, 6553], np.uint16), (len(tube), 1))
    s.weights = Weights(np.full(len(tube), 4, np.uint8), idx, w)
    s.bounds = bounds.of_points(tube)
    heads = [BoneHeader(f"bone{i:02d}", i + 1 if i + 1 < bones else -1) for i in range(bones)]
    bind = np.zeros(bones, BIND_DTYPE)
    bind["t"][:, 2] = np.where(np.arange(bones) == bones - 1, 0.0, 1.0)
    bind["r"][:, 3] = 1.0
    bind["s"] = 1.0
    m = MeshFile(bounds=bounds.of_surfaces([s]), bones=heads, bind=bind, surfaces=[s], name="skinned")
    f = np.arange(frames, dtype=np.float64)[:, None]
    half = 0.3 * np.sin(f / 10.0 + np.arange(bones)[None, :]) / 2          # bend about X
    q = np.stack([np.cos(half), np.sin(half), 0 * half, 0 * half], -1)      # wxyz
    t = np.broadcast_to(bind["t"].astype(np.float64), (frames, bones, 3)).copy()
    t[:, -1, 0] = np.floor(f[:, 0] / 7) * 0.1                                # root steps every 7 frames
    sc = np.ones((frames, bones, 3))
    m.animations.append(make_track("bend", np.arange(bones), bind, t, q, sc, quantized=False))
    return m
