"""Export says what the target cannot hold, and writes curves and text as meshes."""
import bpy

from addon.codec import load


def test_curves_and_text_become_meshes_and_instances_are_reported(clean, tmp_path, capsys):
    bpy.ops.object.text_add()
    clean.active_object.name = "Title"
    bpy.ops.curve.primitive_bezier_circle_add()
    ring = clean.active_object
    ring.name, ring.data.bevel_depth = "Ring", 0.1              # a tube: faces to write
    bpy.ops.mesh.primitive_cube_add()
    clean.active_object.name = "Crate"
    coll = bpy.data.collections.new("Props")
    prop = bpy.data.meshes.new("PropMesh")
    prop.from_pydata([(0, 0, 0), (1, 0, 0), (0, 1, 0)], [], [(0, 1, 2)])
    coll.objects.link(bpy.data.objects.new("Prop", prop))
    holder = bpy.data.objects.new("Holder", None)
    holder.instance_type, holder.instance_collection = "COLLECTION", coll
    clean.scene.collection.objects.link(holder)
    assert bpy.ops.export_scene.studio3ds(filepath=str(tmp_path / "x.3ds")) == {"FINISHED"}
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("EXPORT_SCENE_OT_studio3ds: warning:")]
    assert sum("written as meshes: Title, Ring" in line for line in lines) == 1
    assert sum("instancing) of Holder are not written" in line for line in lines) == 1
    back = load(tmp_path / "x.3ds")
    sizes = {back.nodes[i].name: len(back.meshes[n.data].faces) for i, n in enumerate(back.nodes) if n.kind == "MESH"}
    assert sizes["Title"] > 0 and sizes["Ring"] > 0 and sizes["Crate"] == 12


def test_lights_and_cameras_into_a_mesh_only_format_are_reported(clean, tmp_path, capsys):
    bpy.ops.mesh.primitive_cube_add()
    bpy.ops.object.light_add(type="SUN")
    bpy.ops.object.camera_add()
    assert bpy.ops.export_scene.ultimate3d(filepath=str(tmp_path / "x.u3d")) == {"FINISHED"}
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("EXPORT_SCENE_OT_ultimate3d: warning:")]
    assert sum("holds no cameras or lights: 'Sun', 'Camera' not written" in line for line in lines) == 1
