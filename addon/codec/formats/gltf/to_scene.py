"""glTF Document -> Scene: the default scene's node tree with its meshes, materials, skins,
cameras, lights (KHR_lights_punctual) and animations.

Axes (conventions.py): a glTF node's local matrix L becomes `pre @ L @ post` in the Scene
(anim_in.LocalMap): for a plain node conjugated by the basis change, for a camera or a light
not on the right (both look down their -Z with +Y up in either convention). A skinned mesh
sits on its armature at the world origin (glTF ignores its node's transform). What the Scene
cannot hold is one warning each: unmapped extensions, compressed meshes, orthographic cameras.
"""
from __future__ import annotations

import math

import numpy as np

from ...axes import compose, decompose, inverse_or_identity
from ...errors import FormatError, Warnings
from ...scene import Camera, Light, Node, Scene, Skin
from .accessors_in import Accessors, extension, floats, items, known, num, obj
from .anim_in import LocalMap, Rig, Target, make_rig, off_bind, read_animations, skin_key
from .conventions import BASIS
from .materials_in import read_images, read_materials
from .mesh_in import read_mesh, scale_mesh
from .model import MESHOPT, Document
from .options import ImportOptions

B4 = np.eye(4)
B4[:3, :3] = BASIS
MAPPED = {"KHR_lights_punctual", "KHR_texture_transform", "KHR_mesh_quantization", "KHR_materials_emissive_strength"}
# named where they cost something (a compressed primitive, a texture with no PNG or JPEG), not up front
NAMED_WHERE_USED = {"KHR_draco_mesh_compression", *MESHOPT, "KHR_texture_basisu", "EXT_texture_webp",
                    "MSFT_texture_dds"}
LUMENS_PER_WATT = 683.0          # the glTF lights' photometric units -> Blender's watts, as Blender's importer


