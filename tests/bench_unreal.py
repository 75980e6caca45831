"""Synthetic Unreal vertex meshes for the benchmark: `make_scene(5000, 1000)`."""
from __future__ import annotations

import numpy as np

from addon.codec.errors import Warnings
from addon.codec.formats.unreal import to_scene as scene
from addon.codec.formats.unreal.model import STANDARD, TRIANGLE, AnimationFile, GeometryFile, UnrealMesh
from addon.codec.formats.unreal.options import ImportOptions
from addon.codec.formats.unreal.packing import pack


def make_model(vertices: int = 5000, frames: int = 1000, seed: int = 1) -> UnrealMesh:
    """A standard-format mesh of `vertices` with about 2 triangles per vertex, waving over `frames`."""
    rng = np.random.default_rng(seed)
    base = rng.integers(-900, 900, (vertices, 3))
    base[:, 2] //= 2
    wave = np.sin(np.arange(frames) * 0.05)[:, None, None] * 20
    raw = np.clip(base[None] + wave.astype(np.int64), [-1024, -1024, -512], [1023, 1023, 511])
    ntri = 2 * vertices
    tris = np.zeros(ntri, TRIANGLE)
    tris["v"] = rng.integers(0, vertices, (ntri, 3))
    tris["uv"] = rng.integers(0, 256, (ntri, 3, 2))
    tris["texture"] = rng.integers(0, 3, ntri)
    geometry = GeometryFile(ntri, vertices, bytes(44), tris)
    animation = AnimationFile(frames, vertices * 4, pack(raw, STANDARD))
    return UnrealMesh("bench", STANDARD, geometry, animation)


def make_scene(vertices: int = 5000, frames: int = 1000):
    """The neutral Scene of make_model(): what `codec.save(scene, "bench_d.3d")` writes back."""
    return scene.to_scene(make_model(vertices, frames), ImportOptions(), Warnings())
