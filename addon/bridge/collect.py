"""Blender -> neutral Scene, read from the evaluated depsgraph in bulk."""
from __future__ import annotations

from contextlib import contextmanager

import bpy
import numpy as np

from ..codec.scene import (Armature, Bone, Camera, Image, Light, Mesh, Node, Scene, ShapeKey, Skin)
from ..codec.meshops import next_corner
from . import props
from .animation_bake import bake
from .material_build import collect_material
from .mesh_build import corner_edges, get_indices
from .scope import CONVERTED, CollectOptions, local_matrix, matrix_array, objects_in_scope
from .tangents import mikk_tangents
from .weights import weight_triples
from .world import collect_world


class _Collector:
    def __init__(self, context, o: CollectOptions):
        self.context, self.o = context, o
        self.depsgraph = context.evaluated_depsgraph_get()
        self.scene = Scene()
        self.mesh_of: dict[int, int] = {}
        self.material_of: dict[int, int] = {}
        self.image_of: dict[int, int] = {}
        self.armature_of: dict[int, int] = {}

    def image_index(self, image) -> int:
        key = image.as_pointer()
        if key not in self.image_of:
            path = bpy.path.abspath(image.filepath) if image.filepath else str(image.get("source_path", ""))
            self.scene.images.append(Image(name=str(image.get("source_name", image.name)), filepath=path))
            self.image_of[key] = len(self.scene.images) - 1
        return self.image_of[key]

    def material_index(self, mat) -> int:
        if mat is None:
            return -1
        key = mat.as_pointer()
        if key not in self.material_of:
            self.scene.materials.append(collect_material(mat, self.image_index))
            self.material_of[key] = len(self.scene.materials) - 1
        return self.material_of[key]

    # -- meshes ------------------------------------------------------------
    def mesh(self, ob) -> int:
        # one Scene mesh per mesh datablock unless modifiers make instances differ
        converted = ob.type in CONVERTED
        shaping = [md for md in ob.modifiers if md.show_viewport and md.type != "ARMATURE"]
        shared = not converted and not (self.o.apply_modifiers and shaping)
        key = ob.data.as_pointer() if shared else ob.as_pointer()
        if key in self.mesh_of:
            return self.mesh_of[key]
        if converted:
            m = self._evaluated(ob)            # a curve, text, surface or metaball: its evaluated mesh
        elif not shaping or not self.o.apply_modifiers:
            # nothing to evaluate: the datablock itself holds the rest shape (basis, unskinned)
            m = read_mesh(ob.data, self.o.triangulate, self.o.tangents, self.o.tangents_kept_as)
        else:
            with _rest_state(self.context, ob):
                m = self._evaluated(ob, preserve_all_data_layers=True)
        m.name = ob.data.name
        m.materials = [self.material_index(s.material) for s in ob.material_slots]
        if not converted:
            m.extras = props.load(ob.data)
            self._shape_keys(ob, m)
            self._skin(ob, m)
        self.scene.meshes.append(m)
        self.mesh_of[key] = len(self.scene.meshes) - 1
        return self.mesh_of[key]

    def _evaluated(self, ob, **kw) -> Mesh:
        depsgraph = self.context.evaluated_depsgraph_get()
        src = ob.evaluated_get(depsgraph)
        me = src.to_mesh(depsgraph=depsgraph, **kw)
        try:
            return read_mesh(me, self.o.triangulate, self.o.tangents, self.o.tangents_kept_as)
        finally:
            src.to_mesh_clear()

    def _shape_keys(self, ob, m: Mesh) -> None:
        keys = ob.data.shape_keys
        if keys is None or len(keys.key_blocks) == 0 or len(ob.data.vertices) != len(m.positions):
            return
        blocks = list(keys.key_blocks)
        for kb in blocks:
            co = np.empty(len(kb.data) * 3, np.float32)
            kb.data.foreach_get("co", co)
            m.shape_keys.append(ShapeKey(kb.name, co.reshape(-1, 3), blocks.index(kb.relative_key),
                                         float(kb.value), kb.interpolation))

    def _skin(self, ob, m: Mesh) -> None:
        arm = next((md.object for md in ob.modifiers if md.type == "ARMATURE" and md.object), None)
        if arm is None or not ob.vertex_groups or len(ob.data.vertices) != len(m.positions):
            return
        a = self.armature(arm)
        bone_index = {b.name: i for i, b in enumerate(arm.data.bones)}     # Blender's names, as the groups use
        group_bone = np.array([bone_index.get(g.name, -1) for g in ob.vertex_groups], np.int32)
        vi, gi, w = weight_triples(self.context, ob)
        V = len(m.positions)
        if not len(vi):
            return
        bone = group_bone[gi]
        ok = bone >= 0
        vi, bone, w = vi[ok], bone[ok], w[ok]
        order = np.argsort(vi, kind="stable")          # integer keys: a radix sort
        vi, bone, w = vi[order], bone[order], w[order]
        rank = np.arange(len(vi)) - np.searchsorted(vi, vi)
        K = int(rank.max()) + 1 if len(rank) else 1
        joints = np.full((V, K), -1, np.int32)
        weights = np.zeros((V, K), np.float32)
        joints[vi, rank] = bone
        weights[vi, rank] = w
        heaviest = np.argsort(-weights, axis=1, kind="stable")     # strongest influence first
        rows = np.arange(V)[:, None]
        m.skin = Skin(armature=a, joints=joints[rows, heaviest], weights=weights[rows, heaviest])

    # -- armatures -----------------------------------------------------------
    def armature(self, ob) -> int:
        key = ob.data.as_pointer()
        if key not in self.armature_of:
            bones = list(ob.data.bones)
            index = {b.name: i for i, b in enumerate(bones)}
            arm = Armature(name=ob.data.name, extras=props.load(ob.data))
            for b in bones:
                extras = props.load(b)
                arm.bones.append(Bone(name=str(extras.pop("source_name", b.name)),
                                      parent=index[b.parent.name] if b.parent else -1,
                                      matrix=matrix_array(b.matrix_local), length=b.length, extras=extras))
            self.scene.armatures.append(arm)
            self.armature_of[key] = len(self.scene.armatures) - 1
        return self.armature_of[key]