def to_scene(doc: Document, opts: ImportOptions, warnings: Warnings) -> Scene:
    tree = doc.json
    fps = float(getattr(opts, "fps", 24.0)) or 24.0
    scene = Scene(source_format="glb" if doc.binary else "gltf", source_version=str(tree["asset"]["version"]))
    for e in items(tree, "extensionsUsed"):
        if not known(e, MAPPED | NAMED_WHERE_USED):
            warnings.warn(f"glTF extension {e} is not read: what it adds is left out")
    acc = Accessors(doc)
    scene.images = read_images(doc, acc, warnings)
    scene.materials = read_materials(tree, warnings)
    nodes = items(tree, "nodes")
    parent, order = _graph(tree)
    local, rest = _locals(tree)
    world = np.tile(np.eye(4), (len(nodes), 1, 1))
    for n in order:
        world[n] = (world[parent[n]] if parent[n] >= 0 else np.eye(4)) @ local[n]
    reached = _reached(tree, parent, order, warnings)
    rigs, rig_of_skin = _rigs(tree, acc, scene, parent, world, reached, warnings)
    rigs_of: dict[int, list[Rig]] = {}
    for r in rigs:
        for j in r.joints:
            rigs_of.setdefault(j, []).append(r)
    joint_of = {j: rs[0] for j, rs in rigs_of.items()}       # the armature a joint's children hang on
    targets: dict[int, list[Target]] = {}
    post_of: dict[int, np.ndarray] = {}          # glTF node -> its Scene node's post (what children undo)
    scene_of: dict[int, int] = {}                # glTF node -> Scene node (joints: the armature's)
    meshes: dict[tuple[int, int], tuple[int, list[str]]] = {}
    skinned: list[tuple[int, Rig]] = []
    scaled = {ch["target"]["node"] for a in items(tree, "animations") if isinstance(a, dict)
              for ch in items(a, "channels") if isinstance(ch, dict) and isinstance(ch.get("target"), dict)
              and ch["target"].get("path") == "scale" and isinstance(ch["target"].get("node"), int)}
    for r in rigs:
        if r.host < 0:
            r.node = scene.add_node(Node(scene.armatures[r.armature].name, "ARMATURE", r.armature))
    for n in (n for n in order if reached[n]):
        nd = nodes[n]
        up = parent[n]
        bone = ""
        if up >= 0 and up in joint_of:
            r = joint_of[up]
            up_node, bone, pre = r.node, r.names[up], r.residue[up]
        elif up >= 0:
            up_node, pre = scene_of[up], inverse_or_identity(post_of[up])
        else:
            up_node, pre = -1, B4
        if n in joint_of:
            scene_of[n], post_of[n] = joint_of[n].node, np.eye(4)
            targets.setdefault(n, []).extend(Target(r.node, r.maps[n], r.names[n], rest[n]) for r in rigs_of[n])
            if "mesh" in nd or "camera" in nd:
                warnings.warn("a joint's own mesh or camera is not read (only other nodes hang on bones)")
            continue
        name = nd.get("name") if isinstance(nd.get("name"), str) and nd.get("name") else f"Node{n}"
        kind, data, post, keys, own = "EMPTY", -1, B4.T, [], local[n]
        host = next((r for r in rigs if r.host == n), None)
        light = (extension(nd, "KHR_lights_punctual") or {}).get("light")
        if host is not None:
            kind, data = "ARMATURE", host.armature
        elif "mesh" in nd:
            obj(tree, "meshes", nd["mesh"], f"nodes[{n}].mesh")
            rig = rig_of_skin.get(nd["skin"]) if "skin" in nd else None
            fold = None if rig is not None else _dequantizing_scale(tree, n, local[n], rest[n], scaled)
            if fold is not None:
                own = local[n] @ np.diag([*(1.0 / fold), 1.0])
            key = (nd["mesh"], rig.armature if rig else -1, None if fold is None else tuple(fold))
            if key not in meshes:
                meshes[key] = _mesh(tree, acc, scene, nd["mesh"], rig, fold, warnings)
            data, keys = meshes[key]
            kind = "MESH" if data >= 0 else "EMPTY"          # no primitive read: an empty in its place
            own = own if data >= 0 else local[n]
            if rig is not None and data >= 0:
                skinned.append((len(scene.nodes), rig))
        elif "camera" in nd:
            kind, data, post = "CAMERA", _camera(tree, nd["camera"], scene, warnings), np.eye(4)
        elif light is not None:
            kind, data, post = "LIGHT", _light(tree, light, f"nodes[{n}]", scene, warnings), np.eye(4)
        node = Node(name, kind, data, up_node, bone, LocalMap(pre, post).matrix(own))
        scene_of[n] = scene.add_node(node)
        post_of[n] = post
        if host is not None:
            host.node = scene_of[n]
        # a skinned mesh's own transform is ignored (glTF): only its morph weights play
        targets.setdefault(n, []).append(Target(scene_of[n], LocalMap(pre, post), shape_keys=keys,
                                                moves=not (kind == "MESH" and "skin" in nd)))
    for i, r in skinned:
        scene.nodes[i].parent, scene.nodes[i].parent_bone = r.node, ""
        scene.nodes[i].matrix = inverse_or_identity(scene.world_matrix(r.node))
    scene.animations = read_animations(tree, acc, fps, targets, warnings)
    if not scene.animations and any(off_bind(t) for ts in targets.values() for t in ts if t.bone):
        warnings.warn("the skeleton rests in a pose other than its bind pose, and no animation keys it: the "
                      "armature shows the bind pose")
    _timeline(scene, fps)
    if not (scene.meshes or scene.cameras or scene.lights or scene.armatures):
        why = f" ({warnings.as_list()[-1]})" if warnings else ""
        raise FormatError(f"nothing in the file can be read: no mesh, camera, light or skin{why}", None, "nodes")
    return scene


def _graph(tree: dict) -> tuple[list[int], list[int]]:
    """(parent of each node, -1 for roots; the nodes parents first), or a FormatError for a node
    with two parents or a cycle."""
    nodes = items(tree, "nodes")
    parent = [-1] * len(nodes)
    for i, nd in enumerate(nodes):
        if not isinstance(nd, dict):
            raise FormatError("not an object", None, f"nodes[{i}]")
        children = nd.get("children", [])
        if not isinstance(children, list):
            raise FormatError("not a list", None, f"nodes[{i}].children")
        for k, c in enumerate(children):
            obj(tree, "nodes", c, f"nodes[{i}].children[{k}]")
            if parent[c] >= 0 or c == i:
                raise FormatError(f"node {c} has two parents or is its own child (the node graph must be a "
                                  "forest)", None, f"nodes[{i}].children[{k}]")
            parent[c] = i
    order = [i for i in range(len(nodes)) if parent[i] < 0]
    k = 0
    while k < len(order):
        order += nodes[order[k]].get("children", [])
        k += 1
    if len(order) < len(nodes):
        lost = sorted(set(range(len(nodes))) - set(order))
        raise FormatError(f"nodes {lost[:5]} form a cycle", None, f"nodes[{lost[0]}].children")
    return parent, order


