"""Export's per-corner -> per-vertex split (mesh_out.mesh_vertices) and the normal encoder,
against plain reference implementations written here.

The rule pinned (meshops.split_corners): where a vertex's corners disagree (normal after compression,
texture coordinates: bit for bit), each distinct value becomes a vertex; vertices in their order, a
vertex's values in the order of their first corner; an unused vertex keeps its place (zero normal
and UVs).
"""
from __future__ import annotations

import numpy as np
import pytest

from addon.codec.formats.ultimate3d import normals as ncodec
from addon.codec.formats.ultimate3d.mesh_out import mesh_vertices, set_layout
from addon.codec.scene import Mesh


def encode_reference(normals: np.ndarray, v1: bool) -> np.ndarray:
    """The encoder's formula, as first written: normalise, angles in float32, nudge, truncate."""
    n = np.asarray(normals, np.float32)
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.where(length > 0, n / np.where(length > 0, length, 1), np.float32([0, 1, 0]))
    lat = -np.arcsin(np.clip(n[:, 1], -1.0, 1.0))
    lon = np.arctan2(n[:, 0], n[:, 2])
    lat_k, lon_k, lim, dt = (ncodec.V1_LAT, ncodec.V1_LON, 127, np.int8) if v1 else \
        (ncodec.V2_LAT, ncodec.V2_LON, 32767, np.int16)
    out = np.stack([np.trunc(lat * lat_k + np.copysign(0.02, lat)), np.trunc(lon * lon_k + np.copysign(0.02, lon))], 1)
    return np.clip(out, -lim, lim).astype(dt)


@pytest.mark.parametrize("v1", [False, True])
def test_encode_matches_reference_bit_for_bit(v1):
    rng = np.random.default_rng(7)
    n = rng.normal(size=(20000, 3)).astype(np.float32)
    n[::5] = ncodec.decode(encode_reference(n[::5], v1))      # decoded normals: a hair from an integer step
    n[1::11] = 0
    n[2::13] *= np.float32(1e-30)
    n[3::17] = [0, 3, 0]
    n[4::19] = [0, -2, 0]
    n[5::23, 1] = np.nan
    n[6::29, 0] = np.inf
    with np.errstate(all="ignore"):
        want = encode_reference(n, v1)
        got = ncodec.encode(n, v1)
        swapped = ncodec.encode_xyz(n[:, 0], n[:, 1], n[:, 2], v1)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(swapped, want)


def reference_vertices(sm: Mesh, v1: bool, normal_scalar: float = 1.0):
    """Corner by corner, in plain Python: the vertices, normals, UVs and triangles the rule gives."""
    n_c = len(sm.corners)
    cn = np.asarray(sm.normals, np.float32)[:, [0, 2, 1]]          # U3D axes: X Z Y
    packed = encode_reference(cn if normal_scalar >= 0 else -cn, v1)
    uv = np.array(sm.uv_layers["UVMap"], np.float32)
    uv[:, 1] = 1 - uv[:, 1]
    copies: dict[int, list] = {}               # vertex -> [(values, first corner)]
    copy_of_corner = []
    for c in range(n_c):
        v = int(sm.corners[c])
        key = (packed[c].tobytes(), uv[c].tobytes())
        values = copies.setdefault(v, [])
        found = [i for i, (k, _) in enumerate(values) if k == key]
        if not found:
            values.append((key, c))
            found = [len(values) - 1]
        copy_of_corner.append((v, found[0]))
    # vertices in order; each vertex's distinct values in the order of their first corner
    slots = [(v, i, c) for v in range(len(sm.positions)) for i, (_, c) in enumerate(copies.get(v, [(None, None)]))]
    new_index, positions, normals, uvs, source = {}, [], [], [], []
    for v, i, c in slots:
        new_index[(v, i)] = len(positions)
        positions.append(sm.positions[v][[0, 2, 1]])
        source.append(v)
        normals.append(packed[c] if c is not None else np.zeros(2, packed.dtype))
        uvs.append(uv[c] if c is not None else np.zeros(2, np.float32))
    tris = []
    starts = list(sm.faces) + [n_c]
    for f in range(len(sm.faces)):
        s, e = int(starts[f]), int(starts[f + 1])
        for k in range(1, e - s - 1):                       # fan, then the winding reversed back
            a, b, c = (new_index[copy_of_corner[x]] for x in (s, s + k, s + k + 1))
            tris.append((a, c, b))
    return (np.array(positions, np.float32), np.array(normals), np.array(uvs, np.float32),
            np.array(source), np.array(tris, np.int64).reshape(-1, 3))


