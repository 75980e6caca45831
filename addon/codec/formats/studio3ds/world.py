""".3ds environment chunks <-> the neutral World.

The editor chunk holds each background (bitmap 0x1100, solid 0x1200, gradient 0x1300),
the ambient light (0x2100), fog (0x2200), layered fog (0x2302) and distance cue
(0x2300), each with its own "use" flag chunk: only one background is in use.
Gradient colours come top, middle, bottom, each as a plain colour then, from 3DS
R3 on, a gamma-corrected one (the plain one is read, as lib3ds does). Layered
fog flags as lib3ds names them: bit 0 falls off toward the bottom, bit 1 toward
the top, 0x100000 fogs the background.
"""
from __future__ import annotations

from ...scene import Fog, Image, Scene, World
from . import ids
from .materials import color_of
from .model import Chunk

FALL_BOTTOM, FALL_TOP, LAYER_BGND = 0x1, 0x2, 0x100000
PLAIN = (ids.COLOR_F, ids.COLOR_24)


def _colors(c: Chunk) -> list[tuple[float, float, float]]:
    out = []
    for k in c.children:
        if k.cid in PLAIN and k.data is not None:
            scale = 255.0 if k.cid == ids.COLOR_24 else 1.0
            out.append(tuple(float(x) / scale for x in k.data))
    return out


def _fog(c: Chunk | None, use: bool, bgnd_flag: int) -> Fog | None:
    if c is None or c.data is None:
        return None
    near, near_d, far, far_d = (float(x) for x in c.data)
    return Fog(color=color_of(c) or (0.0, 0.0, 0.0), near=near, near_density=near_d, far=far, far_density=far_d,
               background=c.has(bgnd_flag), use=use)


def read_world(ed: Chunk, sc: Scene) -> World | None:
    """The editor's environment, or None when the file has none of it."""
    w = World(ambient=color_of(ed.find(ids.AMBIENT_LIGHT)))
    solid = ed.find(ids.SOLID_BGND)
    if solid is not None:
        w.color = color_of(solid)
    grad = ed.find(ids.V_GRADIENT)
    if grad is not None and grad.data is not None:
        w.gradient = _colors(grad)[:3]
        w.gradient_middle = float(grad.data)
    bitmap = ed.value(ids.BIT_MAP)
    if bitmap:
        w.image = len(sc.images)
        sc.images.append(Image(name=str(bitmap)))
    for flag, kind in ((ids.USE_BIT_MAP, "IMAGE"), (ids.USE_SOLID_BGND, "SOLID"), (ids.USE_V_GRADIENT, "GRADIENT")):
        if ed.has(flag):
            w.background = kind
    w.fog = _fog(ed.find(ids.FOG), ed.has(ids.USE_FOG), ids.FOG_BGND)
    w.distance_cue = _fog(ed.find(ids.DISTANCE_CUE), ed.has(ids.USE_DISTANCE_CUE), ids.DCUE_BGND)
    if w.distance_cue is not None:
        w.distance_cue.color = (0.0, 0.0, 0.0)
    lf = ed.find(ids.LAYER_FOG)
    if lf is not None and lf.data is not None:
        z_min, z_max, density, flags = lf.data
        w.layer_fog = Fog(color=color_of(lf) or (0.0, 0.0, 0.0), near_density=float(density),
                          far_density=float(density), background=bool(int(flags) & LAYER_BGND),
                          use=ed.has(ids.USE_LAYER_FOG), layer=(float(z_min), float(z_max)),
                          falloff="BOTTOM" if int(flags) & FALL_BOTTOM else "TOP" if int(flags) & FALL_TOP else "")
    empty = World()
    return None if w == empty else w


def _color_chunk(cid: int, rgb, data=None) -> Chunk:
    c = Chunk(cid, data)
    c.add(ids.COLOR_F, tuple(float(x) for x in rgb[:3]))
    return c


def world_chunks(w: World, sc: Scene, image_names: dict[int, str]) -> list[Chunk]:
    """The editor chunks for a World, in the order 3D Studio writes them."""
    out: list[Chunk] = []
    if 0 <= w.image < len(sc.images):
        out.append(Chunk(ids.BIT_MAP, image_names.get(w.image) or sc.images[w.image].name))
        if w.background == "IMAGE":
            out.append(Chunk(ids.USE_BIT_MAP))
    if w.color is not None:
        out.append(_color_chunk(ids.SOLID_BGND, w.color))
        if w.background == "SOLID":
            out.append(Chunk(ids.USE_SOLID_BGND))
    if len(w.gradient) == 3:
        g = Chunk(ids.V_GRADIENT, float(w.gradient_middle))
        for rgb in w.gradient:
            g.add(ids.COLOR_F, tuple(float(x) for x in rgb))
        out.append(g)
        if w.background == "GRADIENT":
            out.append(Chunk(ids.USE_V_GRADIENT))
    if w.ambient is not None:
        out.append(_color_chunk(ids.AMBIENT_LIGHT, w.ambient))
    for fog, cid, use, bgnd in ((w.fog, ids.FOG, ids.USE_FOG, ids.FOG_BGND),
                                (w.distance_cue, ids.DISTANCE_CUE, ids.USE_DISTANCE_CUE, ids.DCUE_BGND)):
        if fog is None:
            continue
        values = (float(fog.near), float(fog.near_density), float(fog.far), float(fog.far_density))
        c = _color_chunk(cid, fog.color, values) if cid == ids.FOG else Chunk(cid, values)
        if fog.background:
            c.add(bgnd)
        out.append(c)
        if fog.use:
            out.append(Chunk(use))
    lf = w.layer_fog
    if lf is not None and lf.layer is not None:
        flags = (LAYER_BGND if lf.background else 0) | {"BOTTOM": FALL_BOTTOM, "TOP": FALL_TOP}.get(lf.falloff, 0)
        out.append(_color_chunk(ids.LAYER_FOG, lf.color,
                                (float(lf.layer[0]), float(lf.layer[1]), float(lf.far_density), flags)))
        if lf.use:
            out.append(Chunk(ids.USE_LAYER_FOG))
    return out