@contextmanager
def _rest_state(context, ob):
    """Evaluate a mesh as its skin and shape keys expect: no armature deformation
    and the basis shape (they are written separately)."""
    arm_mods = [md for md in ob.modifiers if md.type == "ARMATURE" and md.show_viewport]
    keys = ob.data.shape_keys
    saved = (ob.show_only_shape_key, ob.active_shape_key_index)
    changed = bool(arm_mods) or keys is not None
    try:
        for md in arm_mods:
            md.show_viewport = False
        if keys is not None:
            ob.show_only_shape_key, ob.active_shape_key_index = True, 0
        if changed:
            context.view_layer.update()
        yield
    finally:
        for md in arm_mods:
            md.show_viewport = True
        if keys is not None:
            ob.show_only_shape_key, ob.active_shape_key_index = saved
        if changed:
            context.view_layer.update()


def read_mesh(me, triangulate: bool, tangents: bool = False, tangents_kept_as: str = "") -> Mesh:
    """Bulk read of a bpy mesh into a Scene Mesh (triangulated through loop_triangles).
    tangents_kept_as: when the mesh has this corner attribute, the format writes it and not
    Blender's tangents, so MikkTSpace (most of a large export's time) is skipped."""
    V, L, P = len(me.vertices), len(me.loops), len(me.polygons)
    pos = _bulk(me, "position", me.vertices, "co", V, 3, np.float32)
    loop_vert = _bulk(me, ".corner_vert", me.loops, "vertex_index", L, 1, np.int32)
    normals = np.empty(L * 3, np.float32)
    me.corner_normals.foreach_get("vector", normals)
    normals = normals.reshape(-1, 3)
    mat_index = _bulk(me, "material_index", None, "", P, 1, np.int32)
    if triangulate and L != 3 * P:
        me.calc_loop_triangles()
        T = len(me.loop_triangles)
        corner_src = get_indices(me.loop_triangles, "loops", T * 3)
        face_src = get_indices(me.loop_triangles, "polygon_index", T)
        starts = np.arange(0, T * 3, 3, dtype=np.uint32)
    else:
        corner_src = slice(None)     # already triangles, or polygons wanted: no reindexing
        face_src = slice(None)
        starts = get_indices(me.polygons, "loop_start", P).view(np.uint32)
    m = Mesh(name=me.name, positions=pos, corners=loop_vert[corner_src].astype(np.uint32),
             faces=starts, normals=normals[corner_src], face_material=mat_index[face_src])
    _read_sharp(me, m, corner_src, face_src, L, P)
    kept = me.attributes.get(tangents_kept_as) if tangents_kept_as else None
    if tangents and me.uv_layers and L and (kept is None or kept.domain != "CORNER"):
        # MikkTSpace from the active UV map; it needs faces of 3 or 4 corners
        sizes = get_indices(me.polygons, "loop_total", P)
        if sizes.max() <= 4:
            tan, sign = mikk_tangents(me, me.uv_layers[0].name, pos, loop_vert,
                                      get_indices(me.polygons, "loop_start", P), sizes, normals)
            m.corner_attributes["tangent"] = tan[corner_src]
            m.corner_attributes["bitangent_sign"] = sign[corner_src]
    for layer in me.uv_layers:
        m.uv_layers[layer.name] = _bulk(me, layer.name, layer.uv, "vector", L, 2, np.float32)[corner_src]
    for attr in me.attributes:
        if attr.is_internal or attr.name in _SKIPPED:
            continue
        if me.uv_layers.get(attr.name) is not None:
            continue
        arr = _read_attribute(attr)
        if arr is None:
            continue
        if attr.domain == "FACE" and attr.data_type in ("INT", "BOOLEAN"):
            m.face_attributes[attr.name] = arr[face_src]
        elif attr.domain == "POINT" and attr.name not in me.color_attributes:
            m.vertex_attributes[attr.name] = arr
        elif attr.domain == "CORNER" and attr.name in me.color_attributes:
            m.colors[attr.name] = arr[corner_src]
        elif attr.domain == "POINT" and attr.name in me.color_attributes:
            m.colors[attr.name] = arr[loop_vert][corner_src]
        elif attr.domain == "CORNER":
            m.corner_attributes[attr.name] = arr[corner_src]
    return m


