"""3DS animation curves: TCB tangents as Bezier handles, and camera roll carried by the target."""
import math
import subprocess

import numpy as np
import pytest

from addon.codec import axes
from addon.codec.errors import Warnings
from addon.codec.formats.studio3ds import ExportOptions, ImportOptions, ids
from addon.codec.formats.studio3ds.from_scene import from_scene
from addon.codec.formats.studio3ds.read import read
from addon.codec.formats.studio3ds.to_scene import to_scene
from addon.codec.animation import evaluate as channel_at
from addon.codec.formats.studio3ds.camroll import world_at, roll_of, target_axes
from addon.codec.formats.studio3ds.read import parse
from addon.codec.formats.studio3ds.tcb import bezier_handles, evaluate, tangents, track_curve
from addon.codec.formats.studio3ds.write import encode_bytes
from addon.codec.scene import Animation, Camera, Channel, Node, Scene

from .fixtures_3ds import ASSETS, Chunk, build, kf_node, obj, track

FRAMES = [0, 10, 30]
VALUES = [[0.0], [10.0], [40.0]]


def tcb_rows(**middle):
    """(3, 5) TCB values: all absent but the middle key's."""
    t = np.full((3, 5), np.nan, np.float32)
    for k, v in middle.items():
        t[1, {"t": 0, "c": 1, "b": 2, "et": 3, "ef": 4}[k]] = v
    return t


def load_bytes(data, **opts):
    w = Warnings()
    return to_scene(parse(data, w), ImportOptions(**opts), w)


def load_file(name, **opts):
    return to_scene(read(ASSETS / name, None, Warnings()), ImportOptions(**opts), Warnings())


def export(sc):
    return encode_bytes(from_scene(sc, ExportOptions(name_limit=16), Warnings()))


# -- TCB tangents --------------------------------------------------------------------
def test_default_keys_give_catmull_rom_tangents_by_hand():
    ds, dd = tangents(FRAMES, VALUES)
    # middle key: (P2 - P0) / 2 per unit of the key spacing, scaled to each segment by fp / fn
    # fp = 2 * 10 / 30, fn = 2 * 20 / 30; (P1 - P0) + (P2 - P1) = 40
    assert ds[1, 0] == pytest.approx(0.5 * (2 / 3) * 40)
    assert dd[1, 0] == pytest.approx(0.5 * (4 / 3) * 40)
    # end keys: their one difference, so a two-key track is a straight line
    assert (ds[0, 0], dd[0, 0], ds[2, 0], dd[2, 0]) == (10, 10, 30, 30)
    # evenly spaced keys: the tangent is exactly Catmull-Rom's (P_i+1 - P_i-1) / 2
    ds, dd = tangents([0, 10, 20, 30], [[0.0], [1.0], [5.0], [6.0]])
    np.testing.assert_allclose(ds[1:3, 0], [2.5, 2.5])
    np.testing.assert_allclose(dd[1:3, 0], [2.5, 2.5])


def test_tension_continuity_and_bias_by_hand():
    # T = 0.5, B = 0.5: (1-T)/2 = 0.25, (1+B) = 1.5, (1-B) = 0.5; 0.25 (1.5 * 10 + 0.5 * 30) = 7.5
    ds, dd = tangents(FRAMES, VALUES, tcb_rows(t=0.5, b=0.5))
    assert (ds[1, 0], dd[1, 0]) == pytest.approx((7.5 * 2 / 3, 7.5 * 4 / 3))
    # C = 0.5: fp, fn move half way to 1 (5/6, 7/6); DS uses (1-C) dm + (1+C) dp, DD the other way
    ds, dd = tangents(FRAMES, VALUES, tcb_rows(c=0.5))
    assert ds[1, 0] == pytest.approx(5 / 6 * 0.5 * (0.5 * 10 + 1.5 * 30))
    assert dd[1, 0] == pytest.approx(7 / 6 * 0.5 * (1.5 * 10 + 0.5 * 30))
    # ease is approximated by shortening the tangent it slows; full ease stops at the key
    ds, dd = tangents(FRAMES, VALUES, tcb_rows(et=1.0, ef=0.25))
    assert ds[1, 0] == 0 and dd[1, 0] == pytest.approx(0.75 * 0.5 * (4 / 3) * 40)


