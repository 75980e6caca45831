"""Neutral Scene -> Unreal Engine 1 vertex mesh model (the export side of scene.py's conventions).

Each Scene animation becomes a sequence, its frames laid after the previous
ones (codec.animation replays shape keys, skin and motion; the bridge bakes
meshes that modifiers deform). A mesh without animation writes its shape
keys as frames (key i = frame i; no keys = one frame). The object's matrix becomes
the script's MESH ORIGIN, rotation and MESHMAP SCALE, so the vertices keep
the default scale and an imported mesh writes back the same raw integers.
"""
from __future__ import annotations

import numpy as np

from ... import animation, axes
from ...errors import UnsupportedFeature, Warnings
from ...scene import Animation, Mesh, Scene
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


def _takes(scene: Scene, mesh: Mesh, node: int) -> list[tuple[Animation | None, np.ndarray, np.ndarray]]:
    """(animation, scene frame numbers, (F, V, 3) positions) per animation to write.

    Frames the bridge baked per animation (meshes that modifiers deform) are shape keys listed
    in mesh.extras["baked_frames"] / ["baked_animation"]. Animations that drive the mesh are
    replayed by codec.animation. Otherwise the shape keys are one timeline (key i = frame i, or
    the frames in "baked_frames") and each animation names the range of it that it covers."""
    keys = mesh.shape_keys or []
    baked = mesh.extras.get("baked_frames")
    owner = mesh.extras.get("baked_animation")
    if baked and owner and len(baked) == len(keys) == len(owner):
        owner, numbers, out = np.asarray(owner, np.int64), np.asarray(baked, np.int64), []
        for a in sorted(set(owner.tolist())):
            pick = np.flatnonzero(owner == a)
            anim = scene.animations[a] if 0 <= a < len(scene.animations) else None
            pos = np.stack([np.asarray(keys[k].positions, np.float32) for k in pick])
            out.append((anim, numbers[pick], _moved(scene, anim, node, numbers[pick], pos)))
        return out
    if node >= 0 and any(_drives(scene, a, node, mesh) for a in scene.animations):
        return [(a, animation.frames_of(a).astype(np.int64),
                 animation.mesh_frames(scene, a, node, animation.frames_of(a))) for a in scene.animations]
    stack = np.stack([np.asarray(k.positions, np.float32) for k in keys]) if keys else \
        np.asarray(mesh.positions, np.float32)[None]
    numbers = np.asarray(baked if baked and len(baked) == len(stack) else range(len(stack)), np.int64)
    mover = next((a for a in scene.animations if _drives(scene, a, node, mesh)), None)
    stack = _moved(scene, mover, node, numbers, stack)
    out = [(None, numbers, stack)]
    for a in scene.animations:
        pick = (numbers >= a.frame_start - 1e-6) & (numbers <= a.frame_end + 1e-6)
        if pick.any():
            out.append((a, numbers[pick], stack[pick]))
    return out


def _drives(scene: Scene, anim: Animation, node: int, mesh: Mesh) -> bool:
    """Does the animation change the mesh: its shape keys, its skin's bones, or the motion of
    the object or its parents?"""
    if node < 0:
        return False
    keys = {f'key_blocks["{k.name}"].value' for k in mesh.shape_keys}
    if any(c.target == node and c.path in keys for c in anim.channels):
        return True
    if mesh.skin is not None and any(c.bone and scene.nodes[c.target].kind == "ARMATURE" and
                                     scene.nodes[c.target].data == mesh.skin.armature
                                     for c in anim.channels if 0 <= c.target < len(scene.nodes)):
        return True
    i = node
    while 0 <= i < len(scene.nodes):
        if animation.moves(anim, i):
            return True
        i = scene.nodes[i].parent
    return False


