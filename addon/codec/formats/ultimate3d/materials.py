"""U3D materials (colours, 8 texture stages) <-> Scene materials and images.

What Principled BSDF cannot show (ambient/specular alphas, specular power,
colour operations, texture coordinate sets, parallax, shader packs, texture
sizes) is kept in `extras` so that an export writes it back. Texture names
are resolved by the notes' "*" rule (`resolve_texture`).
"""
from __future__ import annotations

import os
from pathlib import Path

from ...errors import Warnings
from ...fileio import is_dir, is_file, usable_name
from ...scene import Image, Material as SMaterial, Scene, TextureSlot
from .model import Material, Texture

TCI_FIRST = 0x10000    # D3DTSS_TCI_*: generated coordinates, not a UV set
COLOR_OP_DISABLE, COLOR_OP_MODULATE, COLOR_OP_MODULATE2X, COLOR_OP_DOTPRODUCT3 = 1, 4, 5, 24
# D3DTEXTUREOP -> TextureSlot.combine (arg 1 the texture, arg 2 the colour so far). No alpha operations
# are stored: the alpha so far is the material's; the texture factor is Direct3D's default, opaque white
OP_COMBINE = {2: "REPLACE", 3: "KEEP", 4: "MULTIPLY", 5: "MULTIPLY_2X", 6: "MULTIPLY_4X", 7: "ADD",
              8: "ADD_SIGNED", 9: "ADD_SIGNED_2X", 10: "SUBTRACT", 11: "ADD_SMOOTH", 12: "MIX_MATERIAL_ALPHA",
              13: "MIX_MAP_ALPHA", 14: "REPLACE", 15: "MIX_MAP_ALPHA_PREMULTIPLIED", 16: "MIX_MATERIAL_ALPHA"}
COMBINE_OP = {c: op for op, c in sorted(OP_COMBINE.items(), reverse=True)}      # the first op of each


def uv_name(index: int) -> str:
    """UV layer name of texture coordinate set `index` (export maps the names back)."""
    return "UVMap" if index == 0 else f"UVMap_{index}"


def _find_ci(folder: Path, rel: str) -> str:
    """Case-insensitive lookup of a relative path (with / or \\) under `folder`; "" if absent."""
    cur = folder
    for part in [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]:
        if not usable_name(part):
            return ""
        if is_file(cur / part) or is_dir(cur / part):
            cur = cur / part
            continue
        try:
            match = next((e for e in os.listdir(cur) if e.lower() == part.lower()), None)
        except OSError:
            return ""
        if match is None:
            return ""
        cur = cur / match
    return str(cur) if is_file(cur) else ""


def resolve_texture(name: str, model_dir: str, search_folder: str = "") -> str:
    """The notes: "*rest" is <model dir>/gfx/rest, then <model dir>/rest, then the user's folder."""
    if not name:
        return ""
    rel = name[1:] if name.startswith("*") else name
    rel = rel.replace("\\", "/")
    if os.path.isabs(rel) and os.path.isfile(rel):
        return rel
    bases = []
    if model_dir:
        bases += [Path(model_dir) / "gfx", Path(model_dir)] if name.startswith("*") else [Path(model_dir)]
    if search_folder:
        bases.append(Path(search_folder))
    for base in bases:
        found = _find_ci(base, rel)
        if found:
            return found
    if search_folder:   # last chance: the bare file name in the user's folder
        return _find_ci(Path(search_folder), rel.rsplit("/", 1)[-1])
    return ""


def _kind(stage: int, t: Texture, op: int, combine: str) -> str:
    if t.is_cube:
        return "environment"
    if t.is_normal_map:
        return "bump"       # a height map the engine turns into normals: Blender's Bump node does that
    if op == COLOR_OP_DOTPRODUCT3:
        return "normal"     # a normal map, dotted with the light (per-pixel lighting): a Normal Map node
    return "base_color" if stage == 0 or combine else "other"


