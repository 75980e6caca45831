"""Unreal Engine 1 vertex mesh -> neutral Scene.

Axes, units, winding and UVs as conventions.py has them.

What a .uc script adds on top goes into the object's matrix, as the engine
draws the mesh: Rotation(yaw, pitch, roll) @ (Scale * (raw - Origin)), so the
mesh itself keeps one file unit per Blender unit after the default scale, and
writing it back gives the same raw integers. UNMIRROR=1 negates raw X and
swaps corners 1 and 2 first. Each skin is one material, masked (CLIP),
translucent (ADD) or modulated (MULTIPLY) when its triangles' usual type or
its texture's FLAGS/MASK say so. Face attributes kept per triangle:
  ue_type        triangle type, type byte & 15 (0 normal, 1 two-sided, 2 translucent,
                 3 masked, 4 modulated, 8 weapon triangle)
  ue_flags       flag bits, type byte & 0xF0 (16 unlit, 32 flat, 64 environment, 128 no smoothing)
  ue_color       the colour byte
  ue_texture     the texture (skin) number
  ue_flags_byte  the separate Flags byte at the end of the triangle record
Weapon triangles keep the file's corner order (the engine reads its axes from
it) and get a material of their own.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ... import axes
from ...errors import CodecError, FormatError, Warnings
from ...scene import Animation, Channel, Image, Marker, Material, Mesh, Node, Scene, ShapeKey, TextureSlot
from . import bmp, files, pcx, ucscript
from .conventions import BASIS, DEFAULT_SCALE, corner_order, rotation_matrix, uv_to_blender
from .model import (PF_MASKED, PF_MODULATED, PF_TRANSLUCENT, PF_TWO_SIDED, TYPE_WEAPON, MeshSetup, ScriptMeshes,
                    UnrealMesh)
from .packing import frame_vertices, unpack

ATTRIBUTES = ("ue_type", "ue_flags", "ue_color", "ue_texture", "ue_flags_byte")
WEAPON_MATERIAL = "UE1 weapon triangle"
# blend mode <-> triangle type for materials (types 2..4); 0/1 follow two-sidedness
BLEND_OF_TYPE = {2: "ADD", 3: "CLIP", 4: "MULTIPLY"}
# ... and <-> texture poly flags, strongest first: the engine draws modulated over translucent over masked
BLEND_OF_FLAG = ((PF_MODULATED, "MULTIPLY"), (PF_TRANSLUCENT, "ADD"), (PF_MASKED, "CLIP"))
BLEND_LABEL = {"OPAQUE": "opaque", "CLIP": "masked", "ADD": "translucent", "MULTIPLY": "modulated"}


def frame_key_name(i: int) -> str:
    return f"Frame {i:04d}"


def script_matrix(setup: MeshSetup | None, default: np.ndarray) -> np.ndarray:
    """The object matrix (Blender axes) for a mesh whose vertices carry `default` scale.

    Engine: unreal = Rot @ (Scale * (raw - Origin)); the mesh holds
    B @ (raw * default), so the object gets B Rot diag(Scale/default) T(-default*Origin) B.
    """
    if setup is None:
        return np.eye(4)
    scale = np.asarray(setup.scale if setup.scale is not None else default, np.float64)
    m = np.eye(4)
    m[:3, :3] = rotation_matrix(*setup.rotation) * (scale / default)
    m[:3, 3] = m[:3, :3] @ (-default * np.asarray(setup.origin, np.float64))
    b = axes.to4(BASIS)
    return b @ m @ b


# ---------------------------------------------------------------------------
def skin_blend(kind: int, flags: int) -> str:
    """How the engine blends a skin: its triangles' type or its texture's flags, whichever says more."""
    by_flag = next((blend for bit, blend in BLEND_OF_FLAG if flags & bit), "OPAQUE")
    by_type = BLEND_OF_TYPE.get(kind, "OPAQUE")
    order = [b for _, b in BLEND_OF_FLAG] + ["OPAQUE"]
    return min(by_flag, by_type, key=order.index)


def _materials(scene: Scene, setup: MeshSetup | None, skin_of_face: np.ndarray, types: np.ndarray,
               weapon: np.ndarray, folders: list[Path], warnings: Warnings) -> tuple[list[int], np.ndarray]:
    """One material per skin number and way of drawing it, one for weapon triangles; (slots, face slot).

    A skin whose triangles are drawn in several ways (some masked, some not)
    gets a material for each, the usual one named as the texture. Extras keep
    what export writes back: the skin number, the triangles' usual type, and
    the texture's flags and other TEXTURE IMPORT parameters."""
    textures = setup.textures if setup else {}
    slots: list[int] = []
    face_slot = np.zeros(len(skin_of_face), np.int32)
    names = list(BLEND_LABEL)
    for n in np.unique(skin_of_face[~weapon]).tolist():
        tex_name, tex_file = textures.get(n, ("", ""))
        flags = setup.texture_flags.get(n, 0) if setup else 0
        mine = (skin_of_face == n) & ~weapon
        by_type = np.array([names.index(skin_blend(k, flags)) for k in range(16)])     # blend per type 0..15
        blend_of_face = by_type[types & 15]
        usual = skin_blend(int(np.argmax(np.bincount(types[mine], minlength=16))), flags)
        blends = [usual] + [names[b] for b in np.unique(blend_of_face[mine]).tolist() if names[b] != usual]
        image = None
        if tex_name:
            scene.images.append(_skin_image(tex_name, tex_file, folders, warnings, masked="CLIP" in blends))
            image = len(scene.images) - 1
        for blend in blends:
            faces = mine & (blend_of_face == names.index(blend))
            kind = int(np.argmax(np.bincount(types[faces], minlength=16)))
            extras = {"ue_texture": n, "ue_type": kind}
            if setup and n in setup.texture_params:
                extras.update(ue_texture_flags=flags, ue_texture_params=setup.texture_params[n])
            name = tex_name or f"skin{n}"
            mat = Material(name=name if blend == usual else f"{name} {BLEND_LABEL[blend]}",
                           two_sided=kind != 0 or bool(flags & PF_TWO_SIDED), blend=blend, extras=extras)
            if image is not None:
                mat.textures.append(TextureSlot("base_color", image))
            face_slot[faces] = len(slots)
            scene.materials.append(mat)
            slots.append(len(scene.materials) - 1)
    if weapon.any():
        scene.materials.append(Material(WEAPON_MATERIAL, alpha=0.0, blend="CLIP",
                                        extras={"ue_type": TYPE_WEAPON, "ue_weapon": True}))
        face_slot[weapon] = len(slots)
        slots.append(len(scene.materials) - 1)
    return slots, face_slot


