"""3DS cameras and lights on export: the true field of view, suns and area lights, attenuation."""
import math

import numpy as np
import pytest

import bpy
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ids
from addon.codec.formats.studio3ds.read import read


def _add(data, name, location=(0.0, 0.0, 5.0)):
    ob = bpy.data.objects.new(name, data)
    bpy.context.scene.collection.objects.link(ob)
    ob.location = location
    return ob


def _editor_object(path, name):
    ed = read(path, None, Warnings()).editor()
    return next(o for o in ed.find_all(ids.OBJECT) if o.data == name)


@pytest.mark.parametrize("fit,sensor,res", [("HORIZONTAL", (24.0, 10.0), (1920, 1080)),
                                            ("VERTICAL", (36.0, 24.0), (1920, 1080)),
                                            ("AUTO", (24.0, 24.0), (1080, 1920))])
def test_export_writes_the_field_of_view_the_camera_renders(clean, tmp_path, fit, sensor, res):
    sc = bpy.context.scene
    sc.render.resolution_x, sc.render.resolution_y = res
    cam = bpy.data.cameras.new("Cam")
    cam.lens, cam.sensor_fit = 35.0, fit
    cam.sensor_width, cam.sensor_height = sensor
    _add(cam, "Cam")
    out = tmp_path / "cam.3ds"
    assert bpy.ops.export_scene.studio3ds(filepath=str(out)) == {"FINISHED"}
    lens = _editor_object(out, "Cam").find(ids.N_CAMERA).data[7]
    # Blender's own frame at this aspect: corners in camera space, the view along -Z
    frame = cam.view_frame(scene=sc)
    x = max(abs(v.x) for v in frame)
    want = 2 * math.atan(x / abs(frame[0].z))
    assert 2400.0 / lens == pytest.approx(math.degrees(want), rel=1e-4)     # 3DS: FOV = 2400 / lens


def test_sun_and_area_lights_are_reported_and_written_as_3ds_lights(clean, tmp_path, capsys):
    sun = _add(bpy.data.lights.new("Sun", "SUN"), "Sun")
    sun.rotation_euler = (0.5, 0.0, 0.0)
    _add(bpy.data.lights.new("Area", "AREA"), "Area", (3.0, 0.0, 2.0))
    out = tmp_path / "lights.3ds"
    assert bpy.ops.export_scene.studio3ds(filepath=str(out)) == {"FINISHED"}
    text = capsys.readouterr().out
    assert "sun light 'Sun' written as a spot light" in text and "area light 'Area' written as an omni" in text
    s = _editor_object(out, "Sun").find(ids.N_DIRECT_LIGHT)
    spot = s.find(ids.DL_SPOTLIGHT)
    assert spot is not None and spot.has(ids.DL_SPOT_OVERSHOOT)
    # aimed along the sun's -Z
    d = np.asarray(spot.data[:3]) - np.asarray(s.data)
    want = np.array(sun.matrix_world.to_3x3()) @ np.array([0.0, 0.0, -1.0])
    np.testing.assert_allclose(d / np.linalg.norm(d), want, atol=1e-5)
    a = _editor_object(out, "Area").find(ids.N_DIRECT_LIGHT)
    assert a.find(ids.DL_SPOTLIGHT) is None
    np.testing.assert_allclose(a.data, (3.0, 0.0, 2.0), atol=1e-6)


def test_attenuation_comes_from_the_custom_distance(clean, tmp_path):
    li = bpy.data.lights.new("Lamp", "POINT")
    li.use_custom_distance, li.cutoff_distance = True, 12.5
    _add(li, "Lamp")
    out = tmp_path / "lamp.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    c = _editor_object(out, "Lamp").find(ids.N_DIRECT_LIGHT)
    assert c.has(ids.DL_ATTENUATE) and c.value(ids.DL_OUTER_RANGE) == pytest.approx(12.5)
    # and back: the custom distance again
    bpy.ops.wm.read_homefile(use_empty=True)
    bpy.ops.import_scene.studio3ds(filepath=str(out))
    back = bpy.data.objects["Lamp"].data
    assert back.use_custom_distance and back.cutoff_distance == pytest.approx(12.5)
    back.use_custom_distance = False
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    assert not _editor_object(out, "Lamp").find(ids.N_DIRECT_LIGHT).has(ids.DL_ATTENUATE)


def test_hotspot_keys_animate_the_spot_blend_and_go_back(clean, tmp_path):
    from tests.codec.test_3ds_anim import spot_file
    src = tmp_path / "spot.3ds"
    src.write_bytes(spot_file())
    bpy.ops.import_scene.studio3ds(filepath=str(src))
    light = bpy.data.objects["Spot"].data
    sc = bpy.context.scene
    sc.frame_set(0)
    assert light.spot_blend == pytest.approx(0.5, abs=1e-4)              # hotspot 20 of a 40 degree cone
    sc.frame_set(30)
    assert light.spot_blend == pytest.approx(1 - 35 / 45, abs=1e-4)
    out = tmp_path / "back.3ds"
    bpy.ops.export_scene.studio3ds(filepath=str(out))

    def hot(path):
        t = read(path, None, Warnings()).keyframer().find(ids.SPOTLIGHT_NODE_TAG).value(ids.HOT_TRACK)
        return t.frames.tolist(), t.values[:, 0].tolist()
    assert hot(out) == hot(src)                                           # untouched: key for key
    # an artist's change to the blend becomes the hotspot
    sc.frame_set(0)
    light.spot_blend = 0.25
    light.keyframe_insert("spot_blend", frame=0)
    bpy.ops.export_scene.studio3ds(filepath=str(out))
    frames, values = hot(out)
    assert values[frames.index(0.0)] == pytest.approx(40 * 0.75, abs=1e-3)
