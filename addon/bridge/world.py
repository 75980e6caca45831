"""Scene World <-> a Blender world, in nodes that Cycles and EEVEE both render.

The camera sees the background (solid colour, a gradient or a picture fit to the
view, both in window coordinates); every other ray sees the ambient colour, which
lights the scene as 3D Studio's ambient light does. Fog becomes a world volume whose
density fogs `far_density` of the light at the far distance (layered fog: only
between its two heights), and the mist pass gets the fog's (or distance cue's)
range. The World as read is kept on the world ("lgf_world", JSON) so that export
writes back what Blender cannot show; the colours are read back from the nodes.
"""
from __future__ import annotations

import dataclasses
import json
import math

import bpy

from ..codec.scene import Fog, World
from . import node_trees

KEPT = "lgf_world"
AMBIENT, BACKGROUND, FOG = "Ambient", "Background", "Fog"


def build_world(w: World, images: list, name: str, context, replace: bool = False):
    """A world of its own set on the scene (or, replace, the scene's world rebuilt)."""
    sc = context.scene
    world = sc.world if replace and sc.world is not None else bpy.data.worlds.new(name)
    sc.world = world
    node_trees.enable(world)
    nt = world.node_tree
    nt.nodes.clear()
    out = nt.nodes.new("ShaderNodeOutputWorld")
    out.location = (600, 0)
    camera_bg = _background(nt, w, images)
    ambient = nt.nodes.new("ShaderNodeBackground")
    ambient.name = ambient.label = AMBIENT
    ambient.inputs["Color"].default_value = (*(w.ambient or (0.0, 0.0, 0.0)), 1.0)
    ambient.location = (200, 200)
    path = nt.nodes.new("ShaderNodeLightPath")
    path.location = (0, 400)
    mix = nt.nodes.new("ShaderNodeMixShader")
    mix.location = (400, 0)
    nt.links.new(path.outputs["Is Camera Ray"], mix.inputs["Fac"])
    nt.links.new(ambient.outputs["Background"], mix.inputs[1])
    nt.links.new(camera_bg.outputs["Background"], mix.inputs[2])
    nt.links.new(mix.outputs["Shader"], out.inputs["Surface"])
    world.color = w.color if w.background == "SOLID" and w.color else (w.ambient or (0.05, 0.05, 0.05))
    fog = w.fog if w.fog is not None and w.fog.use else None
    layer = w.layer_fog if w.layer_fog is not None and w.layer_fog.use else None
    if fog or layer:
        _volume(nt, fog or layer, layer, out)
    for f in (fog, w.distance_cue if w.distance_cue is not None and w.distance_cue.use else None):
        if f is not None:
            world.mist_settings.start = f.near
            world.mist_settings.depth = max(f.far - f.near, 1e-3)
            world.mist_settings.falloff = "LINEAR"
            break
    world[KEPT] = json.dumps(dataclasses.asdict(w))
    return world


def _background(nt, w: World, images: list):
    bg = nt.nodes.new("ShaderNodeBackground")
    bg.name = bg.label = BACKGROUND
    bg.location = (200, -100)
    color = bg.inputs["Color"]
    if w.background == "SOLID" and w.color is not None:
        color.default_value = (*w.color, 1.0)
    elif w.background == "GRADIENT" and len(w.gradient) == 3:
        coords = nt.nodes.new("ShaderNodeTexCoord")
        coords.location = (-600, -100)
        xyz = nt.nodes.new("ShaderNodeSeparateXYZ")
        xyz.location = (-400, -100)
        ramp = nt.nodes.new("ShaderNodeValToRGB")
        ramp.location = (-200, -100)
        top, middle, bottom = w.gradient
        els = ramp.color_ramp.elements
        els[0].position, els[0].color = 0.0, (*bottom, 1.0)
        els[1].position, els[1].color = 1.0, (*top, 1.0)
        mid = els.new(min(max(w.gradient_middle, 0.0), 1.0))
        mid.color = (*middle, 1.0)
        nt.links.new(coords.outputs["Window"], xyz.inputs["Vector"])
        nt.links.new(xyz.outputs["Y"], ramp.inputs["Fac"])
        nt.links.new(ramp.outputs["Color"], color)
    elif w.background == "IMAGE" and 0 <= w.image < len(images) and images[w.image] is not None:
        coords = nt.nodes.new("ShaderNodeTexCoord")
        coords.location = (-400, -100)
        tex = nt.nodes.new("ShaderNodeTexImage")
        tex.location = (-200, -100)
        tex.image = images[w.image]
        tex.extension = "EXTEND"
        nt.links.new(coords.outputs["Window"], tex.inputs["Vector"])
        nt.links.new(tex.outputs["Color"], color)
    else:
        color.default_value = (0.0, 0.0, 0.0, 1.0)
    return bg