def seam_mesh(seed: int = 0, unused: bool = True) -> Mesh:
    """Quads and triangles on a grid, plus a 12-triangle fan whose centre has 12 distinct normals
    (more copies than the split's rounds: the sort finishes it). Each corner picks one of three
    normals and one of two UVs of its vertex at random: shared vertices, seams, and repeats of a
    value after others (A B A C B) on one vertex. One vertex is used by no face."""
    rng = np.random.default_rng(seed)
    n = 6
    x, y = np.meshgrid(np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float32))
    pos = [np.stack([x.ravel(), y.ravel(), rng.random(n * n).astype(np.float32)], 1)]
    polys = []
    for i in range(n - 1):
        for j in range(n - 1):
            a, b, c, d = i * n + j, i * n + j + 1, (i + 1) * n + j + 1, (i + 1) * n + j
            polys += [[a, b, c, d]] if (i + j) % 3 else [[a, b, c], [a, c, d]]
    centre = n * n
    ring = np.arange(12) * (2 * np.pi / 12)
    pos.append(np.array([[10, 10, 1]], np.float32))
    pos.append(np.stack([10 + np.cos(ring), 10 + np.sin(ring), np.zeros(12)], 1).astype(np.float32))
    polys += [[centre, centre + 1 + k, centre + 1 + (k + 1) % 12] for k in range(12)]
    if unused:
        pos.append(np.array([[5, 5, 5]], np.float32))
    pos = np.concatenate(pos)
    m = Mesh(name="Seams", positions=pos, corners=np.array([c for p in polys for c in p], np.uint32),
             faces=np.cumsum([0] + [len(p) for p in polys[:-1]]).astype(np.uint32))
    palette_n = rng.normal(size=(len(pos), 3, 3)).astype(np.float32)
    palette_uv = rng.random((len(pos), 2, 2)).astype(np.float32)
    corners = m.corners.astype(np.int64)
    m.normals = palette_n[corners, rng.integers(0, 3, len(corners))]
    m.uv_layers["UVMap"] = palette_uv[corners, rng.integers(0, 2, len(corners))]
    fan = np.flatnonzero(corners == centre)
    m.normals[fan] = rng.normal(size=(len(fan), 3)).astype(np.float32)     # 12 distinct on the centre
    return m


@pytest.mark.parametrize("seed,v1,unused,ns", [(0, False, True, 1.0), (1, True, True, 1.0),
                                              (2, False, False, -1.0), (3, True, False, 1.0)])
def test_split_matches_reference(seed, v1, unused, ns):
    m = seam_mesh(seed, unused)
    pos, nrm, uv, source, tris = reference_vertices(m, v1, ns)
    assert len(pos) > len(m.positions)                       # the mesh does split
    vd = mesh_vertices(m, None, ns, set_layout([m]), v1)
    assert vd.positions.dtype == np.dtype("<f4") and np.array_equal(vd.positions, pos)
    assert vd.normals.dtype == np.dtype("i1" if v1 else "<i2") and np.array_equal(vd.normals, nrm)
    assert vd.texcoords[0].dtype == np.dtype("<f4") and vd.texcoords[0].tobytes() == uv.tobytes()
    assert all(t is None for t in vd.texcoords[1:])
    assert np.array_equal(vd.source_vertex, source)
    assert np.array_equal(vd.triangles, tris)


