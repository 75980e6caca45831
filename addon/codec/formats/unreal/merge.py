"""Every mesh of a Scene -> the one vertex mesh an Unreal pair holds (the export's gathering step).

An Unreal mesh is one vertex list and one triangle list, so export merges
every mesh object it is given, as the UNIGINE exporter does: each object's
frames (frames.py: per animation, laid one after another) are placed
in the space of one reference object, whose matrix becomes the script's
MESH ORIGIN and MESHMAP SCALE; every other object keeps its place relative
to it. Each material becomes one skin number, shared by all objects using it.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import meshops
from ...axes import inverse_or_identity
from ...errors import UnsupportedFeature, Warnings
from ...scene import Mesh, Scene
from .frames import drives, lay_out, positions, takes
from .model import TYPE_NORMAL, TYPE_TWO_SIDED, TYPE_WEAPON

MAX_FRAMES = 65535          # the frame count is 16 bits

_TYPE_OF_BLEND = {"BLEND": 2, "ADD": 2, "CLIP": 3, "MULTIPLY": 4}
ATTRIBUTES = ("ue_type", "ue_flags", "ue_color", "ue_texture", "ue_flags_byte")


@dataclass
class Merged:
    """The arrays export writes: vertices per frame in the reference object's space."""

    name: str                    # the reference mesh's name
    node: int                    # the reference node (-1: a mesh no node shows)
    mesh: Mesh                   # the reference mesh (its extras say how it was imported)
    frames: np.ndarray           # (3, F, V) float32, axis-major
    placed: list                 # per animation: (animation or None, first frame, count, first scene frame)
    corners: np.ndarray          # (T, 3) vertex index per triangle corner, Blender order
    uv: np.ndarray | None        # (T, 3, 2) Blender UVs, or None when no object has any
    values: dict[str, np.ndarray]    # ATTRIBUTES, (T,) each, 0..255
    skins: dict[int, int]        # skin number -> scene material index


def mesh_nodes(scene: Scene) -> list[tuple[int, Mesh]]:
    """(node, mesh) of every mesh object; meshes no node shows come last, with node -1."""
    pairs = [(i, scene.meshes[n.data]) for i, n in enumerate(scene.nodes)
             if n.kind == "MESH" and 0 <= n.data < len(scene.meshes)]
    shown = {id(m) for _, m in pairs}
    return pairs + [(-1, m) for m in scene.meshes if id(m) not in shown]


def reference(pairs: list[tuple[int, Mesh]]) -> int:
    """Which object places the merged mesh: the first one imported from an Unreal pair, else the first."""
    return next((k for k, (_, m) in enumerate(pairs) if "ue_variant" in m.extras), 0)


def triangulate(mesh: Mesh) -> tuple[np.ndarray, np.ndarray]:
    """meshops.triangulate; a face of fewer than 3 corners is refused, not skipped."""
    if len(mesh.faces) and mesh.face_sizes.min() < 3:
        raise UnsupportedFeature(f"mesh {mesh.name!r} has faces with fewer than 3 corners")
    return meshops.triangulate(mesh.faces, len(mesh.corners))


def skin_numbers(scene: Scene, meshes: list[Mesh], warnings: Warnings) -> dict[int, int]:
    """Scene material index -> skin number. A material our import made keeps its number
    (`ue_texture`) unless a material with another image holds it already (two merged
    imports); any other takes its slot index in the first object that has it, or when
    that number is held, the lowest free one."""
    slots: dict[int, int] = {}
    for m in meshes:
        for k, i in enumerate(m.materials):
            if 0 <= i < len(scene.materials) and not scene.materials[i].extras.get("ue_weapon"):
                slots.setdefault(i, k)

    def image(i: int) -> int:
        return scene.materials[i].textures[0].image if scene.materials[i].textures else -1

    out: dict[int, int] = {}
    holder: dict[int, int] = {}                  # number -> image of the material holding it
    for i in slots:
        n = scene.materials[i].extras.get("ue_texture")
        if n is not None and holder.setdefault(int(n), image(i)) == image(i):
            out[i] = int(n)
    for i, k in slots.items():
        if i in out:
            continue
        wanted = scene.materials[i].extras.get("ue_texture", k)
        n = int(wanted) if int(wanted) not in holder else next((n for n in range(256) if n not in holder), 255)
        if n != int(wanted) and "ue_texture" in scene.materials[i].extras:
            warnings.warn(f"material {scene.materials[i].name!r}: skin number {wanted} is another skin's; "
                          f"it gets {n}")
        out[i] = n
        holder[n] = image(i)
    return out


