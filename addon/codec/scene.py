"""The neutral Scene: what every format reads into and writes from, and the
contract between the layers.

Conventions are Blender's: right-handed, Z up, metres, column-vector 4x4
matrices (translation in column 3), quaternions (w, x, y, z), UV origin at
the bottom left, counter-clockwise front faces. Each format's to_scene.py and
from_scene.py convert to and from these; nothing else does.

Bulk data is numpy. Indices into scene lists (materials, images, meshes, ...)
are plain ints; -1 means "none".

The contract. Everything that one layer hands to another (a format to the
bridge, the bridge to a format, the codec core to either) is a typed,
commented field of these classes, never a key in `extras`:
  - where an imported action goes: `Animation.placement` (the bridge reads it);
  - the frames the bridge baked into shape keys on export: `Mesh.baked_frames`
    and `Mesh.baked_animation` (Unreal, Ultimate 3D and codec.animation read them);
  - the rest an armature-less animation's bone channels are relative to:
    `Scene.rest_pose` (a UNIGINE .anim; its rebase onto an armature and its
    export read it);
  - the name a file gives an object that the Scene shows under another:
    `Node.source_name` (the bridge keeps it on the object; 3DS writes it);
  - which format and version a scene was read from: `Scene.source_format`,
    `Scene.source_version` (`info` reports them);
  - how a texture stage's colour map combines with the stages below it and a
    cube map's six faces: `TextureSlot.combine`, `TextureSlot.cube_faces`
    (Ultimate 3D writes them, the bridge builds and reads their nodes);
  - per-corner data rides in corner layers, which every mesh operation
    re-indexes with the corners: the MikkTSpace tangents the bridge computes
    when an exporter asks (CollectOptions.tangents) are
    `Mesh.corner_attributes["tangent"]` (C, 3) and `["bitangent_sign"]` (C,).
`extras` holds only a format's own fields, named with its prefix ("3ds_",
"u3d_", "ue_", "unigine_"), kept so that the same format can write them back:
the bridge stores them as custom properties as they are and collects them
back, and no other layer reads them. Typed fields Blender has no place for
become custom properties too, under the bridge's own names ("lgf_...",
"source_name", "fps", the light's attenuation), and come back as those fields.
tests/codec/test_contract.py checks these rules in the source,
tests/blender/test_contract.py on what an import leaves in Blender and what an
export bakes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from .errors import FormatError


def identity() -> np.ndarray:
    return np.eye(4, dtype=np.float64)


def _f32(shape) -> np.ndarray:
    return np.zeros(shape, np.float32)


# ---------------------------------------------------------------------------
# Images and materials
# ---------------------------------------------------------------------------
@dataclass
class Image:
    name: str                      # the name as the file wrote it (e.g. "IMAGE1.JPG")
    filepath: str = ""             # resolved path on disk, "" when not found
    pixels: np.ndarray | None = None   # (H, W, 4) float32 0..1, bottom row first: decoded by the
                                       # codec when Blender cannot read the file itself (e.g. PCX)
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class TextureSlot:
    """One texture map feeding a material input.

    kind: which input it drives, one of
      "base_color", "base_color_2", "alpha", "normal", "bump", "specular",
      "roughness", "emission", "reflection", "environment", "other".
    """

    kind: str
    image: int                     # index into Scene.images
    uv_layer: str = ""             # "" = the mesh's first UV layer
    scale: tuple[float, float] = (1.0, 1.0)
    offset: tuple[float, float] = (0.0, 0.0)
    rotation: float = 0.0          # radians, counter-clockwise
    # how the picture sits on the UVs: offset moves it, rotation turns it and scale repeats it,
    # about `pivot`; None: the older reading, straight into Blender's Mapping node
    pivot: tuple[float, float] | None = None
    extension: str = "REPEAT"      # REPEAT, CLIP (no tiling: nothing outside), MIRROR, EXTEND
    alpha_source: bool = False     # the picture's alpha channel is what counts (opacity from alpha)
    ignore_alpha: bool = False     # the picture's alpha channel is not used: opaque wherever it lies
    decal: bool = False            # over the material's colour: that shows through the picture's alpha (and
    #                                around it when it does not tile)
    invert: bool = False           # the picture's colours inverted (a negative)
    # tint, applied after invert: 2 colours, the picture's brightness blends from the first to the second;
    # 3 colours, its red, green and blue scale the three, summed; () none
    tint: tuple[tuple[float, float, float], ...] = ()
    strength: float = 1.0          # 0..1 blend amount: from the material's own value (or the map below) to the map
    # how a colour map combines with the colour below it (the base colour, then each such map in turn), as a
    # texture stage's colour operation says; "" = as its kind says (see COMBINES for the others)
    combine: str = ""
    # a cube map's six images (indices into Scene.images), looked up by the reflection direction: +X, -X,
    # +Y, -Y, +Z, -Z faces of Direct3D's left-handed Y-up cube (Blender's x, z, y), each face's picture
    # upright as Direct3D samples it; `image` is the first; () = not a cube map
    cube_faces: tuple[int, ...] = ()
    extras: dict[str, Any] = field(default_factory=dict)


# TextureSlot.combine: "below" is the colour so far, "map" this slot's colour; results clamp to 0..1
COMBINES = {
    "MULTIPLY": "below x map", "MULTIPLY_2X": "2 x below x map", "MULTIPLY_4X": "4 x below x map",
    "ADD": "below + map", "ADD_SIGNED": "below + map - 0.5", "ADD_SIGNED_2X": "2 x (below + map - 0.5)",
    "SUBTRACT": "map - below", "ADD_SMOOTH": "below + map - below x map",
    "MIX_MAP_ALPHA": "map over below by the map's alpha",
    "MIX_MAP_ALPHA_PREMULTIPLIED": "map + below x (1 - the map's alpha)",
    "MIX_MATERIAL_ALPHA": "map over below by the material's alpha",
    "REPLACE": "map", "KEEP": "below (the map is not shown)",
}


@dataclass
class Material:
    name: str
    base_color: tuple[float, float, float] = (0.8, 0.8, 0.8)
    alpha: float = 1.0
    ambient: tuple[float, float, float] = (0.0, 0.0, 0.0)
    specular_color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    specular: float = 0.5          # Principled "Specular IOR Level" 0..1
    roughness: float = 0.5
    emission: tuple[float, float, float] = (0.0, 0.0, 0.0)
    emission_strength: float = 0.0
    two_sided: bool = True         # False = backface culling on
    blend: str = "OPAQUE"          # OPAQUE, BLEND, CLIP, ADD, MULTIPLY
    textures: list[TextureSlot] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)   # stored as custom properties


# ---------------------------------------------------------------------------
# Meshes
# ---------------------------------------------------------------------------
@dataclass
class ShapeKey:
    name: str
    positions: np.ndarray          # (V, 3) float32, absolute
    relative_to: int = 0           # index of the key it is relative to (0 = basis)
    value: float = 0.0
    interpolation: str = "KEY_LINEAR"


@dataclass
class Skin:
    """Skin weights: up to K influences per vertex."""

    armature: int                  # index into Scene.armatures
    joints: np.ndarray             # (V, K) int32 bone index into that armature, -1 = unused
    weights: np.ndarray            # (V, K) float32


@dataclass
class Mesh:
    name: str
    positions: np.ndarray = field(default_factory=lambda: _f32((0, 3)))   # (V, 3) float32
    corners: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))  # (C,) vertex per corner
    faces: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint32))    # (F,) loop starts
    uv_layers: dict[str, np.ndarray] = field(default_factory=dict)      # name -> (C, 2) float32
    normals: np.ndarray | None = None                                   # (C, 3) float32 custom split normals
    # native smoothing: Blender derives the normals from these (custom `normals`, if given, win)
    smoothing: np.ndarray | None = None                                 # (F,) uint32 group masks: an edge is
                                                                        # smooth where its faces share a bit;
                                                                        # 0 = flat (3DS smoothing groups)
    sharp_edges: np.ndarray | None = None                               # (C,) bool: the edge from this corner
                                                                        # to the next one of its face is sharp
    sharp_faces: np.ndarray | None = None                               # (F,) bool: flat shaded
    colors: dict[str, np.ndarray] = field(default_factory=dict)         # name -> (C, 4) float32 0..1
    face_material: np.ndarray | None = None                             # (F,) int32 slot index
    materials: list[int] = field(default_factory=list)                  # slot -> Scene.materials index (-1 empty)
    face_attributes: dict[str, np.ndarray] = field(default_factory=dict)    # name -> (F,) int32
    vertex_attributes: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (V,) int32 or (V, n) float32
    corner_attributes: dict[str, np.ndarray] = field(default_factory=dict)  # name -> (C,) or (C, n) float32
    shape_keys: list[ShapeKey] = field(default_factory=list)            # [0] is the basis when present
    skin: Skin | None = None
    # export only, set by the bridge when it bakes what modifiers deform: one absolute shape key per frame
    baked_frames: list[int] = field(default_factory=list)      # scene frame of shape key i; empty = not baked
    baked_animation: list[int] = field(default_factory=list)   # index into Scene.animations of shape key i
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def face_sizes(self) -> np.ndarray:
        return np.diff(np.append(self.faces.astype(np.int64), len(self.corners)))

    @classmethod
    def from_triangles(cls, name: str, positions, triangles, **kw) -> "Mesh":
        tris = np.asarray(triangles, np.uint32).reshape(-1, 3)
        return cls(name=name, positions=np.asarray(positions, np.float32).reshape(-1, 3),
                   corners=tris.reshape(-1), faces=np.arange(0, tris.size, 3, dtype=np.uint32), **kw)

    def triangles(self) -> np.ndarray:
        """(F, 3) corner vertex indices; only valid when every face is a triangle."""
        return self.corners.reshape(-1, 3)


# ---------------------------------------------------------------------------
# Cameras and lights
# ---------------------------------------------------------------------------
@dataclass
class Camera:
    name: str
    lens: float = 50.0             # mm, on a 36 mm sensor
    clip_start: float = 0.1
    clip_end: float = 1000.0
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class Light:
    name: str
    type: str = "POINT"            # POINT, SPOT, SUN, AREA
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)
    energy: float = 1000.0         # W for point/spot; strength for sun
    spot_size: float = np.pi / 4   # full cone angle, radians
    spot_blend: float = 0.15
    cast_shadow: bool = True
    use_attenuation: bool = False
    attenuation_start: float = 0.0
    attenuation_end: float = 0.0
    extras: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Armatures
# ---------------------------------------------------------------------------
@dataclass
class Bone:
    name: str
    parent: int = -1               # index in Armature.bones
    matrix: np.ndarray = field(default_factory=identity)   # rest, armature space, 4x4
    length: float = 0.0            # 0 = let the bridge choose
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class Armature:
    name: str
    bones: list[Bone] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Object tree
# ---------------------------------------------------------------------------
@dataclass
class Node:
    """An object. `kind` says which list `data` indexes."""

    name: str
    kind: str = "EMPTY"            # EMPTY, MESH, CAMERA, LIGHT, ARMATURE
    data: int = -1                 # index into meshes / cameras / lights / armatures
    parent: int = -1               # index into Scene.nodes
    parent_bone: str = ""          # bone name when parented to a bone of the parent armature
    matrix: np.ndarray = field(default_factory=identity)    # local: relative to the parent, or to the
                                                            # parent bone's head frame when parent_bone is set
    matrix_parent_inverse: np.ndarray = field(default_factory=identity)
    target: int = -1               # node this camera/light looks at (a Track To constraint)
    target_up: bool = False        # the target's Z axis gives the up direction (how roll is carried)
    hide: bool = False             # hidden in viewport and render
    cast_shadow: bool = True
    collection: str = ""           # child collection to put it in ("" = the import collection)
    source_name: str = ""          # the file's name for the object when `name` shows another ("" = name)
    extras: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# Animation
# ---------------------------------------------------------------------------
@dataclass
class Channel:
    """One animated property.

    target: node index. bone: pose-bone name or "". path is a Blender data path
    relative to the animated ID: "location", "rotation_quaternion",
    "rotation_euler", "scale", "hide_viewport" for objects;
    'key_blocks["Name"].value' for shape keys (the bridge animates the mesh's
    Key ID then); "lens", "color", ... for camera/light data ("data." prefix).
    frames (N,) float; values (N, D) float, one column per array index.
    """

    target: int
    path: str
    frames: np.ndarray
    values: np.ndarray
    bone: str = ""
    interpolation: str = "LINEAR"  # CONSTANT, LINEAR, BEZIER
    handles: np.ndarray | None = None   # BEZIER only: (N, D, 2, 2) left/right handle (frame, value) per key


@dataclass
class Marker:
    name: str
    frame: int


@dataclass
class Animation:
    name: str
    frame_start: float = 0.0
    frame_end: float = 0.0
    fps: float = 0.0               # 0 = not stored by the format
    channels: list[Channel] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)   # pose/event markers inside the action
    # where the bridge puts the action: ACTIVE = the owner's active action (an NLA strip when it has one
    # already), NLA = a strip laid after the other NLA animations, STASH = kept with a fake user only
    placement: Literal["ACTIVE", "NLA", "STASH"] = "ACTIVE"
    extras: dict[str, Any] = field(default_factory=dict)


@dataclass
class RestPose:
    """The rest an armature-less animation's bone channels are relative to (a UNIGINE .anim read
    without its armature): the rigid parent-local rest of each bone, as the file's bind pose holds it."""
    bones: list[str] = field(default_factory=list)              # bone names, in file order
    parents: list[int] = field(default_factory=list)            # index into bones; -1 = a root or a parent not listed
    translation: np.ndarray = field(default_factory=lambda: _f32((0, 3)))   # (B, 3) float32
    rotation: np.ndarray = field(default_factory=lambda: _f32((0, 4)))      # (B, 4) float32 quaternion (w, x, y, z)
    scale: np.ndarray = field(default_factory=lambda: _f32((0, 3)))         # (B, 3) float32
    # animation name -> bone -> [tx, ty, tz, rotation, sx, sy, sz]: True where the file never stores that
    # component (it then follows whatever rest the channels are moved onto)
    unstored: dict[str, dict[str, list[bool]]] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# World