def _locals(tree: dict) -> tuple[np.ndarray, list[tuple]]:
    """Each node's local matrix and its rest (translation, rotation x y z w, scale)."""
    nodes = items(tree, "nodes")
    mats = np.tile(np.eye(4), (len(nodes), 1, 1))
    rest = []
    for i, nd in enumerate(nodes):
        path = f"nodes[{i}]"
        if "matrix" in nd:
            mats[i] = np.array(floats(nd, "matrix", 16, path, None)).reshape(4, 4).T
            t, q, s = decompose(mats[i])
            rest.append((t, q[[1, 2, 3, 0]], s))
            continue
        t = floats(nd, "translation", 3, path, [0.0, 0.0, 0.0])
        q = np.array(floats(nd, "rotation", 4, path, [0.0, 0.0, 0.0, 1.0]))
        if not np.linalg.norm(q) > 0:
            raise FormatError("a zero rotation quaternion", None, f"{path}.rotation")
        s = floats(nd, "scale", 3, path, [1.0, 1.0, 1.0])
        mats[i] = compose(t, q[[3, 0, 1, 2]], s)
        rest.append((np.array(t), q / np.linalg.norm(q), np.array(s)))
    return mats, rest


def _reached(tree: dict, parent: list[int], order: list[int], warnings: Warnings) -> list[bool]:
    """The nodes of the file's scene (`scene`, else the first; every node when there is none)."""
    nodes = items(tree, "nodes")
    scenes = items(tree, "scenes")
    if not scenes:
        return [True] * len(nodes)
    s = obj(tree, "scenes", tree.get("scene", 0), "scene")
    if len(scenes) > 1:
        warnings.warn(f"the file holds {len(scenes)} scenes: only its default one (scene {tree.get('scene', 0)}) "
                      "is read")
    roots = s.get("nodes", [])
    if not isinstance(roots, list):
        raise FormatError("not a list", None, "scenes.nodes")
    reached = [False] * len(nodes)
    for k, r in enumerate(roots):
        obj(tree, "nodes", r, f"scenes.nodes[{k}]")
        if parent[r] >= 0:
            raise FormatError(f"node {r} is a scene root and a child", None, f"scenes.nodes[{k}]")
        reached[r] = True
    for n in order:
        if parent[n] >= 0 and reached[parent[n]]:
            reached[n] = True
    return reached


def _rigs(tree, acc, scene, parent, world, reached, warnings) -> tuple[list[Rig], dict[int, Rig]]:
    """One armature per set of skins that list the same joints with the same bind."""
    rigs: list[Rig] = []
    by_key: dict[tuple, Rig] = {}
    of_skin: dict[int, Rig] = {}
    # no armature lives on a joint (of any skin): its node is a bone
    joints_anywhere = {j for s in items(tree, "skins") if isinstance(s, dict) and isinstance(s.get("joints"), list)
                       for j in s["joints"] if isinstance(j, int)}
    for n, nd in enumerate(items(tree, "nodes")):
        if not reached[n] or "skin" not in nd or "mesh" not in nd:
            continue
        s = nd["skin"]
        obj(tree, "skins", s, f"nodes[{n}].skin")
        if s in of_skin:
            continue
        joints, blob, ibm = skin_key(tree, acc, s)
        if (joints, blob) not in by_key:
            if any(j in r.joints for r in rigs for j in joints):
                warnings.warn("skins that share some joints but not all become separate armatures")
            skin = tree["skins"][s]
            name = skin.get("name") if isinstance(skin.get("name"), str) and skin.get("name") else "Armature"
            taken = {r.host for r in rigs} | joints_anywhere
            rig, arm = make_rig(tree, joints, ibm, parent, world, name, len(scene.armatures), B4, taken, warnings)
            scene.armatures.append(arm)
            rigs.append(rig)
            by_key[(joints, blob)] = rig
        of_skin[s] = by_key[(joints, blob)]
    return rigs, of_skin


def _dequantizing_scale(tree, n, local, rest, scaled) -> np.ndarray | None:
    """The scale of a node that only gives a quantized mesh (KHR_mesh_quantization: integer positions)
    its size: a leaf whose scale no animation keys, with no shear or mirror. The mesh takes it (so that
    a format that stores what the object's scale multiplies, UE1's packed vertices, gets the sizes the
    writer quantized), the object keeps its place and turn."""
    nd = tree["nodes"][n]
    s = np.asarray(rest[2], np.float64)
    if nd.get("children") or n in scaled or (s <= 0).any() or np.allclose(s, 1.0):
        return None
    if not np.allclose(compose(rest[0], np.asarray(rest[1])[[3, 0, 1, 2]], s), local, atol=1e-9):
        return None
    for p in items(obj(tree, "meshes", nd["mesh"]), "primitives"):
        attrs = p.get("attributes") if isinstance(p, dict) else None
        a = tree["accessors"][attrs["POSITION"]] if isinstance(attrs, dict) and isinstance(
            attrs.get("POSITION"), int) and 0 <= attrs["POSITION"] < len(items(tree, "accessors")) else None
        if not isinstance(a, dict) or a.get("componentType") == 5126:
            return None
    return s


