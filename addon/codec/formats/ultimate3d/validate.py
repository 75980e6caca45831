"""Cross-chunk checks of a v2 Model: counts, indices, bone parents.

The per-chunk reader checks sizes; here the chunks are checked against each
other and against the model header, so that the scene conversion can index
freely. Broken references are errors; harmless oddities are warnings.
"""
from __future__ import annotations

import numpy as np

from ...errors import FormatError, Warnings
from .model import Bone, Material, Mesh, Model
from .transforms import warn_not_affine

ROOT_V2 = 0xFFFFFFFF


def _err(msg: str, chunk, offsets: dict[int, int], path: str) -> FormatError:
    return FormatError(msg, offsets.get(id(chunk)), path)


def bone_depths(parents: list[int], root: int, path: str = "$U3D_BONE") -> list[int]:
    """Depth of every bone; a parent cycle is a FormatError naming a bone on it."""
    n = len(parents)
    depth = [-1] * n
    for start in range(n):
        chain, on_chain = [], set()
        i = start
        while i != root and depth[i] < 0:
            if i in on_chain:
                raise FormatError(f"bone {i} is its own ancestor (parent cycle)", None, path)
            chain.append(i)
            on_chain.add(i)
            i = parents[i]
        d = 0 if i == root else depth[i] + 1
        for j in reversed(chain):
            depth[j] = d
            d += 1
    return depth


MAX_FRAMES = 1_048_575     # Blender's frame limit + 1: more is a nonsense count, not an animation


def validate(model: Model, offsets: dict[int, int], warnings: Warnings) -> None:
    h = model.header
    if h.n_frame > MAX_FRAMES:
        raise FormatError(f"nFrame {h.n_frame} is not a plausible frame count (at most {MAX_FRAMES})",
                          offsets.get(id(h)), "$U3D_MODEL_HEADER")
    meshes, materials, bones = model.meshes, model._of(Material), model._of(Bone)
    for what, have, want in (("mesh", len(meshes), h.n_mesh), ("material", len(materials), h.n_material),
                             ("bone", len(bones), h.n_bone)):
        if have != want:
            raise FormatError(f"the model header announces {want} {what} chunks, the file has {have}",
                              offsets.get(id(h)), "$U3D_MODEL_HEADER")
    seen = set()
    for m in materials:
        if m.i_material >= h.n_material or m.i_material in seen:
            raise _err(f"material index {m.i_material} is out of range or repeated (nMaterial {h.n_material})",
                       m, offsets, f'$U3D_MATERIAL "{m.name}"')
        seen.add(m.i_material)
    _check_meshes(model, meshes, offsets, warnings)
    _check_bones(model, bones, len(meshes), offsets)
    warn_not_affine(bones, warnings, offsets=offsets)


def _check_meshes(model: Model, meshes: list[Mesh], offsets, warnings: Warnings) -> None:
    h = model.header
    owners: dict[tuple[int, int], Mesh] = {}
    for i, m in enumerate(meshes):
        path = f'$U3D_MESH[{i}] "{m.name}"'
        if m.i_lod >= h.n_lod or m.i_frame >= h.n_frame or m.i_mesh_per_frame >= h.n_mesh_per_frame:
            raise _err(f"mesh (iMeshPerFrame {m.i_mesh_per_frame}, iLOD {m.i_lod}, iFrame {m.i_frame}) is "
                       f"outside the header's {h.n_mesh_per_frame} x {h.n_lod} x {h.n_frame}", m, offsets, path)
        if m.triangles_owned:
            if m.i_frame == 0:
                owners[(m.i_lod, m.i_mesh_per_frame)] = m
            if int(m.triangle_material.max(initial=0)) >= h.n_material:
                warnings.warn(f"mesh {m.name!r}: material index {int(m.triangle_material.max())} out of range, "
                              "using material 0", offsets.get(id(m)), path)
        else:
            owner = owners.get((m.i_lod, m.i_mesh_per_frame))
            if owner is None:
                raise _err("TrianglesOwned is false but no earlier frame-0 mesh with the same iLOD and "
                           "iMeshPerFrame has indices", m, offsets, path)
            if int(owner.triangles.max(initial=0)) >= len(m.positions) or owner.n_triangle != m.n_triangle:
                raise _err("the shared frame-0 indices do not fit this mesh", m, offsets, path)
        if m.bone_indices is not None:
            used = m.bone_indices[:, :h.n_skin_weight + 1]
            if used.size and (h.n_bone == 0 or int(used.max()) >= h.n_bone):
                raise _err(f"skin bone index {int(used.max())} out of range ({h.n_bone} bones)", m, offsets, path)


def _check_bones(model: Model, bones: list[Bone], n_mesh: int, offsets) -> None:
    h = model.header
    index = {}
    for b in bones:
        path = f'$U3D_BONE "{b.name}"'
        if b.i_bone >= h.n_bone or b.i_bone in index:
            raise _err(f"bone index {b.i_bone} is out of range or repeated (nBone {h.n_bone})", b, offsets, path)
        index[b.i_bone] = b
        if b.i_parent != ROOT_V2 and b.i_parent >= h.n_bone:
            raise _err(f"bone parent {b.i_parent} out of range ({h.n_bone} bones)", b, offsets, path)
        if len(b.meshes) and int(np.max(b.meshes)) >= n_mesh:
            raise _err(f"appended mesh index {int(np.max(b.meshes))} out of range ({n_mesh} meshes)",
                       b, offsets, path)
    bone_depths([index[i].i_parent for i in range(len(bones))], ROOT_V2)
