"""Blend modes a Principled BSDF alone does not show: hard cutoff, additive, multiply.

Wired into a material build_material has made (which already picks dithered
or blended rendering), so that EEVEE and Cycles in Blender 4.2 to 5.0 draw
them alike:
  CLIP      the base colour texture's alpha through a hard cutoff (alpha > 0.5)
            into the Principled alpha, as glTF's importer does for MASK:
            0/1 alpha, so dithered rendering gives exact holes in EEVEE.
  ADD       Transparent BSDF + the Principled BSDF: what is behind plus the
            lit surface.
  MULTIPLY  a Transparent BSDF tinted by the texture: what is behind times it.
The Principled BSDF and its texture nodes stay, so collect_material reads the
material back the same way.
"""
from __future__ import annotations

CUTOFF = 0.5


def _node(nodes, kind: str):
    return next((n for n in nodes if n.type == kind), None)


def _base_texture(nt, bsdf):
    links = bsdf.inputs["Base Color"].links
    node = links[0].from_node if links else None
    while node is not None and node.type != "TEX_IMAGE":     # through a Mix of two base colour maps
        ins = [s for s in node.inputs if s.is_linked]
        node = ins[0].links[0].from_node if ins else None
    return node


def apply(mat, blend: str, alpha: float) -> None:
    """Rewire `mat` (Principled BSDF into Material Output) for `blend`; OPAQUE and BLEND are left alone."""
    if blend not in ("CLIP", "ADD", "MULTIPLY"):
        return
    nt = mat.node_tree
    bsdf, out = _node(nt.nodes, "BSDF_PRINCIPLED"), _node(nt.nodes, "OUTPUT_MATERIAL")
    if bsdf is None or out is None:
        return
    tex = _base_texture(nt, bsdf)
    x, y = out.location
    if blend == "CLIP":
        if tex is None:
            bsdf.inputs["Alpha"].default_value = 1.0 if alpha > CUTOFF else 0.0
        else:
            cut = nt.nodes.new("ShaderNodeMath")
            cut.operation = "GREATER_THAN"
            cut.label = "Alpha Cutoff"
            cut.location = (bsdf.location.x - 250, bsdf.location.y - 400)
            cut.inputs[1].default_value = CUTOFF
            nt.links.new(tex.outputs["Alpha"], cut.inputs[0])
            nt.links.new(cut.outputs["Value"], bsdf.inputs["Alpha"])
        return
    clear = nt.nodes.new("ShaderNodeBsdfTransparent")
    clear.location = (x - 200, y + 200)
    if blend == "ADD":
        add = nt.nodes.new("ShaderNodeAddShader")
        add.location = (x - 100, y)
        nt.links.new(clear.outputs["BSDF"], add.inputs[0])
        nt.links.new(bsdf.outputs["BSDF"], add.inputs[1])
        nt.links.new(add.outputs["Shader"], out.inputs["Surface"])
    else:
        if tex is not None:
            nt.links.new(tex.outputs["Color"], clear.inputs["Color"])
        else:
            clear.inputs["Color"].default_value = bsdf.inputs["Base Color"].default_value
        nt.links.new(clear.outputs["BSDF"], out.inputs["Surface"])
