"""What each known chunk holds before its sub-chunks: one codec per layout.

A codec reads its fields from a bounds-checked Reader (limited to the chunk)
and writes them back unchanged. `CHILDREN` lists the chunks whose data is
followed by sub-chunks; any other chunk's leftover bytes become its tail.
Chunks missing from `CODECS` are kept as raw bytes.
"""
from __future__ import annotations

import numpy as np

from ...binary import Reader, Writer
from . import ids
from .model import TCB_BITS, MaterialGroup, Track, VertexFlags


class Flag:
    """A chunk with no data: its presence is the value."""

    def read(self, r: Reader):
        return None

    def write(self, w: Writer, v) -> None:
        pass


class Scalar:
    def __init__(self, kind: str):
        self.kind = kind

    def read(self, r: Reader):
        return r.scalar(self.kind)

    def write(self, w: Writer, v) -> None:
        w.scalar(self.kind, v)


class Struct:
    """Several fixed fields, read as a tuple."""

    def __init__(self, fmt: str):
        self.fmt = fmt

    def read(self, r: Reader):
        return r.unpack(self.fmt)

    def write(self, w: Writer, v) -> None:
        w.pack(self.fmt, *v)


class CString:
    def read(self, r: Reader):
        return r.cstring()

    def write(self, w: Writer, v) -> None:
        w.cstring(v)


class KfHeader:
    """0xB00A: revision, scene name, animation length."""

    def read(self, r: Reader):
        rev = r.u16()
        name = r.cstring()
        return (rev, name, r.u32())

    def write(self, w: Writer, v) -> None:
        w.u16(v[0]); w.cstring(v[1]); w.u32(v[2])


class NodeHeader:
    """0xB010: name, flags1, flags2, parent id (0xFFFF = none)."""

    def read(self, r: Reader):
        name = r.cstring()
        return (name,) + r.unpack("HHH")

    def write(self, w: Writer, v) -> None:
        w.cstring(v[0]); w.pack("HHH", *v[1:])


class CountedArray:
    """A u16 count, then that many records of `dtype` x `width`."""

    def __init__(self, dtype: str, width: int = 1):
        self.dtype, self.width = dtype, width

    def read(self, r: Reader):
        n = r.u16()
        a = r.array(self.dtype, n * self.width)
        return a.reshape(n, self.width) if self.width > 1 else a

    def write(self, w: Writer, v) -> None:
        w.u16(len(v)); w.array(v, self.dtype)