def test_bezier_handles_at_one_third_are_the_hermite_curve():
    ds, dd = tangents(FRAMES, VALUES, tcb_rows(t=0.3, c=-0.2, b=0.4))
    h = bezier_handles(FRAMES, VALUES, ds, dd)
    assert h.shape == (3, 1, 2, 2)
    np.testing.assert_allclose(h[1, 0], [[10 - 10 / 3, 10 - ds[1, 0] / 3], [10 + 20 / 3, 10 + dd[1, 0] / 3]])
    ch = Channel(0, "location", np.array(FRAMES, float), np.array(VALUES), interpolation="BEZIER", handles=h)
    ts = np.linspace(0, 30, 31)
    np.testing.assert_allclose(channel_at(ch, ts), evaluate(FRAMES, VALUES, ds, dd, ts), atol=1e-9)
    # the middle of the second segment, by hand: h00 = h01 = 1/2, h10 = 1/8, h11 = -1/8
    assert evaluate(FRAMES, VALUES, ds, dd, 20.0)[0] == pytest.approx(25 + (dd[1, 0] - ds[2, 0]) / 8)


def test_imported_channels_carry_the_tcb_handles():
    tcb = np.full((3, 5), np.nan, np.float32)
    tcb[1, :3] = (0.25, 0.0, -0.5)
    pos = track(ids.POS_TRACK, FRAMES, [[0, 0, 0], [10, 1, 2], [40, -3, 0]], key_flags=[0, 5, 0], tcb=tcb)
    node = kf_node(0, "Cam", tag=ids.CAMERA_NODE_TAG)
    node.children[-1] = pos
    node.children += [track(ids.FOV_TRACK, FRAMES, [[40.0], [60.0], [45.0]]), track(ids.ROLL_TRACK, [0], [[0.0]])]
    cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 50.0)))
    sc = load_bytes(build([cam], kf_nodes=[node, kf_node(1, "Cam", tag=ids.TARGET_NODE_TAG, pos=(0, 5, 0))]))
    chans = {c.path: c for c in sc.animations[0].channels}
    loc, lens = chans["location"], chans["data.lens"]
    assert loc.interpolation == lens.interpolation == "BEZIER"
    assert loc.handles.shape == (3, 3, 2, 2) and lens.handles.shape == (3, 1, 2, 2)
    ts = np.arange(0.0, 30.5, 0.5)
    np.testing.assert_allclose(channel_at(loc, ts), track_curve(pos.data, ts), atol=1e-6)
    # lens keys are exact; between them the lens follows the FOV curve to first order
    np.testing.assert_allclose(lens.values[:, 0], 18 / np.tan(np.radians([40.0, 60.0, 45.0]) / 2))
    fov = track_curve(node.children[-2].data, ts)[:, 0]
    np.testing.assert_allclose(channel_at(lens, ts)[:, 0], 18 / np.tan(np.radians(fov) / 2), rtol=0.02)


# -- lib3ds as the reference -------------------------------------------------------------
CAMERA_EVAL_C = r"""
#include <stdio.h>
#include <lib3ds/file.h>
#include <lib3ds/camera.h>
#include <lib3ds/node.h>
#include <lib3ds/matrix.h>
/* per frame and camera: frame, roll (deg), camera position, target position, then
   lib3ds_matrix_camera (16 floats, column-major) with the roll in radians */
int main(int argc, char **argv) {
    Lib3dsFile *f = lib3ds_file_load(argv[1]);
    if (!f) return 1;
    for (int a = 2; a < argc; a++) {
        float frame = 0; sscanf(argv[a], "%f", &frame);
        lib3ds_file_eval(f, frame);
        for (Lib3dsCamera *cam = f->cameras; cam; cam = cam->next) {
            Lib3dsNode *c = lib3ds_file_node_by_name(f, cam->name, LIB3DS_CAMERA_NODE);
            Lib3dsNode *t = lib3ds_file_node_by_name(f, cam->name, LIB3DS_TARGET_NODE);
            if (!c || !t) continue;
            Lib3dsMatrix m;
            lib3ds_matrix_camera(m, c->data.camera.pos, t->data.target.pos,
                                 c->data.camera.roll * 3.14159265358979f / 180.0f);
            printf("%g\t%.8g", frame, c->data.camera.roll);
            for (int k = 0; k < 3; k++) printf("\t%.8g", c->data.camera.pos[k]);
            for (int k = 0; k < 3; k++) printf("\t%.8g", t->data.target.pos[k]);
            for (int col = 0; col < 4; col++) for (int r = 0; r < 4; r++) printf("\t%.8g", m[col][r]);
            printf("\n");
        }
    }
    lib3ds_file_free(f);
    return 0;
}
"""


