"""Scene materials -> glTF metallic-roughness materials, their textures, samplers and images.

Images travel as PNG or JPEG (what every glTF reader takes): a file in either is copied as it is, a
picture the importer decoded (PCX, a masked BMP) and a plain BMP are written as PNG, and any other
file is left out with a warning. from_scene hands them to write.py as files (resources) by name; a .glb embeds them.
"""
from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np

from ...errors import Warnings
from ...scene import Image, Material, Scene, TextureSlot

WRAP = {"REPEAT": 10497, "MIRROR": 33648, "CLIP": 33071, "EXTEND": 33071}
ALPHA = {"OPAQUE": "OPAQUE", "CLIP": "MASK", "BLEND": "BLEND", "ADD": "BLEND", "MULTIPLY": "BLEND"}
MIME = {b"\x89PNG": ("image/png", ".png"), b"\xff\xd8\xff": ("image/jpeg", ".jpg")}
LINEAR, LINEAR_MIPMAP_LINEAR = 9729, 9987


def png(pixels: np.ndarray) -> bytes:
    """(H, W, 4) float 0..1, bottom row first -> PNG bytes (8-bit RGBA)."""
    rgba = np.clip(np.nan_to_num(np.asarray(pixels, np.float32)) * 255.0 + 0.5, 0, 255).astype(np.uint8)[::-1]
    h, w = rgba.shape[:2]
    rows = np.zeros((h, 1 + 4 * w), np.uint8)          # filter byte 0 (none) before each row
    rows[:, 1:] = rgba.reshape(h, 4 * w)

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 6, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def bmp_pixels(data: bytes) -> np.ndarray | None:
    """An uncompressed 8-bit paletted, 24- or 32-bit BMP -> (H, W, 4) float32, bottom row first (None: another kind)."""
    if len(data) < 54 or data[:2] != b"BM":
        return None
    offset = struct.unpack_from("<I", data, 10)[0]
    info, width, height, _, bits, compression = struct.unpack_from("<IiiHHI", data, 14)
    if compression not in (0, 3) or bits not in (8, 24, 32) or width <= 0 or height == 0 or info < 40 \
            or (compression == 3 and bits != 32):
        return None
    stride = (width * bits // 8 + 3) & ~3
    h = abs(height)
    if offset + stride * h > len(data) or width * h > 1 << 26:
        return None
    rows = np.frombuffer(data, np.uint8, stride * h, offset).reshape(h, stride)
    if height < 0:
        rows = rows[::-1]                          # top-down: bottom row first, as the Scene keeps pixels
    out = np.ones((h, width, 4), np.float32)
    if bits == 8:
        colours = struct.unpack_from("<I", data, 46)[0] or 256
        palette = np.frombuffer(data, np.uint8, 4 * min(colours, 256), 14 + info).reshape(-1, 4) \
            if 14 + info + 4 * min(colours, 256) <= offset else np.zeros((256, 4), np.uint8)
        idx = np.minimum(rows[:, :width], len(palette) - 1)
        out[..., :3] = palette[idx][..., 2::-1] / 255.0
    else:
        px = rows[:, :width * bits // 8].reshape(h, width, bits // 8)
        out[..., :3] = px[..., 2::-1] / 255.0      # BGR(A) -> RGB; 32-bit alpha is often unset: opaque
    return out


def _image_file(image: Image, warnings: Warnings) -> tuple[bytes, str, str] | None:
    """(bytes, mime type, extension) of one image, or None (warned) when it cannot travel."""
    if image.filepath:
        try:
            data = Path(image.filepath).read_bytes()
        except OSError as e:
            data = b""
            if image.pixels is None:
                warnings.warn(f"image {image.name!r}: {image.filepath} cannot be read ({e.strerror or e}); not written")
                return None
        if image.pixels is None:
            for magic, (mime, ext) in MIME.items():
                if data.startswith(magic):
                    return data, mime, ext
            pixels = bmp_pixels(data)
            if pixels is not None:
                return png(pixels), "image/png", ".png"
    if image.pixels is not None and np.ndim(image.pixels) == 3 and np.shape(image.pixels)[2] == 4:
        return png(image.pixels), "image/png", ".png"
    if image.filepath:
        warnings.warn(f"image {image.name!r}: {Path(image.filepath).name} is neither PNG nor JPEG, which glTF "
                      "holds; the material is written without it")
    else:
        warnings.warn(f"image {image.name!r} was not found; the material is written without it")
    return None


def _slot_transform(slot: TextureSlot) -> dict | None:
    """KHR_texture_transform of a slot: the Mapping node Blender uses (coordinates scaled, turned, moved)
    expressed on glTF's UVs, whose V runs down."""
    loc, rot = np.asarray(slot.offset, float), float(slot.rotation)
    sc = np.asarray(slot.scale, float)
    if slot.pivot is not None:                  # the picture moved, turned and repeated about the pivot
        c = np.asarray(slot.pivot, float)
        loc, rot = c - _turn(sc * (c + loc), -rot), -rot
    if np.allclose(loc, 0) and abs(rot) < 1e-9 and np.allclose(sc, 1):
        return None
    c, s = math.cos(rot), math.sin(rot)
    out = {"offset": [float(loc[0] - s * sc[1]), float(1.0 - c * sc[1] - loc[1])]}
    if abs(rot) > 1e-9:
        out["rotation"] = rot
    if not np.allclose(sc, 1):
        out["scale"] = [float(sc[0]), float(sc[1])]
    return out


def _turn(v, angle: float) -> np.ndarray:
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


class Materials:
    """glTF materials, textures, samplers and images for the scene's materials, made once each."""

    def __init__(self, scene: Scene, json: dict, resources: dict[str, bytes], warnings: Warnings) -> None:
        self.scene, self.json, self.resources, self.warnings = scene, json, resources, warnings
        self.images: dict[int, int] = {}        # scene image -> glTF image (-1: cannot travel)
        self.samplers: dict[str, int] = {}
        self.textures: dict[tuple[int, int], int] = {}
        self.done: dict[int, int] = {}          # scene material -> glTF material
        self.used_transform = False

    def material(self, index: int, uv_sets: list[str]) -> int:
        """The glTF material of scene material `index` (-1: none); uv_sets names TEXCOORD_n of the mesh."""
        if not 0 <= index < len(self.scene.materials):
            return -1
        key = index
        if key in self.done:
            return self.done[key]
        m = self.scene.materials[index]
        out = self._pbr(m, uv_sets)
        mats = self.json.setdefault("materials", [])
        mats.append(out)
        self.done[key] = len(mats) - 1
        return self.done[key]

    def _pbr(self, m: Material, uv_sets: list[str]) -> dict:
        pbr = {"baseColorFactor": [*map(float, np.clip(m.base_color, 0, 1)), float(np.clip(m.alpha, 0, 1))],
               "metallicFactor": 0.0, "roughnessFactor": float(np.clip(m.roughness, 0, 1))}
        out: dict = {"name": m.name, "pbrMetallicRoughness": pbr}
        for slot in m.textures:
            info = self._texture_info(slot, uv_sets)
            if info is None:
                continue
            if slot.kind == "base_color" and "baseColorTexture" not in pbr:
                pbr["baseColorTexture"] = info
            elif slot.kind == "normal" and "normalTexture" not in out:
                out["normalTexture"] = info
            elif slot.kind == "emission" and "emissiveTexture" not in out:
                out["emissiveTexture"] = info
        emit = np.clip(np.asarray(m.emission, float) * (m.emission_strength or 0.0), 0, None)
        if emit.max(initial=0) > 0:
            peak = float(emit.max())
            out["emissiveFactor"] = [float(x) for x in (emit / peak if peak > 1 else emit)]
            if peak > 1:
                out.setdefault("extensions", {})["KHR_materials_emissive_strength"] = {"emissiveStrength": peak}
                self._uses("KHR_materials_emissive_strength")
        mode = ALPHA.get(m.blend, "OPAQUE")
        if mode == "OPAQUE" and m.alpha < 1.0:
            mode = "BLEND"
        if mode != "OPAQUE":
            out["alphaMode"] = mode
        if mode == "MASK":
            out["alphaCutoff"] = 0.5
        if m.two_sided:
            out["doubleSided"] = True
        return out

    def _texture_info(self, slot: TextureSlot, uv_sets: list[str]) -> dict | None:
        image = self._image(slot.image)
        if image < 0:
            return None
        sampler = self._sampler(slot.extension)
        key = (image, sampler)
        if key not in self.textures:
            tex = self.json.setdefault("textures", [])
            tex.append({"sampler": sampler, "source": image})
            self.textures[key] = len(tex) - 1
        info: dict = {"index": self.textures[key]}
        uv = uv_sets.index(slot.uv_layer) if slot.uv_layer in uv_sets else 0
        if uv:
            info["texCoord"] = uv
        transform = _slot_transform(slot)
        if transform is not None:
            info["extensions"] = {"KHR_texture_transform": transform}
            self._uses("KHR_texture_transform")
        return info

    def _sampler(self, extension: str) -> int:
        if extension not in self.samplers:
            wrap = WRAP.get(extension, 10497)
            s = self.json.setdefault("samplers", [])
            s.append({"magFilter": LINEAR, "minFilter": LINEAR_MIPMAP_LINEAR, "wrapS": wrap, "wrapT": wrap})
            self.samplers[extension] = len(s) - 1
        return self.samplers[extension]

    def _image(self, index: int) -> int:
        if not 0 <= index < len(self.scene.images):
            return -1
        if index not in self.images:
            img = self.scene.images[index]
            found = _image_file(img, self.warnings)
            if found is None:
                self.images[index] = -1
            else:
                data, mime, ext = found
                name = self._file_name(img, ext)
                self.resources[name] = data
                imgs = self.json.setdefault("images", [])
                imgs.append({"name": img.name, "uri": name, "mimeType": mime})
                self.images[index] = len(imgs) - 1
        return self.images[index]

    def _file_name(self, img: Image, ext: str) -> str:
        """A file name of its own beside the .gltf: the image's name, made safe, with the type's extension."""
        stem = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in Path(img.name).stem) or "image"
        name, n = f"{stem}{ext}", 1
        while name in self.resources:
            n += 1
            name = f"{stem}_{n}{ext}"
        return name

    def _uses(self, ext: str) -> None:
        used = self.json.setdefault("extensionsUsed", [])
        if ext not in used:
            used.append(ext)