def _read_sharp(me, m: Mesh, corner_src, face_src, L: int, P: int) -> None:
    """Sharp edges per (triangulated) corner and flat faces, when the mesh has them: an edge a
    triangulation adds inside a polygon is never sharp."""
    edge_attr, face_attr = me.attributes.get("sharp_edge"), me.attributes.get("sharp_face")
    if edge_attr is None and face_attr is None:
        return
    if face_attr is not None:
        m.sharp_faces = _read_attribute(face_attr).astype(bool)[face_src]
    sharp = np.zeros(L, bool)
    if edge_attr is not None and L:
        sharp = _read_attribute(edge_attr).astype(bool)[corner_edges(me)]
    if isinstance(corner_src, slice):
        m.sharp_edges = sharp
        return
    loop_next = next_corner(get_indices(me.polygons, "loop_start", P), L)
    tri = np.asarray(corner_src, np.int64).reshape(-1, 3)
    after = np.roll(tri, -1, axis=1)
    m.sharp_edges = (sharp[tri] & (loop_next[tri] == after)).ravel()


_READ = {"INT": ("value", 1, np.int32), "BOOLEAN": ("value", 1, np.bool_), "QUATERNION": ("value", 4, np.float32), "FLOAT": ("value", 1, np.float32), "FLOAT2": ("vector", 2, np.float32),
         "FLOAT_VECTOR": ("vector", 3, np.float32), "FLOAT_COLOR": ("color", 4, np.float32),
         "BYTE_COLOR": ("color", 4, np.float32)}


def _bulk(me, attribute: str, collection, key: str, count: int, width: int, dtype) -> np.ndarray:
    """Read through the attribute API (one memcpy), else the older per-element collection,
    else zeros when neither exists (e.g. no material_index yet)."""
    out = np.empty(count * width, dtype)
    attr = me.attributes.get(attribute)
    if attr is not None and len(attr.data) == count:
        attr.data.foreach_get("vector" if width > 1 else "value", out)
    elif collection is not None:
        collection.foreach_get(key, out)
    else:
        out[:] = 0
    return out if width == 1 else out.reshape(-1, width)


# Built-in attributes that have their own Scene field, or that Blender derives.
_SKIPPED = {"position", "material_index", "sharp_face", ".edge_verts", ".corner_vert", ".corner_edge",
            ".select_vert", ".select_edge", ".select_poly", "sharp_edge", ".uv_seam"}


def _read_attribute(attr):
    spec = _READ.get(attr.data_type)
    if spec is None:
        return None
    key, width, dtype = spec
    out = np.empty(len(attr.data) * width, dtype)
    attr.data.foreach_get(key, out)
    return out if width == 1 else out.reshape(-1, width)


def lens_36(cam, render) -> float:
    """The lens that gives, on the Scene's 36 mm wide sensor, the horizontal field of view this
    camera renders with its own sensor size and fit at the scene's aspect ratio."""
    aspect = (render.resolution_x * render.pixel_aspect_x) / max(render.resolution_y * render.pixel_aspect_y, 1e-9)
    fit = cam.sensor_fit
    if fit == "AUTO":
        fit, sensor = ("HORIZONTAL" if aspect >= 1 else "VERTICAL"), cam.sensor_width
    else:
        sensor = cam.sensor_width if fit == "HORIZONTAL" else cam.sensor_height
    half = sensor / 2 / max(cam.lens, 1e-6)                    # tan of half the fitted angle
    if fit == "VERTICAL":
        half *= aspect                                         # the width follows from the height
    return 18.0 / half


