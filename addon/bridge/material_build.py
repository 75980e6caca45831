"""Scene Material <-> Principled BSDF node setups.

Each texture slot becomes an Image Texture node (labelled with its slot kind)
fed by a Mapping node and a UV Map node, wired into the input the kind names.
Slot fields with no node equivalent live as custom properties on the node,
so that collect() can give the slot back unchanged.
"""
from __future__ import annotations

import math
import os

import bpy
import numpy as np

from ..codec.scene import Image, Material, TextureSlot
from . import map_look, material_blend, material_stages, node_trees, props

_INPUT = {
    "base_color": "Base Color",
    "alpha": "Alpha",
    "specular": "Specular IOR Level",
    "roughness": "Roughness",
    "emission": "Emission Color",
}
_NON_COLOR = {"alpha", "normal", "bump", "specular", "roughness"}
_BLENDED = {"BLEND", "ADD", "MULTIPLY"}


def build_image(img: Image) -> "bpy.types.Image":
    if img.pixels is not None:
        # decoded by the codec: packed into the .blend, the original path kept for export
        h, w = img.pixels.shape[:2]
        image = bpy.data.images.new(img.name or "image", w, h, alpha=True)
        image.pixels.foreach_set(np.ascontiguousarray(img.pixels, np.float32).ravel())
        image.pack()
        image["source_path"] = img.filepath
    elif img.filepath and os.path.isfile(img.filepath):
        image = bpy.data.images.load(img.filepath, check_existing=True)
    else:
        # A missing file stays a named placeholder, so that export writes the name back.
        image = bpy.data.images.new(img.name or "missing", 8, 8)
        image.source = "FILE"
        image.filepath = img.filepath or img.name
    image["source_name"] = img.name
    props.store(image, img.extras)
    return image


def _principled(mat):
    return next(n for n in mat.node_tree.nodes if n.type == "BSDF_PRINCIPLED")


def build_material(m: Material, images: list) -> "bpy.types.Material":
    mat = bpy.data.materials.new(m.name)
    node_trees.enable(mat)
    nt = mat.node_tree
    bsdf = _principled(mat)
    bsdf.inputs["Base Color"].default_value = (*m.base_color, 1.0)
    bsdf.inputs["Alpha"].default_value = m.alpha
    bsdf.inputs["Roughness"].default_value = m.roughness
    bsdf.inputs["Specular IOR Level"].default_value = m.specular
    bsdf.inputs["Specular Tint"].default_value = (*m.specular_color, 1.0)
    bsdf.inputs["Emission Color"].default_value = (*m.emission, 1.0)
    bsdf.inputs["Emission Strength"].default_value = m.emission_strength
    mat.diffuse_color = (*m.base_color, m.alpha)
    mat.use_backface_culling = not m.two_sided
    mat.surface_render_method = "BLENDED" if m.blend in _BLENDED else "DITHERED"
    mat["lgf_blend"] = m.blend
    mat["lgf_ambient"] = list(m.ambient)

    y = 300
    base_nodes, stages = [], []
    for slot in m.textures:
        cube = len(slot.cube_faces) == 6
        tex = _texture_node(nt, slot, images, y, mapped=not cube)
        base = slot.kind in ("base_color", "base_color_2")
        if cube:
            col = material_stages.cube(nt, slot, tex, images)
            y -= 320 * 5
        else:
            col = map_look.build(nt, slot, tex, m.base_color, decal=slot.decal and base,
                                 amount=slot.kind == "base_color" and not slot.combine)
        y -= 320
        if slot.combine:
            stages.append((slot, tex, col))
        elif base:
            base_nodes.append((slot, tex, col))
        elif slot.kind in _INPUT:
            alpha = slot.kind == "alpha" and not slot.ignore_alpha and (
                slot.alpha_source or (tex.image and tex.image.depth == 32))
            src, into = tex.outputs["Alpha"] if alpha else col, bsdf.inputs[_INPUT[slot.kind]]
            if slot.strength < 1.0:
                src = _amount_over(nt, into, src, slot.strength, tex)
            nt.links.new(src, into)
        elif slot.kind in ("normal", "bump"):
            node = nt.nodes.new("ShaderNodeNormalMap" if slot.kind == "normal" else "ShaderNodeBump")
            node.location = (-250, y + 320)
            node.inputs["Strength"].default_value = slot.strength
            if slot.kind == "normal":
                node.uv_map = slot.uv_layer           # tangent space of the map's own UVs
            nt.links.new(col, node.inputs["Color" if slot.kind == "normal" else "Height"])
            nt.links.new(node.outputs["Normal"], bsdf.inputs["Normal"])
    first = base_nodes[0][0] if base_nodes else None
    if first is not None and first.alpha_source and not (first.decal or first.ignore_alpha) \
            and not bsdf.inputs["Alpha"].links:
        nt.links.new(base_nodes[0][1].outputs["Alpha"], bsdf.inputs["Alpha"])     # the picture's own alpha
    out = None
    if base_nodes:
        out = base_nodes[0][2]
        if len(base_nodes) > 1:            # the second map over the first by its amount
            mix = map_look.amount_mix(nt, base_nodes[1][0].strength, -250, 300)
            nt.links.new(out, mix.inputs["A"])
            nt.links.new(base_nodes[1][2], mix.inputs["B"])
            out = mix.outputs["Result"]
    out = material_stages.chain(nt, stages, out, m.base_color, m.alpha)    # texture stages over it
    if out is not None:
        nt.links.new(out, bsdf.inputs["Base Color"])
    material_blend.apply(mat, m.blend, m.alpha)
    props.store(mat, m.extras)
    return mat


