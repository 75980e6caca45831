"""Cameras (0x4700) and lights (0x4600) -> neutral Camera / Light data.

3DS gives a camera its lens in mm with FOV = 2400 / lens degrees; Blender's
lens is on a 36 mm sensor, so the FOV is kept and the lens recomputed.
"""
from __future__ import annotations

import math

import numpy as np

from ...scene import Camera, Light
from . import ids
from .materials import color_of
from .model import Chunk

SENSOR = 36.0
ENERGY_PER_MULTIPLIER = 1000.0     # W for multiplier 1.0 (Blender's default point light)


def fov_from_lens(lens_3ds: float) -> float:
    """Degrees."""
    return 2400.0 / lens_3ds if lens_3ds > 0 else 45.0


def blender_lens(fov_deg) -> np.ndarray | float:
    return SENSOR / 2 / np.tan(np.radians(np.clip(fov_deg, 0.01, 179.0)) / 2)


def lens_3ds(blender_lens_mm: float) -> float:
    if not blender_lens_mm > 0:            # no lens: the field of view fov_from_lens reads for one
        return 2400.0 / 45.0
    fov = math.degrees(2 * math.atan(SENSOR / 2 / blender_lens_mm))
    return 2400.0 / fov


def camera_axes(pos, target, roll_deg=0.0) -> np.ndarray:
    """(..., 3, 3) rotation of a camera/spot at pos (looking down its -Z, +Y up) aimed at target,
    banked by roll degrees, the way lib3ds' lib3ds_matrix_camera turns it; batched over frames."""
    pos, target = np.asarray(pos, np.float64), np.asarray(target, np.float64)
    d = target - pos
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    d = np.where(n > 0, d / np.where(n > 0, n, 1.0), [0.0, 1.0, 0.0])
    up = np.where(np.abs(d[..., 2:]) < 0.999999, [0.0, 0.0, 1.0], [0.0, 1.0, 0.0])
    x = np.cross(d, up)
    x /= np.linalg.norm(x, axis=-1, keepdims=True)
    y = np.cross(x, d)
    a = np.radians(np.asarray(roll_deg, np.float64))[..., None]
    xr, yr = np.cos(a) * x + np.sin(a) * y, np.cos(a) * y - np.sin(a) * x
    return np.stack([xr, yr, -d], axis=-1)


def look_at(pos, target, roll_deg: float = 0.0) -> np.ndarray:
    """4x4 placing a camera/spot (looking down its -Z, +Y up) at pos, aimed at target, banked by roll."""
    m = np.eye(4)
    m[:3, :3] = camera_axes(pos, target, roll_deg)
    m[:3, 3] = pos
    return m


def build_camera(name: str, c: Chunk) -> tuple[Camera, tuple, tuple, float]:
    """Camera data, plus its position, target and roll (degrees) in file space."""
    px, py, pz, tx, ty, tz, roll, lens = c.data
    cam = Camera(name=name, lens=float(blender_lens(fov_from_lens(lens))))
    cam.extras["3ds_lens"] = float(lens)
    ranges = c.value(ids.CAM_RANGES)
    if ranges is not None:
        cam.clip_start, cam.clip_end = float(ranges[0]), float(ranges[1])
        cam.extras["3ds_ranges"] = [float(ranges[0]), float(ranges[1])]
    if c.has(ids.CAM_SEE_CONE):
        cam.extras["3ds_see_cone"] = 1
    return cam, (px, py, pz), (tx, ty, tz), roll


def build_light(name: str, c: Chunk) -> tuple[Light, tuple, tuple | None]:
    """Light data, plus its position and (spots only) target in file space."""
    light = Light(name=name)
    ex = light.extras
    light.color = color_of(c) or (1.0, 1.0, 1.0)
    mult = float(c.value(ids.DL_MULTIPLIER, 1.0))
    ex["3ds_multiplier"] = mult
    off = c.has(ids.DL_OFF)
    if off:
        ex["3ds_off"] = 1
    light.energy = 0.0 if off else ENERGY_PER_MULTIPLIER * mult
    light.use_attenuation = c.has(ids.DL_ATTENUATE)
    inner, outer = c.value(ids.DL_INNER_RANGE), c.value(ids.DL_OUTER_RANGE)
    if inner is not None:
        light.attenuation_start = float(inner)
    if outer is not None:
        light.attenuation_end = float(outer)
    target = None
    spot = c.find(ids.DL_SPOTLIGHT)
    light.cast_shadow = False
    if spot is not None:
        light.type = "SPOT"
        tx, ty, tz, hot, fall = spot.data
        target = (tx, ty, tz)
        light.spot_size = math.radians(fall)            # full cone, degrees in the file
        light.spot_blend = float(np.clip(1.0 - hot / fall, 0.0, 1.0)) if fall > 0 else 0.0
        ex["3ds_hotspot"], ex["3ds_falloff"] = float(hot), float(fall)
        light.cast_shadow = spot.has(ids.DL_SHADOWED)
        for cid, key in ((ids.DL_SPOT_ROLL, "roll"), (ids.DL_SPOT_ASPECT, "aspect"), (ids.DL_RAY_BIAS, "ray_bias")):
            v = spot.value(cid)
            if v is not None:
                ex["3ds_" + key] = float(v)
        for cid, key in ((ids.DL_SPOT_RECTANGULAR, "rectangular"), (ids.DL_SPOT_OVERSHOOT, "overshoot"),
                         (ids.DL_SEE_CONE, "see_cone"), (ids.DL_RAYSHAD, "raytrace")):
            if spot.has(cid):
                ex["3ds_" + key] = 1
        sm = spot.value(ids.DL_LOCAL_SHADOW2)
        if sm is not None:
            ex["3ds_shadow_map"] = [float(sm[0]), float(sm[1]), int(sm[2])]
    elif c.has(ids.DL_SHADOWED):
        light.cast_shadow = True
    return light, tuple(c.data), target