# ---------------------------------------------------------------------------
@dataclass
class Fog:
    """Fog that thickens with the distance from the camera: density (0..1) at the near and far
    distance; `layer`: between two heights only (z_min..z_max), with `falloff` "TOP", "BOTTOM" or ""."""
    color: tuple[float, float, float] = (0.0, 0.0, 0.0)
    near: float = 0.0
    near_density: float = 0.0
    far: float = 1000.0
    far_density: float = 1.0
    background: bool = False         # also fogs the background
    use: bool = True                 # switched on in the file
    layer: tuple[float, float] | None = None
    falloff: str = ""


@dataclass
class World:
    """The environment: ambient light and what the camera sees behind everything.
    background: "NONE", "SOLID", "GRADIENT" or "IMAGE" (the one in use; the others are kept too)."""
    ambient: tuple[float, float, float] | None = None
    background: str = "NONE"
    color: tuple[float, float, float] | None = None                 # solid background
    gradient: list[tuple[float, float, float]] = field(default_factory=list)   # top, middle, bottom
    gradient_middle: float = 0.5     # height of the middle colour, 0 = bottom .. 1 = top of the view
    image: int = -1                  # index into Scene.images: the background picture, fit to the view
    fog: Fog | None = None           # distance fog
    layer_fog: Fog | None = None     # fog between two heights
    distance_cue: Fog | None = None  # objects dim to black with the distance (color black)
    extras: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
