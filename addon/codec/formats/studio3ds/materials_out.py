"""Neutral Materials -> 0xAFFF blocks; extras written back where they came from."""
from __future__ import annotations

import math
import os

from ...errors import Warnings
from ...file_names import name_83
from ...scene import Material, Scene
from . import ids
from .materials import (ALPHA_SOURCE, DECAL, FLAG_CHUNKS, IGNORE_ALPHA, LOOK_BITS, MATERIAL_DECAL, MIRROR, NEGATE,
                        NO_TILE, PERCENT_CHUNKS, RGB_TINT, SLOT_KIND, TINT, TINT_CHUNKS, TINT_KEYS,
                        map_look)
from .model import Chunk

KIND_TO_MAP = {v: k for k, v in SLOT_KIND.items()} | {"normal": "bump", "environment": "reflection"}
MAP_ID = {v: k for k, v in ids.MAPS.items()}
MASK_ID = {v: k for k, v in ids.MASKS.items()}


def kept(extras: dict, key: str, current):
    """The value the file had, unless the Blender side has changed it since (then the current one)."""
    if key not in extras:
        return current
    old = extras[key]
    if current is None or abs(float(old) - float(current)) < 2e-3:
        return old
    return current


def _color(cid: int, rgb) -> Chunk:
    c = Chunk(cid)
    b = tuple(int(round(min(max(x, 0.0), 1.0) * 255)) for x in rgb[:3])
    c.add(ids.COLOR_24, b)
    c.add(ids.LIN_COLOR_24, b)
    return c


def _percent(cid: int, v: float) -> Chunk:
    c = Chunk(cid)
    c.add(ids.INT_PERCENT, int(round(min(max(v, 0.0), 1.0) * 100)))
    return c


def material_chunk(mat: Material, name: str, scene: Scene, texture_names: dict[int, str]) -> Chunk:
    ex = mat.extras
    c = Chunk(ids.MAT_ENTRY)
    c.add(ids.MAT_NAME, name)
    c.children += [_color(ids.MAT_AMBIENT, mat.ambient), _color(ids.MAT_DIFFUSE, mat.base_color),
                   _color(ids.MAT_SPECULAR, mat.specular_color)]
    derived = {"shininess": 1.0 - mat.roughness, "shin_strength": mat.specular,
               "transparency": 1.0 - mat.alpha, "self_illum": mat.emission_strength if any(mat.emission) else 0.0}
    for cid, key in PERCENT_CHUNKS.items():
        v = kept(ex, "3ds_" + key, derived.get(key))
        if v is not None:
            c.children.append(_percent(cid, float(v)))
    flags = {k: bool(ex.get("3ds_" + k)) for k in FLAG_CHUNKS.values()}
    flags["two_sided"] = mat.two_sided
    flags["additive"] = mat.blend == "ADD" or flags["additive"]
    # the material's decal flag stays while every map still shows it (a clipped decal); else each map says its own
    flags["decal"] = flags["decal"] and all(s.decal and s.extension != "REPEAT" for s in mat.textures)
    for cid, key in FLAG_CHUNKS.items():
        if flags[key]:
            c.add(cid)
    if "3ds_wire_size" in ex:
        c.add(ids.MAT_WIRESIZE, float(ex["3ds_wire_size"]))
    c.add(ids.MAT_SHADING, int(ex.get("3ds_shading", 3)))
    for slot in mat.textures:
        which = str(slot.extras.get("3ds_map", KIND_TO_MAP.get(slot.kind, "")))
        cid = MASK_ID.get(which[5:]) if which.startswith("mask_") else MAP_ID.get(which)
        if cid is None or not 0 <= slot.image < len(scene.images) or c.has(cid):
            continue
        m = c.add(cid)
        m.add(ids.INT_PERCENT, int(round(min(max(slot.strength, 0.0), 1.0) * 100)))
        m.add(ids.MAT_MAPNAME, texture_names[slot.image])
        m.add(ids.MAT_MAP_TILING, flags_of(slot, flags["decal"]))
        if "3ds_blur" in slot.extras:
            m.add(ids.MAT_MAP_TEXBLUR, float(slot.extras["3ds_blur"]))
        m.add(ids.MAT_MAP_USCALE, float(slot.scale[0]))
        m.add(ids.MAT_MAP_VSCALE, float(slot.scale[1]))
        m.add(ids.MAT_MAP_UOFFSET, float(slot.offset[0]))
        m.add(ids.MAT_MAP_VOFFSET, -float(slot.offset[1]) + 0.0)       # map_placement(), turned round
        m.add(ids.MAT_MAP_ANG, math.degrees(slot.rotation))
        colours = tint_chunks(slot)
        for key, tid in TINT_CHUNKS.items():
            if key in colours:
                m.add(tid, colours[key])
    return c


def _look(slot) -> tuple:
    """map_look() of what the slot shows now."""
    tint = len(slot.tint) if len(slot.tint) in (2, 3) else 0
    return slot.extension, slot.alpha_source, slot.decal, slot.invert, tint, slot.ignore_alpha


def flags_of(slot, material_decal: bool = False) -> int:
    """The map flags as read, unless the slot now shows something else (tiling, decal, negative, alpha
    source, ignore alpha, tint): then those bits as the slot has them. `material_decal`: the material's
    decal flag is written, which makes the map a clipped decal."""
    flags = int(slot.extras.get("3ds_map_flags", 0))
    look = _look(slot)
    if map_look(flags | (MATERIAL_DECAL if material_decal else 0)) == look:
        return flags
    ext, alpha, decal, invert, tint, no_alpha = look
    # no tiling: CLIP, and EXTEND (one picture, its edge stretched) is nearer to it than to tiling
    tiling = {"MIRROR": MIRROR, "CLIP": NO_TILE, "EXTEND": NO_TILE}.get(ext, 0)
    flags &= ~LOOK_BITS
    flags |= tiling | (DECAL if decal else 0) | (NEGATE if invert else 0) | {2: TINT, 3: RGB_TINT}.get(tint, 0)
    return flags | (ALPHA_SOURCE if alpha else 0) | (IGNORE_ALPHA if no_alpha else 0)


def tint_chunks(slot) -> dict[str, tuple[int, int, int]]:
    """Colour chunk values by key: the file's, with the slot's tint colours where it has a tint."""
    out = {k: tuple(int(x) for x in slot.extras["3ds_" + k]) for k in TINT_CHUNKS if "3ds_" + k in slot.extras}
    keys = TINT_KEYS.get(len(slot.tint), ())
    for k, rgb in zip(keys, slot.tint):
        out[k] = tuple(int(round(min(max(float(x), 0.0), 1.0) * 255)) for x in rgb[:3])
    return out


def texture_names(scene: Scene, use_83: bool, warnings: Warnings) -> dict[int, str]:
    out, taken = {}, set()
    for i, img in enumerate(scene.images):
        name = os.path.basename(img.filepath) if img.filepath else img.name
        if use_83:
            short = name_83(name, taken)
            if short.lower() != name.lower():
                warnings.warn(f"texture name {name!r} written as 8.3 {short!r}")
            name = short
        out[i] = name
    return out
