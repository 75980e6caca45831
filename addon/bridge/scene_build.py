"""Neutral Scene -> Blender: the only code that creates objects from a Scene."""
from __future__ import annotations

from dataclasses import dataclass, field

import bpy
import numpy as np
from mathutils import Matrix

from ..codec.meshops import make_safe
from ..codec.option_rules import option
from ..codec.parallel import PARALLEL_CORNERS, map_two
from ..codec.scene import Scene
from ..codec.scene_options import ImportContent
from . import props
from .animation_build import build_animations
from .material_build import build_image, build_material
from .mesh_build import add_shape_keys, add_skin, build_meshes
from .world import build_world


@dataclass(frozen=True)
class BuildOptions(ImportContent):
    """use_keyframes, object_types and apply_transform come from the codec's scene_options; the
    fields with a label are import operators' properties."""

    global_matrix: tuple = tuple(map(tuple, np.eye(4)))   # axis conversion and scale, applied to roots
    collection: str = ""                 # "" = the active collection, else a new child collection
    set_frame_range: bool = True
    world: str = option("NEW", "World", "What becomes of the file's environment", items={
        "NEW": ("New World", "Ambient light, background and fog in a world of the file's own, set on the scene"),
        "REPLACE": ("Replace Scene World", "Rebuild the scene's current world from the file's environment"),
        "NONE": ("Keep Scene World", "Leave the scene's world as it is")})
    world_name: str = ""


@dataclass
class BuildResult:
    objects: list = field(default_factory=list)          # per Scene node: bpy object or None
    meshes: list = field(default_factory=list)
    materials: list = field(default_factory=list)
    actions: list = field(default_factory=list)
    collection: object = None


def _matrix(a) -> Matrix:
    return Matrix(np.asarray(a, np.float64).tolist())


def build_scene(scene: Scene, options: BuildOptions = BuildOptions(), context=None) -> BuildResult:
    context = context or bpy.context
    res = BuildResult()
    root = context.view_layer.active_layer_collection.collection
    if options.collection:
        root = bpy.data.collections.new(options.collection)
        context.view_layer.active_layer_collection.collection.children.link(root)
    res.collection = root
    child_colls: dict[str, object] = {}

    def coll_for(name: str):
        if not name:
            return root
        if name not in child_colls:
            c = bpy.data.collections.new(name)
            root.children.link(c)
            child_colls[name] = c
        return child_colls[name]

    # Blender crashes on some faces real files hold: repair first, warn once per mesh (numpy work:
    # two meshes at a time when they are big)
    big = sum(len(m.corners) for m in scene.meshes) >= PARALLEL_CORNERS
    scene.warnings = list(scene.warnings) + [line for lines in map_two(make_safe, scene.meshes, threaded=big)
                                             for line in lines]
    images = [build_image(i) for i in scene.images]
    res.materials = [build_material(m, images) for m in scene.materials]
    res.meshes = build_meshes(scene.meshes, res.materials)
    cameras = [_build_camera(c) for c in scene.cameras]
    lights = [_build_light(li) for li in scene.lights]
    arm_data = [bpy.data.armatures.new(a.name) for a in scene.armatures]

    G = _matrix(options.global_matrix)
    keep = options.object_types
    shaped: set[int] = set()
    for i, node in enumerate(scene.nodes):
        kind = node.kind if node.kind in keep else "EMPTY"
        data = None
        if node.kind not in keep and node.kind != "EMPTY":
            res.objects.append(None)
            continue
        if kind == "MESH":
            data = res.meshes[node.data]
        elif kind == "CAMERA":
            data = cameras[node.data]
        elif kind == "LIGHT":
            data = lights[node.data]
        elif kind == "ARMATURE":
            data = arm_data[node.data]
        obj = bpy.data.objects.new(node.name, data)
        if node.source_name or obj.name != node.name:
            obj["source_name"] = node.source_name or node.name
        coll_for(node.collection).objects.link(obj)
        obj.hide_viewport = obj.hide_render = node.hide
        if hasattr(obj, "visible_shadow"):
            obj.visible_shadow = node.cast_shadow
        props.store(obj, node.extras)
        res.objects.append(obj)
        if kind == "MESH" and node.data not in shaped:
            shaped.add(node.data)
            add_shape_keys(obj, scene.meshes[node.data])

    bone_names: dict[int, list[str]] = {}      # armature index -> the names Blender gave its bones
    for i, node in enumerate(scene.nodes):
        if res.objects[i] is not None and node.kind == "ARMATURE" and res.objects[i].type == "ARMATURE":
            bone_names[node.data] = _build_bones(context, res.objects[i], scene.armatures[node.data])

    # hierarchy and placement
    for i, node in enumerate(scene.nodes):
        obj = res.objects[i]
        if obj is None:
            continue
        parent = res.objects[node.parent] if node.parent >= 0 else None
        if parent is not None:
            obj.parent = parent
            inverse = _matrix(node.matrix_parent_inverse)
            if node.parent_bone and parent.type == "ARMATURE" and node.parent_bone in parent.data.bones:
                obj.parent_type = "BONE"
                obj.parent_bone = node.parent_bone
                # Blender hangs bone children on the bone's tail; the Scene on its head
                inverse = Matrix.Translation((0.0, -parent.data.bones[node.parent_bone].length, 0.0)) @ inverse
            obj.matrix_parent_inverse = inverse
            obj.matrix_basis = _matrix(node.matrix)
        else:
            obj.matrix_basis = G @ _matrix(node.matrix_parent_inverse) @ _matrix(node.matrix)

    for i, node in enumerate(scene.nodes):
        obj = res.objects[i]
        if obj is None:
            continue
        if node.target >= 0 and res.objects[node.target] is not None:
            con = obj.constraints.new("TRACK_TO")
            con.target = res.objects[node.target]
            con.track_axis, con.up_axis = "TRACK_NEGATIVE_Z", "UP_Y"
            con.use_target_z = node.target_up

    # skins need the armature object: the mesh node's nearest armature, else the first one
    arm_objects = {node.data: res.objects[i] for i, node in enumerate(scene.nodes)
                   if node.kind == "ARMATURE" and res.objects[i] is not None}
    done: set[int] = set()
    for i, node in enumerate(scene.nodes):
        obj = res.objects[i]
        if obj is None or node.kind != "MESH" or node.data in done:
            continue
        m = scene.meshes[node.data]
        if m.skin is None or m.skin.armature not in arm_objects:
            continue
        done.add(node.data)
        arm_obj = arm_objects[m.skin.armature]
        add_skin(obj, m, bone_names.get(m.skin.armature) or [b.name for b in scene.armatures[m.skin.armature].bones])
        mod = obj.modifiers.new("Armature", "ARMATURE")
        mod.object = arm_obj

    context.view_layer.update()
    if options.apply_transform:
        for obj in res.objects:
            if obj is not None and obj.parent is None and obj.type == "MESH" and obj.data.users == 1:
                obj.data.transform(obj.matrix_basis)
                obj.matrix_basis = Matrix.Identity(4)

    if options.use_keyframes:
        res.actions = build_animations(scene, res.objects, G)
    sc = context.scene
    if options.set_frame_range:
        apply_timeline(context, scene)
    for mk in scene.markers:
        sc.timeline_markers.new(mk.name, frame=int(mk.frame))
    if scene.world is not None and options.world != "NONE":
        build_world(scene.world, images, options.world_name or "World", context, replace=options.world == "REPLACE")
    return res


