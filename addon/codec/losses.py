"""What a target format cannot hold, said once per kind of thing before it is written.

`save` (the Blender exporters and `convert` alike) calls `report` with the
format's registry name; each loss is one warning naming what is dropped.
Losses a format reports itself with more detail (U3D's object animation,
3DS's extra timelines) are not repeated here. An animation-only Scene (an
.anim file) into a format that cannot hold it is an error, not an empty file.
"""
from __future__ import annotations

import functools
from dataclasses import fields, is_dataclass
from operator import attrgetter

from .errors import UnsupportedFeature, Warnings
from .scene import Scene

MESH_ONLY = {"unreal": "an Unreal vertex mesh", "unigine-mesh": "a UNIGINE mesh", "u3d": "a .u3d model"}
NO_SHAPE_KEY_ANIMATION = {"3ds": "a .3ds file", "unigine-mesh": "a UNIGINE mesh", "unigine-anim": "a UNIGINE .anim"}
BONE_ANIMATION_ONLY = {"unigine-mesh": "a UNIGINE mesh", "unigine-anim": "a UNIGINE .anim"}
ANIMATION_ONLY_TARGETS = {"unigine-anim"}
# formats whose names are bytes in one code page, or UTF-8 text (glTF: a name read as undecodable bytes cannot
# be written there); what it lacks is written as "?" (binary.Writer.cstring, the glTF JSON)
# (Unreal writes names only as UnrealScript identifiers: ucscript.checked_identifier replaces and warns)
NAME_ENCODING = {"3ds": "latin-1", "u3d": "latin-1", "gltf": "utf-8", "glb": "utf-8"}
_ENCODING_LABEL = {"latin-1": "Latin-1", "utf-8": "UTF-8"}
_TRS = ("location", "rotation_quaternion", "rotation_euler", "scale")


def _names(items, limit: int = 4) -> str:
    items = list(dict.fromkeys(items))
    shown = ", ".join(repr(x) for x in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def report(scene: Scene, fmt: str, warnings: Warnings) -> None:
    if scene.animations and not scene.nodes and not scene.meshes and fmt not in ANIMATION_ONLY_TARGETS:
        raise UnsupportedFeature(f"the input holds only animation ({_names(a.name for a in scene.animations)}) "
                                 f"and no mesh: there is nothing to write to {fmt!r}")
    if fmt in NAME_ENCODING:
        odd = _odd(_all_names(scene), NAME_ENCODING[fmt])
        if odd:
            warnings.warn(f"{fmt} names hold {_ENCODING_LABEL[NAME_ENCODING[fmt]]} characters only: {_names(odd)} "
                          "written with '?' for the others")
    kinds = {n.kind for n in scene.nodes}
    if fmt in MESH_ONLY and kinds & {"CAMERA", "LIGHT"}:
        dropped = [n.name for n in scene.nodes if n.kind in ("CAMERA", "LIGHT")]
        warnings.warn(f"{MESH_ONLY[fmt]} holds no cameras or lights: {_names(dropped)} not written")
    if fmt == "3ds":
        skinned = [m.name for m in scene.meshes if m.skin is not None]
        if scene.armatures or skinned:
            warnings.warn(f"a .3ds file holds no bones or skinning: {_names(skinned or [a.name for a in scene.armatures])} "
                          "written in the rest pose, without their bone animation")
        odd = [scene.lights[n.data].name for n in scene.nodes if n.kind == "LIGHT" and 0 <= n.data < len(scene.lights)
               and scene.lights[n.data].type in ("SUN", "AREA")]
        if odd:
            warnings.warn(f"a .3ds file holds omni and spot lights only: sun and area lights {_names(odd)} "
                          "written as omni lights")
    if fmt in NO_SHAPE_KEY_ANIMATION:
        keyed = {scene.nodes[c.target].name for a in scene.animations for c in a.channels
                 if c.path.startswith("key_blocks[") and 0 <= c.target < len(scene.nodes)}
        if keyed:
            warnings.warn(f"{NO_SHAPE_KEY_ANIMATION[fmt]} holds no shape-key animation: that of {_names(keyed)} "
                          "is not written")
    if fmt in BONE_ANIMATION_ONLY:
        moved = {scene.nodes[c.target].name for a in scene.animations for c in a.channels
                 if not c.bone and (c.path in _TRS or c.path.startswith(("data.", "hide"))) and 0 <= c.target < len(scene.nodes)}
        if moved:
            warnings.warn(f"{BONE_ANIMATION_ONLY[fmt]} animates bones only: the animation of objects "
                          f"{_names(moved)} is not written")


def _odd(names: list[str], encoding: str) -> list[str]:
    """The names `encoding` cannot hold (all of them encoded at once first: thousands of shape keys)."""
    try:
        "".join(names).encode(encoding)
        return []
    except UnicodeEncodeError:
        return [n for n in names if not _holds(n, encoding)]


def _holds(name: str, encoding: str) -> bool:
    try:
        name.encode(encoding)
        return True
    except UnicodeEncodeError:
        return False


@functools.cache
def _fields(cls) -> tuple[bool, tuple[str, ...]]:
    """(whether the class has a `name` field, its other fields), once per class (fields() is slow per object)."""
    names = [f.name for f in fields(cls)]
    return "name" in names, tuple(n for n in names if n != "name")


def _nested(v) -> bool:
    return isinstance(v, list) and bool(v) and is_dataclass(v[0])


def _all_names(obj) -> list[str]:
    """The `name` of every object in the scene's lists (nodes, materials, bones, shape keys, ...), depth first."""
    named, others = _fields(type(obj))
    out = [obj.name] if named and isinstance(obj.name, str) else []
    for f in others:
        v = getattr(obj, f)
        if _nested(v):
            cls = type(v[0])
            named, inner = _fields(cls)
            if all(type(x) is cls for x in v) and not any(_nested(y) for g in inner for y in map(attrgetter(g), v)
                                                          if isinstance(y, list)):
                out += [x.name for x in v if isinstance(x.name, str)] if named else []   # a flat list at once
            else:
                for x in v:
                    out += _all_names(x)
    return out
