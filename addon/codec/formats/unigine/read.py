"""Bytes -> file model for ms11 meshes and an10 animations, byte-exact.

The reader keeps the file's numbers. Anything the notes do not allow (an
unknown magic, a bad compact int, a count past the end, an index or bone
out of range, a parent cycle) is a FormatError naming the offset and where
in the file it was.
"""
from __future__ import annotations

import numpy as np

from ...binary import Reader
from ...errors import Warnings
from . import bounds as bounds_mod
from .compact import read_count, read_string
from .model import (ANIM_MAGIC, BIND_DTYPE, MESH_MAGIC, OTHER_VERSIONS, AnimFile, Bounds, BoneHeader,
                    MeshFile, MorphTarget, Surface, Track, Weights, index_dtype)
from .records import read_frames, read_weights


# An animation without bones stores no records, so nothing in the file bounds its frame count: cap it
# (an hour at 30 fps and then some).
MAX_EMPTY_FRAMES = 1 << 17


def check_magic(r: Reader, expected: bytes, where: str) -> None:
    start = r.pos
    if r.remaining < 4:
        r.fail(f"{where}: expected magic {expected.decode()!r}, found end of data")
    magic = r.bytes(4)
    if magic == expected:
        return
    if magic in OTHER_VERSIONS:
        r.fail(f"{where}: UNIGINE version {magic.decode()!r} is not supported (only {expected.decode()!r})",
               offset=start)
    r.fail(f"{where}: expected magic {expected.decode()!r}, found {magic!r}", offset=start)


def _bounds(r: Reader) -> Bounds:
    return Bounds(r.array("<f4", 10).copy())


def _bone_headers(r: Reader) -> list[BoneHeader]:
    count = read_count(r, 4, "bone count")     # a name is at least 2 bytes, a parent 2
    bones, parent_at = [], []
    with r.chunk("BONES"):
        for i in range(count):
            with r.chunk(f"BONE {i}"):
                name = read_string(r, "bone name")
                parent_at.append(r.pos)
                parent = r.i16()
                if parent < -1 or parent >= count:
                    r.fail(f"bone {name!r}: parent {parent} is not -1 or a bone index below {count}",
                           offset=parent_at[-1])
                bones.append(BoneHeader(name, parent))
        _check_cycles(r, bones, parent_at)
    return bones


def _check_cycles(r: Reader, bones: list[BoneHeader], parent_at: list[int]) -> None:
    """Parents may follow children, but following parents must reach a root.

    Pointer doubling: after 2^k >= len(bones) steps every chain that is not a
    cycle has reached the root sentinel.
    """
    n = len(bones)
    jump = np.array([b.parent if b.parent >= 0 else n for b in bones] + [n], np.int64)
    for _ in range(n.bit_length() + 1):
        jump = jump[jump]
    stuck = np.nonzero(jump[:n] != n)[0]
    if len(stuck):
        i = int(stuck[0])
        r.fail(f"bone parent cycle: following the parents of bone {i} ({bones[i].name!r}) never reaches a root",
               offset=parent_at[i])


def _names(r: Reader, what: str) -> list[str]:
    count = read_count(r, 2, f"{what} count")
    with r.chunk(what.upper() + "S"):
        return [read_string(r, f"{what} name") for _ in range(count)]


def _bind(r: Reader, bones: int) -> np.ndarray:
    with r.chunk("BIND POSE"):
        return r.array(BIND_DTYPE, bones).copy()


def _track(r: Reader, name: str, bone_count: int, quantized: bool, warnings: Warnings) -> Track:
    with r.chunk(f'ANIMATION "{name}"'):
        n = read_count(r, 2, "animation bone count")
        at = r.pos
        bones = r.array("<i2", n).copy()
        bad = (bones < 0) | (bones >= bone_count)
        if bad.any():
            i = int(np.argmax(bad))
            r.fail(f"animation bone {i} is bone index {bones[i]}, outside 0..{bone_count - 1}", offset=at + 2 * i)
        track = Track(name, bones)
        if quantized:
            boxes = r.array("<f4", 12).reshape(4, 3).copy()
            track.translation_box, track.scale_box = boxes[0:2], boxes[2:4]
        at = r.pos
        track.flag = r.u8()
        if track.flag & 0x80:
            version = "an10" if quantized else "ms11"
            r.fail(f"animation flag 0x{track.flag:02X} uses bit 7, which {version} does not define",
                   offset=at)
        at = r.pos
        frames = read_count(r, n, "frame count")         # each frame holds n records of 1 byte or more
        if not n and frames > MAX_EMPTY_FRAMES:
            # no record bounds the count: a corrupt one would make a frame range of billions
            warnings.warn(f"animation {name!r} has no bones but claims {frames} frames; read as {MAX_EMPTY_FRAMES} "
                          f"(and written so)", offset=at, path=r.path)
            frames = MAX_EMPTY_FRAMES
        at = r.pos
        with r.chunk("FRAMES"):
            track.flags, track.translation, track.rotation, track.scale = read_frames(
                r, frames, n, "<u2" if quantized else "<f4")
        extra = int(np.bitwise_or.reduce(track.flags.reshape(-1), initial=0)) & ~track.flag & 0xFF
        if extra:
            warnings.warn(f"animation {name!r}: records store components (0x{extra:02X}) missing from its flag "
                          f"0x{track.flag:02X}", offset=at, path=r.path)
        if frames and n:
            missing = (track.flag & ~track.flags[0]) != 0
            if missing.any():
                warnings.warn(f"animation {name!r}: {int(missing.sum())} first-frame records do not carry every "
                              f"component of the animation; the bind pose stands in until one is stored",
                              offset=at, path=r.path)
    return track