def _face_values(scene: Scene, mesh: Mesh, face: np.ndarray, numbers: dict[int, int],
                 warnings: Warnings) -> dict[str, np.ndarray]:
    """Type, flag bits, colour, skin and Flags byte per triangle: attributes first, else materials."""
    slot = np.asarray(mesh.face_material if mesh.face_material is not None
                      else np.zeros(len(mesh.faces), np.int32), np.int64)[face]
    index = list(mesh.materials) or [-1]
    slot = np.clip(slot, 0, len(index) - 1)
    mats = [scene.materials[i] if 0 <= i < len(scene.materials) else None for i in index]

    def per_slot(fn) -> np.ndarray:
        return np.array([fn(m, i) for m, i in zip(mats, index)], np.int64)[slot]

    def mat_type(m, i) -> int:
        if m is None:
            return TYPE_NORMAL
        if "ue_type" in m.extras:
            return int(m.extras["ue_type"]) & 15
        if m.extras.get("ue_weapon"):
            return TYPE_WEAPON
        return _TYPE_OF_BLEND.get(m.blend, TYPE_TWO_SIDED if m.two_sided else TYPE_NORMAL)

    fa = mesh.face_attributes
    zero = np.zeros(len(face), np.int64)
    # faces without a material, or in the weapon material, keep their face attribute (else their slot)
    skin = per_slot(lambda m, i: numbers.get(i, -1))
    kept = np.asarray(fa["ue_texture"])[face] if "ue_texture" in fa else slot
    out = {
        "ue_type": fa["ue_type"][face] if "ue_type" in fa else per_slot(mat_type),
        "ue_flags": fa["ue_flags"][face] if "ue_flags" in fa else per_slot(
            lambda m, i: int(m.extras.get("ue_flags", 0)) if m else 0),
        "ue_color": fa["ue_color"][face] if "ue_color" in fa else zero,
        "ue_texture": np.where(skin >= 0, skin, kept),
        "ue_flags_byte": fa["ue_flags_byte"][face] if "ue_flags_byte" in fa else zero,
    }
    for name, v in out.items():
        if v.min(initial=0) < 0 or v.max(initial=0) > 255:
            warnings.warn(f"mesh {mesh.name!r}: face attribute {name} has values outside 0..255; clamped")
    return {k: np.clip(np.asarray(v, np.int64), 0, 255) for k, v in out.items()}


def merge(scene: Scene, options, warnings: Warnings, pairs: list[tuple[int, Mesh]] | None = None,
          own: str = "", others: tuple[str, ...] = ()) -> Merged:
    """The mesh objects `pairs` as one mesh: every one, or only those given (one object of several)
    with its animations: those named `own` + sequence (as an import of several meshes names them),
    else, of those not named after another object (`others`), those that move it (all when none does)."""
    chosen = pairs is not None
    pairs = mesh_nodes(scene) if pairs is None else pairs
    if not pairs:
        raise UnsupportedFeature("nothing to export: the scene has no mesh")
    ref = reference(pairs)
    ref_node, ref_mesh = pairs[ref]
    mode, todo = takes(scene, pairs, options, warnings)
    if chosen:
        named = any(a is not None and a.name.lower().startswith(own.lower()) for a, _ in todo)
        todo = [(a, n) for a, n in todo if a is None or (a.name.lower().startswith(own.lower()) if named else
                                                         not a.name.lower().startswith(others)
                                                         and _moves(scene, a, pairs))] or todo
    for a, numbers in todo:        # before any frame is baked: a take alone longer than the format holds
        if len(numbers) > MAX_FRAMES:
            raise UnsupportedFeature(f"{'animation ' + repr(a.name) if a else 'the timeline'} has {len(numbers)} "
                                     f"frames; the format holds at most {MAX_FRAMES}")
    to_ref = inverse_or_identity(scene.world_matrix(ref_node), warnings, f"object {scene.nodes[ref_node].name!r}") \
        if ref_node >= 0 else np.eye(4)
    skins = skin_numbers(scene, [m for _, m in pairs], warnings)
    corners, uvs, values, per_mesh = [], [], [], []
    offset = 0
    drawn = [(node, mesh) for node, mesh in pairs if len(mesh.corners)] or pairs[ref:ref + 1]
    for node, mesh in drawn:
        place = to_ref @ scene.world_matrix(node) if node >= 0 else np.eye(4)
        tri, face = triangulate(mesh)
        per_mesh.append([_placed(positions(scene, node, mesh, mode, a, n, warnings), place)
                         for a, n in todo])
        corners.append(np.asarray(mesh.corners, np.int64)[tri] + offset)
        uv = next(iter(mesh.uv_layers.values()), None)
        uvs.append(None if uv is None else np.asarray(uv, np.float32)[tri])
        values.append(_face_values(scene, mesh, face, skins, warnings))
        offset += len(mesh.positions)
    laid, placed = lay_out([(a, n, per_mesh[0][k] if len(per_mesh) == 1 else
                             np.concatenate([m[k] for m in per_mesh], axis=1)) for k, (a, n) in enumerate(todo)])
    if any(u is None for u in uvs) and any(u is not None for u in uvs):
        warnings.warn("some of the merged objects have no UV map; their triangles get UV (0, 0)")
    top_left = np.array([0.0, 1.0], np.float32)                # UV bytes (0, 0)
    uv = None if all(u is None for u in uvs) else np.concatenate(
        [u if u is not None else np.tile(top_left, (len(c), 3, 1)) for u, c in zip(uvs, corners)])
    first_material = {}
    for i, n in skins.items():
        first_material.setdefault(n, i)
    return Merged(ref_mesh.name, ref_node, ref_mesh, laid, placed, np.concatenate(corners),
                  uv, {k: np.concatenate([v[k] for v in values]) for k in ATTRIBUTES},
                  first_material)


def _moves(scene: Scene, anim, pairs: list[tuple[int, Mesh]]) -> bool:
    """Does the animation key one of these objects, or deform or move it (or nothing at all)?"""
    return not anim.channels or any(c.target == node for c in anim.channels for node, _ in pairs) or \
        any(drives(scene, anim, node, mesh) for node, mesh in pairs)


def _placed(pos: np.ndarray, place: np.ndarray) -> np.ndarray:
    """(F, V, 3) positions in the reference object's space."""
    if np.allclose(place, np.eye(4), atol=1e-9):
        return pos
    return (pos @ place[:3, :3].T + place[:3, 3]).astype(np.float32)