_MAX_FRAME = 1_048_574       # MAXFRAME in Blender's DNA


def apply_timeline(context, scene: Scene) -> None:
    """The scene's frame range and frame rate from the file's."""
    sc = context.scene
    if scene.frame_start is not None and scene.frame_end is not None:
        # Blender's own limits; a damaged file may claim anything
        start = int(np.clip(scene.frame_start, -_MAX_FRAME, _MAX_FRAME))
        sc.frame_start, sc.frame_end = start, int(np.clip(scene.frame_end, start, _MAX_FRAME))
    if scene.fps:
        sc.render.fps, sc.render.fps_base = int(round(scene.fps)), round(scene.fps) / scene.fps


def _build_camera(c):
    cam = bpy.data.cameras.new(c.name)
    cam.lens = c.lens
    cam.clip_start, cam.clip_end = c.clip_start, c.clip_end
    props.store(cam, c.extras)
    return cam


def _build_light(li):
    light = bpy.data.lights.new(li.name, li.type)
    light.color = li.color
    light.energy = li.energy
    if li.type == "SPOT":
        light.spot_size = li.spot_size
        light.spot_blend = li.spot_blend
    light.use_shadow = li.cast_shadow
    if li.use_attenuation:
        light.use_custom_distance = True
        light.cutoff_distance = li.attenuation_end
    props.store(light, {**li.extras, "use_attenuation": li.use_attenuation,
                        "attenuation_start": li.attenuation_start, "attenuation_end": li.attenuation_end})
    return light


def _build_bones(context, obj, arm) -> list[str]:
    """Edit bones from armature-space rest matrices (bone Y axis along the bone); returns
    the names Blender gave them."""
    view_layer = context.view_layer
    prev = view_layer.objects.active
    view_layer.objects.active = obj
    bpy.ops.object.mode_set(mode="EDIT")
    try:
        ebs = obj.data.edit_bones
        mats = [np.asarray(b.matrix, np.float64) for b in arm.bones]
        heads = np.array([m[:3, 3] for m in mats]) if mats else np.zeros((0, 3))
        span = float(np.ptp(heads, axis=0).max()) if len(heads) > 1 else 1.0
        created = []
        for b, m in zip(arm.bones, mats):
            eb = ebs.new(b.name or "Bone")
            length = b.length or max(span * 0.05, 1e-3)
            eb.head = (0.0, 0.0, 0.0)
            eb.tail = (0.0, length, 0.0)
            rot = m[:3, :3] / np.where(np.linalg.norm(m[:3, :3], axis=0) == 0, 1, np.linalg.norm(m[:3, :3], axis=0))
            mm = np.eye(4)
            mm[:3, :3], mm[:3, 3] = rot, m[:3, 3]
            eb.matrix = _matrix(mm)
            created.append(eb)
        for b, eb in zip(arm.bones, created):
            if 0 <= b.parent < len(created):
                eb.parent = created[b.parent]
        names = [eb.name for eb in created]      # Blender renames empty and repeated names
    finally:
        bpy.ops.object.mode_set(mode="OBJECT")
        view_layer.objects.active = prev
    for b, name in zip(arm.bones, names):
        bone = obj.data.bones[name]
        if name != b.name:
            bone["source_name"] = b.name
        props.store(bone, b.extras)
    props.store(obj.data, arm.extras)
    return names
