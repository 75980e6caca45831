"""0xAFFF material blocks -> neutral Materials, and texture file lookup.

Fields with no Principled BSDF equivalent go to `extras` (custom properties)
under "3ds_*" names, so that export can write them back.
"""
from __future__ import annotations

import math
import os
import re
from pathlib import Path

from ...errors import Warnings
from ...scene import Image, Material, TextureSlot
from . import ids
from .model import Chunk

# 3DS map -> neutral slot kind
SLOT_KIND = {"texture1": "base_color", "texture2": "base_color_2", "opacity": "alpha", "bump": "bump",
             "specular": "specular", "shininess": "roughness", "self_illum": "emission",
             "reflection": "reflection"}
FLAG_CHUNKS = {ids.MAT_TWO_SIDE: "two_sided", ids.MAT_ADDITIVE: "additive", ids.MAT_WIRE: "wire",
               ids.MAT_SELF_ILLUM: "self_illum_flag", ids.MAT_DECAL: "decal", ids.MAT_PHONGSOFT: "soften",
               ids.MAT_XPFALLIN: "falloff_in", ids.MAT_WIREABS: "wire_in_units", ids.MAT_FACEMAP: "face_map",
               ids.MAT_SUPERSMP: "supersample", ids.MAT_USE_XPFALL: "use_falloff",
               ids.MAT_USE_REFBLUR: "use_ref_blur"}
PERCENT_CHUNKS = {ids.MAT_SHININESS: "shininess", ids.MAT_SHIN2PCT: "shin_strength",
                  ids.MAT_SHIN3PCT: "shin3", ids.MAT_TRANSPARENCY: "transparency", ids.MAT_XPFALL: "falloff",
                  ids.MAT_REFBLUR: "ref_blur", ids.MAT_SELF_ILPCT: "self_illum"}


def color_of(c: Chunk | None) -> tuple[float, float, float] | None:
    """The colour inside a colour holder: plain (0x0010/0x0011) before gamma (0x0013/0x0012)."""
    if c is None:
        return None
    for cid, scale in ((ids.COLOR_F, 1.0), (ids.COLOR_24, 255.0), (ids.LIN_COLOR_F, 1.0), (ids.LIN_COLOR_24, 255.0)):
        v = c.value(cid)
        if v is not None:
            return tuple(float(x) / scale for x in v)
    return None


def percent_of(c: Chunk | None) -> float | None:
    """0..1 from 0x0030 (0..100) or 0x0031 (read as a fraction when <= 1, as the common readers do)."""
    if c is None:
        return None
    v = c.value(ids.INT_PERCENT)
    if v is not None:
        return v / 100.0
    v = c.value(ids.FLOAT_PERCENT)
    if v is not None:
        return float(v) if abs(v) <= 1.0 else float(v) / 100.0
    return None


MAX_LISTED = 20_000      # files listed per folder tree: a model saved in a huge tree still opens


class TextureFinder:
    """Case-insensitive lookup beside the file, then below it (sub-folders in name order), then
    below each user folder (several joined with ";" or the system's path separator).

    Also matches 8.3 names (``MP5SIL~1.BMP`` or a cut stem) against longer names on disk.
    """

    def __init__(self, source: str, extra_folder: str = ""):
        # folders are listed only when a name is not found in the ones before: a model whose
        # textures sit beside it never walks the tree below it
        self.places: list[tuple[Path, bool]] = []
        if source:
            self.places += [(Path(source).parent, False), (Path(source).parent, True)]
        for folder in re.split(r"[;" + re.escape(os.pathsep) + "]", extra_folder or ""):
            if folder.strip():
                self.places.append((Path(folder.strip()), True))
        self._tables: list[dict[str, str]] = []

    def _table(self, k: int) -> dict[str, str]:
        while len(self._tables) <= k:
            self._tables.append(self._list(*self.places[len(self._tables)]))
        return self._tables[k]

    @staticmethod
    def _list(folder: Path, recursive: bool) -> dict[str, str]:
        out: dict[str, str] = {}
        if not folder.is_dir():
            return out
        if recursive:
            for root, dirs, files in os.walk(folder):
                dirs.sort()
                for f in sorted(files):
                    out.setdefault(f.lower(), os.path.join(root, f))
                if len(out) > MAX_LISTED:
                    break
        else:
            for f in sorted(os.listdir(folder)):
                if (folder / f).is_file():
                    out.setdefault(f.lower(), str(folder / f))
        return out

    def find(self, name: str) -> str:
        base = name.replace("\\", "/").split("/")[-1].lower()
        stem, ext = os.path.splitext(base)
        short = stem.split("~")[0]
        for k in range(len(self.places)):
            if base in self._table(k):
                return self._table(k)[base]
        if len(stem) <= 8 and short:
            for k in range(len(self.places)):
                for key, path in self._table(k).items():
                    k_stem, k_ext = os.path.splitext(key)
                    k_short = re.sub(r"[^a-z0-9_]", "", k_stem)        # 8.3 names drop spaces and the like
                    if k_ext == ext and len(k_stem) > len(stem) and k_short.startswith(short):
                        return path
        return ""


