"""What a Scene holds, what each format can keep, and so what a conversion drops.

HOLDS is the one table of format capabilities: `lgf formats` prints it, the
README's table of losses is generated from it, each conversion reports its
losses from it, and a test converts real files to check it.
"""
from __future__ import annotations

from .scene import Scene

def _channel_kind(c) -> str:
    return "bone" if c.bone else "shape_key" if c.path.startswith("key_blocks") else "object"


def _animations(scene: Scene, kind: str) -> int:
    return sum(any(_channel_kind(c) == kind for c in a.channels) for a in scene.animations)


# feature -> (label, how many the Scene has)
FEATURES = {
    "meshes": ("meshes", lambda s: len(s.meshes)),
    # a mesh under its armature is skinning, not hierarchy
    "hierarchy": ("parented objects", lambda s: sum(n.parent >= 0 and s.nodes[n.parent].kind != "ARMATURE"
                                                    for n in s.nodes)),
    "uv": ("UV maps", lambda s: sum(len(m.uv_layers) > 0 for m in s.meshes)),
    "second_uv": ("second UV maps", lambda s: sum(len(m.uv_layers) > 1 for m in s.meshes)),
    "vertex_colors": ("vertex colours", lambda s: sum(len(m.colors) > 0 for m in s.meshes)),
    "materials": ("materials", lambda s: len(s.materials)),
    "textures": ("texture images", lambda s: len(s.images)),
    "shape_keys": ("meshes with shape keys", lambda s: sum(len(m.shape_keys) > 0 for m in s.meshes)),
    "armatures": ("armatures", lambda s: len(s.armatures)),
    "skins": ("skinned meshes", lambda s: sum(m.skin is not None for m in s.meshes)),
    "object_animation": ("animations of objects", lambda s: _animations(s, "object")),
    "bone_animation": ("animations of bones", lambda s: _animations(s, "bone")),
    "shape_key_animation": ("animations of shape keys", lambda s: _animations(s, "shape_key")),
    "cameras": ("cameras", lambda s: len(s.cameras)),
    "lights": ("lights", lambda s: len(s.lights)),
}

HOLDS: dict[str, frozenset[str]] = {
    "3ds": frozenset({"meshes", "hierarchy", "uv", "materials", "textures", "object_animation", "cameras",
                      "lights"}),
    "unreal": frozenset({"meshes", "uv", "materials", "textures", "shape_keys",
                         "shape_key_animation"}),
    "unigine-mesh": frozenset({"meshes", "uv", "second_uv", "vertex_colors", "materials", "shape_keys",
                               "armatures", "skins", "bone_animation"}),
    "unigine-anim": frozenset({"bone_animation"}),
    "u3d": frozenset({"meshes", "uv", "second_uv", "materials", "textures", "shape_keys",
                      "armatures", "skins", "bone_animation", "shape_key_animation"}),
    "gltf": frozenset(FEATURES),
    "glb": frozenset(FEATURES),
}


def count(scene: Scene) -> dict[str, int]:
    """Each feature the scene has, with how many."""
    out = {}
    for name, (_, fn) in FEATURES.items():
        n = int(fn(scene))
        if n:
            out[name] = n
    return out


def losses(scene: Scene, target: str) -> list[str]:
    """What writing `scene` as format `target` leaves out, one phrase each (e.g. "2 cameras")."""
    keep = HOLDS.get(target)
    if keep is None:
        return []
    return [f"{n} {FEATURES[k][0]}" for k, n in count(scene).items() if k not in keep]
