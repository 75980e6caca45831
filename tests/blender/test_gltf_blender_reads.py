"""An independent reader: Blender's own glTF importer reads what the codec writes from every sample of
every format (.glb and .gltf), and shows what our add-on's import of the source shows: the triangle
count, the box of the visible meshes at the first frame and half-way through each animation, the
animation names, and that what moves in one moves in the other."""
from pathlib import Path

import numpy as np
import pytest

import bpy
from addon.codec import load, save
from tests.gltf_write_samples import FILES, made

IMPORT = {".3d": bpy.ops.import_scene.unreal_vertex_mesh, ".u3d": bpy.ops.import_scene.ultimate3d,
          ".mesh": bpy.ops.import_scene.unigine_mesh, ".3ds": bpy.ops.import_scene.studio3ds}
MADE = ["mar_rifle_d.3d", "tube.mesh", "lamps.3ds", "wave_d.3d"]
CASES = [p.name for p in FILES] + MADE


def source_path(name: str, tmp_path: Path) -> Path:
    if name in MADE:
        return made(tmp_path / "made")[MADE.index(name)]
    return next(p for p in FILES if p.name == name)


def visible_meshes():
    return [ob for ob in bpy.context.scene.objects if ob.type == "MESH" and ob.visible_get()]


def shown() -> tuple[int, np.ndarray]:
    """(triangles, box (2, 3)) of the visible meshes as the depsgraph evaluates them now. Triangles on the
    same three points count once: Blender's glTF importer drops a face that repeats another's vertices
    (jeep1.3ds has two)."""
    deps = bpy.context.evaluated_depsgraph_get()
    tris, lo, hi = 0, np.full(3, np.inf), np.full(3, -np.inf)
    for ob in visible_meshes():
        ev = ob.evaluated_get(deps)
        me = ev.to_mesh()
        try:
            me.calc_loop_triangles()
            co = np.empty(len(me.vertices) * 3, np.float32)
            me.vertices.foreach_get("co", co)
            t = np.empty(len(me.loop_triangles) * 3, np.int32)
            me.loop_triangles.foreach_get("vertices", t)
            corners = np.round(co.reshape(-1, 3)[t] * 1e4).reshape(-1, 3, 3)
            corners.sort(axis=1)           # a face's points in one order (by x, y, z) whichever corner leads
            tris += len(np.unique(corners.reshape(len(corners), -1), axis=0)) if len(corners) else 0
        finally:
            ev.to_mesh_clear()
        if len(co):
            m = np.array(ev.matrix_world)
            p = co.reshape(-1, 3) @ m[:3, :3].T + m[:3, 3]
            lo, hi = np.minimum(lo, p.min(0)), np.maximum(hi, p.max(0))
    return tris, np.array([lo, hi])


def lamps() -> dict:
    """name -> (type, energy, spot size) of each lamp."""
    return {ob.name: (ob.data.type, ob.data.energy, getattr(ob.data, "spot_size", 0.0))
            for ob in bpy.context.scene.objects if ob.type == "LIGHT"}


def owners():
    """Every animatable ID: objects and their shape-key blocks."""
    out = []
    for ob in bpy.context.scene.objects:
        out.append(ob)
        if ob.type == "MESH" and ob.data.shape_keys:
            out.append(ob.data.shape_keys)
    return out


SLOTS = bpy.app.version >= (4, 4)      # layered actions: one action, a slot per ID


def actions_of(name: str) -> list:
    """The actions of animation `name`: one with a slot per ID (Blender 4.4+), or one per ID: ours
    "name|ID" (or "name"), Blender's glTF importer's "name_ID" before 4.4."""
    return [a for a in bpy.data.actions if a.name == name or a.name.startswith((name + "|", name + "_"))
            or a.name.rsplit(".", 1)[0] == name]


def _keys_shape_keys(act) -> bool:
    return any(fc.data_path.startswith("key_blocks") for fc in act.fcurves)


