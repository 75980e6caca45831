"""The .u3d file's own structures, field by field (v2.0 chunks, v1.0 records).

Numbers are the file's: row-vector matrices, x y z w quaternions, left-handed
axes, compressed normals as stored. Booleans are kept as their raw byte (the
notes: "bool is a byte: nonzero means true") so that odd values round-trip.
Every chunk keeps the bytes after its known fields in `extra`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

FLT_MAX = float(np.finfo(np.float32).max)
V1_MAGIC = b"U3DModelFile\0"
V2_MAGIC = b"$U3D_FILE_HEADER\0"
FILE_HEADER = "$U3D_FILE_HEADER"           # v2: the first chunk's identifier
MESH_ID = b"$U3D_MESH\0"
MAT_ID = b"$U3D_MAT\0"
BONE_ID = b"$U3D_BONE\0"
ROOT_V1 = 0xFFFF

# <DWORD;Vector> and <DWORD;Quaternion> key records (v2)
SCALE_KEY = np.dtype([("frame", "<u4"), ("value", "<f4", (3,))])
ROT_KEY = np.dtype([("frame", "<u4"), ("value", "<f4", (4,))])
# <WORD;WORD;Vector> and <WORD;WORD;Quaternion> (v1: the second WORD is unused)
SCALE_KEY_V1 = np.dtype([("frame", "<u2"), ("unused", "<u2"), ("value", "<f4", (3,))])
ROT_KEY_V1 = np.dtype([("frame", "<u2"), ("unused", "<u2"), ("value", "<f4", (4,))])


def empty_keys(dtype: np.dtype) -> np.ndarray:
    return np.zeros(0, dtype)


@dataclass
class RawChunk:
    """A chunk we do not interpret: kept verbatim."""

    ident: str
    data: bytes


@dataclass
class FileHeader:
    major: int = 2
    minor: int = 0
    subminor: int = 0
    encryption: int = 0       # 0 none, 1 undocumented (refused), 2 AES-128 ECB
    compression: int = 0      # 0 none; anything else is refused
    extra: bytes = b""


@dataclass
class ModelHeader:
    n_mesh: int = 1
    n_mesh_per_frame: int = 1
    n_frame: int = 1
    n_lod: int = 1
    n_material: int = 1
    n_bone: int = 0
    vertex_tweening: int = 0
    lod_max_camera_distance: np.ndarray = field(default_factory=lambda: np.array([FLT_MAX], "<f4"))
    tex_coord_dimension: tuple[int, ...] = (2, 0, 0, 0, 0, 0, 0, 0)
    n_skin_weight: int = 0
    shader_pack_template_exists: int = 0
    shader_pack_template: bytes | None = None   # raw $U3D_SHADER_PACK data (undocumented)
    extra: bytes = b""


@dataclass
class ShadowGeometry:
    """Kept raw: its only use is Ultimate 3D's shadow-volume shader."""

    vertices: np.ndarray      # (nVertex, stride) <u4, raw 32-bit words (floats and packed BYTE indices)
    triangles: np.ndarray     # (nTriangle, 3) <u2 or <u4 (one buffer; width by nVertex, see notes)
    extra: bytes = b""


@dataclass
class Mesh:
    i_mesh_per_frame: int = 0
    i_lod: int = 0
    i_frame: int = 0
    name: str = ""
    normal_scalar: float = 1.0
    valid_tangent_frames: int = 0         # ValidMeshToTangentSpaceMatrices
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), "<f4"))
    normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), "<i2"))   # (V, 2) latitude, longitude
    texcoords: list = field(default_factory=lambda: [None] * 8)   # per set: (V, dim) <f4 or None
    skin_weights: np.ndarray | None = None       # (V, nSkinWeight) <f4
    bone_indices: np.ndarray | None = None       # (V, 4) u1
    n_triangle: int = 0
    triangles_owned: int = 1
    triangles: np.ndarray | None = None          # (T, 3) <u2 / <u4 (Triangle16 / Triangle32)
    triangle_material: np.ndarray | None = None  # (T,) <u2
    shadow_exists: int = 0
    shadow: ShadowGeometry | None = None
    extra: bytes = b""
    extras: dict = field(default_factory=dict)   # not in the file: v1-only values carried to the Scene