def test_agreeing_corners_keep_the_vertices_as_they_are():
    """One vertex per corner (what Blender gives back after importing a .u3d), with a few corners
    one compression step apart from the rest of their vertex: only those vertices gain a copy."""
    m = seam_mesh(5, unused=True)
    corners = m.corners.astype(np.int64)
    first = np.full(len(m.positions), len(corners))
    np.minimum.at(first, corners, np.arange(len(corners)))
    m.normals = m.normals[first[corners]]                   # each vertex: its first corner's values
    m.uv_layers["UVMap"] = m.uv_layers["UVMap"][first[corners]]
    vd = mesh_vertices(m, None, 1.0, set_layout([m]), False)
    assert np.array_equal(vd.source_vertex, np.arange(len(m.positions)))
    assert np.array_equal(vd.triangles, reference_vertices(m, False)[4])
    assert np.array_equal(vd.normals[-1], [0, 0])                 # the unused vertex
    odd = np.flatnonzero(corners == corners[7])[1]                 # a later corner of a shared vertex
    m.normals[odd] = ncodec.decode(ncodec.encode(m.normals[odd:odd + 1][:, [0, 2, 1]]) + [[0, 1]])[:, [0, 2, 1]]
    vd = mesh_vertices(m, None, 1.0, set_layout([m]), False)
    v = int(corners[7])                                             # its copy follows it
    assert np.array_equal(vd.source_vertex, np.insert(np.arange(len(m.positions)), v + 1, v))
    pos, nrm, uv, source, tris = reference_vertices(m, False)
    assert np.array_equal(vd.positions, pos) and np.array_equal(vd.normals, nrm)
    assert np.array_equal(vd.triangles, tris) and np.array_equal(vd.texcoords[0], uv)


def test_large_mesh_writes_the_same_bytes_as_a_plain_writer():
    """write_v2 keeps large arrays by reference and joins once: the bytes do not change."""
    from addon.codec.binary import Writer
    from addon.codec.errors import Warnings
    from addon.codec.formats.ultimate3d.write import encode_bytes
    from addon.codec.formats.ultimate3d.from_scene import from_scene
    from addon.codec.formats.ultimate3d.read import parse
    from addon.codec.formats.ultimate3d.options import ExportOptions
    from addon.codec.formats.ultimate3d.write_v2 import _Out, write_chunks
    from addon.codec.scene import Material, Node, Scene
    from tests.bench_data import grid_mesh
    m = grid_mesh("Big", 40_000)
    sc = Scene(meshes=[m], materials=[Material("M")])
    m.materials = [0]
    sc.add_node(Node("Big", "MESH", 0))
    model = from_scene(sc, ExportOptions(), Warnings())
    plain, out = Writer(), _Out()
    write_chunks(plain, model)
    write_chunks(out, model)
    assert len(out.done) > 2 and out.getvalue() == plain.getvalue()
    data = encode_bytes(model)
    assert data.endswith(plain.getvalue()) and encode_bytes(parse(data, Warnings())) == data


def test_smooth_normals_from_the_kernel_match_float64_sums_within_one_step():
    """A mesh without corner normals gets area-weighted vertex normals from meshops.vertex_normals
    (float32 face normals, summed in float64); the plain float64 sums compress to the same values
    but for one step where a value sits on a rounding edge."""
    from addon.codec.formats.ultimate3d.conventions import SWAP
    rng = np.random.default_rng(9)
    n = 40
    x, y = np.meshgrid(np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float32))
    pos = np.stack([x.ravel(), y.ravel(), rng.random(n * n).astype(np.float32) * 3], 1)
    i = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None, :]).ravel()
    tris = np.concatenate([np.stack([i, i + 1, i + n + 1], 1), np.stack([i, i + n + 1, i + n], 1)])
    m = Mesh.from_triangles("Smooth", pos, tris)
    vd = mesh_vertices(m, None, 1.0, set_layout([m]), False)
    assert np.array_equal(vd.source_vertex, np.arange(len(pos)))            # one value per vertex: no split
    p = pos.astype(np.float64)
    fn = np.cross(p[tris[:, 1]] - p[tris[:, 0]], p[tris[:, 2]] - p[tris[:, 0]])
    want = np.zeros_like(p)
    for k in range(3):
        np.add.at(want, tris[:, k], fn)
    want = want.astype(np.float32)
    ref = ncodec.encode_xyz(want[:, SWAP[0]], want[:, SWAP[1]], want[:, SWAP[2]])
    step = np.abs(vd.normals.astype(int) - ref).max(axis=1)
    assert step.max() <= 1 and (step == 0).mean() > 0.99
