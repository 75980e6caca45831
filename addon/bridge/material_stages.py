"""Texture stages as nodes: colour maps that combine with the colour below them, and cube maps.

  a stage     (TextureSlot.combine) one Mix node labelled with the combine, clamped as each
              Direct3D stage is: A = the colour below (the base colour map's, else the base
              colour; then each stage's in turn), B = the map (SUBTRACT: A = the map, B = below);
              then one clamped "x2" Mix (the result added to itself) per doubling.
  a cube map  (TextureSlot.cube_faces) six Image Texture nodes, the slot's own the first, fed by the
              "LGF Cube Map" group: the reflection direction -> each face's UV and whether the face
              is the one it points at; Mix nodes pick that face's colour.

read() gives the combine back from the nodes (the Mix's blend type and the doublings after it; its
label tells apart what shows alike), cube_faces() the faces' images.
"""
from __future__ import annotations

import bpy

from ..codec.scene import TextureSlot
from . import map_look

# TextureSlot.combine (codec.scene.COMBINES) -> (Mix blend type, doublings, map in A,
# factor: "MAP_ALPHA", "MATERIAL_ALPHA" or a number)
_SPEC = {
    "MULTIPLY": ("MULTIPLY", 0, False, 1.0), "MULTIPLY_2X": ("MULTIPLY", 1, False, 1.0),
    "MULTIPLY_4X": ("MULTIPLY", 2, False, 1.0), "ADD": ("ADD", 0, False, 1.0),
    "ADD_SIGNED": ("LINEAR_LIGHT", 0, False, 0.5),        # below + 0.5 (2 map - 1)
    "ADD_SIGNED_2X": ("LINEAR_LIGHT", 1, False, 0.5), "SUBTRACT": ("SUBTRACT", 0, True, 1.0),
    "ADD_SMOOTH": ("SCREEN", 0, False, 1.0), "MIX_MAP_ALPHA": ("MIX", 0, False, "MAP_ALPHA"),
    "MIX_MAP_ALPHA_PREMULTIPLIED": ("ADD", 0, False, 1.0),  # after below x (1 - alpha)
    "MIX_MATERIAL_ALPHA": ("MIX", 0, False, "MATERIAL_ALPHA"), "REPLACE": ("MIX", 0, False, 1.0),
    "KEEP": ("MIX", 0, False, 0.0),
}
DOUBLE, PREMULTIPLIED = "x2", "below x (1 - alpha)"
CUBE_GROUP = "LGF Cube Map"
CUBE_MARK = "lgf_cube_map"      # the group's own property: a user may rename the group
FACES = ("+X", "-X", "+Y", "-Y", "+Z", "-Z")


def _mix(nt, blend: str, label: str, x: float, y: float):
    mix = nt.nodes.new("ShaderNodeMix")
    mix.data_type, mix.blend_type, mix.clamp_result = "RGBA", blend, True
    mix.label, mix.location = label, (x, y)
    mix.inputs["Factor"].default_value = 1.0
    return mix


def _below(nt, socket, into, color) -> None:
    if socket is None:
        into.default_value = (*color[:3], 1.0)
    else:
        nt.links.new(socket, into)


def chain(nt, stages: list, below, base_color, alpha: float):
    """Each (slot, image node, colour socket) of `stages` over `below` (a socket, or None: the base
    colour) in turn, as its combine says -> the last colour socket (`below` when there are none)."""
    for slot, tex, col in stages:
        blend, doublings, swap, factor = _SPEC[slot.combine]
        x, y = tex.location.x + 900, tex.location.y
        mix = _mix(nt, blend, slot.combine, x, y)
        if factor == "MAP_ALPHA":
            nt.links.new(tex.outputs["Alpha"], mix.inputs["Factor"])
        else:
            mix.inputs["Factor"].default_value = alpha if factor == "MATERIAL_ALPHA" else factor
        low, high = (mix.inputs["B"], mix.inputs["A"]) if swap else (mix.inputs["A"], mix.inputs["B"])
        if slot.combine == "MIX_MAP_ALPHA_PREMULTIPLIED":
            pre = _mix(nt, "MIX", PREMULTIPLIED, x - 200, y - 200)
            nt.links.new(tex.outputs["Alpha"], pre.inputs["Factor"])
            pre.inputs["B"].default_value = (0.0, 0.0, 0.0, 1.0)
            _below(nt, below, pre.inputs["A"], base_color)
            nt.links.new(pre.outputs["Result"], low)
        else:
            _below(nt, below, low, base_color)
        nt.links.new(col, high)
        below = mix.outputs["Result"]
        for k in range(doublings):
            twice = _mix(nt, "ADD", DOUBLE, x + 200 * (k + 1), y)
            nt.links.new(below, twice.inputs["A"])
            nt.links.new(below, twice.inputs["B"])
            below = twice.outputs["Result"]
    return below