def _amount_over(nt, into, src, amount: float, tex):
    """A map below 100% into a BSDF input: an Amount Mix from the input's own value to the map."""
    mix = map_look.amount_mix(nt, amount, tex.location.x + 500, tex.location.y - 150)
    if into.type != "RGBA":
        mix.data_type = "FLOAT"
    mix.inputs["A"].default_value = into.default_value
    nt.links.new(src, mix.inputs["B"])
    return mix.outputs["Result"]


def _texture_node(nt, slot: TextureSlot, images: list, y: float, mapped: bool = True):
    """The slot's Image Texture node; mapped: fed by its UV map through its offset, turn and tiling (a cube
    map's faces are looked up by direction instead)."""
    tex = nt.nodes.new("ShaderNodeTexImage")
    tex.label = slot.kind
    tex.location = (-600, y)
    if 0 <= slot.image < len(images):
        tex.image = _image_alpha(images[slot.image], slot.ignore_alpha)
        if slot.kind in _NON_COLOR and tex.image.source == "FILE":
            tex.image.colorspace_settings.is_data = True
    tex.extension = slot.extension
    tex["lgf_strength"] = slot.strength
    props.store(tex, slot.extras)
    if slot.alpha_source:
        tex["lgf_alpha_source"] = 1
    if not mapped:
        return tex
    mapping = nt.nodes.new("ShaderNodeMapping")
    mapping.location = (-800, y)
    loc, rot = (slot.offset, slot.rotation) if slot.pivot is None else _about_pivot(slot)
    mapping.inputs["Location"].default_value = (loc[0], loc[1], 0.0)
    mapping.inputs["Rotation"].default_value = (0.0, 0.0, rot)
    mapping.inputs["Scale"].default_value = (slot.scale[0], slot.scale[1], 1.0)
    if slot.pivot is not None:
        tex["lgf_pivot"] = list(slot.pivot)
    uv = nt.nodes.new("ShaderNodeUVMap")
    uv.location = (-1000, y)
    uv.uv_map = slot.uv_layer
    nt.links.new(uv.outputs["UV"], mapping.inputs["Vector"])
    nt.links.new(mapping.outputs["Vector"], tex.inputs["Vector"])
    return tex


def _image_alpha(image, ignore: bool):
    """The image as a map that does (not) use its alpha channel shows it. Blender keeps that on the image
    (alpha mode None: alpha 1 wherever the picture lies, 0 outside a clipped one, in Cycles and EEVEE),
    a 3DS file on each map: the image itself while no map uses it yet, else a copy set the other way."""
    mode = "NONE" if ignore else "STRAIGHT"
    if ignore == (image.alpha_mode == "NONE"):
        return image
    if image.users == 0:
        image.alpha_mode = mode
        return image
    for other in bpy.data.images:
        if other != image and other.alpha_mode == mode and other.filepath == image.filepath \
                and other.get("source_name") == image.get("source_name"):
            return other
    twin = image.copy()
    twin.alpha_mode = mode
    return twin


