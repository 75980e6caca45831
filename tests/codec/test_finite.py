"""finite.clean on long lists (a vertex-animated mesh's shape keys and channels), which it checks all at once:
a bad number in any one item is still found, warned about and replaced in a copy of that item alone."""
from __future__ import annotations

import numpy as np

from addon.codec import finite
from addon.codec.animation import MAX_FRAMES
from addon.codec.errors import Warnings
from addon.codec.scene import Animation, Channel, Mesh, Node, Scene, ShapeKey

NAN = float("nan")


def _scene(frames: np.ndarray, channels: list[Channel] | None = None) -> Scene:
    """One triangle whose shape keys are the rows of `frames` (views of it, as the Unreal reader makes them)."""
    mesh = Mesh.from_triangles("m", frames[0], [(0, 1, 2)])
    mesh.shape_keys = [ShapeKey(f"k{i}", frames[i]) for i in range(len(frames))]
    scene = Scene(meshes=[mesh])
    scene.add_node(Node("m", "MESH", 0))
    scene.animations = [Animation("a", 0, 40, channels=channels or [])]
    return scene


def _channels(n: int) -> list[Channel]:
    return [Channel(0, f'key_blocks["k{i}"].value', np.array([0.0, i, i + 1.0]), np.array([[0.0], [1.0], [0.0]]),
                    interpolation="CONSTANT") for i in range(1, n)]


def _frames(n: int) -> np.ndarray:
    return np.arange(n * 9, dtype=np.float32).reshape(n, 3, 3)


def test_clean_keys_and_channels_come_back_as_they_are():
    scene = _scene(_frames(40), _channels(40))
    w = Warnings()
    assert finite.clean(scene, w) is scene
    assert not w.as_list()


def test_a_nan_in_one_of_many_keys_that_share_one_array_is_replaced_in_that_key_alone():
    frames = _frames(40)
    frames[31, 2, 1] = NAN
    scene = _scene(frames)
    w = Warnings()
    out = finite.clean(scene, w)
    assert w.as_list() == ["shapekey 'k31' positions: 1 NaN, infinite or out-of-range number set to 0"]
    keys = out.meshes[0].shape_keys
    assert keys[31].positions[2, 1] == 0 and np.isnan(frames[31, 2, 1])        # a copy; the scene's own is kept
    assert all(keys[i] is scene.meshes[0].shape_keys[i] for i in range(40) if i != 31)


def test_a_bad_number_the_shared_array_holds_outside_the_keys_is_none_of_theirs():
    frames = _frames(41)
    frames[40, 0, 0] = np.inf                            # a frame no key shows
    scene = _scene(frames[:40])
    w = Warnings()
    assert finite.clean(scene, w) is scene
    assert not w.as_list()


def _separate_keys() -> Scene:
    scene = _scene(_frames(40))
    for k in scene.meshes[0].shape_keys:
        k.positions = k.positions.copy()
    return scene


def test_keys_of_separate_arrays_with_an_infinity_among_them():
    scene = _separate_keys()
    scene.meshes[0].shape_keys[7].positions[0, 0] = -np.inf
    w = Warnings()
    keys = finite.clean(scene, w).meshes[0].shape_keys
    assert w.as_list() == ["shapekey 'k7' positions: 1 NaN, infinite or out-of-range number set to 0"]
    assert keys[7].positions[0, 0] == 0


def test_a_nan_weight_among_many_keys():
    scene = _separate_keys()
    scene.meshes[0].shape_keys[12].value = NAN
    w = Warnings()
    keys = finite.clean(scene, w).meshes[0].shape_keys
    assert w.as_list() == ["shapekey 'k12' value: 1 NaN, infinite or out-of-range number set to 0"]
    assert keys[12].value == 0.0


def test_a_key_beyond_blenders_frames_among_many_channels_is_dropped():
    channels = _channels(40)
    channels[5].frames[2] = MAX_FRAMES + 1
    w = Warnings()
    out = finite.clean(_scene(_frames(40), channels), w).animations[0].channels
    assert w.as_list() == [f'channel key_blocks["k6"].value: 1 key(s) at a NaN frame or beyond frame {MAX_FRAMES} '
                           "dropped"]
    assert out[5].frames.tolist() == [0.0, 6.0]
    assert all(out[i] is channels[i] for i in range(len(channels)) if i != 5)


def test_a_nan_value_among_many_channels_is_reset():
    channels = _channels(40)
    channels[20].values[1, 0] = NAN
    w = Warnings()
    out = finite.clean(_scene(_frames(40), channels), w).animations[0].channels
    assert w.as_list() == ['channel key_blocks["k21"].value keys: 1 NaN, infinite or out-of-range number set to '
                           "the rest value"]
    assert out[20].values[1, 0] == 0.0
    assert all(out[i] is channels[i] for i in range(len(channels)) if i != 20)