def _key_channels(node: int, keys: range, start: int, total: int) -> list[Channel]:
    """Frame k of the file shows at Blender frame k: key k is 1 there and 0 before and after."""
    out = []
    if len(keys) == 1 and keys[0] == 0 and total > 1:
        # the basis alone: hold key 1 at 0, so that the sequence still has a channel (and an action)
        return [Channel(node, f'key_blocks["{frame_key_name(1)}"].value', np.array([float(start)]),
                        np.zeros((1, 1)), interpolation="CONSTANT")]
    for k in keys:
        if k == 0:
            continue                     # the basis shows wherever every other key is 0
        frames = np.array(sorted({start, k, k + 1}), np.float64)
        values = (frames == k).astype(np.float64)[:, None]
        out.append(Channel(node, f'key_blocks["{frame_key_name(k)}"].value', frames, values,
                           interpolation="CONSTANT"))
    return out


def _animations(scene: Scene, setup: MeshSetup | None, frames: int, warnings: Warnings) -> None:
    seqs = setup.sequences if setup else []
    everything = next((s for s in seqs if s.start == 0 and s.count == frames and s.name.lower() == "all"), None)
    rate = everything.rate if everything else next((s.rate for s in seqs if s.rate > 0), 0.0)
    # an "All" the script has keeps its RATE (or none) on export; one made up here takes the first rate
    extras = {"ue_rate": everything.rate, **({"ue_group": everything.group} if everything.group else {})} \
        if everything else {}
    # a strip like the others: an active action would play over them
    placement = "NLA" if any(s is not everything for s in seqs) else "ACTIVE"
    scene.animations.append(Animation("All", 0, frames - 1, rate, _key_channels(0, range(frames), 0, frames),
                                      placement=placement, extras=extras))
    for s in seqs:
        end = s.start + s.count - 1
        if end >= frames:
            # the script's count is a claim: the sequence plays the frames there are
            warnings.warn(f"sequence {s.name!r} runs to frame {end}, beyond the last frame {frames - 1}: cut there")
            end = max(frames - 1, s.start)
        markers = [Marker(fn, int(round(s.start + t * s.count))) for t, fn in s.notifies]
        if s is everything:
            scene.animations[0].markers = markers
        else:
            keys = _key_channels(0, range(s.start, min(end, frames - 1) + 1), s.start, frames)
            scene.animations.append(Animation(s.name, s.start, end, s.rate, keys, markers, placement="NLA",
                                              extras={"ue_group": s.group, "ue_rate": s.rate}))
        scene.markers.append(Marker(s.name, s.start))     # timeline: where each sequence starts


