"""Scene -> glTF Document: nodes, meshes, materials, skins, cameras, lights and animations.

Axes and units change once, by conjugation: a Blender matrix M becomes G M G^-1 with G = scale *
conventions.TO_GLTF, so every node keeps its own transform and a mesh its own vertices (Blender's
glTF exporter does the same). Cameras and lights look down their local -Z with +Y up in both, so
their own frame is not turned: a correction K = TO_GLTF on their right (and K^-1 on their children's
left) keeps it. An armature is a node with one child node per bone; its skins bind those nodes.
Animations keep their channels' keys and interpolation (animation_out.py).
"""
from __future__ import annotations

import math

import numpy as np

from ... import animation, axes
from ...errors import Warnings
from ...parallel import PARALLEL_CORNERS, begin_two
from ...scene import Scene
from ...version import version
from . import animation_out
from .accessors_out import Buffer, Built
from .conventions import BASIS, TO_GLTF, own_frame
from .materials_out import Materials
from .mesh_out import split, write_mesh
from .model import Document
from .options import ExportOptions

SENSOR = 36.0                  # mm: Scene.Camera.lens is on a 36 mm sensor (Blender's default)
ASPECT = 4.0 / 3.0             # the frame the legacy formats render: the field of view spans its width


class Frames:
    """The conjugation to glTF axes and units (G = scale * TO_GLTF)."""

    def __init__(self, scale: float) -> None:
        self.scale = scale
        self.g = np.eye(4)
        self.g[:3, :3] = TO_GLTF * scale
        self.g_inv = np.eye(4)
        self.g_inv[:3, :3] = BASIS / scale

    def conj(self, m: np.ndarray) -> np.ndarray:
        return self.g @ np.asarray(m, np.float64) @ self.g_inv


def trs_json(m: np.ndarray) -> dict:
    """A node's transform as TRS when that holds it (any animated node must), else as a matrix."""
    return trs_many(np.asarray(m, np.float64)[None])[0]


def _close(a: np.ndarray, b, atol: float) -> np.ndarray:
    """np.allclose per matrix or vector of a batch (the last axes)."""
    out = np.abs(a - b) <= atol + 1e-5 * np.abs(b)
    return out.reshape(len(out), -1).all(axis=1)


def trs_many(ms: np.ndarray) -> list[dict]:
    """trs_json of each of the (N, 4, 4) matrices, taken apart at once (a few microseconds each)."""
    if not len(ms):
        return []
    t, q, s = axes.decompose(ms)
    plain = _close(axes.compose(t, q, s), ms, 1e-6)
    none = _close(ms, np.eye(4), 1e-12)
    moved = np.abs(t).max(axis=1) > 0
    turned = ~_close(q, np.array([1.0, 0.0, 0.0, 0.0]), 1e-12)
    scaled = ~_close(s, np.ones(3), 1e-12)
    out: list[dict] = []
    for k, m in enumerate(ms):
        if not plain[k]:
            out.append({} if none[k] else {"matrix": m.T.reshape(-1).tolist()})
            continue
        trs: dict = {}
        if moved[k]:
            trs["translation"] = t[k].tolist()
        if turned[k]:
            trs["rotation"] = q[k, [1, 2, 3, 0]].tolist()
        if scaled[k]:
            trs["scale"] = s[k].tolist()
        out.append(trs)
    return out