def _combine(stage: int, t: Texture, op: int, chain_on: bool, name: str, warnings: Warnings) -> str:
    """The stage's colour operation as a TextureSlot.combine: "" for the first stage's 2D map (the base
    colour map), a height map, a stage Direct3D disables (an earlier stage's DISABLE ends the chain)
    and an operation that has no node setup (warned; the stage is kept for the round trip)."""
    if t.is_normal_map or not chain_on or (stage == 0 and not t.is_cube) or op == COLOR_OP_DOTPRODUCT3:
        return ""
    if op not in OP_COMBINE and op != COLOR_OP_DISABLE:
        warnings.warn(f"material {name!r}: texture stage {stage}'s colour operation {op} is not shown")
    return OP_COMBINE.get(op, "")


def material_to_scene(m: Material, scene: Scene, model_dir: str, search: str, uv_dims: list[int],
                      warnings: Warnings) -> SMaterial:
    power = float(m.specular_power)
    out = SMaterial(
        name=m.name or f"Material{m.i_material}",
        base_color=tuple(m.diffuse[:3]), alpha=float(m.diffuse[3]), ambient=tuple(m.ambient[:3]),
        specular_color=tuple(m.specular[:3]), specular=0.5 if any(m.specular[:3]) else 0.0,
        roughness=float((2.0 / (max(power, 0.0) + 2.0)) ** 0.25),
        emission=tuple(m.emissive[:3]), emission_strength=1.0 if any(m.emissive[:3]) else 0.0,
        two_sided=False, blend="BLEND" if m.diffuse[3] < 1.0 else "OPAQUE")
    out.extras.update({
        "u3d_index": m.i_material, "u3d_ambient": list(m.ambient), "u3d_diffuse": list(m.diffuse),
        "u3d_specular": list(m.specular), "u3d_emissive": list(m.emissive), "u3d_specular_power": power,
        "u3d_material_depth": float(m.material_depth), "u3d_parallax_quality": float(m.parallax_quality),
        "u3d_color_op": list(m.color_op), "u3d_tex_coord_set": list(m.tex_coord_set)})
    if m.shader_pack_exists:
        out.extras["u3d_shader_pack"] = (m.shader_pack or b"").hex()
    if m.extra:
        out.extras["u3d_extra"] = m.extra.hex()
    out.extras.update(m.extras)
    chain_on = True
    for stage, t in enumerate(m.textures):
        if not t.holds_texture:
            chain_on = chain_on and m.color_op[stage] != COLOR_OP_DISABLE
            continue
        files = list(t.files)
        first = len(scene.images)
        for f in files or [""]:          # a cube map's six faces; a 2D texture has one file
            path = resolve_texture(f, model_dir, search) if f else ""
            if f and not path:
                warnings.warn(f"texture {f!r} of material {out.name!r} not found")
            scene.images.append(Image(name=f, filepath=path))
        tcs = m.tex_coord_set[stage]
        uv = uv_name(tcs) if tcs < len(uv_dims) and uv_dims[tcs] == 2 else ""
        combine = _combine(stage, t, m.color_op[stage], chain_on, out.name, warnings)
        chain_on = chain_on and m.color_op[stage] != COLOR_OP_DISABLE
        slot = TextureSlot(kind=_kind(stage, t, m.color_op[stage], combine), image=first, uv_layer=uv, combine=combine,
                           cube_faces=tuple(range(first, first + 6)) if t.is_cube and len(files) == 6 else ())
        slot.extras.update({"u3d_stage": stage, "u3d_color_op": m.color_op[stage], "u3d_tex_coord_set": tcs,
                            "u3d_width": t.width, "u3d_height": t.height, "u3d_is_cube": bool(t.is_cube),
                            "u3d_is_normal_map": bool(t.is_normal_map), "u3d_height_scalar": t.height_scalar,
                            "u3d_files": files})
        if tcs >= TCI_FIRST:
            slot.extras["u3d_generated_coordinates"] = tcs   # D3DTSS_TCI_*: not a UV set
        out.textures.append(slot)
    return out


def _rgba(rgb, alpha: float) -> tuple[float, ...]:
    return tuple(float(c) for c in rgb[:3]) + (float(alpha),)


def _color(extras: dict, key: str, rgb, default_alpha: float) -> tuple[float, ...]:
    old = extras.get(key)
    return _rgba(rgb, float(old[3]) if old is not None and len(old) == 4 else default_alpha)