def to_scene(model: UnrealMesh | ScriptMeshes, options, warnings: Warnings) -> Scene:
    if isinstance(model, ScriptMeshes):
        scenes = []
        for m in model.meshes:
            own = Warnings()
            scenes.append(to_scene(m, options, own))
            warnings.extend([f"mesh {m.name!r}: {w}" for w in own.as_list()])
        return _joined(scenes)
    g, variant = model.geometry, model.variant
    nv = g.num_verts
    tris = g.triangles
    if nv == 0 and len(tris):
        raise FormatError(f"the header gives 0 vertices for {len(tris)} triangles", 2, "_d.3d/HEADER")
    use_script = model.script is not None and getattr(options, "use_uc_script", True)
    setup = ucscript.describe(model.script, model.name, warnings) if use_script else None
    default = DEFAULT_SCALE[variant]
    to_blender = default * np.diag(BASIS)
    if setup is not None and setup.unmirror:
        to_blender = to_blender * [-1, 1, 1]          # the engine's UNMIRROR=1 mirrors X
    positions = unpack(frame_vertices(model.animation, variant, nv), variant, nv, to_blender)
    if len(positions) == 0:
        warnings.warn("the animation file holds no frames; every vertex is at the origin", 0, "_a.3d")
        positions = np.zeros((1, nv, 3), np.float32)

    idx = tris["v"].astype(np.int64)
    bad = idx >= nv
    if bad.any():
        warnings.warn(f"{int(bad.sum())} triangle corners index past the {nv} vertices; clamped to the last one",
                      None, "_d.3d/TRIANGLES")
        idx = np.minimum(idx, nv - 1)
    uvb = tris["uv"]
    if setup is not None and setup.unmirror:
        idx, uvb = idx[:, [0, 2, 1]], uvb[:, [0, 2, 1]]     # UNMIRROR also swaps corners 1 and 2

    types = (tris["type"] & 15).astype(np.int32)
    weapon = types == TYPE_WEAPON
    order = corner_order(weapon)
    rows = np.arange(len(tris))[:, None]
    corners = idx[rows, order].reshape(-1).astype(np.uint32)
    uv = uv_to_blender(uvb[rows, order]).reshape(-1, 2)

    scene = Scene()
    skin = tris["texture"].astype(np.int32)
    if setup is not None and setup.zerotex:
        skin = np.zeros_like(skin)
    folders = _texture_folders(model, options)
    slots, face_slot = _materials(scene, setup, skin, types, weapon, folders, warnings)
    keys = [ShapeKey(frame_key_name(i), positions[i]) for i in range(len(positions))]
    mesh = Mesh(model.name, positions=positions[0], corners=corners,
                faces=np.arange(0, len(corners), 3, dtype=np.uint32), uv_layers={"UVMap": uv},
                face_material=face_slot, materials=slots, shape_keys=keys,
                face_attributes={"ue_type": types, "ue_flags": (tris["type"] & 0xF0).astype(np.int32),
                                 "ue_color": tris["color"].astype(np.int32), "ue_texture": tris["texture"].astype(np.int32),
                                 "ue_flags_byte": tris["flags"].astype(np.int32),
                                 ".hide_poly": weapon},      # the engine never draws it: hidden in Blender too
                extras={"ue_variant": variant, "ue_unmirror": bool(setup and setup.unmirror),
                        "ue_import_params": setup.import_params if setup else ""})
    scene.meshes.append(mesh)
    scene.add_node(Node(model.name, "MESH", 0, matrix=script_matrix(setup, default)))
    _animations(scene, setup, len(positions), warnings)
    scene.frame_start, scene.frame_end = 0, len(positions) - 1
    scene.fps = scene.animations[0].fps
    return scene