def _turn(v, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _about_pivot(slot: TextureSlot):
    """Mapping-node location and angle that move the picture by `offset`, turn it by `rotation`
    counter-clockwise and repeat it `scale` times, all about `pivot`. The node maps coordinates
    (scale, then turn, then move), so the picture goes the other way: coordinates turn by
    -rotation and the location takes the pivot and offset round."""
    c, off, sc = np.asarray(slot.pivot, float), np.asarray(slot.offset, float), np.asarray(slot.scale, float)
    return c - _turn(sc * (c + off), -slot.rotation), -slot.rotation


def _from_pivot(loc, rot: float, scale, pivot) -> tuple[tuple[float, float], float]:
    """_about_pivot() turned round: (offset, rotation) from the node's location and angle."""
    c, sc = np.asarray(pivot, float), np.asarray(scale, float)
    sc = np.where(np.abs(sc) > 1e-12, sc, 1.0)
    off = _turn(c - np.asarray(loc, float), -rot) / sc - c
    return (float(off[0]), float(off[1])), -rot


# ---------------------------------------------------------------------------
def collect_material(mat, image_index) -> Material:
    """bpy material -> Scene Material. `image_index(bpy_image) -> int` registers images."""
    out = Material(name=mat.name)
    out.base_color = tuple(mat.diffuse_color[:3])
    out.alpha = float(mat.diffuse_color[3])
    out.two_sided = not mat.use_backface_culling
    out.blend = str(mat.get("lgf_blend", "BLEND" if mat.surface_render_method == "BLENDED" else "OPAQUE"))
    if "lgf_ambient" in mat:
        out.ambient = tuple(float(v) for v in mat["lgf_ambient"])
    nt = mat.node_tree
    bsdf = next((n for n in nt.nodes if n.type == "BSDF_PRINCIPLED"), None) if nt else None
    if bsdf is not None:
        out.base_color = tuple(bsdf.inputs["Base Color"].default_value[:3])
        out.alpha = float(bsdf.inputs["Alpha"].default_value)
        out.roughness = float(bsdf.inputs["Roughness"].default_value)
        out.specular = float(bsdf.inputs["Specular IOR Level"].default_value)
        out.specular_color = tuple(bsdf.inputs["Specular Tint"].default_value[:3])
        out.emission = tuple(bsdf.inputs["Emission Color"].default_value[:3])
        out.emission_strength = float(bsdf.inputs["Emission Strength"].default_value)
        for tex in sorted((n for n in nt.nodes if n.type == "TEX_IMAGE" and n.image
                           and material_stages.cube_face(n) <= 0), key=lambda n: -n.location.y):
            out.textures.append(_collect_slot(tex, image_index))     # a cube map's other faces ride on its first
    extras = props.load(mat)
    for key in ("lgf_blend", "lgf_ambient"):
        extras.pop(key, None)
    out.extras = extras
    return out


def _collect_slot(tex, image_index) -> TextureSlot:
    kind = tex.label or _guess_kind(tex)
    slot = TextureSlot(kind=kind, image=image_index(tex.image))
    vec = tex.inputs["Vector"].links
    mapping = vec[0].from_node if vec and vec[0].from_node.type == "MAPPING" else None
    if mapping is not None:
        loc = mapping.inputs["Location"].default_value
        rot = mapping.inputs["Rotation"].default_value
        scl = mapping.inputs["Scale"].default_value
        slot.offset, slot.rotation, slot.scale = (loc[0], loc[1]), float(rot[2]), (scl[0], scl[1])
        if "lgf_pivot" in tex:
            slot.pivot = tuple(float(x) for x in tex["lgf_pivot"])
            slot.offset, slot.rotation = _from_pivot(loc[:2], float(rot[2]), scl[:2], slot.pivot)
        uvl = mapping.inputs["Vector"].links
        if uvl and uvl[0].from_node.type == "UVMAP":
            slot.uv_layer = uvl[0].from_node.uv_map
    extras = props.load(tex)
    extras.pop("lgf_pivot", None)
    slot.extension = tex.extension
    slot.alpha_source = bool(extras.pop("lgf_alpha_source", 0))
    slot.ignore_alpha = tex.image.alpha_mode == "NONE"
    slot.decal, slot.invert, slot.tint = map_look.read(tex)
    slot.strength = _strength(tex, kind, float(extras.pop("lgf_strength", 1.0)))
    slot.combine, slot.cube_faces = material_stages.read(tex), material_stages.cube_faces(tex, image_index)
    slot.extras = extras
    return slot


def _strength(tex, kind: str, stored: float) -> float:
    """The map's amount as the nodes show it: the Amount Mix of a map into a BSDF input (none: all of
    it), a bump or normal map's node strength; other kinds show none, so the stored one."""
    if kind in _INPUT or kind == "base_color_2":
        amount = map_look.read_amount(tex)
        return 1.0 if amount is None else amount
    for node in map_look.after(tex):
        if node.type in ("BUMP", "NORMAL_MAP"):
            return float(node.inputs["Strength"].default_value)
    return stored


def _guess_kind(tex) -> str:
    """A texture node we did not make: name its kind from what it feeds."""
    for link in tex.outputs["Color"].links:
        name = link.to_socket.name
        for kind, socket in _INPUT.items():
            if socket == name:
                return kind
        if link.to_node.type == "NORMAL_MAP":
            return "normal"
        if link.to_node.type == "BUMP":
            return "bump"
    return "base_color" if tex.outputs["Color"].links else "other"