@pytest.fixture(scope="module")
def lib3ds_camera(tmp_path_factory):
    """path, frames -> (F, 24) rows: frame, roll, camera pos, target pos, camera matrix (4x4, rows)."""
    folder = tmp_path_factory.mktemp("lib3ds_cam")
    (folder / "cam.c").write_text(CAMERA_EVAL_C)
    subprocess.run(["gcc", "-O1", "-o", str(folder / "cam"), str(folder / "cam.c"), "-l3ds"], check=True)

    def run(path, frames):
        out = subprocess.run([str(folder / "cam"), str(path)] + [str(float(f)) for f in frames],
                             capture_output=True, text=True, check=True).stdout
        rows = np.array([line.split("\t") for line in out.splitlines()], float)
        return rows[:, :8], rows[:, 8:].reshape(-1, 4, 4).transpose(0, 2, 1)
    return run


def test_tcb_curves_match_lib3ds(lib3ds_camera, tmp_path):
    frames = [0, 10, 25, 30]
    vals = [[0, 0, 0], [10, 3, 1], [4, 8, -2], [6, 0, 5]]
    ts = np.array([1, 3, 5, 7, 9, 12, 17, 22, 26, 28, 29.5])
    rng = np.random.default_rng(7)
    for cols in ([0], [1], [2], [0, 1, 2]):
        tcb = np.full((4, 5), np.nan, np.float32)
        for c in cols:
            tcb[:, c] = rng.uniform(-0.8, 0.8, 4)
        flags = sum(1 << c for c in cols)
        node = kf_node(0, "Cam", tag=ids.CAMERA_NODE_TAG)
        node.children[-1] = track(ids.POS_TRACK, frames, vals, key_flags=[flags] * 4, tcb=tcb)
        node.children += [track(ids.FOV_TRACK, [0], [[45.0]]), track(ids.ROLL_TRACK, [0], [[0.0]])]
        cam = obj("Cam", Chunk(ids.N_CAMERA, (0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 50.0)))
        path = tmp_path / "tcb.3ds"
        path.write_bytes(build([cam], kf_nodes=[node, kf_node(1, "Cam", tag=ids.TARGET_NODE_TAG, pos=(0, 5, 0))]))
        ref, _ = lib3ds_camera(path, ts)
        sc = load_bytes(path.read_bytes())
        loc = next(c for c in sc.animations[0].channels if c.path == "location")
        np.testing.assert_allclose(channel_at(loc, ts), ref[:, 2:5], atol=1e-4, err_msg=str(cols))
    # a real file: four default keys are a Catmull-Rom curve in lib3ds too
    ref, _ = lib3ds_camera(ASSETS / "TargetCameraAnim.3ds", [5, 10, 20, 45, 75, 89])
    sc = load_file("TargetCameraAnim.3ds")
    loc = next(c for c in sc.animations[0].channels if c.path == "location" and sc.nodes[c.target].kind == "CAMERA")
    np.testing.assert_allclose(channel_at(loc, ref[:, 0]), ref[:, 2:5], atol=1e-3)


def scene_up_vectors(sc, ts):
    """World up vector of the camera as Blender's Track To with Target Z places it, per frame."""
    ci = next(i for i, n in enumerate(sc.nodes) if n.kind == "CAMERA")
    chans = {}
    for a in sc.animations:
        for c in a.channels:
            chans.setdefault(c.target, {})[c.path] = c
    cam, tgt = world_at(sc, ci, chans, ts), world_at(sc, sc.nodes[ci].target, chans, ts)
    d = tgt[:, :3, 3] - cam[:, :3, 3]
    d /= np.linalg.norm(d, axis=1, keepdims=True)
    up = tgt[:, :3, 2] if sc.nodes[ci].target_up else np.broadcast_to([0.0, 0, 1], d.shape)
    up = up - np.sum(up * d, 1, keepdims=True) * d
    return up / np.linalg.norm(up, axis=1, keepdims=True), d


@pytest.mark.parametrize("name", ["CameraRollAnim.3ds", "CameraRollAnimWithChildObject.3ds", "TargetCameraAnim.3ds"])
def test_camera_up_vector_follows_the_roll_as_in_lib3ds(name, lib3ds_camera):
    ts = np.array([0, 17, 45, 60, 90, 100, 120], float)
    rows, m = lib3ds_camera(ASSETS / name, ts)
    sc = load_file(name)
    up, d = scene_up_vectors(sc, ts)
    np.testing.assert_allclose(d, m[:, 1, :3], atol=1e-5)          # lib3ds: rows right, forward, up
    np.testing.assert_allclose(up, m[:, 2, :3], atol=1e-5)
    if name == "CameraRollAnim.3ds":
        assert rows[-1, 1] == pytest.approx(-77.30544, abs=1e-4)     # the roll at 120 really turns the view
        assert np.degrees(np.arccos(np.clip(up[0] @ up[-1], -1, 1))) == pytest.approx(77.25, abs=0.1)


