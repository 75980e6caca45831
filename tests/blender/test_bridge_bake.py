"""Sampling action curves in numpy gives what stepping the scene gives."""
import numpy as np
import pytest

import bpy
from addon.codec.animation import evaluate
from tests.blender.helpers import lens_animated_camera


def _rig(context):
    arm = bpy.data.armatures.new("Rig")
    ob = bpy.data.objects.new("Rig", arm)
    context.scene.collection.objects.link(ob)
    context.view_layer.objects.active = ob
    bpy.ops.object.mode_set(mode="EDIT")
    for i in range(3):
        eb = arm.edit_bones.new(f"b{i}")
        eb.head, eb.tail = (0, i, 0), (0, i + 1, 0)
    bpy.ops.object.mode_set(mode="OBJECT")
    return ob


def _key(ob, bone, path, values_by_frame, interpolation):
    pb = ob.pose.bones[bone]
    for f, v in values_by_frame:
        setattr(pb, path, v)
        pb.keyframe_insert(path, frame=f)
    for fc in _curves(ob):
        for kp in fc.keyframe_points:
            if fc.data_path.endswith(f'"{bone}"].{path}'):
                kp.interpolation = interpolation


def _curves(ob):
    from importlib import import_module
    from tests.blender_setup import PACKAGE
    api = import_module(f"{PACKAGE}.bridge.action_api")
    return api.existing_channels(ob.animation_data.action, ob)


def test_sampled_pose_equals_stepped_pose(clean, lgf):
    sample = __import__(f"{lgf.__name__}.bridge.action_sample", fromlist=["x"])
    ob = _rig(clean)
    ob.pose.bones["b0"].rotation_mode = "QUATERNION"
    _key(ob, "b0", "rotation_quaternion", [(0, (1, 0, 0, 0)), (10, (0.7, 0.7, 0, 0)), (20, (0, 0, 1, 0))], "LINEAR")
    _key(ob, "b0", "location", [(0, (0, 0, 0)), (7, (1, 2, 3))], "CONSTANT")
    ob.pose.bones["b1"].rotation_mode = "ZXY"
    _key(ob, "b1", "rotation_euler", [(0, (0, 0, 0)), (15, (0.5, -1.0, 2.0))], "BEZIER")
    _key(ob, "b2", "scale", [(3, (1, 1, 1)), (12, (2, 0.5, 1))], "LINEAR")
    assert sample.pose_source(ob) == "ACTION"
    frames = np.arange(-2, 23, dtype=np.float64)
    axes = __import__(f"{lgf.__name__}.codec.axes", fromlist=["x"])
    fast = axes.compose(*sample.pose_trs(ob, frames))      # every bone at once
    for k, f in enumerate(frames):
        clean.scene.frame_set(int(f))
        np.testing.assert_allclose(fast[k], sample.pose_now(ob), atol=1e-5, err_msg=f"frame {f}")


def test_pose_source_sees_constraints_and_static(clean, lgf):
    sample = __import__(f"{lgf.__name__}.bridge.action_sample", fromlist=["x"])
    ob = _rig(clean)
    assert sample.pose_source(ob) == "STATIC"
    _key(ob, "b0", "location", [(0, (0, 0, 0)), (5, (1, 0, 0))], "LINEAR")
    assert sample.pose_source(ob) == "ACTION"
    ob.pose.bones["b1"].constraints.new("COPY_ROTATION")
    assert sample.pose_source(ob) == "EVALUATE"
    assert not sample.has_own_transform_motion(ob)
    ob.keyframe_insert("location", frame=1)
    assert sample.has_own_transform_motion(ob)


def test_collected_bone_channels_follow_the_action(clean, lgf):
    ob = _rig(clean)
    ob.pose.bones["b0"].rotation_mode = "QUATERNION"
    _key(ob, "b0", "location", [(0, (0, 0, 0)), (10, (0, 0, 5))], "LINEAR")
    clean.scene.frame_start, clean.scene.frame_end = 0, 10
    scene = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions())
    loc = next(c for c in scene.animations[0].channels if c.bone == "b0" and c.path == "location")
    assert list(loc.frames) == [0, 10] and loc.interpolation == "LINEAR"      # the action's own keys
    np.testing.assert_allclose(evaluate(loc, np.arange(11))[:, 2], np.arange(11) * 0.5, atol=1e-6)