def material_from_scene(sm: SMaterial, index: int, scene: Scene, uv_names: list[str],
                        warnings: Warnings) -> Material:
    ex = sm.extras
    m = Material(i_material=index, name=sm.name)
    m.diffuse = _rgba(sm.base_color, sm.alpha)
    m.ambient = _color(ex, "u3d_ambient", sm.ambient, 1.0)
    m.specular = _color(ex, "u3d_specular", sm.specular_color if sm.specular > 0 else (0, 0, 0), 1.0)
    m.emissive = _color(ex, "u3d_emissive", sm.emission if sm.emission_strength > 0 else (0, 0, 0), 1.0)
    r = min(max(float(sm.roughness), 0.05), 1.0)
    m.specular_power = float(ex.get("u3d_specular_power", 2.0 / r ** 4 - 2.0))
    m.material_depth = float(ex.get("u3d_material_depth", 0.0))
    m.parallax_quality = float(ex.get("u3d_parallax_quality", 1.0))
    if "u3d_shader_pack" in ex:
        m.shader_pack_exists, m.shader_pack = 1, bytes.fromhex(str(ex["u3d_shader_pack"]))
    color_op = ([int(v) for v in ex.get("u3d_color_op", [])] + [COLOR_OP_DISABLE] * 8)[:8]
    tcs = ([int(v) for v in ex.get("u3d_tex_coord_set", [])] + [0] * 8)[:8]
    free = [s for s in range(8)]
    slots = sorted(sm.textures, key=lambda s: (int(s.extras.get("u3d_stage", 8)), s.kind != "base_color"))
    for slot in slots:
        stage = int(slot.extras.get("u3d_stage", -1))
        if stage not in free:
            stage = free[0] if free else -1
        if stage < 0 or not 0 <= slot.image < len(scene.images):
            warnings.warn(f"material {sm.name!r}: more than 8 textures or a missing image; extra maps dropped")
            continue
        free.remove(stage)
        img = scene.images[slot.image]
        ex_s = slot.extras
        files = _files(slot, scene)
        cube = len(files) == 6
        m.textures[stage] = Texture(holds_texture=1, width=int(ex_s.get("u3d_width", 0)),
                                    height=int(ex_s.get("u3d_height", 0)), is_cube=int(cube),
                                    is_normal_map=int(bool(ex_s.get("u3d_is_normal_map", slot.kind == "bump"))),
                                    height_scalar=float(ex_s.get("u3d_height_scalar", 1.0 if slot.kind == "bump"
                                                                 else 0.0)),
                                    files=files if cube else files[:1])
        color_op[stage] = _color_op(slot, stage)
        if slot.uv_layer and slot.uv_layer in uv_names:        # the UV Map node, as the user left it
            tcs[stage] = uv_names.index(slot.uv_layer)
        elif "u3d_tex_coord_set" in ex_s:
            tcs[stage] = int(ex_s["u3d_tex_coord_set"])
    m.color_op, m.tex_coord_set = tuple(color_op), tuple(tcs)
    m.extra = bytes.fromhex(str(ex.get("u3d_extra", "")))
    return m


def _color_op(slot: TextureSlot, stage: int) -> int:
    """The stage's colour operation: the file's own while the slot combines as that says (several
    operations show alike) or shows as its kind says, else the one its combine names."""
    old = slot.extras.get("u3d_color_op")
    if old is not None and (not slot.combine or OP_COMBINE.get(int(old), "") == slot.combine):
        return int(old)
    if slot.combine in COMBINE_OP:
        return COMBINE_OP[slot.combine]
    if slot.kind == "normal":
        return COLOR_OP_DOTPRODUCT3
    return COLOR_OP_MODULATE2X if stage == 0 else COLOR_OP_MODULATE


def _files(slot: TextureSlot, scene: Scene) -> list[str]:
    """The stage's file names: the images its nodes show (a cube map's six faces), under the names the
    file gave them while they are the same images."""
    faces = slot.cube_faces if len(slot.cube_faces) == 6 and all(
        0 <= i < len(scene.images) for i in slot.cube_faces) else (slot.image,)
    stored = [str(f) for f in slot.extras.get("u3d_files", [])]
    if stored == [scene.images[i].name for i in faces] or (len(stored) == 6 and not slot.cube_faces):
        return stored
    return [os.path.basename(scene.images[i].filepath) or scene.images[i].name for i in faces]
