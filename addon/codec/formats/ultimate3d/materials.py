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
COLOR_OP_DISABLE, COLOR_OP_MODULATE, COLOR_OP_MODULATE2X = 1, 4, 5


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


def _kind(stage: int, t: Texture) -> str:
    if t.is_cube:
        return "environment"
    if t.is_normal_map:
        return "bump"
    return "base_color" if stage == 0 else "other"


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
    for stage, t in enumerate(m.textures):
        if not t.holds_texture:
            continue
        files = list(t.files)
        for f in files:
            if f and not resolve_texture(f, model_dir, search):
                warnings.warn(f"texture {f!r} of material {out.name!r} not found")
        scene.images.append(Image(name=files[0] if files else "",
                                  filepath=resolve_texture(files[0], model_dir, search) if files else ""))
        tcs = m.tex_coord_set[stage]
        uv = uv_name(tcs) if tcs < len(uv_dims) and uv_dims[tcs] == 2 else ""
        slot = TextureSlot(kind=_kind(stage, t), image=len(scene.images) - 1, uv_layer=uv)
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
        files = [str(f) for f in ex_s.get("u3d_files", [])] or [os.path.basename(img.filepath) or img.name]
        cube = bool(ex_s.get("u3d_is_cube", False)) and len(files) == 6
        m.textures[stage] = Texture(holds_texture=1, width=int(ex_s.get("u3d_width", 0)),
                                    height=int(ex_s.get("u3d_height", 0)), is_cube=int(cube),
                                    is_normal_map=int(bool(ex_s.get("u3d_is_normal_map", slot.kind == "bump"))),
                                    height_scalar=float(ex_s.get("u3d_height_scalar", 1.0 if slot.kind == "bump"
                                                                 else 0.0)),
                                    files=files if cube else files[:1])
        color_op[stage] = int(ex_s.get("u3d_color_op", COLOR_OP_MODULATE2X if stage == 0 else COLOR_OP_MODULATE))
        if "u3d_tex_coord_set" in ex_s:
            tcs[stage] = int(ex_s["u3d_tex_coord_set"])
        elif slot.uv_layer in uv_names:
            tcs[stage] = uv_names.index(slot.uv_layer)
    m.color_op, m.tex_coord_set = tuple(color_op), tuple(tcs)
    m.extra = bytes.fromhex(str(ex.get("u3d_extra", "")))
    return m