def test_plain_linear_bone_keys_are_read_as_sampling_every_frame_gives(clean, lgf, monkeypatch):
    """Bones keyed plainly (LINEAR on whole frames) are read straight from their keys: the very
    channels that sampling every frame, then keeping the keys that replay it, gives."""
    keys = __import__(f"{lgf.__name__}.bridge.action_keys", fromlist=["x"])
    ob = _rig(clean)
    for pb in ob.pose.bones:
        pb.rotation_mode = "QUATERNION"
    _key(ob, "b0", "rotation_quaternion", [(0, (-0.8, 0.6, 0, 0)), (6, (-0.6, 0.8, 0, 0)), (12, (0, 1, 0, 0))],
         "LINEAR")                                                 # w < 0 first: the frames' sign is w >= 0
    _key(ob, "b0", "location", [(2, (0, 0, 0)), (7, (1, 2, 3))], "LINEAR")
    _key(ob, "b1", "scale", [(-5, (1, 1, 1)), (20, (2, 2, 2))], "LINEAR")      # cut at the range's ends
    clean.scene.frame_start, clean.scene.frame_end = 0, 12
    read = []
    monkeypatch.setattr(keys, "pose_keys", lambda *a, f=keys.pose_keys: read.append(f(*a)) or read[-1])
    direct = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions()).animations[0].channels
    assert read and read[0] is not None
    monkeypatch.setattr(keys, "pose_keys", lambda *a: None)
    sampled = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions()).animations[0].channels
    assert [(c.bone, c.path) for c in direct] == [(c.bone, c.path) for c in sampled]
    for a, b in zip(direct, sampled):
        assert a.interpolation == b.interpolation and a.frames.dtype == b.frames.dtype == np.float32
        np.testing.assert_array_equal(a.frames, b.frames, err_msg=f"{a.bone} {a.path}")
        np.testing.assert_array_equal(a.values, b.values, err_msg=f"{a.bone} {a.path}")
    got = {(c.bone, c.path): c for c in direct}
    assert list(got["b0", "location"].frames) == [0, 2, 7, 12]
    assert list(got["b0", "rotation_quaternion"].frames) == [0, 6, 12]
    np.testing.assert_allclose(got["b0", "rotation_quaternion"].values,
                               [[0.8, -0.6, 0, 0], [0.6, -0.8, 0, 0], [0, -1, 0, 0]], atol=1e-7)
    np.testing.assert_allclose(got["b1", "scale"].values[:, 0], [1 + 5 / 25, 1 + 17 / 25], atol=1e-7)
    assert list(got["b2", "location"].frames) == list(range(13))      # no curves: every frame, as sampled


@pytest.mark.parametrize("held", [(0, 0, 0), (0, 0, 1e-9), (0.3, 0, 0)])
def test_an_action_that_holds_the_rest_pose_gives_no_bone_channels(clean, lgf, held):
    """The bake reads curves without composing matrices; rest (identity to 1e-7) still means no channels."""
    ob = _rig(clean)
    ob.pose.bones["b1"].rotation_mode = "QUATERNION"
    _key(ob, "b1", "rotation_quaternion", [(0, (1, 0, 0, 0)), (10, (1, *held))], "LINEAR")
    clean.scene.frame_start, clean.scene.frame_end = 0, 10
    scene = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions())
    bones = {c.bone for a in scene.animations for c in a.channels if c.bone}
    assert bones == ({"b0", "b1", "b2"} if held[0] else set())


def test_data_and_visibility_animation_is_collected(clean, lgf):
    cam = lens_animated_camera(clean.scene)
    for fc in _data_curves(cam.data):
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"
    cam.hide_viewport = False
    cam.keyframe_insert("hide_viewport", frame=0)
    cam.hide_viewport = True
    cam.keyframe_insert("hide_viewport", frame=6)
    clean.scene.frame_start, clean.scene.frame_end = 0, 10
    anim = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions()).animations[0]
    lens = next(c for c in anim.channels if c.path == "data.lens")
    assert list(lens.frames) == [0, 10]
    np.testing.assert_allclose(evaluate(lens, np.arange(11))[:, 0], 20 + 6 * np.arange(11), atol=1e-4)
    hide = next(c for c in anim.channels if c.path == "hide_viewport")
    assert hide.interpolation == "CONSTANT" and list(hide.frames) == [0, 6, 10]
    assert evaluate(hide, np.arange(11))[:, 0].tolist() == [0] * 6 + [1] * 5