def _mesh(tree, acc, scene, index, rig, fold, warnings) -> tuple[int, list[str]]:
    mesh, skin = read_mesh(tree, acc, index, warnings)
    if fold is not None:
        scale_mesh(mesh, np.array([fold[0], fold[2], fold[1]], np.float32))      # glTF axes -> Blender's
    if rig is not None and skin is not None:
        joints, weights = skin
        if len(joints) and int(joints.max()) >= len(rig.joints):
            raise FormatError(f"joint {int(joints.max())} is past the skin's {len(rig.joints)} joints", None,
                              f"meshes[{index}].primitives.attributes.JOINTS_0")
        mesh.skin = Skin(rig.armature, np.where(weights > 0, joints, -1).astype(np.int32), weights)
    if not len(mesh.faces):
        return -1, []
    scene.meshes.append(mesh)
    return len(scene.meshes) - 1, [k.name for k in mesh.shape_keys[1:]]


def _camera(tree, index, scene, warnings) -> int:
    c = obj(tree, "cameras", index)
    path = f"cameras[{index}]"
    name = c.get("name") if isinstance(c.get("name"), str) and c.get("name") else f"Camera{index}"
    cam = Camera(name)
    if c.get("type") == "perspective" and isinstance(c.get("perspective"), dict):
        p = c["perspective"]
        yfov = float(num(p, "yfov", f"{path}.perspective", lo=1e-6))
        aspect = float(num(p, "aspectRatio", f"{path}.perspective", 1.0, lo=1e-6))
        # Blender's 36 mm sensor spans the wider side
        half = math.tan(yfov / 2) * (aspect if aspect >= 1 else 1.0)
        cam.lens = 18.0 / max(half, 1e-6)
        cam.clip_start = float(num(p, "znear", f"{path}.perspective", 0.1, lo=0))
        if "zfar" in p:
            cam.clip_end = float(num(p, "zfar", f"{path}.perspective", lo=0))
    else:
        warnings.warn("orthographic cameras are read as perspective ones: the Scene holds a lens only")
    scene.cameras.append(cam)
    return len(scene.cameras) - 1


def _light(tree, index, path, scene, warnings) -> int:
    lights = (extension(tree, "KHR_lights_punctual") or {}).get("lights")
    if not isinstance(lights, list) or not isinstance(index, int) or not 0 <= index < len(lights) \
            or not isinstance(lights[index], dict):
        raise FormatError(f"{index!r} is not a light of KHR_lights_punctual", None,
                          f"{path}.extensions.KHR_lights_punctual.light")
    d = lights[index]
    lp = f"extensions.KHR_lights_punctual.lights[{index}]"
    kinds = {"directional": "SUN", "point": "POINT", "spot": "SPOT"}
    kind = kinds[d["type"]] if known(d.get("type"), kinds) else None
    if kind is None:
        raise FormatError(f"light type {d.get('type')!r}", None, f"{lp}.type")
    intensity = float(num(d, "intensity", lp, 1.0, lo=0))
    light = Light(d.get("name") if isinstance(d.get("name"), str) and d.get("name") else f"Light{index}", kind,
                  tuple(floats(d, "color", 3, lp, [1.0, 1.0, 1.0])),
                  intensity if kind == "SUN" else intensity * 4 * math.pi / LUMENS_PER_WATT)
    if kind == "SPOT":
        spot = d.get("spot") if isinstance(d.get("spot"), dict) else {}
        outer = float(num(spot, "outerConeAngle", f"{lp}.spot", math.pi / 4, lo=0))
        inner = float(num(spot, "innerConeAngle", f"{lp}.spot", 0.0, lo=0))
        light.spot_size = 2 * outer
        light.spot_blend = min(max(1.0 - inner / outer, 0.0), 1.0) if outer > 0 else 0.0
    if "range" in d:
        light.use_attenuation = True
        light.attenuation_end = float(num(d, "range", lp, lo=0))
    scene.lights.append(light)
    return len(scene.lights) - 1


def _timeline(scene: Scene, fps: float) -> None:
    """Several animations become NLA strips (an active action would hide the others); the timeline
    covers the longest."""
    if not scene.animations:
        return
    scene.fps = scene.animations[0].fps or fps
    for a in scene.animations:
        a.placement = "NLA" if len(scene.animations) > 1 else "ACTIVE"
    scene.frame_start = int(math.floor(min(a.frame_start for a in scene.animations)))
    scene.frame_end = int(math.ceil(max(a.frame_end for a in scene.animations)))
