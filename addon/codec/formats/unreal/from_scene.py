"""Neutral Scene -> Unreal Engine 1 vertex mesh model (the export side of scene.py's conventions).

Every mesh object is merged into the one mesh (merge.py), or with the option
separate_meshes each becomes a mesh of its own, named after its object, all
imported by the one script (its sequences: the animations named "Object:Sequence",
as an import of several meshes names them, else those that move it); each Scene
animation becomes a sequence, its frames laid after the previous ones
(frames.py). The reference object's matrix becomes the script's MESH ORIGIN,
rotation and MESHMAP SCALE, so the vertices keep the default scale; with
the variant "as imported" and the UNMIRROR an import recorded, an imported
mesh writes back the same raw integers, triangles, UVs and script lines.
"""
from __future__ import annotations

import numpy as np

from ... import axes
from ...errors import UnsupportedFeature, Warnings
from ...file_names import unique_name
from ...scene import Mesh, Scene
from . import files
from .conventions import BASIS, DEFAULT_SCALE, corner_order, rotation_angles, tidy, uv_from_blender
from .merge import MAX_FRAMES, merge, mesh_nodes
from .model import (BYTES_PER_VERTEX, DEUS_EX, MAX_VERTICES, PF_MASKED, PF_MODULATED, PF_TRANSLUCENT, STANDARD,
                    TRIANGLE, TYPE_WEAPON, AnimationFile, GeometryFile, MeshSetup, ScriptMeshes, Sequence, UnrealMesh)
from .packing import LIMITS, pack_axes, quantize_axes
from .ucscript import checked_identifier

_FLAGS_OF_BLEND = {"CLIP": PF_MASKED, "ADD": PF_TRANSLUCENT, "BLEND": PF_TRANSLUCENT, "MULTIPLY": PF_MODULATED}
AS_IMPORTED = "AS_IMPORTED"
MAX_TRIANGLES = 65535


def _object_setup(scene: Scene, node: int, default: np.ndarray, warnings: Warnings) -> tuple:
    """(origin, rotation, scale multiplier) for the script from the object's world matrix."""
    if node < 0:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), np.ones(3)
    b = axes.to4(BASIS)
    m = b @ scene.world_matrix(node) @ b
    t, q, s = axes.decompose(m)
    if (s <= 0).any():
        warnings.warn("the object's transform mirrors or collapses an axis; it is not written to the script")
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), np.ones(3)
    rot = axes.quat_to_matrix(q)
    origin = -np.linalg.solve(rot @ np.diag(s * default), t)    # inverse of scene.script_matrix
    return tuple(tidy(v) for v in origin), rotation_angles(rot), s


def _rate(scene: Scene, fps, extras: dict) -> float:
    """RATE of a sequence: its own frame rate (our `fps` property); for a sequence our import
    made, the script's RATE (`ue_rate`, 0 = none written); for any other, the scene's rate."""
    if fps:
        return float(fps)
    if "ue_rate" in extras:
        return float(extras["ue_rate"] or 0.0)
    return float(scene.fps or 0.0)


def _sequences(scene: Scene, options, placed, count: int, warnings: Warnings, own: str = "") -> list[Sequence]:
    """MESH SEQUENCEs in file frames: one per animation, or cut at the markers, or one over everything."""
    source = options.sequence_source.upper()
    out = []
    if source == "ANIMATIONS":
        for a, start, n, first in placed:
            if a is not None:
                out.append(Sequence(a.name, start, n, _rate(scene, a.fps, a.extras),
                                    str(a.extras.get("ue_group", "") or ""),
                                    [((m.frame - first) / n, m.name) for m in a.markers]))
    elif source == "MARKERS":
        _, start0, n0, first0 = placed[0]
        marks = sorted(scene.markers, key=lambda m: m.frame)
        for i, m in enumerate(marks):
            end = marks[i + 1].frame if i + 1 < len(marks) else first0 + n0
            lo, hi = max(m.frame, first0), min(end, first0 + n0)
            if hi <= lo:
                warnings.warn(f"marker {m.name!r} at frame {m.frame} starts no frame inside "
                              f"{first0}..{first0 + n0 - 1}; no sequence for it")
                continue
            if hi < end:
                warnings.warn(f"sequence {m.name!r} (frames {m.frame}..{end - 1}) is outside the written frames "
                              f"{first0}..{first0 + n0 - 1}; clipped")
            out.append(Sequence(m.name, start0 + lo - first0, hi - lo, float(scene.fps or 0.0)))
    elif source != "ALL":
        raise UnsupportedFeature(f"sequence_source must be ANIMATIONS, MARKERS or ALL, not {options.sequence_source!r}")
    for q in out:
        # an import of several meshes names each one's animations "Mesh:Sequence"
        q.name = q.name[len(own):] if own and q.name.lower().startswith(own.lower()) else q.name
        q.name = checked_identifier(q.name, "Seq", "sequence", warnings)
        q.notifies = [(t, checked_identifier(f, "Notify", "notify function", warnings)) for t, f in q.notifies]
    if not out:
        out = [Sequence("All", 0, count, float(scene.fps or 0.0))]
    return sorted(out, key=lambda q: (q.start, -q.count))     # file order: by start, longest first