@pytest.mark.parametrize("name", ["CameraRollAnim.3ds", "CameraRollAnimWithChildObject.3ds"])
def test_roll_survives_export_and_reimport(name):
    sc = load_file(name)
    data = export(sc)
    src_roll = next(c for c in read(ASSETS / name, None, Warnings()).root.walk() if c.cid == ids.ROLL_TRACK).data
    roll = next(c for c in parse(data).root.walk() if c.cid == ids.ROLL_TRACK).data
    # sampled on every frame, read back as the straight line it is: the original two keys
    np.testing.assert_array_equal(roll.frames, src_roll.frames)
    np.testing.assert_allclose(roll.values, src_roll.values, atol=1e-4)
    cam = next(c for c in parse(data).root.walk() if c.cid == ids.N_CAMERA).data
    assert cam[6] == pytest.approx(src_roll.values[0, 0], abs=1e-4)
    ts = np.arange(0, 121, 7.0)
    np.testing.assert_allclose(scene_up_vectors(load_bytes(data), ts)[0], scene_up_vectors(sc, ts)[0], atol=1e-6)


def test_roll_from_a_built_scene_with_a_turning_target():
    """A scene as Blender collects it: the target's orientation sampled per frame, camera moving."""
    sc = Scene(cameras=[Camera("Cam")])
    ts = np.arange(0, 11, 1.0)
    roll = 3.0 * ts ** 1.5                       # not a straight line: every frame is kept
    pos = np.column_stack([ts, -10 + 0 * ts, 0.5 * ts])
    q = axes.matrix_to_quat(target_axes(pos, np.zeros(3), roll))
    sc.nodes = [Node("Cam", "CAMERA", 0, target=1, target_up=True, matrix=axes.compose(pos[0], [1, 0, 0, 0], [1] * 3)),
                Node("Cam.Target", "EMPTY", matrix=axes.compose([0, 0, 0], q[0], [1] * 3))]
    sc.animations = [Animation("A", 0, 10, channels=[Channel(0, "location", ts, pos),
                                                      Channel(1, "rotation_quaternion", ts, q)])]
    tr = next(c for c in parse(export(sc)).root.walk() if c.cid == ids.ROLL_TRACK).data
    np.testing.assert_array_equal(tr.frames, ts)
    np.testing.assert_allclose(tr.values[:, 0], roll, atol=1e-4)
    # without Target Z the camera has no roll; without a target its own up vector gives it
    sc.nodes[0].target_up = False
    assert next(c for c in parse(export(sc)).root.walk() if c.cid == ids.ROLL_TRACK).data.values[0, 0] == 0
    # a free camera looking down +Y, turned 20 degrees about its view: up = (-sin 20, 0, cos 20)
    q = axes.quat_multiply(axes.axis_angle_to_quat([0, 1, 0], math.radians(-20)),
                           axes.axis_angle_to_quat([1, 0, 0], math.radians(90)))
    free = Scene(cameras=[Camera("Cam")],
                 nodes=[Node("Cam", "CAMERA", 0, matrix=axes.compose([0, -10, 0], q, [1] * 3))])
    cam = next(c for c in parse(export(free)).root.walk() if c.cid == ids.N_CAMERA).data
    assert cam[6] == pytest.approx(20.0, abs=1e-3)
    a = math.radians(20)
    assert roll_of([0, 0, 0], [0, 1, 0], [-math.sin(a), 0, math.cos(a)]) == pytest.approx(20.0)


# -- light colour, hotspot and falloff tracks -------------------------------------------------
def spot_file() -> bytes:
    spot = Chunk(ids.N_DIRECT_LIGHT, (0.0, 0.0, 10.0), [
        Chunk(ids.COLOR_F, (1.0, 1.0, 1.0)), Chunk(ids.DL_SPOTLIGHT, (0.0, 0.0, 0.0, 20.0, 40.0))])
    col = track(ids.COL_TRACK, [0, 10, 30], [[1, 0, 0], [0, 1, 0], [0.2, 0.4, 1]], key_flags=[0, 1, 0],
                tcb=tcb_rows(t=0.5))
    hot = track(ids.HOT_TRACK, [0, 30], [[20.0], [35.0]])
    fall = track(ids.FALL_TRACK, [0, 15, 30], [[40.0], [60.0], [45.0]], flags=0x43)
    node = kf_node(0, "Spot", tag=ids.SPOTLIGHT_NODE_TAG, pos=(0, 0, 10), extra=[col, hot, fall])
    tnode = kf_node(1, "Spot", tag=ids.L_TARGET_NODE_TAG, pos=(0, 0, 0))
    return build([obj("Spot", spot)], kf_nodes=[node, tnode], seg=(0, 30))


