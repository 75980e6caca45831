"""Files of every format holding faces Blender cannot take and empty meshes, built by hand
with the format fixtures: a good triangle, two that repeat a vertex (a a b, a a a) and one of
zero area with three distinct vertices, plus meshes without vertices or faces."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.codec import fixtures_3ds as f3ds
from tests.codec import u3d_fixtures as fu3d
from tests.codec import unigine_fixtures as fung
from tests.codec import unreal_fixtures as fue

POINTS = [(0, 0, 0), (1, 0, 0), (0, 1, 0), (2, 0, 0)]
TRIS = [(0, 1, 2), (0, 0, 1), (1, 1, 1), (0, 1, 3)]      # good, a a b, a a a, zero area
KEPT = 2                                                  # faces Blender gets: the good one and the flat one
DROPPED = 2


def write_3ds(folder: Path) -> Path:
    empty = f3ds.trimesh(np.zeros((0, 3)), np.zeros((0, 3), int))     # a biped "bone": no vertices
    data = f3ds.build(objects=[f3ds.obj("Odd", f3ds.trimesh(POINTS, TRIS)), f3ds.obj("Bone", empty),
                               f3ds.obj("NoFaces", f3ds.trimesh(POINTS, np.zeros((0, 3), int)))])
    (folder / "odd.3ds").write_bytes(data)
    return folder / "odd.3ds"


def write_unreal(folder: Path) -> Path:
    frame = [(0, 0, 0), (8, 0, 0), (0, 8, 0), (16, 0, 0)]
    return fue.write_set(folder, "odd", fue.d_file([fue.tri(t) for t in TRIS], 4), fue.a_file([frame, frame]))


def write_unigine(folder: Path) -> Path:
    corners = [c for t in TRIS for c in t]
    odd = fung.surface_geometry([(POINTS, [fung.Q_IDENTITY] * 4)], uv0=[(0.0, 0.0)] * 4, coord=corners, tri=corners)
    empty = fung.surface_geometry([([], [])], coord=[], tri=[])
    data = fung.mesh_file(surfaces=[(fung.surface_header("odd"), odd), (fung.surface_header("empty"), empty)])
    (folder / "odd.mesh").write_bytes(data)
    return folder / "odd.mesh"


def write_u3d(folder: Path) -> Path:
    data = (fu3d.file_header() + fu3d.model_header(n_mesh=3, n_mpf=3)
            + fu3d.mesh("odd", POINTS, tris=TRIS, texcoords=[[(0, 0)] * 4])
            + fu3d.mesh("empty", [], tris=[], texcoords=[[]], mpf=1)
            + fu3d.mesh("nofaces", POINTS, tris=[], texcoords=[[(0, 0)] * 4], mpf=2)
            + fu3d.material())
    (folder / "odd.u3d").write_bytes(data)
    return folder / "odd.u3d"


WRITERS = {"3ds": write_3ds, "unreal": write_unreal, "unigine": write_unigine, "u3d": write_u3d}
