"""Several actions per object, in every format: each exported on its own, each imported to play alone.

The scene: a rig of two bones skinning a box, or a box moved by object actions
(Unreal, 3DS). "Walk" is the active action, "Run" is stashed on a muted NLA
track, "Jump" (the third) sits on an NLA strip. Each action moves something
different, so that a file that wrote one action's motion under another's name
fails the pose comparison.
"""
import numpy as np
import pytest

import bpy
from tests.blender.helpers import evaluated_positions

LAYERED = bpy.app.version >= (4, 4, 0)
RANGES = {"Walk": (1, 10), "Run": (1, 6), "Jump": (3, 7)}


def _play_alone(idb, action):
    """The action as the ID's only animation (written here, apart from the bridge under test);
    shape keys it does not key rest at 0."""
    for kb in getattr(idb, "key_blocks", []):
        kb.value = 0.0
    anim = idb.animation_data or idb.animation_data_create()
    anim.action = action
    if LAYERED and anim.action_slot is None:
        anim.action_slot = action.slots[0]
    anim.use_nla = False


def _key(owner, target, path, index, frames, values):
    """LINEAR keys for target.path[index] (target: the ID `owner`, or one of its pose bones)."""
    for f, v in zip(frames, values):
        getattr(target, path)[index] = v
        target.keyframe_insert(path, index=index, frame=f)
    for fc in _curves(owner.animation_data.action):
        for kp in fc.keyframe_points:
            kp.interpolation = "LINEAR"


def _curves(action):
    if not LAYERED:
        return list(action.fcurves)
    return [fc for layer in action.layers for strip in layer.strips for bag in strip.channelbags
            for fc in bag.fcurves]


def _new_action(idb, name, keyer):
    """A new action on `idb`, keyed by keyer(), left as the active one."""
    anim = idb.animation_data or idb.animation_data_create()
    anim.action = None
    keyer()
    anim.action.name = name
    return anim.action


def _place(idb, walk, run, jump, count):
    """Walk active; Run stashed (a muted NLA track); Jump (with three) on an NLA strip."""
    anim = idb.animation_data
    stash = anim.nla_tracks.new()
    stash.name = "[Action Stash]"
    stash.strips.new("Run", 1, run)
    stash.mute = True
    if count == 3:
        track = anim.nla_tracks.new()
        track.strips.new("Jump", 3, jump)
    else:
        jump.use_fake_user = False
        bpy.data.actions.remove(jump)
    anim.action = walk
    if LAYERED:
        anim.action_slot = walk.slots[0]


def rig_scene(context, count):
    """Armature "Rig" (root, tip) skinning a box "Body"."""
    arm = bpy.data.armatures.new("Rig")
    rig = bpy.data.objects.new("Rig", arm)
    context.scene.collection.objects.link(rig)
    context.view_layer.objects.active = rig
    bpy.ops.object.mode_set(mode="EDIT")
    root = arm.edit_bones.new("root")
    root.head, root.tail = (0, 0, 0), (0, 0, 1)
    tip = arm.edit_bones.new("tip")
    tip.head, tip.tail, tip.parent = (0, 0, 1), (0, 0, 2), root
    bpy.ops.object.mode_set(mode="OBJECT")
    me = bpy.data.meshes.new("Body")
    v = np.array([[x, y, z] for z in (0.0, 1.0, 2.0) for y in (-0.2, 0.2) for x in (-0.2, 0.2)], np.float32)
    quads = [(0, 1, 5, 4), (4, 5, 9, 8), (2, 6, 7, 3), (6, 10, 11, 7), (0, 4, 6, 2), (4, 8, 10, 6),
             (1, 3, 7, 5), (5, 7, 11, 9), (0, 2, 3, 1), (8, 9, 11, 10)]
    me.from_pydata(v.tolist(), [], quads)
    body = bpy.data.objects.new("Body", me)
    context.scene.collection.objects.link(body)
    body.parent = rig
    g_root, g_tip = body.vertex_groups.new(name="root"), body.vertex_groups.new(name="tip")
    g_root.add(list(range(0, 8)), 1.0, "REPLACE")
    g_tip.add(list(range(4, 12)), 1.0, "REPLACE")
    body.modifiers.new("Armature", "ARMATURE").object = rig
    pb = rig.pose.bones
    for b in pb:
        b.rotation_mode = "QUATERNION"

    def walk_keys():
        _key(rig, pb["root"], "rotation_quaternion", 0, (1, 10), (1.0, np.cos(0.4)))
        _key(rig, pb["root"], "rotation_quaternion", 1, (1, 10), (0.0, np.sin(0.4)))
    walk = _new_action(rig, "Walk", walk_keys)
    run = _new_action(rig, "Run", lambda: _key(rig, pb["tip"], "location", 2, (1, 6), (0.0, 0.5)))
    jump = _new_action(rig, "Jump", lambda: _key(rig, pb["root"], "location", 1, (3, 7), (0.0, 1.0)))
    for a in (walk, run, jump):
        a.use_fake_user = True
    for b in pb:                 # keying left values behind: what no action keys rests
        b.matrix_basis = np.eye(4).T.tolist()
    _place(rig, walk, run, jump, count)
    return rig, body


