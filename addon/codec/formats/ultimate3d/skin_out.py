"""The one skinned mesh U3D allows: merge the parts, keep 4 influences.

nSkinWeight (1..3) weights are stored per vertex and the last is implied
(1 - sum), so influences are sorted strongest first and the weakest is the
implied one. Objects parented to a bone join with weight 1 on that bone.
"""
from __future__ import annotations

import numpy as np

from ...errors import UnsupportedFeature, Warnings
from .mesh_out import mesh_vertices
from .model import Mesh
from .weights import sum_repeated

MAX_INFLUENCES = 4


def _influences(sm, bone: int) -> tuple[np.ndarray, np.ndarray]:
    """(V, K) joints and weights of each Scene vertex."""
    if sm.skin is None:
        n = len(sm.positions)
        return np.full((n, 1), bone, np.int64), np.ones((n, 1), np.float64)
    j = np.asarray(sm.skin.joints, np.int64)
    return j, np.where(j >= 0, np.asarray(sm.skin.weights, np.float64), 0.0)


def merge_skinned(parts, layout, v1: bool, warnings: Warnings, material_index) -> tuple[Mesh, int]:
    """parts: (name, scene mesh, matrix into model space, bone or -1) -> (Mesh, nSkinWeight)."""
    if not parts:
        raise UnsupportedFeature("the skinned model has no mesh left to export")
    if len(parts) > 1:
        warnings.warn(f"{len(parts)} objects merged into the one mesh a skinned .u3d model allows")
    pos, nrm, tris, mats, joints, weights, sources = [], [], [], [], [], [], []
    sets = [[] for _ in layout]
    offset = base = 0
    first = parts[0][1].extras
    ns = float(first.get("u3d_normal_scalar", 1.0))      # one mesh, one NormalScalar: the first part's
    for name, sm, matrix, bone in parts:
        vd = mesh_vertices(sm, matrix, ns, layout, v1)
        j, w = _influences(sm, bone)
        pos.append(vd.positions)
        nrm.append(vd.normals)
        for i, tc in enumerate(vd.texcoords):
            if tc is not None:
                sets[i].append(tc)
        tris.append(vd.triangles + offset)
        mats.append(material_index(sm, vd.triangle_face))
        joints.append(j)
        weights.append(w)
        sources.append(vd.source_vertex + base)
        offset += len(vd.positions)
        base += len(j)
    # per Scene vertex (a split vertex has its source's influences): every Scene vertex has a place
    # in the mesh (mesh_vertices), so what holds for all of them holds for the mesh's vertices
    k = max(w.shape[1] for w in weights)
    joints = np.concatenate([np.pad(j, ((0, 0), (0, k - j.shape[1])), constant_values=0) for j in joints])
    weights = np.concatenate([np.pad(w, ((0, 0), (0, k - w.shape[1]))) for w in weights])
    joints, weights = sum_repeated(joints, weights)       # a bone named twice: one summed influence
    order = np.argsort(-weights, axis=1, kind="stable")
    joints = np.take_along_axis(joints, order, 1)
    weights = np.take_along_axis(weights, order, 1)
    if (weights[:, MAX_INFLUENCES:] > 0).any():
        warnings.warn(f"vertices with more than {MAX_INFLUENCES} bone influences: the weakest were dropped")
    joints, weights = joints[:, :MAX_INFLUENCES], weights[:, :MAX_INFLUENCES]
    total = weights.sum(1, keepdims=True)
    weights = np.where(total > 0, weights / np.where(total > 0, total, 1.0), np.eye(1, weights.shape[1]))
    used = int((weights > 0).sum(1).max())
    nsw = min(max(used - 1, 1), MAX_INFLUENCES - 1)
    if int(joints.max()) > 255:
        raise UnsupportedFeature("skinning indexes bones with a BYTE: at most 256 bones can carry weights")
    idx = np.zeros((len(joints), 4), "u1")
    idx[:, :joints.shape[1]] = np.clip(joints, 0, 255)
    w_store = np.zeros((len(weights), nsw), "<f4")
    cols = min(nsw, weights.shape[1])
    w_store[:, :cols] = weights[:, :cols]
    source = np.concatenate(sources)
    mesh = Mesh(name=parts[0][0], normal_scalar=ns, valid_tangent_frames=int(first.get("u3d_valid_tangent_frames", 0)),
                extra=bytes.fromhex(str(first.get("u3d_extra", ""))),
                positions=np.concatenate(pos), normals=np.concatenate(nrm),
                texcoords=[np.concatenate(s) if s else None for s in sets],
                skin_weights=w_store[source], bone_indices=idx[source])
    t = np.concatenate(tris)
    mesh.n_triangle, mesh.triangles, mesh.triangle_material = len(t), t.astype("<u4"), np.concatenate(mats)
    return mesh, nsw
