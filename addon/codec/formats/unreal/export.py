"""Neutral Scene -> Unreal Engine 1 vertex mesh model (the export side of scene.py's conventions).

The Scene holds one mesh whose shape keys are the baked absolute frames
(key i = output frame i; no keys = one frame). The object's matrix becomes
the script's MESH ORIGIN, rotation and MESHMAP SCALE, so the vertices keep
the default scale and an imported mesh writes back the same raw integers.
"""
from __future__ import annotations

import numpy as np

from ... import axes
from ...errors import UnsupportedFeature, Warnings
from ...scene import Mesh, Scene
from . import files
from .model import (BYTES_PER_VERTEX, DEUS_EX, MAX_VERTICES, STANDARD, TRIANGLE, TYPE_NORMAL, TYPE_TWO_SIDED,
                    TYPE_WEAPON, AnimationFile, GeometryFile, MeshSetup, Sequence, UnrealMesh)
from .packing import LIMITS, pack_axes, quantize_axes
from .scene import BASIS, DEFAULT_SCALE, corner_order, rotation_angles, tidy, uv_from_blender
from .ucscript import checked_identifier

_TYPE_OF_BLEND = {"BLEND": 2, "ADD": 2, "CLIP": 3, "MULTIPLY": 4}
MAX_TRIANGLES = 65535
MAX_FRAMES = 65535


def _pick_mesh(scene: Scene, warnings: Warnings) -> tuple[Mesh, int]:
    nodes = [i for i, n in enumerate(scene.nodes) if n.kind == "MESH" and 0 <= n.data < len(scene.meshes)]
    if not nodes and not scene.meshes:
        raise UnsupportedFeature("nothing to export: the scene has no mesh")
    if len(nodes) > 1 or (not nodes and len(scene.meshes) > 1):
        warnings.warn("an Unreal vertex mesh holds one mesh; only the first is written")
    return (scene.meshes[scene.nodes[nodes[0]].data], nodes[0]) if nodes else (scene.meshes[0], -1)


def _triangulate(mesh: Mesh) -> tuple[np.ndarray, np.ndarray]:
    """((T, 3) corner indices, (T,) source face) per triangle; polygons fan out."""
    starts = np.asarray(mesh.faces, np.int64)
    sizes = mesh.face_sizes
    if len(sizes) and sizes.min() < 3:
        raise UnsupportedFeature("the mesh has faces with fewer than 3 corners")
    if len(sizes) == 0 or (sizes == 3).all():
        return np.arange(len(mesh.corners), dtype=np.int64).reshape(-1, 3), np.arange(len(sizes))
    per = sizes - 2
    face = np.repeat(np.arange(len(sizes)), per)
    k = np.arange(per.sum()) - np.repeat(np.cumsum(per) - per, per)
    first = starts[face]
    return np.stack([first, first + k + 1, first + k + 2], axis=1), face


def _face_values(scene: Scene, mesh: Mesh, face: np.ndarray, warnings: Warnings) -> dict[str, np.ndarray]:
    """Type, flag bits, colour, skin and Flags byte per triangle: attributes first, else materials."""
    slot = np.asarray(mesh.face_material if mesh.face_material is not None
                      else np.zeros(len(mesh.faces), np.int32), np.int64)[face]
    mats = [scene.materials[i] if 0 <= i < len(scene.materials) else None for i in mesh.materials] or [None]
    slot = np.clip(slot, 0, len(mats) - 1)

    def per_slot(fn) -> np.ndarray:
        return np.array([fn(m, i) for i, m in enumerate(mats)], np.int64)[slot]

    def mat_type(m, i) -> int:
        if m is None:
            return TYPE_NORMAL
        if "ue_type" in m.extras:
            return int(m.extras["ue_type"]) & 15
        if m.extras.get("ue_weapon"):
            return TYPE_WEAPON
        return _TYPE_OF_BLEND.get(m.blend, TYPE_TWO_SIDED if m.two_sided else TYPE_NORMAL)

    fa = mesh.face_attributes
    out = {
        "ue_type": fa["ue_type"][face] if "ue_type" in fa else per_slot(mat_type),
        "ue_flags": fa["ue_flags"][face] if "ue_flags" in fa else per_slot(
            lambda m, i: int(m.extras.get("ue_flags", 0)) if m else 0),
        "ue_color": fa["ue_color"][face] if "ue_color" in fa else np.zeros(len(face), np.int64),
        "ue_texture": _texture_numbers(fa, face, per_slot),
        "ue_flags_byte": fa["ue_flags_byte"][face] if "ue_flags_byte" in fa else np.zeros(len(face), np.int64),
    }
    for name, v in out.items():
        if v.min(initial=0) < 0 or v.max(initial=0) > 255:
            warnings.warn(f"face attribute {name} has values outside 0..255; clamped")
    return {k: np.clip(np.asarray(v, np.int64), 0, 255) for k, v in out.items()}