def play(name: str, fraction: float, span=None) -> None:
    """Only animation `name` plays (the NLA off), on every ID it has a slot (or an action) for, at `fraction`
    of its range (`span`, or its actions' frame range)."""
    acts = actions_of(name)
    assert acts, f"no action {name!r} in {[a.name for a in bpy.data.actions]}"
    for owner in owners():
        ad = owner.animation_data
        if ad is None:
            continue
        ad.use_nla = False
        ad.action = None
        key = isinstance(owner, bpy.types.Key)
        # the names an action or slot may give this ID: an object's own; a key's object and mesh
        who = tuple(ob.name for ob in bpy.context.scene.objects if getattr(ob.data, "shape_keys", None) == owner) \
            + (owner.user.name,) if key else (owner.name,)
        for act in acts:
            suffix = act.name[len(name) + 1:]
            if SLOTS:
                slots = [s for s in act.slots if s.target_id_type == ("KEY" if key else "OBJECT")]
                mine = [s for s in slots if s.name_display in (owner.name, *who) or s.identifier[2:] in (owner.name, *who)]
                mine = mine or (slots if suffix in who else [])
                if mine:
                    ad.action = act
                    ad.action_slot = mine[0]
                    break
            elif (suffix in who or (not suffix and act.id_root in ("", "KEY" if key else "OBJECT"))) \
                    and _keys_shape_keys(act) == key:
                ad.action = act
                break
    lo, hi = span or (min(a.frame_range[0] for a in acts), max(a.frame_range[1] for a in acts))
    f = lo + fraction * (hi - lo)
    bpy.context.scene.frame_set(int(np.floor(f)), subframe=float(f - np.floor(f)))


def rest_state():
    """What an action leaves behind where it has no channel (object and bone transforms as imported,
    shape-key values at 0): restored before each animation plays, so that one does not show another's
    last pose (or the NLA's, which the import evaluated)."""
    saved = []
    for ob in bpy.context.scene.objects:
        saved.append((ob, "matrix_basis", ob.matrix_basis.copy()))
        if ob.pose:
            saved += [(pb, "matrix_basis", pb.matrix_basis.copy()) for pb in ob.pose.bones]
        if ob.type == "MESH" and ob.data.shape_keys:
            saved += [(kb, "value", 0.0) for kb in ob.data.shape_keys.key_blocks]      # a key at rest: 0

    def restore():
        for owner in owners():
            if owner.animation_data:
                owner.animation_data.action = None
        for thing, attr, value in saved:
            setattr(thing, attr, value)
    return restore


def look(names: list[str], spans=None) -> dict:
    """(triangles, box) at the start and half-way through each animation."""
    out = {}
    restore = rest_state()
    for name in names:
        for fraction in (0.0, 0.5):
            restore()
            play(name, fraction, spans and spans[name])
            out[(name, fraction)] = shown()
    return out


@pytest.mark.parametrize("ext", [".glb", ".gltf"])
@pytest.mark.parametrize("name", CASES)
def test_blender_reads_our_gltf_as_our_import_shows_the_source(clean, tmp_path, name, ext):
    src = source_path(name, tmp_path)
    scene = load(src, with_companions=True)
    out = tmp_path / "out" / (src.stem + ext)
    save(scene, out)
    names = [a.name for a in scene.animations]

    assert IMPORT[src.suffix.lower()](filepath=str(src)) == {"FINISHED"}
    if name == "tube.mesh":        # the .anim beside it, onto the armature
        arm = next(ob for ob in bpy.context.scene.objects if ob.type == "ARMATURE")
        bpy.context.view_layer.objects.active = arm
        assert bpy.ops.import_anim.unigine_anim(filepath=str(src.with_suffix(".anim"))) == {"FINISHED"}
    ours_static, our_lamps = shown(), lamps()
    ours = look(names, {a.name: (a.frame_start, a.frame_end) for a in scene.animations})   # the file's range

    bpy.ops.wm.read_homefile(use_empty=True)
    assert bpy.ops.import_scene.gltf(filepath=str(out)) == {"FINISHED"}
    theirs_static = shown()
    for name, (kind, energy, cone) in lamps().items():      # Blender's importer reads our lamps back
        assert (kind, cone) == pytest.approx(our_lamps[name][::2], rel=1e-4) and energy == pytest.approx(
            our_lamps[name][1], rel=1e-4), name
    assert len(lamps()) == len(our_lamps)
    assert all(actions_of(n) for n in names) and all(any(a in actions_of(n) for n in names) for a in bpy.data.actions)
    theirs = look(names)

    size = max(float(np.ptp(ours_static[1], axis=0).max()), 1e-6)
    tol = 1e-3 * size
    assert theirs_static[0] == ours_static[0]
    if not names:
        np.testing.assert_allclose(theirs_static[1], ours_static[1], atol=tol)
    for key, (tris, box) in ours.items():
        assert theirs[key][0] == tris, key
        np.testing.assert_allclose(theirs[key][1], box, atol=tol, err_msg=str(key))
    for n in names:      # what moves in one moves in the other
        moved = not np.allclose(ours[(n, 0.0)][1], ours[(n, 0.5)][1], atol=tol)
        assert moved == (not np.allclose(theirs[(n, 0.0)][1], theirs[(n, 0.5)][1], atol=tol)), n