def _stage_node(tex):
    """The first stage Mix that `tex` reaches through the map's side (a stage above it takes this one's
    result as the colour below: not its own)."""
    return map_look.mix_on_map_side(tex, lambda label: ("A" if _SPEC[label][2] else "B") if label in _SPEC else None)


def read(tex) -> str:
    """The combine the nodes after `tex` show; "" when `tex` feeds no stage."""
    node = _stage_node(tex)
    if node is None:
        return ""
    doublings, out = 0, node.outputs["Result"]
    for _ in range(8):                      # bounded: a script may link the doublings in a loop
        nxt = [lk.to_node for lk in out.links if lk.to_node.type == "MIX" and lk.to_node.label == DOUBLE]
        if not nxt:
            break
        doublings, out = doublings + 1, nxt[0].outputs["Result"]
    spec = _SPEC[node.label]
    if (spec[0], spec[1]) == (node.blend_type, doublings):
        return node.label
    if node.blend_type == "MIX":            # an edited blend type: the factor tells the mixes apart
        fac = node.inputs["Factor"]
        return "MIX_MAP_ALPHA" if fac.is_linked else {1.0: "REPLACE", 0.0: "KEEP"}.get(
            round(float(fac.default_value), 6), "MIX_MATERIAL_ALPHA")
    return next((c for c, s in _SPEC.items() if (s[0], s[1]) == (node.blend_type, doublings)), node.label)


# -- cube maps ------------------------------------------------------------------------------------------
def cube(nt, slot: TextureSlot, tex, images: list):
    """The cube map's six faces looked up by the reflection direction; `tex` (the slot's node) is the
    first face -> the colour socket."""
    x, y = tex.location
    coords = nt.nodes.new("ShaderNodeTexCoord")
    coords.location = (x - 500, y)
    group = nt.nodes.new("ShaderNodeGroup")
    group.node_tree = _cube_group()
    group.location = (x - 300, y)
    nt.links.new(coords.outputs["Reflection"], group.inputs["Vector"])
    out = None
    for k, face in enumerate(FACES):
        node = tex
        if k:
            node = nt.nodes.new("ShaderNodeTexImage")
            node.label, node.location = f"{slot.kind} {face}", (x, y - 260 * k)
            if 0 <= slot.cube_faces[k] < len(images):
                node.image = images[slot.cube_faces[k]]
        node.extension = "EXTEND"
        nt.links.new(group.outputs[f"{face} UV"], node.inputs["Vector"])
        if out is None:
            out = node.outputs["Color"]
            continue
        pick = _mix(nt, "MIX", "", x + 300, y - 260 * k)
        nt.links.new(group.outputs[face], pick.inputs["Factor"])
        nt.links.new(out, pick.inputs["A"])
        nt.links.new(node.outputs["Color"], pick.inputs["B"])
        out = pick.outputs["Result"]
    return out


def cube_face(tex) -> int:
    """Which face of a cube map `tex` shows (0 for the slot's own node); -1 when it is no cube face."""
    links = tex.inputs["Vector"].links
    node = links[0].from_node if links else None
    if node is None or node.type != "GROUP" or not _is_cube_group(node.node_tree):
        return -1
    name = links[0].from_socket.name
    return FACES.index(name[:-3]) if name.endswith(" UV") and name[:-3] in FACES else -1


def cube_faces(tex, image_index) -> tuple[int, ...]:
    """The six faces' images (image_index of each), `tex` being face 0; () when they are not all there."""
    links = tex.inputs["Vector"].links
    if cube_face(tex) != 0:
        return ()
    group = links[0].from_node
    faces = [tex.image]
    for face in FACES[1:]:
        nodes = [lk.to_node for lk in group.outputs[f"{face} UV"].links if lk.to_node.type == "TEX_IMAGE"]
        if not nodes or nodes[0].image is None:
            return ()
        faces.append(nodes[0].image)
    return tuple(image_index(im) for im in faces)