def box_scene(context, count):
    """A box "Box" moved by object actions."""
    bpy.ops.mesh.primitive_cube_add(size=1.0)
    box = context.active_object
    box.name = "Box"
    walk = _new_action(box, "Walk", lambda: _key(box, box, "location", 0, (1, 10), (0.0, 9.0)))
    run = _new_action(box, "Run", lambda: _key(box, box, "location", 2, (1, 6), (0.0, 5.0)))
    jump = _new_action(box, "Jump", lambda: _key(box, box, "scale", 1, (3, 7), (1.0, 3.0)))
    for a in (walk, run, jump):
        a.use_fake_user = True
    box.location, box.scale = (0, 0, 0), (1, 1, 1)
    _place(box, walk, run, jump, count)
    return box


def _state(context):
    """What the user sees: frame, selection, active object, every action slot, NLA track and pose."""
    out = {"frame": context.scene.frame_current, "active": context.view_layer.objects.active,
           "selected": sorted(o.name for o in context.view_layer.objects if o.select_get())}
    for ob in context.scene.objects:
        for idb in (ob, getattr(ob.data, "shape_keys", None)):
            anim = getattr(idb, "animation_data", None)
            if anim is None:
                continue
            out[idb.name] = (anim.action, anim.use_nla, getattr(anim, "action_slot", None),
                             [(t.name, t.mute, [(s.name, s.action, s.frame_start) for s in t.strips])
                              for t in anim.nla_tracks])
        out[ob.name + " matrix"] = np.array(ob.matrix_basis).round(6).tolist()
        if ob.type == "ARMATURE":
            out[ob.name + " pose"] = [np.array(b.matrix_basis).round(6).tolist() for b in ob.pose.bones]
    return out


def _bone_worlds(rig) -> np.ndarray:
    return np.stack([np.array(rig.matrix_world) @ np.array(b.matrix) for b in rig.pose.bones])


def _source_poses(context, rig, names):
    """Bone world matrices of each source action over its range, played alone."""
    out = {}
    anim = rig.animation_data
    saved = (anim.action, anim.use_nla, getattr(anim, "action_slot", None))
    for name in names:
        for b in rig.pose.bones:         # what this action does not key rests
            b.matrix_basis = np.eye(4).T.tolist()
        _play_alone(rig, bpy.data.actions[name])
        lo, hi = RANGES[name]
        frames = []
        for f in range(lo, hi + 1):
            context.scene.frame_set(f)
            frames.append(_bone_worlds(rig))
        out[name] = np.stack(frames)
    anim.action, anim.use_nla = saved[0], saved[1]
    if LAYERED:
        anim.action_slot = saved[2]
    context.scene.frame_set(1)
    return out


def _imported_action(name):
    """The action import made for `name` (import may add "|Object" or ".001")."""
    found = [a for a in bpy.data.actions if a.name.split("|")[0].split(".")[0] == name]
    assert len(found) == 1, [a.name for a in bpy.data.actions]
    return found[0]


def _frames_of(action):
    lo, hi = action.frame_range
    return int(round(lo)), int(round(hi))


EXPORTS = {
    "unigine": ("x.mesh", lambda p: bpy.ops.export_scene.unigine_mesh(filepath=p, embed_animations=True),
                lambda p: bpy.ops.import_scene.unigine_mesh(filepath=p)),
    "u3d": ("x.u3d", lambda p: bpy.ops.export_scene.ultimate3d(filepath=p),
            lambda p: bpy.ops.import_scene.ultimate3d(filepath=p)),
}