def _texture_numbers(fa: dict, face: np.ndarray, per_slot) -> np.ndarray:
    """Skin numbers from material slots: the material's `ue_texture` (set on import), else the
    slot index. Faces without a material, or in the weapon material, keep the face attribute."""
    from_material = per_slot(lambda m, i: int(m.extras["ue_texture"]) if m and "ue_texture" in m.extras
                             else (-1 if m is None or m.extras.get("ue_weapon") else i))
    if "ue_texture" not in fa:
        return np.where(from_material >= 0, from_material, per_slot(lambda m, i: i))
    return np.where(from_material >= 0, from_material, np.asarray(fa["ue_texture"])[face])


def _frames(scene: Scene, mesh: Mesh, node: int, options, warnings: Warnings) -> tuple[np.ndarray, np.ndarray]:
    """(F, V, 3) float32 positions to write, and the scene frame number of each.

    Shape key i is frame mesh.extras["baked_frames"][i] when the bridge baked
    them, else frame i. Every frame, or with `use_scene_range` off the frames
    `frame_start`..`frame_end` by number, exactly as given.
    """
    keys = mesh.shape_keys or []
    stack = [k.positions for k in keys] if keys else [mesh.positions]
    numbers = np.asarray(mesh.extras.get("baked_frames") or range(len(stack)), np.int64)
    if len(numbers) != len(stack):
        numbers = np.arange(len(stack))
    if options.use_scene_range:
        pick = np.ones(len(numbers), bool)
    else:
        if options.frame_end < options.frame_start:
            raise UnsupportedFeature(f"the end frame {options.frame_end} is before the start frame "
                                     f"{options.frame_start}")
        pick = (numbers >= options.frame_start) & (numbers <= options.frame_end)
        missing = (options.frame_end - options.frame_start + 1) - int(pick.sum())
        if pick.any() and missing:
            warnings.warn(f"frame range {options.frame_start}..{options.frame_end}: {missing} of its frames are "
                          f"not in the scene ({numbers[0]}..{numbers[-1]}); writing the {int(pick.sum())} that are")
    if not pick.any():
        raise UnsupportedFeature(f"frame range {options.frame_start}..{options.frame_end} selects none of the "
                                 f"{len(stack)} frames ({numbers[0]}..{numbers[-1]})")
    frames = np.empty((3, int(pick.sum()), len(stack[0])), np.float32)     # axis-major: contiguous per axis
    for f, i in enumerate(np.flatnonzero(pick)):
        frames[:, f, :] = np.asarray(stack[i]).T
    _apply_object_animation(scene, node, frames, numbers[pick])
    return frames, numbers[pick]


def _local_per_frame(scene: Scene, node: int, numbers: np.ndarray) -> np.ndarray | None:
    """(F, 4, 4) local matrices of a node from its TRS channels, or None when it does not move."""
    trs = {ch.path: ch for anim in scene.animations for ch in anim.channels
           if ch.target == node and not ch.bone and ch.path in ("location", "rotation_quaternion", "scale")}
    if not trs:
        return None
    t0, q0, s0 = axes.decompose(scene.nodes[node].matrix)

    def sample(path, rest):
        ch = trs.get(path)
        if ch is None:
            return np.tile(rest, (len(numbers), 1))
        values = np.asarray(ch.values, np.float64).reshape(len(ch.frames), -1)
        idx = np.clip(np.searchsorted(np.asarray(ch.frames), numbers, side="right") - 1, 0, len(values) - 1)
        return values[idx]

    return axes.compose(sample("location", t0), sample("rotation_quaternion", q0), sample("scale", s0))