def _moved(scene: Scene, anim, node: int, numbers: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Baked vertices moved by the object's animation relative to its rest placement."""
    if node < 0 or anim is None:
        return pos
    rel = np.linalg.inv(scene.world_matrix(node)) @ animation.world_matrices(scene, anim, node, numbers)
    if np.allclose(rel, np.eye(4), atol=1e-7):
        return pos
    return (np.einsum("fij,fvj->fvi", rel[:, :3, :3], pos) + rel[:, None, :3, 3]).astype(np.float32)


def _frames(scene: Scene, mesh: Mesh, node: int, options, warnings: Warnings):
    """(3, F, V) float32 positions to write, and per animation (animation, first file frame, count,
    its first scene frame). Animations are laid one after another; one whose frames are already
    written (an "All" sequence and the sequences inside it) points at them instead."""
    takes = _takes(scene, mesh, node)
    if not options.use_scene_range:
        if options.frame_end < options.frame_start:
            raise UnsupportedFeature(f"the end frame {options.frame_end} is before the start frame "
                                     f"{options.frame_start}")
        have = np.concatenate([n for _, n, _ in takes])
        kept = []
        for a, n, p in takes:
            pick = (n >= options.frame_start) & (n <= options.frame_end)
            if pick.any():
                kept.append((a, n[pick], p[pick]))
        missing = (options.frame_end - options.frame_start + 1) - len(np.unique(np.concatenate(
            [n for _, n, _ in kept]))) if kept else 0
        if not kept:
            raise UnsupportedFeature(f"frame range {options.frame_start}..{options.frame_end} selects none of the "
                                     f"frames ({have.min()}..{have.max()})")
        if missing:
            warnings.warn(f"frame range {options.frame_start}..{options.frame_end}: {missing} of its frames are "
                          f"not in the scene ({have.min()}..{have.max()}); writing the rest")
        takes = kept
    written: list[np.ndarray] = []
    where: dict[bytes, list[int]] = {}
    placed = []
    for a, numbers, pos in takes:
        start = _find_run(written, where, pos)
        if start < 0:
            start = len(written)
            for f in pos:
                where.setdefault(f.tobytes(), []).append(len(written))
                written.append(f)
        placed.append((a, start, len(pos), int(numbers[0])))
    frames = np.ascontiguousarray(np.stack(written).transpose(2, 0, 1))       # axis-major: contiguous per axis
    return frames, placed


def _find_run(written: list[np.ndarray], where: dict[bytes, list[int]], pos: np.ndarray) -> int:
    """The first written frame from which `pos` is already there, frame for frame, or -1."""
    for start in where.get(pos[0].tobytes(), []):
        if start + len(pos) <= len(written) and all(
                np.array_equal(written[start + k], pos[k]) for k in range(1, len(pos))):
            return start
    return -1


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


def _sequences(scene: Scene, options, placed, count: int, warnings: Warnings) -> list[Sequence]:
    """MESH SEQUENCEs in file frames: one per animation, or cut at the markers, or one over everything."""
    source = options.sequence_source.upper()
    out = []
    if source == "ANIMATIONS":
        for a, start, n, first in placed:
            if a is None:
                continue
            out.append(Sequence(a.name, start, n, _rate(scene, a.fps, a.extras), str(a.extras.get("ue_group", "") or ""),
                                [((m.frame - first) / n, m.name) for m in a.markers]))
    elif source == "MARKERS":
        _, start0, n0, first0 = placed[0]
        marks = sorted(scene.markers, key=lambda m: m.frame)
        for i, m in enumerate(marks):
            end = marks[i + 1].frame if i + 1 < len(marks) else first0 + n0
            lo, hi = max(m.frame, first0), min(end, first0 + n0)
            if hi < end and hi > lo:
                warnings.warn(f"sequence {m.name!r} (frames {m.frame}..{end - 1}) is outside the written frames "
                              f"{first0}..{first0 + n0 - 1}; clipped")
            if hi <= lo:
                warnings.warn(f"marker {m.name!r} at frame {m.frame} starts no frame inside "
                              f"{first0}..{first0 + n0 - 1}; no sequence for it")
                continue
            out.append(Sequence(m.name, start0 + lo - first0, hi - lo, float(scene.fps or 0.0)))
    elif source != "ALL":
        raise UnsupportedFeature(f"sequence_source must be ANIMATIONS, MARKERS or ALL, not {options.sequence_source!r}")
    for q in out:
        q.name = checked_identifier(q.name, "Seq", "sequence", warnings)
        q.notifies = [(t, checked_identifier(f, "Notify", "notify function", warnings)) for t, f in q.notifies]
    if not out:
        out = [Sequence("All", 0, count, float(scene.fps or 0.0))]
    return sorted(out, key=lambda q: (q.start, -q.count))     # file order: by start, longest first


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
    frames, placed = _frames(scene, mesh, node, options, warnings)
    count = frames.shape[1]
    if count > MAX_FRAMES:
        raise UnsupportedFeature(f"{count} frames; the format holds at most {MAX_FRAMES}")

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
        seqs = _sequences(scene, options, placed, count, warnings)
        visible = values["ue_type"] & 15 != TYPE_WEAPON
        setup = MeshSetup(origin=tuple(tidy(o * factor) for o in origin), rotation=rotation,
                          scale=tuple(float(f'{v:.7g}') for v in mult * default / factor), sequences=seqs,
                          textures=_textures(scene, mesh, values["ue_texture"][visible], options, warnings),
                          package=checked_identifier(options.package_name, "", "package", warnings),
                          texture_group=checked_identifier(options.texture_group, "Skins", "texture group", warnings))
    geometry = GeometryFile(len(tris), nv, bytes(44), tris, b"")
    frame_file = AnimationFile(count, nv * BYTES_PER_VERTEX[variant], pack_axes(raw, variant), b"")
    return UnrealMesh(mesh.name, variant, geometry, frame_file, setup=setup, notes=warnings)
