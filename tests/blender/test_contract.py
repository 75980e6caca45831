"""The typed Scene contract in Blender: custom properties hold a format's own round-trip fields and the
bridge's names for typed fields Blender has no home for, never a contract datum (placement, rest...)."""
from pathlib import Path

import bpy
from tests.codec.test_contract import BRIDGE_PROPS, PREFIXES
from tests.codec.test_ultimate3d_model import frames_v2, full_skinned_v2
from tests.codec.unreal_fixtures import tetra_pair, write_set

ASSETS = Path(__file__).resolve().parents[2] / "test_assets"
UC = ("class t extends Actor;\r\n#exec MESH IMPORT MESH=t ANIVFILE=t_a.3d DATAFILE=t_d.3d\r\n"
      "#exec MESH SEQUENCE MESH=t SEQ=All STARTFRAME=0 NUMFRAMES=4\r\n"
      "#exec MESH SEQUENCE MESH=t SEQ=Wave STARTFRAME=1 NUMFRAMES=3 GROUP=Hands\r\n")


def _props() -> dict[str, set[str]]:
    """Every custom property key on what an import makes, by the kind of thing it sits on."""
    out: dict[str, set[str]] = {}
    for kind, ids in (("object", bpy.data.objects), ("mesh", bpy.data.meshes), ("material", bpy.data.materials),
                      ("action", bpy.data.actions), ("armature", bpy.data.armatures), ("image", bpy.data.images),
                      ("camera", bpy.data.cameras), ("light", bpy.data.lights)):
        for idb in ids:
            out.setdefault(kind, set()).update(k for k in idb.keys() if not k.startswith("_"))
            if kind == "armature":
                for b in idb.bones:
                    out.setdefault("bone", set()).update(b.keys())
            if kind == "material" and idb.node_tree:
                for n in idb.node_tree.nodes:
                    out.setdefault("node", set()).update(n.keys())
    return out


def test_custom_properties_are_round_trip_fields_only(clean, tmp_path):
    (tmp_path / "ranges.u3d").write_bytes(full_skinned_v2())
    (tmp_path / "lods.u3d").write_bytes(frames_v2())
    d, a = tetra_pair(frames=4)
    ue = write_set(tmp_path / "ue", "t", d, a, UC)
    for path in (tmp_path / "ranges.u3d", tmp_path / "lods.u3d"):
        assert bpy.ops.import_scene.ultimate3d(filepath=str(path)) == {"FINISHED"}
    assert bpy.ops.import_scene.unreal_vertex_mesh(filepath=str(ue)) == {"FINISHED"}
    for name in ("cube_four_instances.3ds", "TargetCameraAnim.3ds"):
        assert bpy.ops.import_scene.studio3ds(filepath=str(ASSETS / "3ds" / name)) == {"FINISHED"}
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(ASSETS / "unigine" / "tube_skinned.mesh")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE" and "tube" in o.name.lower())
    assert bpy.ops.import_anim.unigine_anim(filepath=str(ASSETS / "unigine" / "tube_bend.anim"),
                                            armature_name=arm.name) == {"FINISHED"}
    props = _props()
    every = set().union(*props.values())
    stray = {k for k in every if not k.startswith(PREFIXES + ("lgf_",)) and k not in BRIDGE_PROPS}
    assert not stray, f"custom properties that are no format's own field: {stray}"
    # the round-trip fields still land where export collects them back
    assert {"u3d_lod", "u3d_lod_max_camera_distance", "3ds_node_id"} <= props["object"]
    assert {"u3d_action_range", "ue_group", "fps"} <= props["action"]
    assert {"ue_variant", "u3d_vertex_tweening"} <= props["mesh"]
    assert "unigine_index" in props["bone"]
    # the NLA placement made strips, and stored nothing of itself
    owners = [*bpy.data.objects, *bpy.data.shape_keys]
    strips = [s for o in owners if o.animation_data for t in o.animation_data.nla_tracks for s in t.strips]
    assert {"walk", "run", "Wave"} <= {s.action.name.split("|")[0] for s in strips}


def test_vertex_bake_fills_the_typed_baked_fields(clean):
    from importlib import import_module
    from tests.blender.helpers import evaluated_positions
    from tests.blender_setup import PACKAGE
    bridge = import_module(f"{PACKAGE}.bridge")
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    ob = clean.active_object
    md = ob.modifiers.new("push", "DISPLACE")
    md.direction = "Z"
    for frame, strength in ((2, 0.0), (4, 2.0)):
        md.strength = strength
        md.keyframe_insert("strength", frame=frame)
    clean.scene.frame_start, clean.scene.frame_end = 2, 4
    want = []
    for f in (2, 3, 4):
        clean.scene.frame_set(f)
        want.append(evaluated_positions(ob).copy())
    scene = bridge.collect_scene(clean, bridge.CollectOptions(bake_vertices=True))
    (mesh,) = scene.meshes
    assert mesh.baked_frames == [2, 3, 4] and mesh.baked_animation == [0, 0, 0]
    assert not {"baked_frames", "baked_animation"} & set(mesh.extras)
    assert len(mesh.shape_keys) == 3 and len(scene.animations) == 1
    for key, pos in zip(mesh.shape_keys, want):
        assert abs(key.positions - pos).max() < 1e-5


def test_anim_rest_pose_carries_the_keys_onto_another_rest(clean, tmp_path):
    """Scene.rest_pose on the .anim -> armature path: keys read against the .anim's own (turned, moved)
    bind come out against the rig's rest; what the file never stores is the rig's rest."""
    import numpy as np
    from tests import unigine_samples as samples
    from tests.codec.unigine_fixtures import anim_file, anim_record
    from addon.codec.formats.unigine import write
    (tmp_path / "rig.mesh").write_bytes(write.write_mesh(samples.skinned_mesh(400, 5, 12)))
    assert bpy.ops.import_scene.unigine_mesh(filepath=str(tmp_path / "rig.mesh")) == {"FINISHED"}
    arm = next(o for o in bpy.data.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = arm
    turned = ((1.0, 2.0, 3.0), (0.0, 0.0, 0.7071068, 0.7071068), (1.0, 1.0, 1.0))   # 90 degrees about Z
    data = anim_file(bones=[("bone01", -1)], poses=[turned],
                     anims=[("slide", [0], ((0, 0, 0), (4, 0, 0)), ((1, 1, 1), (0, 0, 0)), 0x01, 1,
                             anim_record(0x01, (65535, 0, 0)))])                      # x = 4 only
    (tmp_path / "slide.anim").write_bytes(data)
    assert bpy.ops.import_anim.unigine_anim(filepath=str(tmp_path / "slide.anim")) == {"FINISHED"}
    arm.animation_data.action = bpy.data.actions["slide"]
    clean.scene.frame_set(0)
    bone = arm.data.bones["bone01"]
    rest = np.linalg.inv(np.array(bone.parent.matrix_local)) @ np.array(bone.matrix_local)
    pb = arm.pose.bones["bone01"]
    local = np.linalg.inv(np.array(pb.parent.matrix)) @ np.array(pb.matrix)
    np.testing.assert_allclose(local[:3, 3], [4.0, rest[1, 3], rest[2, 3]], atol=1e-4)
    np.testing.assert_allclose(local[:3, :3], rest[:3, :3], atol=1e-4)