class RestArray:
    """As many `dtype` items as fit in the chunk (0x4150 has no count)."""

    def __init__(self, dtype: str):
        self.dtype = dtype

    def read(self, r: Reader):
        return r.array(self.dtype, r.remaining // np.dtype(self.dtype).itemsize)

    def write(self, w: Writer, v) -> None:
        w.array(v, self.dtype)


class PointFlags:
    """0x4111: a u16 count then one u16 per vertex. Some exporters (fels.3ds)
    leave the count out and write one word per vertex: then `counted` is False."""

    def read(self, r: Reader):
        n = r.u16()
        if 2 * n == r.remaining:
            return VertexFlags(r.array("<u2", n), True)
        r.pos -= 2
        return VertexFlags(r.array("<u2", r.remaining // 2), False)

    def write(self, w: Writer, v: VertexFlags) -> None:
        if v.counted:
            w.u16(len(v.flags))
        w.array(v.flags, "<u2")


class MatGroup:
    def read(self, r: Reader):
        name = r.cstring()
        n = r.u16()
        return MaterialGroup(name, r.array("<u2", n))

    def write(self, w: Writer, v: MaterialGroup) -> None:
        w.cstring(v.name); w.u16(len(v.faces)); w.array(v.faces, "<u2")


# floats of key data per track kind (morph keys hold a name instead)
_TRACK_WIDTH = {ids.POS_TRACK: 3, ids.ROT_TRACK: 4, ids.SCL_TRACK: 3, ids.FOV_TRACK: 1, ids.ROLL_TRACK: 1,
                ids.COL_TRACK: 3, ids.HOT_TRACK: 1, ids.FALL_TRACK: 1, ids.HIDE_TRACK: 0}
_BIT_COUNT = np.array([bin(i).count("1") for i in range(1 << TCB_BITS)])


class TrackCodec:
    """Flag word, 8 reserved bytes, u32 key count, then per key: u32 frame,
    u16 flags, one float per flag bit (TCB and ease), then the key data."""

    def __init__(self, cid: int):
        self.cid = cid
        self.width = _TRACK_WIDTH.get(cid)

    def read(self, r: Reader) -> Track:
        flags = r.u16()
        reserved = r.bytes(8)
        n = r.u32()
        r.check_count(n, 6 + 4 * (self.width or 0), "keys")
        frames = np.empty(n, np.int64)
        kflags = np.empty(n, np.uint16)
        tcb = np.full((n, TCB_BITS), np.nan, np.float32)
        morph = self.width is None
        values = [] if morph else np.empty((n, self.width), np.float32)
        # keys have variable size (the flag word says which floats follow): per-key loop
        for i in range(n):
            frames[i], kf = r.unpack("IH")
            kflags[i] = kf
            bits = kf & 0x1F
            if bits:
                tcb[i, [b for b in range(TCB_BITS) if bits >> b & 1]] = r.array("<f4", int(_BIT_COUNT[bits]))
            if morph:
                values.append(r.cstring())
            elif self.width:
                values[i] = r.array("<f4", self.width)
        return Track(flags, reserved, frames, kflags, tcb, values)

    def write(self, w: Writer, t: Track) -> None:
        w.u16(t.flags); w.bytes(t.reserved); w.u32(len(t.frames))
        for i in range(len(t.frames)):
            kf = int(t.key_flags[i])
            w.pack("IH", int(t.frames[i]), kf)
            bits = kf & 0x1F
            if bits:
                w.array(t.tcb[i, [b for b in range(TCB_BITS) if bits >> b & 1]], "<f4")
            if self.width is None:
                w.cstring(t.values[i])
            elif self.width:
                w.array(t.values[i], "<f4")


_F = Scalar("f32")
_FLAG = Flag()
CODECS: dict[int, object] = {
    ids.COLOR_F: Struct("3f"), ids.LIN_COLOR_F: Struct("3f"),
    ids.COLOR_24: Struct("3B"), ids.LIN_COLOR_24: Struct("3B"),
    ids.INT_PERCENT: Scalar("i16"), ids.FLOAT_PERCENT: _F,
    ids.VERSION: Scalar("u32"), ids.MESH_VERSION: Scalar("u32"), ids.MASTER_SCALE: _F,
    ids.BIT_MAP: CString(), ids.USE_BIT_MAP: _FLAG, ids.USE_SOLID_BGND: _FLAG, ids.USE_V_GRADIENT: _FLAG,
    ids.V_GRADIENT: _F, ids.FOG: Struct("4f"), ids.DISTANCE_CUE: Struct("4f"), ids.LAYER_FOG: Struct("3fI"),
    ids.FOG_BGND: _FLAG, ids.DCUE_BGND: _FLAG, ids.USE_FOG: _FLAG, ids.USE_DISTANCE_CUE: _FLAG,
    ids.USE_LAYER_FOG: _FLAG,
    ids.OBJECT: CString(),
    ids.OBJ_HIDDEN: _FLAG, ids.OBJ_VIS_LOFTER: _FLAG, ids.OBJ_DOESNT_CAST: _FLAG, ids.OBJ_MATTE: _FLAG,
    ids.OBJ_FAST: _FLAG, ids.OBJ_PROCEDURAL: _FLAG, ids.OBJ_FROZEN: _FLAG, ids.OBJ_DONT_RCVSHADOW: _FLAG,
    ids.POINT_ARRAY: CountedArray("<f4", 3), ids.POINT_FLAG_ARRAY: PointFlags(),
    ids.FACE_ARRAY: CountedArray("<u2", 4), ids.MSH_MAT_GROUP: MatGroup(), ids.TEX_VERTS: CountedArray("<f4", 2),
    ids.SMOOTH_GROUP: RestArray("<u4"), ids.MESH_MATRIX: RestArray("<f4"), ids.MESH_COLOR: Scalar("u8"),
    ids.N_DIRECT_LIGHT: Struct("3f"), ids.DL_SPOTLIGHT: Struct("5f"), ids.DL_OFF: _FLAG, ids.DL_ATTENUATE: _FLAG,
    ids.DL_RAYSHAD: _FLAG, ids.DL_SHADOWED: _FLAG, ids.DL_SEE_CONE: _FLAG, ids.DL_SPOT_RECTANGULAR: _FLAG,
    ids.DL_SPOT_OVERSHOOT: _FLAG, ids.DL_SPOT_PROJECTOR: CString(), ids.DL_SPOT_ROLL: _F,
    ids.DL_SPOT_ASPECT: _F, ids.DL_RAY_BIAS: _F, ids.DL_INNER_RANGE: _F, ids.DL_OUTER_RANGE: _F,
    ids.DL_MULTIPLIER: _F, ids.DL_LOCAL_SHADOW2: Struct("ffH"),
    ids.N_CAMERA: Struct("8f"), ids.CAM_RANGES: Struct("2f"), ids.CAM_SEE_CONE: _FLAG,
    ids.MAT_NAME: CString(), ids.MAT_SHADING: Scalar("u16"), ids.MAT_WIRESIZE: _F,
    ids.MAT_SELF_ILLUM: _FLAG, ids.MAT_TWO_SIDE: _FLAG, ids.MAT_DECAL: _FLAG, ids.MAT_ADDITIVE: _FLAG,
    ids.MAT_WIRE: _FLAG, ids.MAT_SUPERSMP: _FLAG, ids.MAT_FACEMAP: _FLAG, ids.MAT_XPFALLIN: _FLAG,
    ids.MAT_PHONGSOFT: _FLAG, ids.MAT_WIREABS: _FLAG, ids.MAT_USE_XPFALL: _FLAG, ids.MAT_USE_REFBLUR: _FLAG,
    ids.MAT_MAPNAME: CString(), ids.MAT_MAP_TILING: Scalar("u16"), ids.MAT_MAP_TEXBLUR: _F,
    ids.MAT_MAP_USCALE: _F, ids.MAT_MAP_VSCALE: _F, ids.MAT_MAP_UOFFSET: _F, ids.MAT_MAP_VOFFSET: _F,
    ids.MAT_MAP_ANG: _F, ids.MAT_MAP_COL1: Struct("3B"), ids.MAT_MAP_COL2: Struct("3B"),
    ids.MAT_MAP_RCOL: Struct("3B"), ids.MAT_MAP_GCOL: Struct("3B"), ids.MAT_MAP_BCOL: Struct("3B"),
    ids.KFHDR: KfHeader(), ids.KFSEG: Struct("II"), ids.KFCURTIME: Scalar("u32"),
    ids.NODE_HDR: NodeHeader(), ids.INSTANCE_NAME: CString(), ids.PIVOT: Struct("3f"),
    ids.BOUNDBOX: Struct("6f"), ids.MORPH_SMOOTH: _F, ids.NODE_ID: Scalar("u16"), ids.PRESCALE: Struct("3f"),
}
CODECS.update({t: TrackCodec(t) for t in ids.TRACKS})

# containers: no data of their own, only sub-chunks
CONTAINERS = frozenset((
    ids.MAIN, ids.EDITOR, ids.N_TRI_OBJECT, ids.SOLID_BGND, ids.AMBIENT_LIGHT,
    ids.MAT_ENTRY, ids.MAT_AMBIENT, ids.MAT_DIFFUSE, ids.MAT_SPECULAR, ids.MAT_SHININESS, ids.MAT_SHIN2PCT,
    ids.MAT_SHIN3PCT, ids.MAT_TRANSPARENCY, ids.MAT_XPFALL, ids.MAT_REFBLUR, ids.MAT_SELF_ILPCT,
    ids.MAT_BUMP_PERCENT, ids.KFDATA, *ids.NODE_TAGS, *ids.MAPS, *ids.MASKS,
))
# chunks whose data is followed by sub-chunks
CHILDREN = frozenset((
    ids.OBJECT, ids.FACE_ARRAY, ids.N_DIRECT_LIGHT, ids.DL_SPOTLIGHT, ids.N_CAMERA,
    ids.V_GRADIENT, ids.FOG, ids.DISTANCE_CUE, ids.LAYER_FOG,
)) | CONTAINERS