def _apply_object_animation(scene: Scene, node: int, frames: np.ndarray, numbers: np.ndarray) -> None:
    """Bake a moving object (or moving parents) into its (3, F, V) vertices: v' = M^-1 M(f) v,
    M the node's world matrix as collected."""
    if node < 0:
        return
    world = np.tile(np.eye(4), (len(numbers), 1, 1))
    moved, i = False, node
    while i >= 0:                                   # child to root: world = ... parent @ local
        local = _local_per_frame(scene, i, numbers)
        moved |= local is not None
        n = scene.nodes[i]
        world = (n.matrix_parent_inverse @ (local if local is not None else n.matrix)) @ world
        i = n.parent
    if not moved:
        return
    rel = np.linalg.inv(scene.world_matrix(node)) @ world            # (F, 4, 4)
    if np.allclose(rel, np.eye(4), atol=1e-7):
        return
    frames[:] = (np.einsum("fij,jfv->ifv", rel[:, :3, :3], frames) + rel[:, :3, 3].T[:, :, None]).astype(np.float32)


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


def _candidates(scene: Scene, source: str) -> list[Sequence]:
    """Named ranges in scene frame numbers, from the bridge's ranges or the Scene itself."""
    ranges = scene.metadata.get("ranges")
    if source == "ANIMATIONS":
        if ranges is not None:
            return [Sequence(str(r["name"]), int(round(r["start"])), int(round(r["end"] - r["start"])) + 1,
                             _rate(scene, r.get("fps", 0.0), r.get("extras") or {}), str(r.get("group", "") or ""),
                             [(float(t), str(f)) for t, f in r.get("notifies", [])])
                    for r in ranges if r.get("source") in ("ACTION", "NLA")]
        out = []
        for a in scene.animations:
            start, end = int(round(a.frame_start)), int(round(a.frame_end))
            if end >= start:
                count = end - start + 1
                out.append(Sequence(a.name, start, count, _rate(scene, a.fps, a.extras),
                                    str(a.extras.get("ue_group", "") or ""),
                                    [((m.frame - start) / count, m.name) for m in a.markers]))
        return out
    if source == "MARKERS":
        marks = sorted(scene.markers, key=lambda m: m.frame)
        return [Sequence(m.name, m.frame, (marks[i + 1].frame - m.frame) if i + 1 < len(marks) else -1,
                         float(scene.fps or 0.0)) for i, m in enumerate(marks)]
    if source == "ALL":
        return []
    raise UnsupportedFeature(f"sequence_source must be ANIMATIONS, MARKERS or ALL, not {source!r}")


def _sequences(scene: Scene, options, numbers: np.ndarray, warnings: Warnings) -> list[Sequence]:
    """MESH SEQUENCEs in file frames (index into the written frames), clipped to them."""
    first, count = int(numbers[0]), len(numbers)
    out = _candidates(scene, options.sequence_source.upper())
    kept = []
    for q in out:
        if q.count < 0:                       # the last marker runs to the end
            q.count = first + count - q.start
        if q.count < 1:
            warnings.warn(f"marker {q.name!r} at frame {q.start} starts no frame inside "
                          f"{first}..{first + count - 1}; no sequence for it")
            continue
        q.start -= first
        if q.start < 0 or q.start + q.count > count:
            warnings.warn(f"sequence {q.name!r} (frames {q.start + first}..{q.start + first + q.count - 1}) "
                          f"is outside the written frames {first}..{first + count - 1}; clipped")
            lo, hi = max(q.start, 0), min(q.start + q.count, count)
            if hi <= lo:
                continue
            q.start, q.count = lo, hi - lo
        q.name = checked_identifier(q.name, "Seq", "sequence", warnings)
        q.notifies = [(t, checked_identifier(f, "Notify", "notify function", warnings)) for t, f in q.notifies]
        kept.append(q)
    if not kept:
        kept = [Sequence("All", 0, count, float(scene.fps or 0.0))]
    return sorted(kept, key=lambda q: (q.start, -q.count))     # file order: by start, longest first