@dataclass
class Texture:
    holds_texture: int = 0
    width: int = 0
    height: int = 0
    is_cube: int = 0
    is_normal_map: int = 0
    height_scalar: float = 0.0
    files: list[str] = field(default_factory=list)   # 1 or 6 (cube: right, left, top, bottom, back, front)
    extra: bytes = b""


@dataclass
class Material:
    i_material: int = 0
    name: str = ""
    ambient: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    diffuse: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
    specular: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    emissive: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    specular_power: float = 0.0
    material_depth: float = 0.0
    parallax_quality: float = 1.0
    color_op: tuple[int, ...] = (1,) * 8
    tex_coord_set: tuple[int, ...] = (0,) * 8
    textures: list[Texture] = field(default_factory=lambda: [Texture() for _ in range(8)])
    shader_pack_exists: int = 0
    shader_pack: bytes | None = None
    extra: bytes = b""
    extras: dict = field(default_factory=dict)   # not in the file: v1-only values carried to the Scene


@dataclass
class Bone:
    i_bone: int = 0
    name: str = ""
    i_parent: int = 0xFFFFFFFF            # root: 0xFFFFFFFF (v2), 0xFFFF (v1)
    bone_frame: float = -1.0
    pass_on_bone_frame: int = 1
    meshes: np.ndarray = field(default_factory=lambda: np.zeros(0, "<u4"))
    mesh_to_bone: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4), "<f4"))   # row-vector
    scaling_keys: np.ndarray = field(default_factory=lambda: empty_keys(SCALE_KEY))
    translation_keys: np.ndarray = field(default_factory=lambda: empty_keys(SCALE_KEY))
    rotation_keys: np.ndarray = field(default_factory=lambda: empty_keys(ROT_KEY))   # x, y, z, w
    extra: bytes = b""


@dataclass
class ActionRanges:
    actions: list[tuple[str, int, int]] = field(default_factory=list)   # name, first, last (closed)
    extra: bytes = b""


@dataclass
class Model:
    """A v2.0 file: the file header, then the chunks in file order."""

    file_header: FileHeader = field(default_factory=FileHeader)
    chunks: list = field(default_factory=list)   # ModelHeader, Mesh, Material, Bone, ActionRanges, RawChunk
    password: str = ""                           # for re-encryption when encryption == 2
    padding: bytes | None = None                 # the AES padding read, reused for a byte-exact rewrite
    source: str = ""                             # the file read (texture paths resolve from it)
    extras: dict = field(default_factory=dict)   # not in the file: v1-only values carried to the Scene

    def _of(self, cls) -> list:
        return [c for c in self.chunks if isinstance(c, cls)]

    @property
    def header(self) -> ModelHeader:
        found = self._of(ModelHeader)
        return found[0] if found else ModelHeader()

    @property
    def meshes(self) -> list[Mesh]:
        return self._of(Mesh)

    @property
    def materials(self) -> list[Material]:
        return sorted(self._of(Material), key=lambda m: m.i_material)

    @property
    def bones(self) -> list[Bone]:
        return sorted(self._of(Bone), key=lambda b: b.i_bone)

    @property
    def actions(self) -> list[tuple[str, int, int]]:
        found = self._of(ActionRanges)
        return found[0].actions if found else []


# --------------------------------------------------------------------------- v1.0
@dataclass
class HeaderV1:
    file_version: float = 1.0
    n_mesh: int = 1
    n_mesh_per_frame: int = 1
    n_frame: int = 1
    n_lod: int = 1
    nlod_is_dword: bool = False        # the notes: nLOD lost its type; WORD unless the layout says DWORD
    n_material: int = 1
    n_bone: int = 0
    cel_shading_strength: float = 0.0
    cel_shading_color: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    alpha_blending: int = 1
    vertex_tweening: int = 0
    lod_level_of_detail: np.ndarray = field(default_factory=lambda: np.zeros(0, "<f4"))   # nLOD-1
    lod_camera_distance_sq: np.ndarray = field(default_factory=lambda: np.zeros(0, "<f4"))  # nLOD-1