@dataclass
class Scene:
    nodes: list[Node] = field(default_factory=list)
    meshes: list[Mesh] = field(default_factory=list)
    materials: list[Material] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    armatures: list[Armature] = field(default_factory=list)
    animations: list[Animation] = field(default_factory=list)
    cameras: list[Camera] = field(default_factory=list)
    lights: list[Light] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)     # timeline markers
    frame_start: int | None = None                          # scene frame range, None = leave as is
    frame_end: int | None = None
    fps: float = 0.0
    world: World | None = None                              # the environment, when the format has one
    rest_pose: RestPose | None = None                       # what armature-less bone channels are relative to
    source_format: str = ""                                 # FormatSpec.name of the file read ("" = not read)
    source_version: str = ""                                # that file's version, as `info` reports it
    warnings: list[str] = field(default_factory=list)

    def add_node(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def children(self, index: int) -> list[int]:
        return [i for i, n in enumerate(self.nodes) if n.parent == index]

    def world_matrix(self, index: int) -> np.ndarray:
        m = identity()
        seen = set()
        while index >= 0:
            if index in seen:
                raise FormatError("cycle in node parents")
            seen.add(index)
            n = self.nodes[index]
            m = n.matrix_parent_inverse @ n.matrix @ m
            index = n.parent
        return m