def test_light_colour_and_falloff_tracks_are_read_as_channels():
    sc = load_bytes(spot_file())
    chans = {c.path: c for c in sc.animations[0].channels}
    np.testing.assert_allclose(chans["data.color"].frames, [0, 10, 30])
    np.testing.assert_allclose(chans["data.color"].values, [[1, 0, 0], [0, 1, 0], [0.2, 0.4, 1]], atol=1e-6)
    np.testing.assert_allclose(chans["data.spot_size"].frames, [0, 15, 30])
    np.testing.assert_allclose(chans["data.spot_size"].values[:, 0], np.radians([40, 60, 45]), atol=1e-6)
    node = next(n for n in sc.nodes if n.kind == "LIGHT")
    assert node.extras["3ds_track_hot_keys"] == [[0.0, 20.0], [30.0, 35.0]]
    assert node.extras["3ds_track_fall_flags"] == 0x43
    # the colour curve follows the TCB keys (tension 0.5 at the middle key) between them
    assert chans["data.color"].interpolation == "BEZIER"


def test_light_colour_hotspot_and_falloff_tracks_are_written_back():
    src = parse(spot_file()).keyframer().find(ids.SPOTLIGHT_NODE_TAG)
    out = parse(export(load_bytes(spot_file()))).keyframer().find(ids.SPOTLIGHT_NODE_TAG)
    for cid in (ids.COL_TRACK, ids.HOT_TRACK, ids.FALL_TRACK):
        a, b = src.value(cid), out.value(cid)
        assert b is not None, hex(cid)
        np.testing.assert_array_equal(b.frames, a.frames)
        np.testing.assert_allclose(b.values, a.values, atol=1e-5)
        assert b.flags == a.flags
        np.testing.assert_array_equal(b.key_flags, a.key_flags)
    np.testing.assert_allclose(out.value(ids.COL_TRACK).tcb[1, 0], 0.5)


def test_falloff_animated_in_a_scene_is_written_in_degrees():
    from addon.codec.scene import Light
    sc = Scene(lights=[Light("S", "SPOT", spot_size=math.radians(30))])
    sc.nodes.append(Node("S", "LIGHT", 0))
    sc.animations.append(Animation("A", 0, 10, channels=[
        Channel(0, "data.spot_size", np.array([0.0, 10.0]), np.radians([[30.0], [90.0]])),
        Channel(0, "data.color", np.array([0.0, 10.0]), np.array([[1.0, 1, 1], [0, 0, 1]]))]))
    node = parse(export(sc)).keyframer().find(ids.SPOTLIGHT_NODE_TAG)
    np.testing.assert_allclose(node.value(ids.FALL_TRACK).values[:, 0], [30, 90], atol=1e-4)
    np.testing.assert_allclose(node.value(ids.COL_TRACK).values, [[1, 1, 1], [0, 0, 1]])
    assert node.value(ids.HOT_TRACK) is None


def test_hotspot_keys_are_read_as_the_spot_blend():
    sc = load_bytes(spot_file())
    ch = next(c for c in sc.animations[0].channels if c.path == "data.spot_blend")
    np.testing.assert_allclose(ch.frames, [0, 30])
    # hotspot 20 of a 40 degree falloff at frame 0, 35 of 45 at frame 30: blend = 1 - hotspot / falloff
    np.testing.assert_allclose(ch.values[:, 0], [0.5, 1 - 35 / 45], atol=1e-6)


def test_a_spot_blend_animated_in_a_scene_is_written_as_hotspot_keys():
    from addon.codec.scene import Light
    sc = Scene(lights=[Light("S", "SPOT", spot_size=math.radians(40))])
    sc.nodes.append(Node("S", "LIGHT", 0))
    sc.animations.append(Animation("A", 0, 10, channels=[
        Channel(0, "data.spot_blend", np.array([0.0, 10.0]), np.array([[0.25], [0.5]]))]))
    node = parse(export(sc)).keyframer().find(ids.SPOTLIGHT_NODE_TAG)
    np.testing.assert_allclose(node.value(ids.HOT_TRACK).frames, [0, 10])
    np.testing.assert_allclose(node.value(ids.HOT_TRACK).values[:, 0], [30.0, 20.0], atol=1e-4)