@dataclass
class MeshV1:
    name: str = ""
    frame: int = 0
    lod: float = 1.0
    normal_scalar: float = 1.0
    valid_tangent_frames: int = 0          # ValidInverseTangentSpaceMatrices
    tex_coord_dimension: tuple[int, ...] = (2, 0, 0, 0, 0, 0, 0, 0)
    n_skin_weight: int = 0
    max_blending_matrix: int = 0
    shadow_vertices: np.ndarray = field(default_factory=lambda: np.zeros((0, 6), "<u4"))
    shadow_triangles: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), "<u2"))
    positions: np.ndarray = field(default_factory=lambda: np.zeros((0, 3), "<f4"))
    normals: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), "i1"))   # (V, 2) latitude, longitude
    use_texcoord_buffer: int = 0
    texcoords_owned: int = 1
    texcoords: list = field(default_factory=lambda: [None] * 8)
    skin_weights: np.ndarray | None = None
    bone_indices: np.ndarray | None = None
    n_triangle: int = 0
    triangles_owned: int = 1
    triangles: np.ndarray | None = None          # (T, 3) <u2
    triangle_material: np.ndarray | None = None


@dataclass
class TextureV1:
    uses: int = 0
    type: int = 0
    identifier: str = ""
    width: int = 0
    height: int = 0
    file: str = ""


@dataclass
class MaterialV1:
    name: str = ""
    ambient: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    diffuse: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
    specular: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    emissive: tuple[float, ...] = (0.0, 0.0, 0.0, 1.0)
    specular_power: float = 0.0
    n_texture: int = 0
    color_op: tuple[int, ...] = (1,) * 8
    tex_coord_set: tuple[int, ...] = (0,) * 8
    export_resources: int = 0
    textures: list[TextureV1] = field(default_factory=list)   # parsed stages (8 unless skipped)
    effect_used: int | None = 0
    raw_tail: bytes = b""   # what the document says to skip (embedded resources, effects)


@dataclass
class BoneV1:
    name: str = ""
    i_parent: int = 0xFFFF
    bone_frame: float = -1.0
    pass_on_bone_frame: int = 1
    meshes: np.ndarray = field(default_factory=lambda: np.zeros(0, "<u2"))
    mesh_to_bone: np.ndarray = field(default_factory=lambda: np.zeros((0, 4, 4), "<f4"))
    unused: tuple[int, int, int] = (0, 0, 0)
    scaling_keys: np.ndarray = field(default_factory=lambda: empty_keys(SCALE_KEY_V1))
    translation_keys: np.ndarray = field(default_factory=lambda: empty_keys(SCALE_KEY_V1))
    rotation_keys: np.ndarray = field(default_factory=lambda: empty_keys(ROT_KEY_V1))


@dataclass
class ModelV1:
    header: HeaderV1 = field(default_factory=HeaderV1)
    meshes: list[MeshV1] = field(default_factory=list)
    materials: list[MaterialV1] = field(default_factory=list)
    bones: list[BoneV1] = field(default_factory=list)
    trailing: bytes = b""
    source: str = ""


def index_dtype(n_vertex: int) -> str:
    # Triangle16 when there are 65536 vertices or fewer, else Triangle32
    return "<u2" if n_vertex <= 65536 else "<u4"


def has_texcoords(m: MeshV1) -> bool:
    # texture coordinates are absent only when a shared buffer is used and not owned
    return not (m.use_texcoord_buffer and not m.texcoords_owned)


def lod_index(value: float, levels: np.ndarray) -> int:
    """A v1 mesh's LoD number from its level-of-detail value (1.0 is the highest, LoD 0)."""
    if not len(levels) or abs(value - 1.0) < 1e-6:
        return 0
    return 1 + int(np.argmin(np.abs(levels.astype(np.float64) - value)))


def mesh_places(model: ModelV1) -> list[tuple[int, int, int]]:
    """(LoD, frame, mesh-per-frame index) of every mesh: meshes are numbered in file order
    within a (frame, LoD); a skinned model's meshes are all frame 0."""
    h = model.header
    counter: dict[tuple[int, int], int] = {}
    out = []
    for m in model.meshes:
        lod = lod_index(m.lod, h.lod_level_of_detail)
        frame = m.frame if h.n_bone == 0 else 0
        mpf = counter.get((frame, lod), 0)
        counter[(frame, lod)] = mpf + 1
        out.append((lod, frame, mpf))
    return out