@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("fmt", sorted(EXPORTS))
def test_rig_actions_each_round_trip_alone(clean, tmp_path, fmt, count):
    rig, body = rig_scene(clean, count)
    names = ["Walk", "Run", "Jump"][:count]
    want = _source_poses(clean, rig, names)
    clean.scene.frame_set(4)
    before = _state(clean)
    file, export, import_ = EXPORTS[fmt]
    path = str(tmp_path / file)
    assert export(path) == {"FINISHED"}
    assert _state(clean) == before                          # the user's scene is as it was
    bpy.ops.wm.read_homefile(use_empty=True)
    assert import_(path) == {"FINISHED"}
    back = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    got_names = sorted({a.name.split("|")[0].split(".")[0] for a in bpy.data.actions})
    assert got_names == sorted(names)
    strips = sorted((s.frame_start, s.frame_end) for t in back.animation_data.nla_tracks for s in t.strips)
    assert all(a[1] < b[0] for a, b in zip(strips, strips[1:])), strips      # never overlapping
    assert all(s.extrapolation == "NOTHING" for t in back.animation_data.nla_tracks for s in t.strips)
    for name in names:
        action = _imported_action(name)
        lo, hi = _frames_of(action)
        assert hi - lo == RANGES[name][1] - RANGES[name][0], (name, lo, hi)
        for b in back.pose.bones:
            b.matrix_basis = np.eye(4).T.tolist()
        _play_alone(back, action)
        for k in range(hi - lo + 1):
            bpy.context.scene.frame_set(lo + k)
            got = _bone_worlds(back)
            np.testing.assert_allclose(got[:, :3, 3], want[name][k][:, :3, 3], atol=2e-3, err_msg=f"{name} {k}")
            np.testing.assert_allclose(got[:, :3, 1], want[name][k][:, :3, 1], atol=2e-3, err_msg=f"{name} {k}")


def _unreal_export(p):
    return bpy.ops.export_scene.unreal_vertex_mesh(filepath=p)


@pytest.mark.parametrize("count", [2, 3])
def test_unreal_sequences_are_the_actions_one_after_another(clean, tmp_path, count):
    box = box_scene(clean, count)
    names = ["Walk", "Run", "Jump"][:count]
    want = {}
    for name in names:
        box.location, box.scale = (0, 0, 0), (1, 1, 1)      # what the user's box shows (at frame 1 of Walk)
        _play_alone(box, bpy.data.actions[name])
        lo, hi = RANGES[name]
        want[name] = []
        for f in range(lo, hi + 1):
            clean.scene.frame_set(f)
            want[name].append(evaluated_positions(box, world=True))
    box.location, box.scale = (0, 0, 0), (1, 1, 1)
    box.animation_data.action = bpy.data.actions["Walk"]
    box.animation_data.use_nla = True
    if LAYERED:
        box.animation_data.action_slot = bpy.data.actions["Walk"].slots[0]
    clean.scene.frame_set(1)
    before = _state(clean)
    assert _unreal_export(str(tmp_path / "box_d.3d")) == {"FINISHED"}
    assert _state(clean) == before
    text = (tmp_path / "box.uc").read_text()
    start = 0
    for name in names:          # laid one after another, in the order found
        n = RANGES[name][1] - RANGES[name][0] + 1
        assert f"SEQ={name} STARTFRAME={start} NUMFRAMES={n}" in text
        start += n
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(tmp_path / "box_d.3d")) == {"FINISHED"}
    ob = next(o for o in bpy.context.scene.objects if o.type == "MESH")
    key = ob.data.shape_keys
    for name in names:
        action = next(a for a in bpy.data.actions if a.name.split("|")[0] == name)
        lo, hi = _frames_of(action)
        assert hi - lo + 1 == len(want[name])
        _play_alone(key, action)
        for k in range(hi - lo + 1):
            bpy.context.scene.frame_set(lo + k)
            got = evaluated_positions(ob, world=True)
            # the box rests at the origin, so file and Blender world positions coincide
            np.testing.assert_allclose(got, want[name][k], atol=0.02, err_msg=f"{name} {k}")


@pytest.mark.parametrize("count", [2, 3])
def test_3ds_writes_the_active_action_and_names_the_others(clean, tmp_path, capsys, count):
    box_scene(clean, count)
    clean.scene.frame_set(1)          # what Walk does not key keeps the value it shows now (Jump: scale 1)
    before = _state(clean)
    assert bpy.ops.export_scene.studio3ds(filepath=str(tmp_path / "b.3ds")) == {"FINISHED"}
    assert _state(clean) == before
    out = capsys.readouterr().out
    others = ["Run", "Jump"][:count - 1]
    assert "one timeline" in out and all(f"'{n}'" in out for n in others)
    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.studio3ds(filepath=str(tmp_path / "b.3ds")) == {"FINISHED"}
    back = bpy.data.objects["Box"]
    for f in range(1, 11):                               # Walk's motion at every frame, not Run's
        bpy.context.scene.frame_set(f)
        np.testing.assert_allclose(back.matrix_world.translation, (f - 1, 0, 0), atol=1e-4)
        np.testing.assert_allclose(back.matrix_world.to_scale(), (1, 1, 1), atol=1e-4)


def _track_frames(path):
    from addon.codec.formats.studio3ds import ids
    from addon.codec.formats.studio3ds.read import parse
    out = {}
    for node in parse(path.read_bytes()).keyframer().children:
        hdr = node.value(ids.NODE_HDR)
        for c in node.children:
            if hdr and hasattr(c.data, "frames") and c.cid != ids.ROLL_TRACK:
                out[(hdr[0], node.cid, c.cid)] = [int(f) for f in c.data.frames]
    return out


