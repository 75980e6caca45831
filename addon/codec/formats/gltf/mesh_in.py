"""glTF meshes -> Scene meshes: one Mesh per glTF mesh, one material slot per primitive's material.

Primitives are appended one after another and their vertices welded where everything a vertex
holds (position, morph target positions, skin influences) is the same, so that a mesh the
writer cut open at UV seams comes back whole: UVs, normals and colours are per corner anyway.
Triangle strips and fans become triangles; points and lines are left out with a warning.
"""
from __future__ import annotations

import json

import numpy as np

from ...errors import FormatError, Warnings
from ...meshops import weld, weld_points
from ...scene import Mesh, ShapeKey
from .accessors_in import Accessors, extension, items, obj
from .conventions import points_to_blender, uv_to_blender
from .model import MESHOPT

DRACO = "KHR_draco_mesh_compression"


def uv_name(n: int) -> str:
    return "UVMap" if n == 0 else f"UVMap.{n:03d}"


def color_name(n: int) -> str:
    return "Color" if n == 0 else f"Color.{n:03d}"


class Primitive:
    """One primitive's triangles and vertex data, in the file's axes."""

    def __init__(self, acc: Accessors, p: dict, path: str, seen: set[str]):
        attrs = p.get("attributes")
        if not isinstance(attrs, dict) or "POSITION" not in attrs:
            raise FormatError("a primitive without POSITION", None, f"{path}.attributes")
        self.positions = acc.get(attrs["POSITION"], f"{path}.attributes.POSITION")
        if self.positions.shape[1] != 3:
            raise FormatError("POSITION is not VEC3", None, f"{path}.attributes.POSITION")
        v = len(self.positions)

        def attr(name: str, widths: tuple[int, ...], as_float: bool = True, source=attrs, where=path + ".attributes"):
            if name not in source:
                return None
            a = acc.get(source[name], f"{where}.{name}", as_float)
            if len(a) != v or a.shape[1] not in widths:
                raise FormatError(f"{len(a)} items of width {a.shape[1]}, POSITION has {v} of {widths}",
                                  None, f"{where}.{name}")
            return a

        self.normals = attr("NORMAL", (3,))
        self.uvs = [attr(f"TEXCOORD_{n}", (2,)) for n in range(_sets(attrs, "TEXCOORD_"))]
        self.colors = [attr(f"COLOR_{n}", (3, 4)) for n in range(_sets(attrs, "COLOR_"))]
        self.joints = [attr(f"JOINTS_{n}", (4,), False) for n in range(_sets(attrs, "JOINTS_"))]
        self.weights = [attr(f"WEIGHTS_{n}", (4,)) for n in range(_sets(attrs, "WEIGHTS_"))]
        if len(self.joints) != len(self.weights):
            raise FormatError(f"{len(self.joints)} JOINTS_n sets and {len(self.weights)} WEIGHTS_n",
                              None, f"{path}.attributes")
        targets = p.get("targets", [])
        if not isinstance(targets, list):
            raise FormatError("targets is not a list", None, f"{path}.targets")
        # primitives that name the same vertex accessors share their vertices (one material each)
        self.key = json.dumps([attrs, targets], sort_keys=True)
        idx = _indices(acc, p, v, path)
        n = v if idx is None else len(idx)
        corners = n if p.get("mode", 4) == 4 else 3 * max(n - 2, 0)       # strips and fans: 3 per index
        new = self.key not in seen
        seen.add(self.key)
        # what this primitive adds to the Scene, before it is built: its vertices (once per set of
        # them), its corners with their normal, UVs and colours, and its targets' vertices
        acc.charge(v * (1 + len(self.joints)) * new + corners * (2 + len(self.uvs) + len(self.colors)),
                   v * len(targets) * new, path)
        self.targets = []
        for k, t in enumerate(targets):
            if not isinstance(t, dict):
                raise FormatError("not an object", None, f"{path}.targets[{k}]")
            d = attr("POSITION", (3,), True, t, f"{path}.targets[{k}]")
            self.targets.append(np.zeros((v, 3), np.float32) if d is None else d)
        self.triangles = _triangles(idx, p, v)


def _sets(attrs: dict, prefix: str) -> int:
    n = 0
    while f"{prefix}{n}" in attrs:
        n += 1
    return n


def _indices(acc: Accessors, p: dict, v: int, path: str) -> np.ndarray | None:
    """The primitive's vertex indices as the file stores them (checked against its vertices), or None."""
    if "indices" not in p:
        return None
    idx = acc.get(p["indices"], f"{path}.indices", as_float=False)
    if idx.shape[1] != 1 or idx.dtype.kind != "u":
        raise FormatError("indices are not unsigned scalars", None, f"{path}.indices")
    idx = idx.reshape(-1)
    if len(idx) and int(idx.max()) >= v:
        raise FormatError(f"index {int(idx.max())} is past the {v} vertices", None, f"{path}.indices")
    return idx