def _textures(scene: Scene, mesh: Mesh, numbers: np.ndarray, options, warnings: Warnings) -> dict[int, tuple[str, str]]:
    """NUM -> (texture name, file) for each skin number used by a visible triangle."""
    out: dict[int, tuple[str, str]] = {}
    for n in np.unique(numbers).tolist():
        mats = [scene.materials[i] for i in mesh.materials if 0 <= i < len(scene.materials)
                and int(scene.materials[i].extras.get("ue_texture", -1)) == n]
        if not mats and 0 <= n < len(mesh.materials) and 0 <= mesh.materials[n] < len(scene.materials):
            mats = [scene.materials[mesh.materials[n]]]
        mat = mats[0] if mats else None
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
        out[n] = (name, file)
    return out


def from_scene(scene: Scene, options, warnings: Warnings) -> UnrealMesh:
    variant = options.variant.upper()
    if variant not in (STANDARD, DEUS_EX):
        raise UnsupportedFeature(f"variant must be STANDARD or DEUS_EX, not {options.variant!r}")
    mesh, node = _pick_mesh(scene, warnings)
    nv = len(mesh.positions)
    if nv > MAX_VERTICES[variant]:
        raise UnsupportedFeature(f"mesh {mesh.name!r} has {nv} vertices; the {variant.lower().replace('_', ' ')} "
                                 f"format holds at most {MAX_VERTICES[variant]} (its frame size is a 16-bit count)")
    tri, face = _triangulate(mesh)
    if len(tri) > MAX_TRIANGLES:
        raise UnsupportedFeature(f"mesh {mesh.name!r} has {len(tri)} triangles; the format holds at most {MAX_TRIANGLES}")
    frames, numbers = _frames(scene, mesh, node, options, warnings)
    if len(numbers) > MAX_FRAMES:
        raise UnsupportedFeature(f"{len(numbers)} frames; the format holds at most {MAX_FRAMES}")

    values = _face_values(scene, mesh, face, warnings)
    order = corner_order(values["ue_type"] & 15 == TYPE_WEAPON)
    rows = np.arange(len(tri))[:, None]
    file_corners = tri[rows, order]                        # corner indices in file order
    tris = np.zeros(len(tri), TRIANGLE)
    tris["v"] = np.asarray(mesh.corners, np.int64)[file_corners]
    uv = next(iter(mesh.uv_layers.values()), None)
    if uv is not None:
        uvb, clamped = uv_from_blender(np.asarray(uv)[file_corners])
        tris["uv"] = uvb
        if clamped:
            warnings.warn(f"{clamped} UV coordinates outside 0..1 were clamped (UE1 UVs are bytes, no tiling)")
    tris["type"] = (values["ue_type"] & 15) | (values["ue_flags"] & 0xF0)
    tris["color"], tris["texture"], tris["flags"] = values["ue_color"], values["ue_texture"], values["ue_flags_byte"]

    default = DEFAULT_SCALE[variant]
    to_raw = np.diag(BASIS) / default                      # Blender -> Unreal axes, then raw units
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
    for a in range(3):
        frames[a] *= np.float32(to_raw[a] * factor)
    raw, clamped = quantize_axes(frames, variant)
    if clamped:
        warnings.warn(f"{clamped} coordinates were outside the {variant.lower()} packed range and were clamped; "
                      "lower the scale or use scale 0 to fit")

    origin, rotation, mult = _object_setup(scene, node, default, warnings)
    setup = None
    if options.write_uc:
        seqs = _sequences(scene, options, numbers, warnings)
        visible = values["ue_type"] & 15 != TYPE_WEAPON
        setup = MeshSetup(origin=tuple(tidy(o * factor) for o in origin), rotation=rotation,
                          scale=tuple(float(f'{v:.7g}') for v in mult * default / factor), sequences=seqs,
                          textures=_textures(scene, mesh, values["ue_texture"][visible], options, warnings),
                          package=checked_identifier(options.package_name, "", "package", warnings),
                          texture_group=checked_identifier(options.texture_group, "Skins", "texture group", warnings))
    geometry = GeometryFile(len(tris), nv, bytes(44), tris, b"")
    animation = AnimationFile(len(numbers), nv * BYTES_PER_VERTEX[variant], pack_axes(raw, variant), b"")
    return UnrealMesh(mesh.name, variant, geometry, animation, setup=setup, notes=warnings)