def _texture_flags(mat, warnings: Warnings) -> int:
    """The poly flags the script gives a skin: as imported, else from the material's blend mode."""
    if mat is None:
        return 0
    kept = mat.extras.get("ue_texture_flags")
    if kept is not None:
        try:
            if 0 <= int(kept) < 1 << 32:
                return int(kept)
        except (TypeError, ValueError):
            pass
        warnings.warn(f"material {mat.name!r}: ue_texture_flags {kept!r} is not a flag word; "
                      "the flags follow its blend mode")
    return _FLAGS_OF_BLEND.get(mat.blend, 0)


def _textures(scene: Scene, skins: dict[int, int], numbers: np.ndarray, options, setup: MeshSetup,
              warnings: Warnings) -> None:
    """NUM -> (texture name, file), flags and kept parameters for each skin number a visible triangle uses."""
    for n in np.unique(numbers).tolist():
        i = skins.get(n, -1)
        mat = scene.materials[i] if 0 <= i < len(scene.materials) else None
        image = scene.images[mat.textures[0].image] if mat and mat.textures and 0 <= mat.textures[0].image < len(scene.images) else None
        name = checked_identifier(options.texture_prefix + ((mat.name if mat else "") or f"skin{n}"), f"skin{n}",
                                  "texture name", None)
        if image is not None:
            # the FILE as a script wrote it (our import names the image so), else the file on disk
            written = str(image.extras.get("ue_file") or "")
            if not written and image.name.lower().endswith(files.TEXTURE_EXTENSIONS):
                written = image.name
            file = written or "Textures\\" + (image.filepath.replace("\\", "/").rsplit("/", 1)[-1] or image.name)
        else:
            file = f"Textures\\{name}.pcx"
            warnings.warn(f"skin {n} has no image; the script imports {file}, which you must provide")
        setup.textures[n] = (name, file)
        setup.texture_flags[n] = _texture_flags(mat, warnings)
        if mat is not None and "ue_texture_params" in mat.extras:
            setup.texture_params[n] = str(mat.extras["ue_texture_params"])


def _variant(option: str, mesh: Mesh, warnings: Warnings) -> str:
    variant = option.upper()
    if variant == AS_IMPORTED:
        variant = str(mesh.extras.get("ue_variant", STANDARD)).upper()
        if variant not in (STANDARD, DEUS_EX):
            warnings.warn(f"mesh {mesh.name!r}: ue_variant {variant!r} is neither STANDARD nor DEUS_EX; "
                          "writing the standard packing")
            variant = STANDARD
    elif variant not in (STANDARD, DEUS_EX):
        raise UnsupportedFeature(f"variant must be AS_IMPORTED, STANDARD or DEUS_EX, not {option!r}")
    return variant


def from_scene(scene: Scene, options, warnings: Warnings) -> UnrealMesh | ScriptMeshes:
    pairs = mesh_nodes(scene)
    if not getattr(options, "separate_meshes", False) or len(pairs) < 2:
        return _one(scene, merge(scene, options, warnings), options, warnings)
    out, taken = [], set()
    names = [(scene.nodes[node].source_name or scene.nodes[node].name) if node >= 0 else mesh.name
             for node, mesh in pairs]
    for (node, mesh), name in zip(pairs, names):
        others = tuple(f"{n}:".lower() for n in names if n != name)
        model = _one(scene, merge(scene, options, warnings, [(node, mesh)], f"{name}:", others), options, warnings,
                     f"{name}:")
        model.name = unique_name(checked_identifier(name, "Mesh", "mesh name", warnings), taken)
        if model.setup is not None:
            model.setup.mesh = model.name
        out.append(model)
    return ScriptMeshes(out)


