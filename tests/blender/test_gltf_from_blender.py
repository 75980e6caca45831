"""A .glb written by Blender's own glTF exporter, read by the codec (no Blender in the reading):
a static cube, a rig of two bones skinning a box with two actions ("Walk", "Run"), and a cube
with a keyed shape key. The reader must pose them as Blender did, and the scene must convert to
each of our formats with its actions."""
from pathlib import Path

import numpy as np
import pytest

import bpy
from addon import codec
from addon.codec import animation
from tests.blender.helpers import cube_with_rising_key, evaluated_positions
from tests.blender.test_actions import _play_alone, rig_scene


def _blender_glb(context, tmp_path, only: tuple[str, ...] = (), kind: str = "GLB"):
    """The .glb (or, kind GLTF_SEPARATE, the .gltf with its .bin and picture) of the whole scene, or of
    the objects named in `only`; the sliding cube wears a picture."""
    rig, body = rig_scene(context, 2)
    bpy.ops.mesh.primitive_cube_add(size=1.0, location=(4.0, 0.0, 0.5), rotation=(0.0, 0.0, 0.5))
    slide = context.active_object
    slide.name = "Slide"
    slide.keyframe_insert("location", index=1, frame=1)
    slide.location.y = 3.0
    slide.keyframe_insert("location", index=1, frame=10)
    slide.animation_data.action.name = "SlideY"
    _textured(slide, tmp_path)
    keyed = cube_with_rising_key(context, 10)
    keyed.name = "Keyed"
    keyed.location = (-4.0, 0.0, 0.0)
    keyed.data.shape_keys.animation_data.action.name = "Rise"
    context.scene.frame_set(1)
    path = tmp_path / "blender" / ("blender.glb" if kind == "GLB" else "blender.gltf")
    path.parent.mkdir()
    for ob in context.scene.objects:
        ob.select_set(ob.name in only)
    assert bpy.ops.export_scene.gltf(filepath=str(path), export_format=kind, use_selection=bool(only)) == \
        {"FINISHED"}
    return path, rig, body, keyed


def _textured(ob, tmp_path):
    """A material whose base colour is a 4x4 PNG picture, on `ob`."""
    img = bpy.data.images.new("Checker", 4, 4)
    img.pixels.foreach_set(np.tile([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0], 8).astype(np.float32))
    img.filepath_raw = str(tmp_path / "checker.png")
    img.file_format = "PNG"
    img.save()
    mat = bpy.data.materials.new("Checkered")
    if bpy.app.version < (5, 0, 0):      # 5.0 materials always use nodes (use_nodes is deprecated)
        mat.use_nodes = True
    tex = mat.node_tree.nodes.new("ShaderNodeTexImage")
    tex.image = img
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    mat.node_tree.links.new(tex.outputs["Color"], bsdf.inputs["Base Color"])
    ob.data.materials.append(mat)


def _same_points(a: np.ndarray, b: np.ndarray, tol: float) -> float:
    """The largest distance from a point of either set to the nearest of the other (small sets)."""
    d = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    return max(d.min(1).max(), d.min(0).max())


def _node(scene, name):
    return next(i for i, n in enumerate(scene.nodes) if n.name == name)


def _ours(scene, anim, node, frame) -> np.ndarray:
    p = animation.mesh_frames(scene, anim, node, [frame])[0].astype(np.float64)
    w = scene.world_matrix(node)
    return p @ w[:3, :3].T + w[:3, 3]


@pytest.mark.parametrize("kind", ["GLB", "GLTF_SEPARATE"])
def test_blender_glb_reads_as_blender_poses_it(clean, tmp_path, kind):
    path, rig, body, keyed = _blender_glb(clean, tmp_path, kind=kind)
    s = codec.load(path)
    # the picture: a file beside a .gltf; embedded in a .glb, its pixels
    (mat,) = [m for m in s.materials if m.name == "Checkered"]
    (slot,) = mat.textures
    image = s.images[slot.image]
    assert slot.kind == "base_color" and image.name.lower().startswith("checker")
    if kind == "GLB":               # decoded from the .glb: the pixels Blender has
        want = np.array(bpy.data.images["Checker"].pixels[:], np.float32).reshape(4, 4, 4)
        assert image.filepath == "" and image.pixels is not None
        np.testing.assert_allclose(image.pixels, want, atol=1 / 255)
    else:
        assert Path(image.filepath).parent == path.parent and Path(image.filepath).is_file()
    names = {n.name for n in s.nodes}
    assert {"Slide", "Keyed", "Body", "Rig"} <= names
    assert [b.name for b in s.armatures[0].bones] == ["root", "tip"]
    anims = {a.name: a for a in s.animations}
    assert {"Walk", "Run"} <= set(anims)
    # an object action: the cube slides along y from frame 1 to 10
    slide, ob = _node(s, "Slide"), bpy.data.objects["Slide"]
    anim = anims["SlideY"]
    for f in (1, 4, 10):
        clean.scene.frame_set(f)
        got = _ours(s, anim, slide, anim.frame_start + f - 1)
        assert _same_points(got, evaluated_positions(ob, world=True), 1e-5) < 1e-5, ("SlideY", f)
    # the rig: each action alone, at its first, middle and last key, as Blender deforms the body
    for name in ("Walk", "Run"):
        action = bpy.data.actions[name]
        for b in rig.pose.bones:          # what the action does not key rests (as glTF plays it)
            b.matrix_basis = np.eye(4).T.tolist()
        _play_alone(rig, action)
        first, last = (int(round(x)) for x in action.frame_range)
        anim = anims[name]
        assert anim.frame_end - anim.frame_start == pytest.approx(last - first)
        for f in (first, (first + last) // 2, last):
            clean.scene.frame_set(f)
            want = evaluated_positions(body, world=True)
            got = _ours(s, anim, _node(s, "Body"), anim.frame_start + f - first)
            assert _same_points(got, want, 1e-4) < 1e-4, (name, f)
    # the shape key: its own animation drives the morph weight
    rise = next(a for a in s.animations if any("key_blocks" in c.path for c in a.channels))
    keyed_node = _node(s, "Keyed")
    assert [k.name for k in s.meshes[s.nodes[keyed_node].data].shape_keys] == ["Basis", "Up"]
    for f in (1, 5, 10):
        clean.scene.frame_set(f)
        want = evaluated_positions(keyed, world=True)
        got = _ours(s, rise, keyed_node, rise.frame_start + f - 1)
        assert _same_points(got, want, 1e-4) < 1e-4, ("Rise", f)


@pytest.mark.parametrize("ext", ["_d.3d", ".u3d", ".mesh", ".3ds"])
def test_blender_glb_converts_to_each_format_with_its_actions(clean, tmp_path, ext):
    # a skinned .u3d is one mesh: the rig alone; a .3ds holds object motion on one timeline: the cube's
    path, *_ = _blender_glb(clean, tmp_path, {".u3d": ("Rig", "Body"), ".3ds": ("Slide",)}.get(ext, ()))
    s = codec.load(path)
    out = tmp_path / "out" / f"model{ext}"
    out.parent.mkdir()
    codec.save(s, out)
    back = codec.load(out, with_companions=True)
    got = {a.name for a in back.animations}
    assert sum(len(m.faces) for m in back.meshes) >= 12
    if ext == ".3ds":
        slide = _node(back, "Slide")
        moved = [animation.world_matrices(back, a, slide, [a.frame_end])[0][:3, 3] for a in back.animations]
        assert any(abs(m[1] - 3.0) < 1e-4 for m in moved), moved
    else:
        assert {"Walk", "Run"} <= got, got
