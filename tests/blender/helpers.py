"""Small readers the Blender tests share (independent of the bridge they check)."""
import numpy as np

import bpy


def evaluated_positions(ob, world: bool = False) -> np.ndarray:
    """(V, 3) vertex positions as the depsgraph shows them now (object space, or world)."""
    ev = ob.evaluated_get(bpy.context.evaluated_depsgraph_get())
    me = ev.to_mesh()
    try:
        co = np.empty(len(me.vertices) * 3, np.float32)
        me.vertices.foreach_get("co", co)
    finally:
        ev.to_mesh_clear()
    co = co.reshape(-1, 3)
    if not world:
        return co
    m = np.array(ob.matrix_world)
    return co @ m[:3, :3].T + m[:3, 3]


def lens_animated_camera(scene, name: str = "Cam"):
    """A camera whose lens goes from 20 mm at frame 0 to 80 mm at frame 10."""
    cam = bpy.data.objects.new(name, bpy.data.cameras.new(name))
    scene.collection.objects.link(cam)
    cam.data.lens = 20
    cam.data.keyframe_insert("lens", frame=0)
    cam.data.lens = 80
    cam.data.keyframe_insert("lens", frame=10)
    return cam


def cube_with_rising_key(context, end_frame: int):
    """A 2 m cube whose shape key "Up" (+1 in z) is keyed 0 at frame 1 and 1 at `end_frame`."""
    bpy.ops.mesh.primitive_cube_add(size=2.0)
    ob = context.active_object
    ob.shape_key_add(name="Basis")
    up = ob.shape_key_add(name="Up")
    co = np.empty(len(ob.data.vertices) * 3, np.float32)
    ob.data.vertices.foreach_get("co", co)
    up.data.foreach_set("co", (co.reshape(-1, 3) + [0, 0, 1]).ravel())
    up.value = 0.0
    up.keyframe_insert("value", frame=1)
    up.value = 1.0
    up.keyframe_insert("value", frame=end_frame)
    return ob


def tiny_render(tmp_path, engine: str, size: int, samples: int, name: str = "render") -> np.ndarray:
    """Render the scene's camera view at size x size with few samples (CPU); (size, size, 3) RGB,
    bottom row first."""
    sc = bpy.context.scene
    sc.render.engine = engine
    sc.render.resolution_x = sc.render.resolution_y = size
    sc.render.resolution_percentage = 100
    if engine == "CYCLES":
        sc.cycles.samples, sc.cycles.use_denoising, sc.cycles.device = samples, False, "CPU"
    else:
        sc.eevee.taa_render_samples = samples
    sc.render.image_settings.file_format = "PNG"
    out = tmp_path / f"{name}.png"
    sc.render.filepath = str(out)
    bpy.ops.render.render(write_still=True)
    img = bpy.data.images.load(str(out))
    px = np.empty(len(img.pixels), np.float32)
    img.pixels.foreach_get(px)
    return px.reshape(size, size, 4)[..., :3]


def render_plane_from_above(tmp_path, name: str, engine: str = "CYCLES") -> np.ndarray:
    """A 30 x 30 render, straight down from above, of the 2 x 2 plane round the origin: an orthographic
    camera that sees exactly the plane, a slanted sun (no highlight straight back), Standard view."""
    sc = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    cam.data.type, cam.data.ortho_scale = "ORTHO", 2.0
    cam.location = (0.0, 0.0, 5.0)
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sun.data.energy = 3.0
    sun.rotation_euler = (0.7, 0.0, 0.0)
    sc.collection.objects.link(cam)
    sc.collection.objects.link(sun)
    sc.camera = cam
    sc.view_settings.view_transform = "Standard"        # colours as they are (AgX would tint red orange)
    return tiny_render(tmp_path, engine, 30, 4, name)


def render_touching_point(tmp_path, name: str, engine: str = "CYCLES") -> np.ndarray:
    """A tiny render of the scene seen from above the point (1, 1, 1) where the test boxes touch,
    lit by a sun from the camera."""
    sc = bpy.context.scene
    cam = bpy.data.objects.new("Cam", bpy.data.cameras.new("Cam"))
    sc.collection.objects.link(cam)
    cam.location = (4.0, -2.0, 3.0)
    cam.rotation_euler = (1.05, 0.0, 1.1)
    sun = bpy.data.objects.new("Sun", bpy.data.lights.new("Sun", "SUN"))
    sc.collection.objects.link(sun)
    sun.rotation_euler = cam.rotation_euler
    sc.camera = cam
    return tiny_render(tmp_path, engine, 32, 4, name)