def test_3ds_round_trip_keeps_its_key_frames(clean, tmp_path):
    from tests.codec.fixtures_3ds import ASSETS
    src = ASSETS / "TargetCameraAnim.3ds"
    assert bpy.ops.import_scene.studio3ds(filepath=str(src)) == {"FINISHED"}
    assert bpy.ops.export_scene.studio3ds(filepath=str(tmp_path / "out.3ds")) == {"FINISHED"}
    want, got = _track_frames(src), _track_frames(tmp_path / "out.3ds")
    assert [0, 30, 60, 90] in want.values()
    assert got == want


def test_actions_that_fit_an_armature_without_animation_are_exported_and_leave_it_bare(clean, tmp_path):
    rig, _ = rig_scene(clean, 3)
    rig.animation_data_clear()                      # the actions only exist, with fake users
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(tmp_path / "x.mesh"), embed_animations=True,
                                             animation_source="ACTIONS") == {"FINISHED"}
    assert rig.animation_data is None
    from addon.codec import load
    assert sorted(a.name for a in load(tmp_path / "x.mesh").animations) == ["Jump", "Run", "Walk"]


def test_unigine_writes_one_anim_file_per_action(clean, tmp_path):
    rig_scene(clean, 3)
    assert bpy.ops.export_scene.unigine_mesh(filepath=str(tmp_path / "hero.mesh")) == {"FINISHED"}
    from addon.codec import load
    files = sorted(p.name for p in tmp_path.glob("*.anim"))
    assert files == ["hero_Jump.anim", "hero_Run.anim", "hero_Walk.anim"]
    for name, (lo, hi) in RANGES.items():
        anims = load(tmp_path / f"hero_{name}.anim").animations
        assert [(a.name, a.frame_end - a.frame_start) for a in anims] == [(name, hi - lo)]


def test_overlapping_file_ranges_import_as_strips_at_the_files_frames(clean, tmp_path):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.write import encode_bytes
    from addon.codec.formats.ultimate3d.read import parse
    from addon.codec.formats.ultimate3d.model import ActionRanges
    from tests.codec.fixtures_3ds import ASSETS
    model = parse((ASSETS.parent / "ultimate3d" / "skinned_v2.u3d").read_bytes(), Warnings())
    ranges = next(c for c in model.chunks if isinstance(c, ActionRanges))
    ranges.actions = [("all", 0, 5), ("walk", 0, 2), ("run", 3, 5)]     # "all" holds the other two
    (tmp_path / "o.u3d").write_bytes(encode_bytes(model))
    assert bpy.ops.import_scene.ultimate3d(filepath=str(tmp_path / "o.u3d")) == {"FINISHED"}
    rig = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    strips = sorted((s.name, s.frame_start, s.frame_end) for t in rig.animation_data.nla_tracks for s in t.strips)
    # ranges of the file's one timeline: each strip where the file puts it (they agree where they overlap)
    assert strips == [("all", 0, 5), ("run", 3, 5), ("walk", 0, 2)]
    assert all(s.extrapolation == "NOTHING" for t in rig.animation_data.nla_tracks for s in t.strips)
    assert bpy.context.scene.frame_end == 5
    played = []
    for f in range(6):                  # the strips as imported: frame f shows the file's frame f
        bpy.context.scene.frame_set(f)
        played.append(_bone_worlds(rig))

    def pose(action, frame):
        _play_alone(rig, action)
        bpy.context.scene.frame_set(frame)
        return _bone_worlds(rig)
    whole = _imported_action("all")
    for name, lo in (("walk", 0), ("run", 3)):                # the file's frames, whichever action shows them
        part = _imported_action(name)
        assert _frames_of(part)[0] == lo
        for f in range(lo, lo + 3):
            np.testing.assert_allclose(pose(part, f), pose(whole, f), atol=1e-5)
            np.testing.assert_allclose(played[f], pose(whole, f), atol=1e-5)


@pytest.mark.parametrize("source,want", [
    ("ACTIONS", [("Walk", 10), ("Run", 6), ("Jump", 5)]),
    ("NLA", [("Run", 6), ("Jump", 5)]),
    ("MARKERS", [("A", 5), ("B", 6)]),
    ("SCENE", [("Scene", 11)]),
])
def test_animation_source_picks_what_becomes_the_animations(clean, tmp_path, source, want):
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.read import parse
    rig_scene(clean, 3)
    clean.scene.frame_start, clean.scene.frame_end = 1, 11
    clean.scene.timeline_markers.new("A", frame=1)
    clean.scene.timeline_markers.new("B", frame=6)
    before = _state(clean)
    assert bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "x.u3d"), animation_source=source) == {"FINISHED"}
    assert _state(clean) == before
    actions = parse((tmp_path / "x.u3d").read_bytes(), Warnings()).actions
    assert [(name, last - first + 1) for name, first, last in actions] == want