def _triangles(idx: np.ndarray | None, p: dict, v: int) -> np.ndarray:
    mode = p.get("mode", 4)
    idx = np.arange(v, dtype=np.int64) if idx is None else idx.astype(np.int64)
    if mode == 4:
        n = len(idx) // 3
        return idx[:n * 3].reshape(n, 3)
    n = max(len(idx) - 2, 0)
    k = np.arange(n)
    if mode == 5:      # strip: every other triangle turns round to keep the winding
        odd = (k % 2).astype(bool)
        return np.stack([idx[k], np.where(odd, idx[k + 2], idx[k + 1]), np.where(odd, idx[k + 1], idx[k + 2])], 1)
    return np.stack([np.full(n, idx[0] if len(idx) else 0), idx[k + 1], idx[k + 2]], 1)     # fan


def read_mesh(tree: dict, acc: Accessors, index: int, warnings: Warnings) -> tuple[Mesh, list[np.ndarray] | None]:
    """The Scene mesh (slots: Scene material indices in `materials`, -1 for none) and, for skinning,
    (V, 4k) joint indices into the skin's joints list with their weights (None without JOINTS_0)."""
    m = obj(tree, "meshes", index)
    path = f"meshes[{index}]"
    prims, slots, seen = [], [], set()
    for j, p in enumerate(items(m, "primitives")):
        pp = f"{path}.primitives[{j}]"
        if not isinstance(p, dict):
            raise FormatError("not an object", None, pp)
        ext = DRACO if extension(p, DRACO) is not None else _meshopt(tree, p)
        if ext:
            warnings.warn(f"{ext}: compressed primitives are not read (decompress the file first, e.g. "
                          "with gltf-transform)")
            continue
        if p.get("mode", 4) not in (4, 5, 6):
            warnings.warn("points and lines (primitive modes 0-3) are not read: the Scene holds faces")
            continue
        prims.append(Primitive(acc, p, pp, seen))
        mat = p.get("material", -1)
        if mat != -1:
            obj(tree, "materials", mat, f"{pp}.material")
        slots.append(mat)
    name = m.get("name") if isinstance(m.get("name"), str) else f"Mesh{index}"
    return _join(name, prims, slots, m, path)


def _meshopt(tree: dict, p: dict) -> str:
    """The meshopt extension that compresses one of the primitive's accessors' views, or ""."""
    attrs = p.get("attributes") if isinstance(p.get("attributes"), dict) else {}
    targets = [t for t in p.get("targets", []) if isinstance(t, dict)] if isinstance(p.get("targets"), list) else []
    refs = list(attrs.values()) + [p.get("indices")] + [v for t in targets for v in t.values()]
    accessors, views = items(tree, "accessors"), items(tree, "bufferViews")
    for r in refs:
        a = accessors[r] if isinstance(r, int) and 0 <= r < len(accessors) else None
        v = a.get("bufferView") if isinstance(a, dict) else None
        view = views[v] if isinstance(v, int) and 0 <= v < len(views) else None
        found = next((e for e in MESHOPT if isinstance(view, dict) and extension(view, e) is not None), "")
        if found:
            return found
    return ""


