"""X -> glTF -> X for every format: what both hold comes back. The same triangles with the same
positions (to 1e-5 of the model's size) and UVs, the same pose at every key frame of the source's
animations (to 1e-4), the same action names and frame ranges. Both .glb and .gltf are read back
through the codec's own load (the reader), then written as the source format and read again."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from addon import codec
from addon.codec import animation

ASSETS = Path(__file__).resolve().parents[2] / "test_assets"
SOURCES = ["3ds/cube_with_materials.3ds", "3ds/cube_hierarchy.3ds", "3ds/cube_four_instances.3ds",
           "3ds/RotatingCube.3DS", "3ds/cart_wheel.3DS", "3ds/mar_rifle.3ds", "3ds/CameraRollAnimWithChildObject.3ds",
           "3ds/cube_instance_scale_rotation.3ds", "3ds/cube_two_instances.3ds", "3ds/jeep1.3ds", "3ds/fels.3ds",
           "3ds/mp5_sil.3ds", "3ds/cube_with_texture_transformations.3ds", "3ds/cubes_with_alpha.3DS",
           "3ds/test1.3ds", "3ds/cube_with_diffuse_texture.3DS",
           "unreal/box_d.3d", "unreal/mar_rifle_d.3d",
           "unigine/grid_static.mesh", "unigine/tube_skinned.mesh",
           "ultimate3d/cube_v2.u3d", "ultimate3d/skinned_v2.u3d"]
MAX_FRAMES = 400         # key frames checked per action (evenly chosen among them when there are more)


def world_triangles(scene, anim=None, frame=None) -> np.ndarray:
    """(T, 3, 5) every mesh node's triangles in world space, each corner (x, y, z, u, v), at rest or
    at `frame` of `anim` (shape keys, skin and object motion)."""
    out = []
    for i, n in enumerate(scene.nodes):
        if n.kind != "MESH":
            continue
        m = scene.meshes[n.data]
        if not len(m.corners):
            continue
        tri_corner = _triangle_corners(m)
        p = np.asarray(m.positions if frame is None else animation.mesh_frames(scene, anim, i, [frame])[0], np.float64)
        w = scene.world_matrix(i)
        p = p @ w[:3, :3].T + w[:3, 3]
        uv = next(iter(m.uv_layers.values()), np.zeros((len(m.corners), 2)))
        corner = np.c_[p[m.corners.astype(np.int64)], uv]
        out.append(corner[tri_corner])
    return np.concatenate(out) if out else np.zeros((0, 3, 5))


def _triangle_corners(m) -> np.ndarray:
    """(T, 3) corner indices of a fan triangulation of every face."""
    sizes = m.face_sizes
    starts = np.asarray(m.faces, np.int64)
    n_tris = np.maximum(sizes - 2, 0)
    face = np.repeat(np.arange(len(starts)), n_tris)
    k = np.arange(n_tris.sum()) - np.repeat(np.cumsum(n_tris) - n_tris, n_tris)
    s = starts[face]
    return np.stack([s, s + k + 1, s + k + 2], 1)


def canonical(tris: np.ndarray, size: float) -> np.ndarray:
    """Triangles as rows, each turned to start at its least corner (winding kept), rows sorted."""
    key = np.round(tris[..., :3] / (size * 1e-3)).astype(np.int64)
    # the least corner by (x, y, z) on the coarse grid
    order = np.argmin(key[..., 0] * 4e12 + key[..., 1] * 2e6 + key[..., 2], axis=1)
    turned = np.stack([np.roll(t, -o, axis=0) for t, o in zip(tris, order)]) if len(tris) else tris
    k = np.round(turned[..., :3] / (size * 1e-3)).reshape(len(turned), -1)
    return turned[np.lexsort(k.T[::-1])]


def assert_same_triangles(a: np.ndarray, b: np.ndarray, size: float, what: str, uv: bool = True) -> None:
    assert a.shape == b.shape, f"{what}: {len(a)} triangles, {len(b)} back"
    ca, cb = canonical(a, size), canonical(b, size)
    err = np.abs(ca[..., :3] - cb[..., :3]).max() if len(a) else 0.0
    assert err <= size * 1e-5 + 1e-7, f"{what}: positions differ by {err:g} (size {size:g})"
    if uv:
        err_uv = np.abs(ca[..., 3:] - cb[..., 3:]).max() if len(a) else 0.0
        assert err_uv <= 1e-5, f"{what}: UVs differ by {err_uv:g}"


def key_frames(anim) -> np.ndarray:
    f = np.unique(np.concatenate([np.asarray(c.frames, np.float64) for c in anim.channels] or [np.zeros(0)]))
    f = f[(f >= anim.frame_start) & (f <= anim.frame_end)]
    if len(f) > MAX_FRAMES:
        f = f[np.linspace(0, len(f) - 1, MAX_FRAMES).round().astype(int)]
    return f


def _round_trip(src: Path, tmp: Path, ext: str):
    """(source, via glTF, back in the source's format): each as the codec loads it, with the files
    written beside it (a UNIGINE mesh's .anim)."""
    a = codec.load(src, with_companions=True)
    codec.save(a, tmp / f"model{ext}")
    g = codec.load(tmp / f"model{ext}")
    back = codec.find_format(src).main_output(tmp / "back", "model")
    back.parent.mkdir()
    codec.save(g, back)
    return a, g, codec.load(back, with_companions=True)


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
@pytest.mark.parametrize("name", SOURCES)
def test_round_trip_keeps_triangles_uvs_poses_and_actions(name, ext, tmp_path):
    src = ASSETS / name
    a, g, c = _round_trip(src, tmp_path, ext)
    rest = world_triangles(a)
    lo, hi = rest[..., :3].reshape(-1, 3).min(0), rest[..., :3].reshape(-1, 3).max(0)
    size = float(np.linalg.norm(hi - lo)) or 1.0
    assert_same_triangles(rest, world_triangles(g), size, "via glTF")
    assert_same_triangles(rest, world_triangles(c), size, "back")
    # bones rest as they did (the reader keeps the writer's and Blender's bone frames)
    for arm_a, arm_g in zip(a.armatures, g.armatures):
        assert [b.name for b in arm_g.bones] == [b.name for b in arm_a.bones]
        for b_a, b_g in zip(arm_a.bones, arm_g.bones):
            np.testing.assert_allclose(b_g.matrix[:3, :3], b_a.matrix[:3, :3], atol=1e-5)
            np.testing.assert_allclose(b_g.matrix[:3, 3], b_a.matrix[:3, 3], atol=size * 1e-5)
    assert len(g.armatures) == len(a.armatures)
    assert [(x.name, x.frame_start, x.frame_end) for x in c.animations] == \
        [(x.name, x.frame_start, x.frame_end) for x in a.animations]
    for anim_a, anim_c in zip(a.animations, c.animations):
        for f in key_frames(anim_a):
            # poses: to 1e-4 of the size (the standard's float32 keys)
            pa = world_triangles(a, anim_a, f)
            pc = world_triangles(c, anim_c, f)
            assert_same_triangles(pa, pc, size * 10, f"{anim_a.name!r} frame {f:g}", uv=False)