def fog_density(f: Fog) -> float:
    """Extinction per unit that lets 1 - far_density of the light through at the far distance."""
    d = min(max(f.far_density, 0.0), 0.999)
    return -math.log(1.0 - d) / max(f.far, 1e-6)


def _volume(nt, f: Fog, layer: Fog | None, out) -> None:
    vol = nt.nodes.new("ShaderNodeVolumePrincipled")
    vol.name = vol.label = FOG
    vol.location = (400, -400)
    vol.inputs["Color"].default_value = (*f.color, 1.0)
    density = fog_density(f) if layer is None or f is not layer else \
        -math.log(1.0 - min(max(layer.far_density, 0.0), 0.999)) / max(abs(layer.layer[1] - layer.layer[0]), 1e-6)
    vol.inputs["Density"].default_value = density
    if layer is not None:
        # only between the two heights: density x (z > z_min) x (z < z_max)
        geo = nt.nodes.new("ShaderNodeNewGeometry")
        geo.location = (-400, -500)
        xyz = nt.nodes.new("ShaderNodeSeparateXYZ")
        xyz.location = (-200, -500)
        above = nt.nodes.new("ShaderNodeMath")
        above.operation, above.location = "GREATER_THAN", (0, -450)
        above.inputs[1].default_value = layer.layer[0]
        below = nt.nodes.new("ShaderNodeMath")
        below.operation, below.location = "LESS_THAN", (0, -600)
        below.inputs[1].default_value = layer.layer[1]
        inside = nt.nodes.new("ShaderNodeMath")
        inside.operation, inside.location = "MULTIPLY", (200, -500)
        scale = nt.nodes.new("ShaderNodeMath")
        scale.operation, scale.location = "MULTIPLY", (200, -650)
        scale.inputs[1].default_value = density
        nt.links.new(geo.outputs["Position"], xyz.inputs["Vector"])
        nt.links.new(xyz.outputs["Z"], above.inputs[0])
        nt.links.new(xyz.outputs["Z"], below.inputs[0])
        nt.links.new(above.outputs[0], inside.inputs[0])
        nt.links.new(below.outputs[0], inside.inputs[1])
        nt.links.new(inside.outputs[0], scale.inputs[0])
        nt.links.new(scale.outputs[0], vol.inputs["Density"])
    nt.links.new(vol.outputs["Volume"], out.inputs["Volume"])


def _color(node) -> tuple[float, float, float] | None:
    if node is None:
        return None
    return tuple(float(x) for x in node.inputs["Color"].default_value[:3])


def collect_world(world, image_index) -> World | None:
    """The World to write: the one kept from an import, with the colours (and picture) as the
    nodes now have them; for any other world, its background colour (and fog from a volume node).
    image_index: bpy image -> Scene.images index."""
    if world is None:
        return None
    nodes = world.node_tree.nodes if node_trees.in_use(world) else {}
    picture = next((n.image for n in nodes if n.type == "TEX_IMAGE" and n.image is not None), None) if nodes else None
    if KEPT in world:
        d = json.loads(world[KEPT])
        w = World(**{k: v for k, v in d.items() if k not in ("fog", "layer_fog", "distance_cue")})
        w.gradient = [tuple(c) for c in w.gradient]
        for key in ("fog", "layer_fog", "distance_cue"):
            if d.get(key) is not None:
                f = Fog(**d[key])
                f.color = tuple(f.color)
                f.layer = tuple(f.layer) if f.layer is not None else None
                setattr(w, key, f)
        w.ambient = _color(nodes.get(AMBIENT)) or (tuple(w.ambient) if w.ambient else None)
        if w.background == "SOLID":
            w.color = _color(nodes.get(BACKGROUND)) or w.color
        elif w.color is not None:
            w.color = tuple(w.color)
        fog = nodes.get(FOG)
        if fog is not None and w.fog is not None:
            w.fog.color = _color(fog)
        w.image = image_index(picture) if picture is not None else -1
        if w.image < 0 and w.background == "IMAGE":
            w.background = "NONE"
        return w
    w = World(background="SOLID", color=tuple(float(x) for x in world.color))
    out = next((n for n in nodes if n.type == "OUTPUT_WORLD" and n.is_active_output), None) if nodes else None
    if out is not None:
        surf = out.inputs["Surface"].links[0].from_node if out.inputs["Surface"].links else None
        if surf is not None and surf.type == "BACKGROUND" and not surf.inputs["Color"].links:
            w.color = _color(surf)
        vol = out.inputs["Volume"].links[0].from_node if out.inputs["Volume"].links else None
        if vol is not None and "Color" in vol.inputs and "Density" in vol.inputs:
            mist = world.mist_settings
            far = mist.start + mist.depth
            density = float(vol.inputs["Density"].default_value)
            w.fog = Fog(color=_color(vol), near=mist.start, near_density=0.0, far=far,
                        far_density=1.0 - math.exp(-density * far))
    return w