def _joined(scenes: list[Scene]) -> Scene:
    """One scene of a script's meshes, each its own object with its own materials and actions. Its
    animations are named "Mesh:Sequence": the meshes' "All" are different animations (export with
    separate meshes gives each mesh those named after it)."""
    out = scenes[0]
    for part in scenes:
        mesh = part.meshes[0].name
        for a in part.animations:
            a.name = f"{mesh}:{a.name}"
        for m in part.markers:
            m.name = f"{mesh}:{m.name}"
    for part in scenes[1:]:
        images, materials, meshes = len(out.images), len(out.materials), len(out.meshes)
        for mat in part.materials:
            for t in mat.textures:
                t.image += images
        for m in part.meshes:
            m.materials = [i + materials for i in m.materials]
        node = len(out.nodes)
        for n in part.nodes:
            n.data += meshes
            out.add_node(n)
        for a in part.animations:
            for c in a.channels:
                c.target += node
        out.images += part.images
        out.materials += part.materials
        out.meshes += part.meshes
        out.animations += part.animations
        out.markers += part.markers
        out.frame_end = max(out.frame_end, part.frame_end)
    return out


def _skin_image(tex_name: str, tex_file: str, folders: list[Path], warnings: Warnings, masked: bool = False) -> Image:
    """The image of one skin, named as the script wrote its FILE so that export writes it back.

    The file the script names comes first, as the engine imports it; a PCX
    (which Blender cannot read) is decoded here. Only when it is missing, or is
    a PCX we cannot decode, does a .bmp/.png/.tga of the same name stand in.
    """
    name = tex_file or tex_name
    found = files.find_texture(tex_file, folders)
    if found is None:
        warnings.warn(f"skin {tex_name!r} ({tex_file or 'no file'}) not found; the material has no texture")
        return Image(name, "", extras={"ue_file": tex_file})
    if found.suffix.lower() != ".pcx":
        if masked:
            return _masked_image(name, found, tex_file, warnings)
        return Image(name, str(found), extras={"ue_file": tex_file})
    try:
        return Image(name, str(found), pixels=pcx.decode(found.read_bytes(), masked), extras={"ue_file": tex_file})
    except OSError as e:
        problem = f"cannot be read ({e.strerror or e})"
    except CodecError as e:
        problem = f"cannot be decoded: {e}"
    other = files.find_texture(tex_file, folders, skip=(".pcx",))
    warnings.warn(f"skin {tex_name!r}: {found.name} {problem}; "
                  + (f"using {other.name} instead" if other else "the material's image is empty"))
    return Image(name, str(other or found), extras={"ue_file": tex_file})


def _masked_image(name: str, found: Path, tex_file: str, warnings: Warnings) -> Image:
    """A masked skin that is not a PCX: an 8-bit BMP decoded for its palette index 0, else the file as it is."""
    problem = "is not an 8-bit paletted BMP"
    if found.suffix.lower() == ".bmp":
        try:
            return Image(name, str(found), pixels=bmp.decode(found.read_bytes()), extras={"ue_file": tex_file})
        except OSError as e:
            problem = f"cannot be read ({e.strerror or e})"
        except CodecError as e:
            problem = f"cannot be decoded: {e}"
    warnings.warn(f"masked skin {name!r}: {found.name} {problem}; its own alpha (if any) is used "
                  "instead of palette index 0")
    return Image(name, str(found), extras={"ue_file": tex_file})


def _texture_folders(model: UnrealMesh, options) -> list[Path]:
    out: list[Path] = []
    if model.script_path:
        here = Path(model.script_path).parent
        out += [here.parent, here]
    if model.data_path:
        here = Path(model.data_path).parent
        out += [here, here.parent]
    extra = getattr(options, "texture_search_folder", "")
    if extra:
        out.append(Path(extra))
    return list(dict.fromkeys(out))
