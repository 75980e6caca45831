"""codec.animation: the one evaluator of Scene channels, and what every format writes with it."""
from pathlib import Path

import numpy as np
import pytest

from addon.codec import load, save
from addon.codec.animation import auto_handles, continuous, evaluate, layout, mesh_frames
from addon.codec.scene import Animation, Armature, Bone, Channel, Material, Mesh, Node, Scene, ShapeKey, Skin

F = np.arange(11, dtype=np.float64)
ASSETS = Path(__file__).resolve().parents[2] / "test_assets"


def _ch(frames, values, interp="LINEAR", handles=None, path="location"):
    return Channel(0, path, np.asarray(frames, np.float64), np.asarray(values, np.float64).reshape(len(frames), -1),
                   interpolation=interp, handles=handles)


def test_constant_linear_and_held_ends():
    ch = _ch([2, 6], [[0.0], [4.0]])
    np.testing.assert_allclose(evaluate(ch, [0, 2, 3, 4, 6, 9])[:, 0], [0, 0, 1, 2, 4, 4])
    ch.interpolation = "CONSTANT"
    np.testing.assert_allclose(evaluate(ch, [0, 2, 5.9, 6, 9])[:, 0], [0, 0, 0, 4, 4])


def test_a_held_value_is_exactly_itself_between_its_keys():
    # 0.3 * 0.9 + 0.3 * 0.1 is 0.30000000000000004: a blend of a value with itself is not always it
    ch = Channel(0, "location", np.array([0.0, 10.0]), np.full((2, 3), 0.3))
    assert evaluate(ch, [1.0, 5.0, 10.0]).tolist() == [[0.3] * 3] * 3


def test_bezier_with_handles_at_thirds_is_the_straight_line_and_auto_handles_flatten_extremes():
    f, v = np.array([0.0, 9.0]), np.array([[0.0], [9.0]])
    h = np.array([[[[-3, -3], [3, 3]]], [[[6, 6], [12, 12]]]], np.float64)        # (N, D, side, xy)
    np.testing.assert_allclose(evaluate(_ch(f, v, "BEZIER", h), F)[:, 0], np.minimum(F, 9), atol=1e-6)
    peak = auto_handles(np.array([0.0, 5, 10]), np.array([[0.0], [1.0], [0.0]]))
    assert peak[1, 0, 0, 1] == peak[1, 0, 1, 1] == 1.0                               # flat at the top
    mid = evaluate(_ch([0, 5, 10], [[0.0], [1.0], [0.0]], "BEZIER"), [2.5, 5, 7.5])[:, 0]
    assert mid[1] == pytest.approx(1.0) and mid[0] == pytest.approx(mid[2]) == pytest.approx(0.5, abs=1e-6)


def test_quaternions_stay_on_one_hemisphere():
    q = np.array([[1.0, 0, 0, 0], [-0.9, -0.1, 0, 0], [0.8, 0.2, 0, 0]])
    out = continuous(q)
    assert (np.sum(out[1:] * out[:-1], 1) > 0).all() and np.allclose(np.abs(out), np.abs(q))


def test_layout_keeps_free_starts_and_moves_overlaps_after():
    up, down = _ch([0, 5], [[0.0], [5.0]]), _ch([0, 5], [[5.0], [0.0]])
    anims = [Animation("a", 0, 5, channels=[up]), Animation("b", 6, 9), Animation("c", 2, 4, channels=[down]),
             Animation("d", 20, 21)]
    assert layout(anims) == [0, 6, 10, 20]


def test_layout_lets_ranges_of_one_timeline_share_frames():
    """U3D ranges [0, 10] and [10, 20] (and one inside them) cut from one track keep their frames; a
    range that shows something else on a shared frame moves after the others."""
    track = _ch([0, 10, 20], [[0.0], [1.0], [0.0]])
    cut = [Animation(n, a, b, channels=[_ch(*_cut(track, a, b))]) for n, a, b in
           (("bend", 0, 10), ("unbend", 10, 20), ("middle", 5, 15))]
    assert layout(cut) == [0, 10, 5]
    other = Animation("other", 10, 12, channels=[_ch([10, 12], [[3.0], [3.0]])])
    assert layout(cut[:2] + [other]) == [0, 10, 21]
    # still ranges (no channels) show the same nothing
    assert layout([Animation("a", 0, 10), Animation("b", 10, 20)]) == [0, 10]