def _indices(r: Reader, vertex_count: int, what: str) -> np.ndarray:
    dt = index_dtype(vertex_count)
    n = read_count(r, dt.itemsize, f"{what} index count")
    at = r.pos
    idx = r.array(dt, n).astype(np.int64)
    if n:
        bad = (idx < 0) | (idx >= vertex_count)
        if bad.any():
            i = int(np.argmax(bad))
            r.fail(f"{what} index {i} is {int(idx[i])}, but there are {vertex_count} {what} vertices",
                   offset=at + dt.itemsize * i)
    return idx.astype(np.uint32)


def _surface_geometry(r: Reader, surf: Surface, target_names: list[str], bone_count: int) -> None:
    with r.chunk(f'SURFACE "{surf.name}"'):
        for name in target_names:
            with r.chunk(f'TARGET "{name}"'):
                v = read_count(r, 12, "vertex count")
                positions = r.array("<f4", 3 * v).reshape(v, 3).copy()
                t = read_count(r, 8, "tangent count")
                tangents = r.array("<i2", 4 * t).reshape(t, 4).copy()
                surf.targets.append(MorphTarget(name, positions, tangents))
        with r.chunk("WEIGHTS"):
            at = r.pos
            n = read_count(r, 1, "weight count")
            counts, bones, weights = read_weights(r, n, bone_count)
            surf.weights = Weights(counts, bones, weights)
            if n and n != surf.coordinate_count:
                r.fail(f"{n} weight records for {surf.coordinate_count} coordinate vertices", offset=at)
        for attr, what, cols, dt in (("uv0", "UV set 1", 2, "<f4"), ("uv1", "UV set 2", 2, "<f4"),
                                      ("colors", "colour", 4, "u1")):
            at = r.pos
            n = read_count(r, cols * np.dtype(dt).itemsize, f"{what} count")
            if n and n != surf.triangle_count:
                r.fail(f"{n} {what} entries for {surf.triangle_count} triangle vertices", offset=at)
            setattr(surf, attr, r.array(dt, cols * n).reshape(n, cols).copy())
        with r.chunk("COORDINATE INDICES"):
            surf.coord_indices = _indices(r, surf.coordinate_count, "coordinate")
        with r.chunk("TRIANGLE INDICES"):
            at = r.pos
            surf.tri_indices = _indices(r, surf.triangle_count, "triangle")
        if len(surf.coord_indices) != len(surf.tri_indices) or len(surf.tri_indices) % 3:
            r.fail(f"{len(surf.coord_indices)} coordinate and {len(surf.tri_indices)} triangle indices: "
                   f"the lists must be equally long and hold whole triangles", offset=at)


def read_mesh(data: bytes, warnings: Warnings) -> MeshFile:
    r = Reader(data, path="MESH")
    check_magic(r, MESH_MAGIC, "header")
    m = MeshFile(bounds=_bounds(r))
    m.bones = _bone_headers(r)
    anim_names = _names(r, "animation")
    surf_targets = []
    count = read_count(r, 2 + 40 + 1, "surface count")
    with r.chunk("SURFACES"):
        for i in range(count):
            with r.chunk(f"SURFACE {i}"):
                surf = Surface(read_string(r, "surface name"), bounds=_bounds(r))
                surf_targets.append(_names(r, "morph target"))
                m.surfaces.append(surf)
    check_magic(r, MESH_MAGIC, "after the headers")
    m.bind = _bind(r, len(m.bones))
    for name in anim_names:
        m.animations.append(_track(r, name, len(m.bones), False, warnings))
    for surf, names in zip(m.surfaces, surf_targets):
        _surface_geometry(r, surf, names, len(m.bones))
    check_magic(r, MESH_MAGIC, "closing")
    m.trailing = r.rest()
    if m.trailing:
        warnings.warn(f"{len(m.trailing)} bytes after the closing magic are kept as they are",
                      offset=r.pos - len(m.trailing))
    bounds_mod.check_mesh(m, warnings)
    return m


def read_anim(data: bytes, warnings: Warnings) -> AnimFile:
    r = Reader(data, path="ANIM")
    check_magic(r, ANIM_MAGIC, "header")
    a = AnimFile(bounds=_bounds(r))
    a.bones = _bone_headers(r)
    names = _names(r, "animation")
    check_magic(r, ANIM_MAGIC, "after the headers")
    a.bind = _bind(r, len(a.bones))
    for name in names:
        a.animations.append(_track(r, name, len(a.bones), True, warnings))
    check_magic(r, ANIM_MAGIC, "closing")
    a.trailing = r.rest()
    if a.trailing:
        warnings.warn(f"{len(a.trailing)} bytes after the closing magic are kept as they are",
                      offset=r.pos - len(a.trailing))
    return a


def parse(data: bytes, warnings: Warnings) -> MeshFile | AnimFile:
    """In memory, either file of the family by its magic (an unknown one is the .mesh reader's error)."""
    return read_anim(data, warnings) if data[:2] == ANIM_MAGIC[:2] else read_mesh(data, warnings)