def collect_light(li) -> Light:
    """Attenuation as Blender's custom distance (the light's cut-off) has it; else as imported."""
    extras = props.load(li)
    use = bool(extras.pop("use_attenuation", False))
    start = float(extras.pop("attenuation_start", 0.0))
    end = float(extras.pop("attenuation_end", 0.0))
    if hasattr(li, "use_custom_distance"):
        use = bool(li.use_custom_distance)
        end = float(li.cutoff_distance) if use else end
    return Light(li.name, li.type, tuple(li.color), li.energy, getattr(li, "spot_size", 0.785),
                 getattr(li, "spot_blend", 0.15), li.use_shadow, use, start, end, extras=extras)


def collect_scene(context, o: CollectOptions = CollectOptions()) -> Scene:
    c = _Collector(context, o)
    objs = objects_in_scope(context, o)
    sc = context.scene
    index = {ob.as_pointer(): i for i, ob in enumerate(objs)}
    G = matrix_array(o.global_matrix)
    _report_geometry(context, c.scene, objs)        # first: reading weights below leaves the depsgraph to update
    for ob in objs:
        node = Node(name=str(ob.get("source_name", ob.name)), kind="MESH" if ob.type in CONVERTED else
                    ob.type if ob.type in ("MESH", "CAMERA", "LIGHT", "ARMATURE") else "EMPTY")
        node.extras = {k: v for k, v in props.load(ob).items() if k != "source_name"}
        parent = ob.parent if ob.parent is not None and ob.parent.as_pointer() in index else None
        node.matrix = local_matrix(ob, parent, G)
        if parent is not None:
            node.parent = index[parent.as_pointer()]
            node.parent_bone = ob.parent_bone if ob.parent_type == "BONE" else ""
        if ob.users_collection and ob.users_collection[0] != context.scene.collection:
            node.collection = ob.users_collection[0].name
        node.hide = ob.hide_render
        node.cast_shadow = bool(getattr(ob, "visible_shadow", True))
        if ob.type == "MESH" or ob.type in CONVERTED:
            node.data = c.mesh(ob)
        elif ob.type == "CAMERA":
            cam = ob.data
            c.scene.cameras.append(Camera(cam.name, lens_36(cam, sc.render), cam.clip_start, cam.clip_end,
                                          props.load(cam)))
            node.data = len(c.scene.cameras) - 1
        elif ob.type == "LIGHT":
            c.scene.lights.append(collect_light(ob.data))
            node.data = len(c.scene.lights) - 1
        elif ob.type == "ARMATURE":
            node.data = c.armature(ob)
        track = next((con for con in ob.constraints if con.type in ("TRACK_TO", "DAMPED_TRACK")
                      and con.target is not None and con.target.as_pointer() in index), None)
        if track is not None:
            node.target = index[track.target.as_pointer()]
            node.target_up = bool(getattr(track, "use_target_z", False))
        c.scene.nodes.append(node)
    sc = context.scene
    c.scene.world = collect_world(sc.world, c.image_index)
    c.scene.frame_start, c.scene.frame_end = sc.frame_start, sc.frame_end
    c.scene.fps = sc.render.fps / sc.render.fps_base
    if o.use_keyframes:
        bake(context, c.scene, objs, o)
    return c.scene


def _report_geometry(context, scene: Scene, objs: list) -> None:
    """One warning for the objects written as meshes, one for instances that are not written."""
    converted = [ob.name for ob in objs if ob.type in CONVERTED]
    if converted:
        scene.warnings.append(f"curve, text, surface and metaball objects are written as meshes: "
                              f"{', '.join(converted[:4])}{' and more' if len(converted) > 4 else ''}")
    exported = {ob.name for ob in objs if ob.type not in CONVERTED}     # their geometry comes as instances
    makers = set()
    for inst in context.evaluated_depsgraph_get().object_instances:     # valid inside the loop only
        if inst.is_instance and inst.parent is not None and inst.parent.original.name in exported:
            makers.add(inst.parent.original.name)
    if makers:
        names = sorted(makers)
        scene.warnings.append(f"instances (geometry nodes, collection or vertex instancing) of "
                              f"{', '.join(names[:4])} are not written: realize them to export them")