def _join(name: str, prims: list[Primitive], slots: list[int], m: dict, path: str):
    first: dict[str, Primitive] = {}
    for p in prims:
        first.setdefault(p.key, p)
    blocks = list(first.values())            # each set of vertices once
    offsets = np.cumsum([0] + [len(p.positions) for p in blocks])
    at = {p.key: o for p, o in zip(blocks, offsets)}
    positions = np.concatenate([p.positions for p in blocks]) if blocks else np.zeros((0, 3), np.float32)
    tris = np.concatenate([p.triangles + at[p.key] for p in prims]) if prims else np.zeros((0, 3), np.int64)
    corners = tris.reshape(-1)
    slot_list = list(dict.fromkeys(slots))
    face_slot = np.concatenate([np.full(len(p.triangles), slot_list.index(s), np.int32) for p, s in zip(prims, slots)]) \
        if prims else np.zeros(0, np.int32)

    def joined(get, width: int) -> np.ndarray | None:
        """Per-vertex arrays of every primitive (zeros where one lacks it), or None when none has it."""
        parts = [get(p) for p in blocks]
        if all(a is None for a in parts):
            return None
        return np.concatenate([np.zeros((len(p.positions), width), np.float32) if a is None else a
                               for p, a in zip(blocks, parts)])

    n_targets = max((len(p.targets) for p in blocks), default=0)
    targets = [joined(lambda p, k=k: p.targets[k] if k < len(p.targets) else None, 3) for k in range(n_targets)]
    n_skin = max((len(p.joints) for p in blocks), default=0)
    def sets(arrays) -> np.ndarray | None:   # a primitive's JOINTS_n / WEIGHTS_n, zeros for the sets it lacks
        return np.pad(np.concatenate(arrays, 1), ((0, 0), (0, 4 * (n_skin - len(arrays))))) if arrays else None

    joints = joined(lambda p: None if not p.joints else sets(p.joints).astype(np.float32), 4 * n_skin)
    weights = joined(lambda p: sets(p.weights), 4 * n_skin)
    faces = np.arange(0, len(corners), 3, dtype=np.uint32)
    welded, source = weld(positions, corners.astype(np.uint32), faces,
                          _points(positions, targets, [joints, weights] if joints is not None else []))
    mesh = Mesh(name, points_to_blender(positions[source]), welded, faces)
    mesh.face_material = face_slot
    mesh.materials = slot_list
    normals = joined(lambda p: p.normals, 3)
    if normals is not None:         # unit length per vertex, then to the corners
        n = points_to_blender(normals)
        length = np.sqrt(np.einsum("ij,ij->i", n, n))[:, None]
        n /= np.where(length > 0, length, np.float32(1.0))
        mesh.normals = np.take(n, corners, axis=0)
    else:          # the standard's rule: flat normals
        mesh.sharp_faces = np.ones(len(faces), bool)
    for k in range(max((len(p.uvs) for p in blocks), default=0)):
        uv = joined(lambda p: p.uvs[k] if k < len(p.uvs) else None, 2)
        mesh.uv_layers[uv_name(k)] = uv_to_blender(np.take(uv, corners, axis=0))
    for k in range(max((len(p.colors) for p in blocks), default=0)):
        c = joined(lambda p: _rgba(p.colors[k]) if k < len(p.colors) else None, 4)
        mesh.colors[color_name(k)] = np.clip(np.take(c, corners, axis=0), 0.0, 1.0).astype(np.float32)
    if targets:
        names = _target_names(m, n_targets)
        defaults = m.get("weights") if isinstance(m.get("weights"), list) and len(m["weights"]) == n_targets else []
        base = mesh.positions
        mesh.shape_keys = [ShapeKey("Basis", base)] + [
            ShapeKey(names[k], (base + points_to_blender(targets[k][source])).astype(np.float32),
                     value=float(defaults[k]) if defaults and isinstance(defaults[k], (int, float)) else 0.0)
            for k in range(n_targets)]
    skin = None
    if joints is not None:
        skin = [joints[source].astype(np.int64), weights[source].astype(np.float32)]
    return mesh, skin


def _points(positions: np.ndarray, targets: list[np.ndarray], skin: list[np.ndarray]):
    """weld_points over what a vertex holds: its position, its skin influences and, for its morph
    target offsets, a sum of them with fixed pseudo-random weights (a row of every target at
    once would be thousands wide). Element-wise sums in one order: equal offsets give equal sums."""
    cols = [positions] + skin
    if targets:
        w = np.random.default_rng(0x61F7).uniform(0.5, 1.5, (len(targets), 3))
        total, term = np.zeros(len(positions)), np.empty(len(positions))
        for t, wk in zip(targets, w):
            for c in range(3):
                np.multiply(t[:, c], wk[c], out=term)
                total += term
        cols.append(total[:, None].view(np.float32))    # the exact bits of each sum, as two float32
    return weld_points(np.concatenate(cols, 1) if len(cols) > 1 else positions)


def scale_mesh(mesh: Mesh, s: np.ndarray) -> None:
    """Scale a mesh's points and shape keys along the axes; its normals by the inverse, made unit."""
    mesh.positions = mesh.positions * s
    for k in mesh.shape_keys:
        k.positions = k.positions * s
    if mesh.shape_keys:
        mesh.positions = mesh.shape_keys[0].positions
    if mesh.normals is not None:
        n = mesh.normals / s
        mesh.normals = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), np.float32(1e-30))


def _rgba(c: np.ndarray) -> np.ndarray:
    return c if c.shape[1] == 4 else np.concatenate([c, np.ones((len(c), 1), np.float32)], 1)


def _target_names(m: dict, n: int) -> list[str]:
    own = m.get("extras")          # the glTF mesh's own extras (Blender's exporter names targets there)
    given = own.get("targetNames") if isinstance(own, dict) else None
    names = [str(x) for x in given][:n] if isinstance(given, list) else []
    names += [f"Target {k}" for k in range(len(names), n)]
    out, seen = [], {"Basis"}
    for s in names:
        t, i = s or "Target", 1
        while t in seen:
            t, i = f"{s}.{i:03d}", i + 1
        seen.add(t)
        out.append(t)
    return out
