"""Generated Scenes for the .u3d benchmark rows (issue 6): a static model and a
skinned, animated one. The codec entry points to time are
`addon.codec.formats.ultimate3d`'s read.parse, to_scene.to_scene, from_scene.from_scene and
write.encode_bytes."""
from __future__ import annotations

import numpy as np

from addon.codec.axes import axis_angle_to_quat, compose
from addon.codec.scene import Animation, Armature, Bone, Channel, Material, Node, Scene, Skin
from tests.bench_data import grid_mesh


def static_scene(tris: int = 1_000_000) -> Scene:
    m = grid_mesh("Static", tris)
    sc = Scene(meshes=[m], materials=[Material("M")])
    m.materials = [0]
    sc.add_node(Node("Static", "MESH", 0))
    return sc


def skinned_scene(vertices: int = 20_000, bones: int = 60, frames: int = 500) -> Scene:
    m = grid_mesh("Skinned", 2 * vertices)          # a grid of n x n quads has about `tris / 2` vertices
    v = len(m.positions)
    rng = np.random.default_rng(0)
    m.skin = Skin(0, rng.integers(0, bones, (v, 4)).astype(np.int32), rng.random((v, 4)).astype(np.float32))
    m.materials = [0]
    chain = [Bone(f"b{i:02d}", i - 1, compose([0, 0, 0.1 * i], [1, 0, 0, 0], [1, 1, 1])) for i in range(bones)]
    sc = Scene(meshes=[m], armatures=[Armature("Rig", chain)], materials=[Material("M")])
    arm = sc.add_node(Node("Rig", "ARMATURE", 0))
    sc.add_node(Node("Skinned", "MESH", 0, parent=arm))
    f = np.arange(frames, dtype=np.float32)
    channels = []
    for i, b in enumerate(chain):
        q = axis_angle_to_quat(np.tile([0.0, 1.0, 0.0], (frames, 1)), np.sin(f * 0.05 + i) * 0.3).astype(np.float32)
        channels += [Channel(arm, "location", f, np.zeros((frames, 3), np.float32), b.name),
                     Channel(arm, "rotation_quaternion", f, q, b.name),
                     Channel(arm, "scale", f, np.ones((frames, 3), np.float32), b.name)]
    sc.animations = [Animation("Scene", 0, frames - 1, channels=channels)]
    sc.frame_start, sc.frame_end = 0, frames - 1
    return sc