# Map placement, as 3D Studio draws it (3ds Max's own .3ds importer and assimp agree; lib3ds keeps the
# raw numbers and leaves them to the caller; see test_assets/3ds/MAP_PARAMETERS.md): tiling and angle
# turn about the picture's centre, the angle turns the picture counter-clockwise, a U offset moves it
# toward +U and a V offset toward -V.
PIVOT = (0.5, 0.5)
# map flag bits (lib3ds names). Tiling, as 3D Studio's map dialog and its File Toolkit name it: "Tile"
# (neither bit), "Decal" (DECAL with NO_TILE: the picture once, the material's colour around it) and
# "Both" (DECAL alone: the picture tiled, the material's colour through its transparent parts). NO_TILE
# alone is 3ds Max's "no wrap" (its exporter writes it so); the material's decal flag 0xA082 sets DECAL
# and NO_TILE on every map (3ds Max's importer). See test_assets/3ds/MAP_PARAMETERS.md.
DECAL, MIRROR, NEGATE, NO_TILE, SUMMED_AREA, ALPHA_SOURCE = 0x1, 0x2, 0x8, 0x10, 0x20, 0x40
TINT, IGNORE_ALPHA, RGB_TINT = 0x80, 0x100, 0x200
MATERIAL_DECAL = DECAL | NO_TILE
LOOK_BITS = DECAL | MIRROR | NEGATE | NO_TILE | ALPHA_SOURCE | TINT | IGNORE_ALPHA | RGB_TINT
# tint colours when the flag is set without them: black to white, and pure red, green, blue (no change)
TINT_DEFAULT = {"tint1": (0, 0, 0), "tint2": (255, 255, 255), "tint_r": (255, 0, 0), "tint_g": (0, 255, 0),
                "tint_b": (0, 0, 255)}
TINT_KEYS = {2: ("tint1", "tint2"), 3: ("tint_r", "tint_g", "tint_b")}     # by tint kind (map_look)
TINT_CHUNKS = {"tint1": ids.MAT_MAP_COL1, "tint2": ids.MAT_MAP_COL2, "tint_r": ids.MAT_MAP_RCOL,
               "tint_g": ids.MAT_MAP_GCOL, "tint_b": ids.MAT_MAP_BCOL}


def map_placement(u_offset: float, v_offset: float, angle_deg: float) -> tuple[tuple[float, float], float]:
    """(picture offset in UV, rotation in radians counter-clockwise) from the map's chunks."""
    return (u_offset, -v_offset), math.radians(angle_deg)


def map_look(flags: int) -> tuple:
    """Everything the flags change in the material nodes: (extension, alpha source, decal, negative,
    tint kind: 2 luminance / 3 RGB / 0 none, ignore alpha). Mirror tiles mirrored, no tiling clips;
    a decal (tiled or not) lays the picture over the material's colour."""
    ext = "MIRROR" if flags & MIRROR else "CLIP" if flags & NO_TILE else "REPEAT"
    return (ext, bool(flags & ALPHA_SOURCE), bool(flags & DECAL), bool(flags & NEGATE), _tint_kind(flags),
            bool(flags & IGNORE_ALPHA))


def _tint_kind(flags: int) -> int:
    return 3 if flags & RGB_TINT else 2 if flags & TINT else 0


def tint_colours(flags: int, extras: dict) -> tuple:
    """The slot's tint colours (0..1) from the flags and the colour chunks read into `extras`."""
    keys = TINT_KEYS.get(_tint_kind(flags), ())
    return tuple(tuple(float(x) / 255.0 for x in extras.get("3ds_" + k, TINT_DEFAULT[k])) for k in keys)