def _one(scene: Scene, merged, options, warnings: Warnings, own: str = "") -> UnrealMesh:
    variant = _variant(options.variant, merged.mesh, warnings)
    frames = merged.frames
    count = frames.shape[1]
    nv = frames.shape[2]
    if nv > MAX_VERTICES[variant]:
        raise UnsupportedFeature(f"mesh {merged.name!r} has {nv} vertices; the {variant.lower().replace('_', ' ')} "
                                 f"format holds at most {MAX_VERTICES[variant]} (its frame size is a 16-bit count)")
    tri = merged.corners
    if len(tri) > MAX_TRIANGLES:
        raise UnsupportedFeature(f"mesh {merged.name!r} has {len(tri)} triangles; the format holds at most {MAX_TRIANGLES}")
    if count > MAX_FRAMES:
        raise UnsupportedFeature(f"{count} frames; the format holds at most {MAX_FRAMES}")

    values = merged.values
    unmirror = bool(merged.mesh.extras.get("ue_unmirror", False))
    order = corner_order(values["ue_type"] & 15 == TYPE_WEAPON)
    if unmirror:
        order = order[:, [0, 2, 1]]                        # the engine swaps corners 1 and 2 back
    rows = np.arange(len(tri))[:, None]
    tris = np.zeros(len(tri), TRIANGLE)
    tris["v"] = tri[rows, order]
    if merged.uv is not None:
        uvb, clamped = uv_from_blender(merged.uv[rows, order])
        tris["uv"] = uvb
        if clamped:
            warnings.warn(f"{clamped} UV coordinates outside 0..1 were clamped (UE1 UVs are bytes, no tiling)")
    tris["type"] = (values["ue_type"] & 15) | (values["ue_flags"] & 0xF0)
    tris["color"], tris["texture"], tris["flags"] = values["ue_color"], values["ue_texture"], values["ue_flags_byte"]

    default = DEFAULT_SCALE[variant]
    to_raw = np.diag(BASIS) / default                      # Blender -> Unreal axes, then raw units
    if unmirror:
        to_raw = to_raw * [-1, 1, 1]                       # the engine's UNMIRROR=1 mirrors X back
    if options.scale == 0:
        lo, hi = LIMITS[variant]
        extent = np.array([max(abs(float(frames[a].min())), abs(float(frames[a].max()))) if frames[a].size else 0.0
                           for a in range(3)]) / default
        fit = np.where(extent > 0, np.minimum(-lo, hi) / np.where(extent > 0, extent, 1), np.inf).min()
        factor = float(fit) if np.isfinite(fit) else 1.0
        warnings.warn(f"automatic scale: positions x {factor:.6g} of the default fill the packed range")
    elif options.scale < 0:
        raise UnsupportedFeature("scale must be positive (or 0 for an automatic fit)")
    else:
        factor = float(options.scale)
    with np.errstate(over="ignore"):         # past float32: quantize_axes clamps it and says so
        for a in range(3):
            frames[a] *= np.float32(to_raw[a] * factor)
    raw, clamped = quantize_axes(frames, variant)
    if clamped:
        warnings.warn(f"{clamped} coordinates were outside the {variant.lower()} packed range and were clamped; "
                      "lower the scale or use scale 0 to fit")

    origin, rotation, mult = _object_setup(scene, merged.node, default, warnings)
    setup = None
    if options.write_uc:
        seqs = _sequences(scene, options, merged.placed, count, warnings, own)
        visible = values["ue_type"] & 15 != TYPE_WEAPON
        setup = MeshSetup(unmirror=unmirror, import_params=str(merged.mesh.extras.get("ue_import_params", "") or ""),
                          origin=tuple(tidy(o * factor) for o in origin), rotation=rotation,
                          scale=tuple(float(f'{v:.7g}') for v in mult * default / factor), sequences=seqs,
                          package=checked_identifier(options.package_name, "", "package", warnings),
                          texture_group=checked_identifier(options.texture_group, "Skins", "texture group", warnings))
        _textures(scene, merged.skins, values["ue_texture"][visible], options, setup, warnings)
    geometry = GeometryFile(len(tris), nv, bytes(44), tris, b"")
    frame_file = AnimationFile(count, nv * BYTES_PER_VERTEX[variant], pack_axes(raw, variant), b"")
    return UnrealMesh(merged.name, variant, geometry, frame_file, setup=setup, notes=warnings)