def _is_cube_group(tree) -> bool:
    """Ours by its mark (0.2.0 made it unmarked: by its name then)."""
    return tree is not None and bool(tree.get(CUBE_MARK) or tree.name == CUBE_GROUP)


def _cube_group():
    """Reflection direction (Blender axes) -> per face its UV ("+X UV", ...) and 1 when the direction
    points at it ("+X", ...): Direct3D's cube faces, whose axes are Blender's x, z, y."""
    group = next((g for g in bpy.data.node_groups if g.bl_idname == "ShaderNodeTree" and g.get(CUBE_MARK)), None)
    if group is not None:
        return group
    group = bpy.data.node_groups.new(CUBE_GROUP, "ShaderNodeTree")
    group[CUBE_MARK] = 1
    group.interface.new_socket("Vector", in_out="INPUT", socket_type="NodeSocketVector")
    for face in FACES:
        group.interface.new_socket(f"{face} UV", in_out="OUTPUT", socket_type="NodeSocketVector")
        group.interface.new_socket(face, in_out="OUTPUT", socket_type="NodeSocketFloat")
    nodes, links = group.nodes, group.links
    gin, gout = nodes.new("NodeGroupInput"), nodes.new("NodeGroupOutput")
    gout.location = (1600, 0)
    sep = nodes.new("ShaderNodeSeparateXYZ")
    links.new(gin.outputs["Vector"], sep.inputs["Vector"])
    pos = [0]

    def math(op, a, b=0.0, c=0.0):
        node = nodes.new("ShaderNodeMath")
        node.operation = op
        pos[0] += 1
        node.location = (200 + 150 * (pos[0] % 8), -120 * (pos[0] // 8))
        for i, v in enumerate((a, b, c)):
            if isinstance(v, (int, float)):
                node.inputs[i].default_value = v
            else:
                links.new(v, node.inputs[i])
        return node.outputs["Value"]

    X, Y, Z = sep.outputs["X"], sep.outputs["Z"], sep.outputs["Y"]      # Direct3D's axes
    ax, ay, az = math("ABSOLUTE", X), math("ABSOLUTE", Y), math("ABSOLUTE", Z)
    is_x = math("MULTIPLY", math("LESS_THAN", math("SUBTRACT", ay, ax), 1e-30),
                math("LESS_THAN", math("SUBTRACT", az, ax), 1e-30))          # ax >= ay and ax >= az
    not_x = math("SUBTRACT", 1.0, is_x)
    is_y = math("MULTIPLY", not_x, math("LESS_THAN", math("SUBTRACT", az, ay), 1e-30))
    is_z = math("SUBTRACT", not_x, is_y)
    for axis, on, v in ((0, is_x, X), (1, is_y, Y), (2, is_z, Z)):
        positive = math("GREATER_THAN", v, 0.0)
        links.new(math("MULTIPLY", on, positive), gout.inputs[FACES[2 * axis]])
        links.new(math("MULTIPLY", on, math("SUBTRACT", 1.0, positive)), gout.inputs[FACES[2 * axis + 1]])
    # Direct3D's face coordinates (sc, tc) / |major axis|, then u = (s + 1) / 2, Blender v = 1 - (t + 1) / 2
    ratio = {}
    for name, num, den in (("Z/X", Z, ax), ("Y/X", Y, ax), ("X/Y", X, ay), ("Z/Y", Z, ay), ("X/Z", X, az),
                           ("Y/Z", Y, az)):
        ratio[name] = math("DIVIDE", num, den)
    faces = {"+X": (("Z/X", -0.5), ("Y/X", 0.5)), "-X": (("Z/X", 0.5), ("Y/X", 0.5)),
             "+Y": (("X/Y", 0.5), ("Z/Y", -0.5)), "-Y": (("X/Y", 0.5), ("Z/Y", 0.5)),
             "+Z": (("X/Z", 0.5), ("Y/Z", 0.5)), "-Z": (("X/Z", -0.5), ("Y/Z", 0.5))}
    for k, face in enumerate(FACES):
        (su, ku), (sv, kv) = faces[face]
        uv = nodes.new("ShaderNodeCombineXYZ")
        uv.location = (1400, -150 * k)
        links.new(math("MULTIPLY_ADD", ratio[su], ku, 0.5), uv.inputs["X"])
        links.new(math("MULTIPLY_ADD", ratio[sv], kv, 0.5), uv.inputs["Y"])
        links.new(uv.outputs["Vector"], gout.inputs[f"{face} UV"])
    return group