def _cut(ch, a, b):
    f = np.unique([a, b, *[k for k in ch.frames if a <= k <= b]]).astype(np.float64)
    return f, evaluate(ch, f)


def test_mesh_frames_mix_shape_keys_skin_and_motion():
    m = Mesh.from_triangles("m", [[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    m.shape_keys = [ShapeKey("Basis", m.positions.copy()), ShapeKey("Up", m.positions + [0, 0, 1])]
    sc = Scene(meshes=[m])
    sc.add_node(Node("m", "MESH", 0))
    a = Animation("A", 0, 10, channels=[Channel(0, 'key_blocks["Up"].value', F[[0, 10]], np.array([[0.0], [1.0]])),
                                        Channel(0, "location", F[[0, 10]], np.array([[0.0, 0, 0], [10, 0, 0]]))])
    out = mesh_frames(sc, a, 0, F)
    np.testing.assert_allclose(out[:, 0], np.stack([F, 0 * F, F / 10], 1), atol=1e-6)


# -- a LINEAR channel keyed at frames 0 and 10, through every format ---------------------------
def _rig_scene():
    """Bone "root" skinning a small grid, keyed LINEAR from x 0 at frame 0 to x 10 at frame 10."""
    x, y = np.meshgrid(np.linspace(-1, 1, 3), np.linspace(-1, 1, 3))
    pos = np.stack([x.ravel(), y.ravel(), 0 * x.ravel()], 1).astype(np.float32)
    quads = [[i * 3 + j, i * 3 + j + 1, (i + 1) * 3 + j + 1, (i + 1) * 3 + j] for i in range(2) for j in range(2)]
    m = Mesh("Body", positions=pos, corners=np.array(quads, np.uint32).ravel(),
             faces=np.arange(0, 16, 4, dtype=np.uint32), materials=[0], face_material=np.zeros(4, np.int32))
    m.skin = Skin(0, np.zeros((9, 1), np.int32), np.ones((9, 1), np.float32))
    sc = Scene(meshes=[m], materials=[Material("M")], armatures=[Armature("Rig", [Bone("root")])])
    arm = sc.add_node(Node("Rig", "ARMATURE", 0))
    sc.add_node(Node("Body", "MESH", 0, parent=arm))
    sc.animations = [Animation("Slide", 0, 10, channels=[
        Channel(arm, "location", F[[0, 10]], np.array([[0.0, 0, 0], [10, 0, 0]]), bone="root")])]
    return sc


def _box_scene():
    m = Mesh.from_triangles("Box", [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [[0, 2, 1], [0, 1, 3], [0, 3, 2],
                                                                                 [1, 2, 3]])
    m.materials, m.face_material = [0], np.zeros(4, np.int32)
    sc = Scene(meshes=[m], materials=[Material("M")])
    sc.add_node(Node("Box", "MESH", 0))
    sc.animations = [Animation("Slide", 0, 10, channels=[
        Channel(0, "location", F[[0, 10]], np.array([[0.0, 0, 0], [10, 0, 0]]))])]
    return sc


@pytest.mark.parametrize("ext", ["u3d", "mesh"])
def test_linear_keys_play_their_in_betweens_in_armature_formats(tmp_path, ext):
    path = tmp_path / f"rig.{ext}"
    save(_rig_scene(), path, **({"embed_animations": True} if ext == "mesh" else {}))
    back = load(path)
    anim = next(a for a in back.animations if a.name == "Slide")
    ch = next(c for c in anim.channels if c.bone == "root" and c.path == "location")
    np.testing.assert_allclose(evaluate(ch, anim.frame_start + F)[:, 0], F, atol=1e-3)


def test_linear_keys_play_their_in_betweens_in_3ds(tmp_path):
    save(_box_scene(), tmp_path / "box.3ds")
    back = load(tmp_path / "box.3ds")
    ch = next(c for c in back.animations[0].channels if c.path == "location")
    np.testing.assert_allclose(evaluate(ch, F)[:, 0], F, atol=1e-3)


def test_linear_keys_play_their_in_betweens_in_unreal(tmp_path):
    save(_box_scene(), tmp_path / "box_d.3d")
    back = load(tmp_path / "box_d.3d")
    frames = np.stack([k.positions for k in back.meshes[0].shape_keys])
    assert len(frames) == 11
    np.testing.assert_allclose(frames[:, 0, 0] - frames[0, 0, 0], F, atol=0.2)       # packed: 1/8 unit steps


# -- the loss report -----------------------------------------------------------------------------
def _rig_with_extras():
    sc = _rig_scene()
    from addon.codec.scene import Camera, Light
    sc.cameras.append(Camera("Cam"))
    sc.lights += [Light("Sun", "SUN"), Light("Lamp", "POINT")]
    sc.add_node(Node("Cam", "CAMERA", 0))
    sc.add_node(Node("Sun", "LIGHT", 0))
    sc.add_node(Node("Lamp", "LIGHT", 1))
    box = sc.add_node(Node("Box", "MESH", 0))
    m = sc.meshes[0]
    m.shape_keys = [ShapeKey("Basis", m.positions), ShapeKey("Up", m.positions + 1)]
    sc.animations[0].channels += [Channel(box, 'key_blocks["Up"].value', F[[0, 10]], np.array([[0.0], [1.0]])),
                                  Channel(box, "location", F[[0, 10]], np.zeros((2, 3)))]
    return sc


@pytest.mark.parametrize("file,expected", [
    ("x.3ds", ["holds no bones or skinning: 'Body'", "sun and area lights 'Sun'", "no shape-key animation: that of 'Box'"]),
    ("x_d.3d", ["holds no cameras or lights: 'Cam', 'Sun', 'Lamp'"]),
    ("x.mesh", ["holds no cameras or lights", "no shape-key animation: that of 'Box'",
                "animates bones only: the animation of objects 'Box'"]),
    ("x.u3d", ["holds no cameras or lights"]),
])
def test_what_the_target_cannot_hold_is_one_warning_each(tmp_path, file, expected):
    sc = _rig_with_extras()
    if file.endswith(".u3d"):         # a skinned .u3d is one mesh: no second object
        sc.nodes[-1].kind = "EMPTY"
    warnings = save(sc, tmp_path / file)
    for text in expected:
        assert sum(text in w for w in warnings) == 1, (text, warnings)


@pytest.mark.parametrize("target", ["x.3ds", "x_d.3d", "x.mesh", "x.u3d"])
def test_an_anim_into_a_format_without_it_is_an_error(tmp_path, target):
    from addon.codec.errors import UnsupportedFeature
    scene = load(ASSETS / "unigine" / "tube_bend.anim")
    assert scene.animations and not scene.nodes
    with pytest.raises(UnsupportedFeature, match="only animation"):
        save(scene, tmp_path / target)
    assert not (tmp_path / target).exists()
    save(scene, tmp_path / "again.anim")                          # the format that holds it: fine


def test_u3d_bone_keys_stay_at_the_source_key_frames(tmp_path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    sc = _rig_scene()
    sc.animations[0].channels[0] = Channel(0, "location", F[[0, 4, 10]], np.array([[0.0, 0, 0], [4, 0, 0], [4, 0, 3]]),
                                           bone="root")
    save(sc, tmp_path / "k.u3d")
    bone = parse((tmp_path / "k.u3d").read_bytes(), Warnings()).bones[0]
    assert bone.translation_keys["frame"].tolist() == [0, 4, 10]
    sc.animations[0].channels[0].interpolation = "BEZIER"        # a curve U3D cannot play: every frame
    save(sc, tmp_path / "k.u3d")
    bone = parse((tmp_path / "k.u3d").read_bytes(), Warnings()).bones[0]
    assert bone.translation_keys["frame"].tolist() == list(range(11))


def test_u3d_bones_keep_each_their_own_key_frames(tmp_path):
    """Bones are sampled and thinned together: each still gets the keys of its own channels."""
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    sc = _rig_scene()
    sc.armatures[0].bones += [Bone("mid", 0), Bone("tip", 1), Bone("still", 0)]
    q = np.array([[1.0, 0, 0, 0], [1.0, 0, 0, 0], [np.cos(0.002), np.sin(0.002), 0, 0]])    # held, then a turn
    sc.animations[0].channels = [
        Channel(0, "location", F[[0, 4, 10]], np.array([[0.0, 0, 0], [4, 0, 0], [4, 0, 3]]), bone="root"),
        Channel(0, "location", F[[0, 5, 10]], np.array([[0.0, 0, 0], [0, 5, 0], [0, 10, 0]]), bone="mid"),
        Channel(0, "rotation_quaternion", F[[0, 5, 10]], q, bone="mid"),   # small: the slerp replays it
        Channel(0, "location", F[[0, 5, 10]], np.array([[0.0, 0, 0], [1, 2, 0], [0, 0, 3]]), bone="tip",
                interpolation="BEZIER"),                                  # a curve U3D cannot play
        Channel(0, "location", F[[0, 10]], np.array([[0.0, 0, 1], [0, 0, 1]]), bone="still")]
    save(sc, tmp_path / "k.u3d")
    bones = {b.name: b for b in parse((tmp_path / "k.u3d").read_bytes(), Warnings()).bones}
    assert bones["root"].translation_keys["frame"].tolist() == [0, 4, 10]
    assert bones["mid"].translation_keys["frame"].tolist() == [0, 10]      # 5 is the line between them
    assert bones["mid"].rotation_keys["frame"].tolist() == [0, 5, 10]
    assert bones["tip"].translation_keys["frame"].tolist() == list(range(11))
    assert bones["still"].translation_keys["frame"].tolist() == [0]
    assert bones["root"].rotation_keys["frame"].tolist() == [0]


def test_u3d_read_and_written_again_keeps_its_bone_key_frames(tmp_path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    src = ASSETS / "ultimate3d" / "skinned_v2.u3d"
    save(load(src), tmp_path / "again.u3d")
    a, b = (parse(p.read_bytes(), Warnings()) for p in (src, tmp_path / "again.u3d"))
    child_a, child_b = (next(x for x in m.bones if x.name == "child") for m in (a, b))
    for keys in ("scaling_keys", "translation_keys", "rotation_keys"):
        assert child_b.__dict__[keys]["frame"].tolist() == child_a.__dict__[keys]["frame"].tolist(), keys
    assert b.actions == a.actions


def test_a_u3d_range_longer_than_the_bake_limit_is_written_at_its_key_frames(tmp_path):
    """A claimed 262,150-frame range (tests/fuzz_cases/u3d-d67a03b37e) is not sampled frame by frame:
    the bone gets keys at its channel's key frames, and U3D's own interpolation plays the rest."""
    from addon.codec.animation import MAX_BAKED_SPAN
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    sc = _rig_scene()
    last = 262_149
    assert last > MAX_BAKED_SPAN
    sc.animations[0].frame_end = last
    sc.animations[0].channels[0] = Channel(0, "location", np.array([0.0, 7, last]),
                                           np.array([[0.0, 0, 0], [7, 0, 0], [9, 0, 0]]), bone="root")
    assert not any("key frames only" in w for w in save(sc, tmp_path / "long.u3d"))     # straight lines: nothing lost
    assert (tmp_path / "long.u3d").stat().st_size < 100_000
    bone = parse((tmp_path / "long.u3d").read_bytes(), Warnings()).bones[0]
    assert bone.translation_keys["frame"].tolist() == [0, 7, last]
    assert len(bone.rotation_keys) == 1 and len(bone.scaling_keys) == 1
    anim = next(a for a in load(tmp_path / "long.u3d").animations if a.name == "Slide")
    ch = next(c for c in anim.channels if c.bone == "root" and c.path == "location")
    mid = 7 + (last - 7) / 2
    np.testing.assert_allclose(evaluate(ch, anim.frame_start + np.array([0.0, 7, mid, last]))[:, 0],
                               [0, 7, 8, 9], atol=1e-3)
    sc.animations[0].channels[0].interpolation = "BEZIER"        # a curve between the keys: said once
    warnings = save(sc, tmp_path / "long.u3d")
    assert sum("'Slide' runs 262150 frames (more than 20000): written at its key frames only" in w
               for w in warnings) == 1


@pytest.mark.parametrize("end", [4e12, 900_000.0])
@pytest.mark.parametrize("file", ["x.u3d", "x_d.3d", "x.mesh"])
def test_a_range_that_lies_is_cut_to_the_keys_before_any_frame_is_allocated(tmp_path, file, end):
    from addon.codec import load
    sc = _rig_scene() if file != "x_d.3d" else _box_scene()
    keys = (min(c.frames[0] for c in sc.animations[0].channels), max(c.frames[-1] for c in sc.animations[0].channels))
    sc.animations[0].frame_end = end
    warnings = save(sc, tmp_path / file, **({"embed_animations": True} if file.endswith(".mesh") else {}))
    assert sum(f"but its keys reach frames {keys[0]:g} to {keys[1]:g} only" in w for w in warnings) == 1
    assert (end > 1e6) == any("cut to Blender's frames" in w for w in warnings)
    assert sc.animations[0].frame_end == end                   # the scene it was given is left as it was
    back = load(tmp_path / file)
    assert max(a.frame_end for a in back.animations) <= keys[1] + 1


def test_bake_frames_is_every_frame_up_to_the_limit_then_the_keys():
    from addon.codec.animation import MAX_BAKED_SPAN, bake_frames
    np.testing.assert_array_equal(bake_frames([2.0, 5.5]), [2, 3, 4, 5, 6])
    lying = bake_frames([0.0, 7.0, 4e9])                  # a u32 key frame a damaged file made up
    assert len(lying) == MAX_BAKED_SPAN + 2 and lying[-1] == 4e9 and 7.0 in lying


def test_a_3ds_key_frame_that_lies_is_written_at_its_keys_with_one_warning(tmp_path):
    sc = _box_scene()
    sc.animations[0].channels[0] = Channel(0, "location", np.array([0.0, 5, 900_000, 4e9]),
                                           np.array([[0.0, 0, 0], [5, 0, 0], [7, 0, 0], [9, 0, 0]]),
                                           interpolation="BEZIER")
    warnings = save(sc, tmp_path / "box.3ds")
    assert (tmp_path / "box.3ds").stat().st_size < 2_000_000          # every frame to 900000: ~14 MB
    assert sum("'Box' location has keys from frame 0 to 900000; after frame 20000" in w for w in warnings) == 1
    # Blender has no frame 4e9: that key is dropped, and said so
    assert sum("location: 1 key(s) at a NaN frame or beyond frame 1048574 dropped" in w for w in warnings) == 1
    ch = next(c for c in load(tmp_path / "box.3ds").animations[0].channels if c.path == "location")
    np.testing.assert_allclose(evaluate(ch, [0, 5, 900_000, 4e9])[:, 0], [0, 5, 7, 7], atol=1e-3)


@pytest.mark.parametrize("file", ["x_d.3d", "x.3ds", "x.u3d", "x.mesh"])
def test_an_object_scaled_to_zero_exports_without_a_singular_inverse(tmp_path, file):
    sc = _rig_scene()
    for n in sc.nodes:
        n.matrix = np.diag([0.0, 0.0, 0.0, 1.0])
    warnings = save(sc, tmp_path / file)
    for m in load(tmp_path / file).meshes:
        assert np.isfinite(m.positions).all()
    if file == "x_d.3d":     # the merge places every object relative to the first: one line says why
        assert sum("'Body' has a zero or non-finite scale" in w for w in warnings) == 1


def test_an_unreal_take_longer_than_its_keys_is_cut_to_them_before_it_is_baked(tmp_path, monkeypatch):
    from addon.codec.formats.unreal import merge
    counts = []
    real = merge.positions

    def baked(scene, node, mesh, mode, anim, numbers, warnings):
        counts.append(len(numbers))
        return real(scene, node, mesh, mode, anim, numbers, warnings)
    monkeypatch.setattr(merge, "positions", baked)
    sc = _box_scene()
    sc.animations[0].frame_end = 70_000                 # a 3DS segment can claim this in a few bytes
    warnings = save(sc, tmp_path / "x_d.3d")
    assert any("runs from frame 0 to 70000, but its keys reach frames 0 to 10 only" in w for w in warnings)
    assert counts and max(counts) == 11


@pytest.mark.parametrize("file", ["x_d.3d", "x.anim"])
def test_a_take_whose_keys_lie_far_apart_is_sampled_up_to_the_limit_where_every_frame_is_stored(tmp_path, file):
    from addon.codec.animation import MAX_BAKED_SPAN
    sc = _box_scene() if file == "x_d.3d" else _rig_scene()
    sc.animations[0].channels[0].frames = np.array([0.0, 900_000])      # two keys a file may have made up
    sc.animations[0].frame_end = 900_000
    warnings = save(sc, tmp_path / file)
    assert any(f"plays 900001 frames; its first {MAX_BAKED_SPAN} are written" in w for w in warnings)
    back = load(tmp_path / file)
    if file == "x_d.3d":
        assert len(back.meshes[0].shape_keys) <= MAX_BAKED_SPAN + 1
    else:
        assert back.animations[0].frame_end - back.animations[0].frame_start + 1 == MAX_BAKED_SPAN
