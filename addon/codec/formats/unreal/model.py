"""The Unreal Engine 1 vertex mesh as its files hold it: _d.3d, _a.3d and the .uc script.

Nothing here converts axes or units. Frames stay raw bytes per frame (the
stride may hold more or fewer vertices than the mesh) and are unpacked by
`packing.py`, so that writing the model back gives the same bytes.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...errors import Warnings

HEADER_SIZE = 48          # _d.3d geometry header
ANIM_HEADER_SIZE = 4      # _a.3d: WORD NumFrames, WORD FrameSize

STANDARD = "STANDARD"     # one packed 32-bit word per vertex (X11 Y11 Z10, signed)
DEUS_EX = "DEUS_EX"       # int16 X, Y, Z and an int16 pad that is always 0
BYTES_PER_VERTEX = {STANDARD: 4, DEUS_EX: 8}
MAX_VERTICES = {STANDARD: 16383, DEUS_EX: 8191}   # FrameSize is a WORD

# Triangle type (low 4 bits of the type byte) and flag bits (high 4 bits).
TYPE_NORMAL, TYPE_TWO_SIDED, TYPE_TRANSLUCENT, TYPE_MASKED, TYPE_MODULATED = 0, 1, 2, 3, 4
TYPE_WEAPON = 8
FLAG_UNLIT, FLAG_FLAT, FLAG_ENVIRONMENT, FLAG_NO_SMOOTH = 16, 32, 64, 128

# A texture's poly flags (TEXTURE IMPORT FLAGS=; MASK=1 is masked too).
PF_INVISIBLE, PF_MASKED, PF_TRANSLUCENT, PF_MODULATED = 1, 2, 4, 64
PF_TWO_SIDED, PF_NO_SMOOTH, PF_UNLIT = 256, 2048, 4194304

# One triangle of _d.3d, 16 bytes.
TRIANGLE = np.dtype([
    ("v", "<u2", (3,)),        # vertex indices
    ("type", "u1"),            # type & 15 = kind, type & 0xF0 = flag bits
    ("color", "u1"),           # colour for flat/gouraud shading
    ("uv", "u1", (3, 2)),      # (U, V) bytes per corner; texel = byte * size / 256
    ("texture", "u1"),         # skin number (MESHMAP SETTEXTURE NUM=)
    ("flags", "u1"),           # the separate Flags byte: kept as read
])
assert TRIANGLE.itemsize == 16


@dataclass
class GeometryFile:
    """_d.3d: a 48-byte header, the triangles, and whatever follows them."""

    num_polys: int                       # header value (WORD)
    num_verts: int                       # header value (WORD)
    header_rest: bytes = bytes(HEADER_SIZE - 4)   # the 44 junk bytes after the two counts
    triangles: np.ndarray = field(default_factory=lambda: np.zeros(0, TRIANGLE))
    trailing: bytes = b""


@dataclass
class AnimationFile:
    """_a.3d: a 4-byte header and NumFrames frames of FrameSize bytes each.

    `frames` holds the whole frames present, (F, frame_size) uint8. `num_frames`
    is the header's count, which may exceed F in real files; `trailing` keeps
    a partial last frame or any bytes after the frames.
    """

    num_frames: int
    frame_size: int
    frames: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.uint8))
    trailing: bytes = b""


@dataclass
class Directive:
    """One `#exec` line: e.g. ("MESH", "SEQUENCE", {"MESH": "x", "SEQ": "All", ...})."""

    group: str                           # MESH, MESHMAP, TEXTURE, ... (upper case)
    command: str                         # IMPORT, ORIGIN, SEQUENCE, ... (upper case)
    params: dict[str, str]               # keys upper case, values as written (quotes removed)
    line: int = 0                        # 1-based line number in the script

    def get(self, key: str, default: str = "") -> str:
        return self.params.get(key.upper(), default)


@dataclass
class Script:
    """A .uc file: its text (kept for a byte-exact rewrite) and its #exec directives."""

    text: bytes = b""
    directives: list[Directive] = field(default_factory=list)


@dataclass
class Sequence:
    """One MESH SEQUENCE, with its MESH NOTIFY events."""

    name: str
    start: int
    count: int
    rate: float = 0.0                    # 0 = not given (the engine's default applies)
    group: str = ""
    notifies: list[tuple[float, str]] = field(default_factory=list)   # (TIME 0..1, FUNCTION)


@dataclass
class MeshSetup:
    """What a script says about one mesh, in the script's own units."""

    mesh: str = ""
    datafile: str = ""
    anivfile: str = ""
    unmirror: bool = False
    zerotex: bool = False
    import_params: str = ""             # the rest of its MESH IMPORT (LODSTYLE=, MLOD=, ZEROTEX=...)
    origin: tuple[float, float, float] = (0.0, 0.0, 0.0)         # raw units
    rotation: tuple[float, float, float] = (0.0, 0.0, 0.0)       # YAW, PITCH, ROLL; 256 per turn
    scale: tuple[float, float, float] | None = None              # MESHMAP SCALE, None = not given
    sequences: list[Sequence] = field(default_factory=list)
    textures: dict[int, tuple[str, str]] = field(default_factory=dict)   # NUM -> (texture name, file)
    texture_flags: dict[int, int] = field(default_factory=dict)          # NUM -> poly flags (FLAGS=, MASK=)
    texture_params: dict[int, str] = field(default_factory=dict)         # NUM -> the rest of its TEXTURE IMPORT
    package: str = ""                    # for the written script's defaultproperties
    texture_group: str = "Skins"


@dataclass
class UnrealMesh:
    """A pair (+ optional script): what read() returns and encode() writes.

    A model read from disk keeps its script's text (`script`) and rewrites it
    verbatim; a model built for export carries `setup`, from which encode()
    writes a new script named after the target.
    """

    name: str
    variant: str                         # STANDARD or DEUS_EX
    geometry: GeometryFile
    animation: AnimationFile
    script: Script | None = None
    setup: MeshSetup | None = None
    data_path: str = ""                  # the files read ("" for a model built for export)
    anim_path: str = ""
    script_path: str = ""
    notes: Warnings | None = None        # export: the warnings list encode() adds to (names it had to change)


@dataclass
class ScriptMeshes:
    """Several meshes of one script: a .uc with several MESH IMPORT lines read whole, or export with
    separate meshes. Each is a model of its own; the script (read) or their setups (export) are shared."""

    meshes: list[UnrealMesh]
    script: Script | None = None         # read: the script they come from, rewritten verbatim
    script_path: str = ""