class Writer:
    """One Scene written as one glTF document: nodes first, then meshes and skins, then animations."""

    def __init__(self, scene: Scene, opts: ExportOptions, warnings: Warnings) -> None:
        self.sc, self.opts, self.warnings = scene, opts, warnings
        self.fr = Frames(float(opts.scale) if opts.scale > 0 else 1.0)
        self.json: dict = {"asset": {"version": "2.0", "generator": f"Legacy Game Formats {version()}"}}
        self.resources: dict[str, bytes] = {}
        self.buf = Buffer(self.json)
        self.mats = Materials(scene, self.json, self.resources, warnings)
        self.node_of: dict[int, int] = {}            # scene node -> glTF node
        self.bone_nodes: dict[int, list[int]] = {}   # scene armature node -> glTF node of each bone
        self.rest_local: dict[int, list[np.ndarray]] = {}   # scene armature node -> each bone's parent-local rest
        self.children: dict[int, list[int]] = {}     # glTF node -> its children
        self.nodes: list[dict] = []
        self.meshes: dict = {}                       # (scene mesh, armature node) -> mesh_out.Written
        self.splits: dict = {}                       # scene mesh -> mesh_out.Split

    # -- nodes -------------------------------------------------------------
    def _kept(self) -> list[int]:
        """Scene nodes to write, parents first: a node hidden for good (a U3D level of detail) is left out
        with its children, one that an animation shows and hides is written."""
        shown_by_animation = {c.target for a in self.sc.animations for c in a.channels if c.path.startswith("hide")}
        n = len(self.sc.nodes)
        order, state = [], [0] * n                   # 0 unseen, 1 kept, 2 dropped
        dropped = []

        def visit(i: int, chain: set) -> int:
            if state[i]:
                return state[i]
            node = self.sc.nodes[i]
            p = node.parent
            if 0 <= p < n and p not in chain:
                if visit(p, chain | {i}) == 2:
                    state[i] = 2
                    return 2
            if node.hide and i not in shown_by_animation:
                state[i] = 2
                dropped.append(node.name)
                return 2
            state[i] = 1
            order.append(i)
            return 1

        for i in range(n):
            visit(i, {i})
        if dropped:
            shown = ", ".join(repr(x) for x in dropped[:4]) + (f" and {len(dropped) - 4} more" if len(dropped) > 4 else "")
            self.warnings.warn(f"glTF has no hidden objects: {shown} (hidden in the source) not written")
        return order

    def _add(self, node: dict, parent: int) -> int:
        self.nodes.append(node)
        index = len(self.nodes) - 1
        if parent >= 0:
            self.children.setdefault(parent, []).append(index)
        return index

    def parent_frame(self, i: int) -> tuple[int, np.ndarray]:
        """(glTF parent node, K^-1 of that parent) of scene node i."""
        node = self.sc.nodes[i]
        p = node.parent
        if p < 0 or p not in self.node_of or self._skinned(i):
            return -1, np.eye(4)
        if node.parent_bone and p in self.bone_nodes:
            names = [b.name for b in self.sc.armatures[self.sc.nodes[p].data].bones]
            if node.parent_bone in names:
                return self.bone_nodes[p][names.index(node.parent_bone)], np.eye(4)
        return self.node_of[p], own_frame(self.sc.nodes[p].kind).T

    def local(self, i: int) -> np.ndarray:
        """Scene node i's glTF local matrix at rest (the identity, warned, for a matrix that is not finite)."""
        node = self.sc.nodes[i]
        if not (np.isfinite(node.matrix).all() and np.isfinite(node.matrix_parent_inverse).all()):
            self.warnings.warn(f"object {node.name!r} has a transform that is not finite: written in place")
            return own_frame(node.kind)
        if self._skinned(i):        # a root (glTF places a skinned mesh by its joints alone): its world matrix
            return self.fr.conj(self.sc.world_matrix(i))
        _, kp = self.parent_frame(i)
        m = np.asarray(node.matrix_parent_inverse, np.float64) @ np.asarray(node.matrix, np.float64)
        return kp @ self.fr.conj(m) @ own_frame(node.kind)

    def _skinned(self, i: int) -> bool:
        node = self.sc.nodes[i]
        return node.kind == "MESH" and 0 <= node.data < len(self.sc.meshes) \
            and self._armature_node(self.sc.meshes[node.data]) >= 0

    def write_nodes(self) -> None:
        kept, local = self._kept(), []
        shown = [i for i in kept if self.sc.nodes[i].kind == "MESH" and 0 <= self.sc.nodes[i].data < len(self.sc.meshes)]
        used = list(dict.fromkeys(self.sc.nodes[i].data for i in shown))
        corners = sum(len(self.sc.meshes[m].corners) for m in used)
        # the meshes split on the worker while this thread writes the nodes, then each is written as it comes
        splits = begin_two(lambda m: split(self.sc.meshes[m], self.fr.scale), used, threaded=corners >= PARALLEL_CORNERS)
        try:
            for i in kept:
                node = self.sc.nodes[i]
                parent, _ = self.parent_frame(i)
                local.append(self.local(i))
                self.node_of[i] = self._add({"name": node.name}, parent)
                if node.kind == "ARMATURE" and 0 <= node.data < len(self.sc.armatures):
                    self._bones(i)
            for i, place in zip(kept, trs_many(np.reshape(local, (-1, 4, 4)))):     # all taken apart at once
                self.nodes[self.node_of[i]].update(place)
            for i, g in self.node_of.items():
                node = self.sc.nodes[i]
                if node.kind == "CAMERA" and 0 <= node.data < len(self.sc.cameras):
                    self.nodes[g]["camera"] = self._camera(node.data)
                elif node.kind == "LIGHT" and 0 <= node.data < len(self.sc.lights):
                    self.nodes[g].setdefault("extensions", {})["KHR_lights_punctual"] = {"light": self._light(node.data)}
            arriving = splits.in_order()             # in `used` order: each mesh's first node, in node order
            for i in shown:
                if self.sc.nodes[i].data not in self.splits:
                    self.splits[self.sc.nodes[i].data] = next(arriving)
                self._mesh(i, self.node_of[i])
        finally:
            splits.close()

    def _bones(self, i: int) -> None:
        bones = self.sc.armatures[self.sc.nodes[i].data].bones
        rest = [np.asarray(b.matrix, np.float64) for b in bones]
        made: list[int] = [-1] * len(bones)
        local = [np.eye(4)] * len(bones)
        inverse = axes.inverse_or_identity(np.reshape(rest, (-1, 4, 4)))
        order = animation.parents_first([b.parent for b in bones])
        for b in order:
            p = bones[b].parent if 0 <= bones[b].parent < len(bones) and made[bones[b].parent] >= 0 else -1
            local[b] = rest[b] if p < 0 else inverse[p] @ rest[b]
            made[b] = self._add({"name": bones[b].name}, self.node_of[i] if p < 0 else made[p])
        for b, place in zip(order, trs_many(np.reshape([self.fr.conj(local[b]) for b in order], (-1, 4, 4)))):
            self.nodes[made[b]].update(place)                # all taken apart at once, as the nodes are
        self.bone_nodes[i], self.rest_local[i] = made, local

    # -- meshes and skins --------------------------------------------------------
    def _mesh(self, i: int, g: int) -> None:
        node = self.sc.nodes[i]
        mesh = self.sc.meshes[node.data]
        arm = self._armature_node(mesh)
        key = (node.data, arm)
        if key not in self.meshes:
            n_joints = len(self.sc.armatures[mesh.skin.armature].bones) if arm >= 0 else -1
            self.meshes[key] = write_mesh(self.splits[node.data], self.buf, self.mats, self.json, self.fr.scale, self.warnings,
                                          n_joints, quantize=self.opts.quantize and arm < 0 and self._alone(i))
        written = self.meshes[key]
        if written is None:
            return
        self.nodes[g]["mesh"] = written.index
        if written.step is not None:          # KHR_mesh_quantization: the node scales whole steps back
            for k in ("translation", "rotation", "scale", "matrix"):
                self.nodes[g].pop(k, None)
            self.nodes[g].update(trs_json(self.local(i) @ np.diag([*written.step, 1.0])))
            for ext in ("extensionsUsed", "extensionsRequired"):
                if "KHR_mesh_quantization" not in self.json.setdefault(ext, []):
                    self.json[ext].append("KHR_mesh_quantization")
        if arm >= 0:
            self.nodes[g]["skin"] = self._skin(i, arm, written.extra_joint)

    def _alone(self, i: int) -> bool:
        """Whether node i may scale its mesh's grid: its mesh is its alone, nothing hangs below it, and no
        animation moves it."""
        node = self.sc.nodes[i]
        return sum(n.kind == "MESH" and n.data == node.data for n in self.sc.nodes) == 1 \
            and not any(n.parent == i for n in self.sc.nodes) \
            and not any(c.target == i and not c.path.startswith("key_blocks") for a in self.sc.animations
                        for c in a.channels)

    def _armature_node(self, mesh) -> int:
        if mesh.skin is None or not 0 <= mesh.skin.armature < len(self.sc.armatures):
            return -1
        return next((i for i in self.bone_nodes if self.sc.nodes[i].data == mesh.skin.armature), -1)

    def _skin(self, i: int, arm: int, extra: bool) -> int:
        bones = self.sc.armatures[self.sc.nodes[arm].data].bones
        to_arm = axes.inverse_or_identity(self.sc.world_matrix(arm)) @ self.sc.world_matrix(i)
        rest = np.stack([np.asarray(b.matrix, np.float64) for b in bones]) if bones else np.zeros((0, 4, 4))
        ibm = [self.fr.conj(m) for m in axes.inverse_or_identity(rest) @ to_arm] if len(rest) else []
        joints = list(self.bone_nodes[arm])
        if extra:                                     # unweighted vertices follow the armature itself
            ibm.append(self.fr.conj(to_arm))
            joints.append(self.node_of[arm])
        mats = np.stack(ibm).astype(np.float32).transpose(0, 2, 1).reshape(-1, 16)   # column-major
        mats[:, 15] = 1.0
        mats[:, 3] = mats[:, 7] = mats[:, 11] = 0.0
        skins = self.json.setdefault("skins", [])
        skins.append({"name": self.sc.nodes[arm].name, "joints": joints, "skeleton": self.node_of[arm],
                      "inverseBindMatrices": self.buf.accessor(mats, kind="MAT4")})
        return len(skins) - 1

    # -- cameras and lights ------------------------------------------------------
    def _camera(self, index: int) -> int:
        cam = self.sc.cameras[index]
        xfov = 2.0 * math.atan(SENSOR / 2.0 / max(cam.lens, 1e-6))
        yfov = 2.0 * math.atan(math.tan(xfov / 2.0) / ASPECT)
        near = max(cam.clip_start * self.fr.scale, 1e-6)
        far = max(cam.clip_end * self.fr.scale, near * 1.001)
        cams = self.json.setdefault("cameras", [])
        cams.append({"name": cam.name, "type": "perspective",
                     "perspective": {"yfov": yfov, "znear": near, "zfar": far, "aspectRatio": ASPECT}})
        return len(cams) - 1

    def _light(self, index: int) -> int:
        li = self.sc.lights[index]
        out: dict = {"name": li.name, "color": [float(x) for x in np.clip(li.color, 0, 1)]}
        lost = []
        # Blender's glTF exporter's units (its default "standard" lighting mode): 683 lm per W; a point or
        # spot's watts spread over 4 pi steradians (candela), a sun's W/m^2 as lux
        if li.type == "SUN":
            out.update(type="directional", intensity=float(li.energy) * 683.0)
        else:
            out["intensity"] = float(li.energy) * 683.0 / (4 * math.pi)
            if li.type == "SPOT":
                outer = float(np.clip(li.spot_size / 2.0, 1e-4, math.pi / 2))
                inner = outer * float(np.clip(1.0 - li.spot_blend, 0.0, 0.999))     # glTF: inner < outer
                out.update(type="spot", spot={"outerConeAngle": outer, "innerConeAngle": inner})
            else:
                out["type"] = "point"
                if li.type == "AREA":
                    lost.append("an area light is written as a point light")
            if li.use_attenuation and li.attenuation_end > 0:
                out["range"] = float(li.attenuation_end * self.fr.scale)
                if li.attenuation_start > 0:
                    lost.append("where its falloff starts")
        if not li.cast_shadow:
            lost.append("that it casts no shadow")
        if lost:
            self.warnings.warn(f"light {li.name!r}: KHR_lights_punctual does not hold {'; '.join(lost)}")
        ext = self.json.setdefault("extensions", {}).setdefault("KHR_lights_punctual", {"lights": []})
        ext["lights"].append(out)
        used = self.json.setdefault("extensionsUsed", [])
        if "KHR_lights_punctual" not in used:
            used.append("KHR_lights_punctual")
        return len(ext["lights"]) - 1

    # -- the document ------------------------------------------------------------
    def document(self) -> Document:
        self.write_nodes()
        animation_out.write_animations(self)
        for g, kids in self.children.items():
            self.nodes[g]["children"] = kids
        has_parent = {c for kids in self.children.values() for c in kids}
        roots = [g for g in range(len(self.nodes)) if g not in has_parent]
        if self.nodes:
            self.json["nodes"] = self.nodes
        self.json["scenes"] = [{"name": "Scene", **({"nodes": roots} if roots else {})}]
        self.json["scene"] = 0
        pieces = self.buf.pieces()
        size = sum(len(p) for p in pieces)
        if size:
            self.json["buffers"] = [{"byteLength": size}]
        order = ["asset", "extensionsUsed", "extensionsRequired", "extensions", "scene", "scenes", "nodes", "meshes",
                 "skins", "cameras", "materials", "textures", "samplers", "images", "animations", "accessors",
                 "bufferViews", "buffers"]
        tree = {k: self.json[k] for k in order if k in self.json}
        return Built(json=tree, pieces=pieces if size else [], resources=self.resources, binary=True)


def from_scene(scene: Scene, opts: ExportOptions, warnings: Warnings) -> Document:
    return Writer(scene, opts, warnings).document()