def _data_curves(idblock):
    from importlib import import_module
    from tests.blender_setup import PACKAGE
    api = import_module(f"{PACKAGE}.bridge.action_api")
    return api.existing_channels(idblock.animation_data.action, idblock)


def test_kept_keys_replay_what_blender_shows_at_every_frame(clean, lgf):
    """Euler keys, a parent with an inverse matrix, a constraint and the export axes: wherever the
    action's own keys would not replay the motion, the collected channel keeps one key per frame."""
    from addon.codec.animation import world_matrices
    parent = bpy.data.objects.new("P", None)
    child = bpy.data.objects.new("C", None)
    for ob in (parent, child):
        clean.scene.collection.objects.link(ob)
    parent.location = (1, 2, 3)
    child.parent = parent
    child.matrix_parent_inverse = np.array(parent.matrix_world.inverted()).T.tolist()
    for ob, path, frames, values in ((child, "rotation_euler", (0, 10), ((0, 0, 0), (0, 0, 2.5))),
                                     (child, "location", (0, 4, 10), ((0, 0, 0), (1, 0, 0), (1, 3, 0))),
                                     (parent, "rotation_euler", (0, 10), ((0, 0, 0), (1.2, 0, 0)))):
        for f, v in zip(frames, values):
            setattr(ob, path, v)
            ob.keyframe_insert(path, frame=f)
        for fc in _data_curves(ob):
            for kp in fc.keyframe_points:
                kp.interpolation = "LINEAR"
    limit = child.constraints.new("LIMIT_LOCATION")          # clamps the keyed motion: keys cannot say it
    limit.use_max_y, limit.max_y, limit.owner_space = True, 1.5, "LOCAL"
    clean.scene.frame_start, clean.scene.frame_end = 0, 10
    g = np.array([[0, 1, 0, 0], [-1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]])      # export axes: a quarter turn
    scene = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions(global_matrix=tuple(map(tuple, g))))
    anim = scene.animations[0]
    c = next(i for i, n in enumerate(scene.nodes) if n.name == "C")
    got = world_matrices(scene, anim, c, np.arange(11))
    for f in range(11):
        clean.scene.frame_set(f)
        np.testing.assert_allclose(got[f], g @ np.array(child.matrix_world), atol=1e-5, err_msg=str(f))


@pytest.mark.parametrize("strip_start", [0, 4])
def test_a_lone_nla_strip_exports_what_the_timeline_shows(clean, lgf, strip_start):
    """One action on one NLA strip and no active action (as an import leaves it): at the action's own
    frames it is read from the curves; moved along the timeline it is played as the scene plays it."""
    from addon.codec.animation import world_matrices
    ob = bpy.data.objects.new("E", None)
    clean.scene.collection.objects.link(ob)
    for f, v in ((0, (0, 0, 0)), (6, (3, 0, 1)), (10, (3, 2, 1))):
        ob.location = v
        ob.keyframe_insert("location", frame=f)
    action = ob.animation_data.action
    ob.animation_data.action = None
    track = ob.animation_data.nla_tracks.new()
    strip = track.strips.new("Move", strip_start, action)
    strip.extrapolation = "NOTHING"
    clean.scene.frame_start, clean.scene.frame_end = strip_start, strip_start + 10
    scene = lgf.bridge.collect_scene(clean, lgf.bridge.CollectOptions())
    node = next(i for i, n in enumerate(scene.nodes) if n.name == "E")
    frames = np.arange(strip_start, strip_start + 11)
    got = world_matrices(scene, scene.animations[0], node, frames)
    for k, f in enumerate(frames):
        clean.scene.frame_set(int(f))
        np.testing.assert_allclose(got[k], np.array(ob.matrix_world), atol=1e-5, err_msg=str(f))
    assert ob.animation_data.action is None and ob.animation_data.use_nla      # left as it was