def _map_slot(kind: str, m: Chunk, image: int, material_decal: bool) -> TextureSlot:
    slot = TextureSlot(kind=kind, image=image)
    strength = percent_of(m)
    if strength is not None:
        slot.strength = strength
    slot.scale = (float(m.value(ids.MAT_MAP_USCALE, 1.0)), float(m.value(ids.MAT_MAP_VSCALE, 1.0)))
    slot.offset, slot.rotation = map_placement(float(m.value(ids.MAT_MAP_UOFFSET, 0.0)),
                                               float(m.value(ids.MAT_MAP_VOFFSET, 0.0)),
                                               float(m.value(ids.MAT_MAP_ANG, 0.0)))
    slot.pivot = PIVOT
    flags = m.value(ids.MAT_MAP_TILING)
    if flags is not None:
        slot.extras["3ds_map_flags"] = int(flags)
    look = int(flags or 0) | (MATERIAL_DECAL if material_decal else 0)
    slot.extension, slot.alpha_source, slot.decal, slot.invert, _, slot.ignore_alpha = map_look(look)
    blur = m.value(ids.MAT_MAP_TEXBLUR)
    if blur is not None:
        slot.extras["3ds_blur"] = float(blur)
    for key, cid in TINT_CHUNKS.items():
        v = m.value(cid)
        if v is not None:
            slot.extras["3ds_" + key] = list(v)
    slot.tint = tint_colours(look, slot.extras)
    return slot


def build_material(c: Chunk, images: list[Image], image_index: dict[str, int], finder: TextureFinder,
                   warnings: Warnings) -> Material:
    mat = Material(name=c.value(ids.MAT_NAME, "") or f"Material{c.offset}")
    ex = mat.extras
    for cid, attr in ((ids.MAT_AMBIENT, "ambient"), (ids.MAT_DIFFUSE, "base_color"),
                      (ids.MAT_SPECULAR, "specular_color")):
        col = color_of(c.find(cid))
        if col is not None:
            setattr(mat, attr, col)
    for cid, key in PERCENT_CHUNKS.items():
        v = percent_of(c.find(cid))
        if v is not None:
            ex["3ds_" + key] = v
    for cid, key in FLAG_CHUNKS.items():
        if c.has(cid):
            ex["3ds_" + key] = 1
    shading = c.value(ids.MAT_SHADING)
    if shading is not None:
        ex["3ds_shading"] = int(shading)
    wire = c.value(ids.MAT_WIRESIZE)
    if wire is not None:
        ex["3ds_wire_size"] = float(wire)
    mat.two_sided = c.has(ids.MAT_TWO_SIDE)
    mat.alpha = 1.0 - ex.get("3ds_transparency", 0.0)
    mat.roughness = 1.0 - ex.get("3ds_shininess", 0.0)
    mat.specular = ex.get("3ds_shin_strength", 0.0)
    illum = ex.get("3ds_self_illum", 1.0 if c.has(ids.MAT_SELF_ILLUM) else 0.0)
    if illum > 0:
        mat.emission, mat.emission_strength = mat.base_color, illum
    mat.blend = "ADD" if c.has(ids.MAT_ADDITIVE) else ("BLEND" if mat.alpha < 1.0 else "OPAQUE")
    for m in c.children:
        is_mask = m.cid in ids.MASKS
        if m.cid not in ids.MAPS and not is_mask:
            continue
        which = (ids.MASKS if is_mask else ids.MAPS)[m.cid]
        fname = m.value(ids.MAT_MAPNAME, "") or ""
        if not fname:
            continue
        key = fname.lower()
        if key not in image_index:
            path = finder.find(fname)
            if not path:
                warnings.warn(f"texture {fname!r} of material {mat.name!r} not found", m.offset, "MATERIAL")
            image_index[key] = len(images)
            images.append(Image(name=fname, filepath=path))
        slot = _map_slot("other" if is_mask else SLOT_KIND[which], m, image_index[key], c.has(ids.MAT_DECAL))
        slot.extras["3ds_map"] = ("mask_" if is_mask else "") + which
        if which == "opacity" and not is_mask:
            mat.blend = "BLEND" if mat.blend == "OPAQUE" else mat.blend
        mat.textures.append(slot)
    return mat
