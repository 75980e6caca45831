"""glTF materials, textures and images -> Scene materials and images.

Metallic-roughness PBR: base colour factor and texture, alpha (alphaMode MASK -> CLIP, BLEND),
double-sided, emission, roughness, normal map; a texture's sampler gives its extension (repeat,
mirror, clamp) and KHR_texture_transform its place, converted as Blender's own glTF importer
does for its Mapping node.
"""
from __future__ import annotations

import math
from pathlib import Path
from urllib.parse import unquote

from ...errors import FormatError, Warnings
from ...scene import Image, Material, TextureSlot
from .accessors_in import Accessors, extension, floats, items, known, num, obj
from .images_in import PNG_MAGIC, png_pixels
from .mesh_in import uv_name
from .model import Document
from .read import data_uri

WRAP = {10497: "REPEAT", 33071: "EXTEND", 33648: "MIRROR"}
MIN_PIXELS = 1 << 20
PIXELS_PER_BYTE = 3
MIME_EXT = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/ktx2": ".ktx2"}


def read_images(doc: Document, acc: Accessors, warnings: Warnings) -> list[Image]:
    out = []
    folder = Path(doc.path).parent if doc.path else None
    # pixels the embedded pictures may unpack to: a picture compresses a few times at most, so a small
    # file cannot ask for gigabytes (a flat picture past this is named, not decoded)
    budget = max(MIN_PIXELS, PIXELS_PER_BYTE * (sum(len(b) for b in doc.buffers) + len(doc.json_text)))
    for i, im in enumerate(items(doc.json, "images")):
        if not isinstance(im, dict):
            raise FormatError("not an object", None, f"images[{i}]")
        uri = im.get("uri") if isinstance(im.get("uri"), str) else ""
        name = im.get("name") if isinstance(im.get("name"), str) and im.get("name") else ""
        if uri and not uri.startswith("data:"):
            name = name or Path(unquote(uri)).name
            f = folder / unquote(uri) if folder else None
            found = f is not None and f.is_file()
            if not found:
                warnings.warn(f"image {uri!r} is not beside the file")
            out.append(Image(name, str(f) if found else ""))
            continue
        mime = im.get("mimeType") or (uri[5:uri.find(";")] if ";" in uri else "")
        image = Image(name or f"image{i}{MIME_EXT[mime] if known(mime, MIME_EXT) else '.png'}")
        out.append(image)
        if not uri and "bufferView" not in im:
            warnings.warn(f"image {i} has neither a URI nor a buffer view")
            continue
        data = data_uri(uri, f"images[{i}].uri") if uri else \
            acc.view_bytes(im.get("bufferView"), f"images[{i}].bufferView")
        if data.startswith(PNG_MAGIC):
            try:
                image.pixels = png_pixels(data, budget)
                budget -= image.pixels.shape[0] * image.pixels.shape[1]
                continue
            except FormatError as e:
                warnings.warn(f"embedded picture {image.name!r} is not read: {e}")
                continue
        warnings.warn("embedded pictures other than PNG (JPEG, WebP) are kept by name only, not decoded")
    return out


def _texture(tree: dict, info, kind: str, path: str, warnings: Warnings) -> TextureSlot | None:
    if not isinstance(info, dict):
        return None
    t = obj(tree, "textures", info.get("index"), f"{path}.index")
    source = t.get("source")
    if source is None:
        named = next((e for e in ("KHR_texture_basisu", "EXT_texture_webp", "MSFT_texture_dds") if extension(t, e)), "")
        if named:
            warnings.warn(f"{named}: textures only in that form are not read")
        return None
    obj(tree, "images", source, f"{path}.source")
    slot = TextureSlot(kind, source, uv_layer=uv_name(num(info, "texCoord", path, 0, 0, True)))
    if "sampler" in t:
        s = obj(tree, "samplers", t["sampler"], f"{path}.sampler")
        wraps = {WRAP[w] if known(w, WRAP) else "REPEAT" for w in (s.get("wrapS", 10497), s.get("wrapT", 10497))}
        slot.extension = wraps.pop() if len(wraps) == 1 else "REPEAT"
    tt = extension(info, "KHR_texture_transform")
    if tt is not None:
        tp = f"{path}.extensions.KHR_texture_transform"
        offset = floats(tt, "offset", 2, tp, [0.0, 0.0])
        rotation = float(num(tt, "rotation", tp, 0.0))
        scale = floats(tt, "scale", 2, tp, [1.0, 1.0])
        if "texCoord" in tt:
            slot.uv_layer = uv_name(num(tt, "texCoord", tp, 0, 0, True))
        # glTF's V runs down: the Mapping node (point) that Blender's glTF exporter turns into this transform
        slot.offset = (offset[0] + scale[1] * math.sin(rotation), 1 - offset[1] - scale[1] * math.cos(rotation))
        slot.rotation = rotation
        slot.scale = (scale[0], scale[1])
    return slot


def read_materials(tree: dict, warnings: Warnings) -> list[Material]:
    out = []
    for i, m in enumerate(items(tree, "materials")):
        path = f"materials[{i}]"
        if not isinstance(m, dict):
            raise FormatError("not an object", None, path)
        pbr = m.get("pbrMetallicRoughness") if isinstance(m.get("pbrMetallicRoughness"), dict) else {}
        color = floats(pbr, "baseColorFactor", 4, f"{path}.pbrMetallicRoughness", [1.0, 1.0, 1.0, 1.0])
        mat = Material(m.get("name") if isinstance(m.get("name"), str) and m.get("name") else f"Material{i}",
                       base_color=tuple(color[:3]), alpha=color[3],
                       roughness=float(num(pbr, "roughnessFactor", f"{path}.pbrMetallicRoughness", 1.0)),
                       two_sided=bool(m.get("doubleSided", False)))
        mode = m.get("alphaMode", "OPAQUE")
        mat.blend = {"MASK": "CLIP", "BLEND": "BLEND"}[mode] if mode in ("MASK", "BLEND") else "OPAQUE"
        emissive = floats(m, "emissiveFactor", 3, path, [0.0, 0.0, 0.0])
        strength = extension(m, "KHR_materials_emissive_strength")
        if any(emissive):
            mat.emission = tuple(emissive)
            mat.emission_strength = float(num(strength, "emissiveStrength", path, 1.0)) \
                if isinstance(strength, dict) else 1.0
        for key, kind, where in (("baseColorTexture", "base_color", pbr), ("metallicRoughnessTexture", "roughness", pbr),
                                 ("normalTexture", "normal", m), ("emissiveTexture", "emission", m),
                                 ("occlusionTexture", "other", m)):
            slot = _texture(tree, where.get(key), kind, f"{path}.{key}", warnings)
            if slot is not None:
                mat.textures.append(slot)
        out.append(mat)
    return out
