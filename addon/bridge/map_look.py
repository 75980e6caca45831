"""What a texture slot does to its picture before it reaches the BSDF, as nodes after the Image Texture:

  Negative   an Invert node: the picture's colours inverted.
  Tint       two colours: the picture's brightness (RGB to BW) mixes from the first to the second;
             three colours ("Tint R/G/B"): its red, green and blue scale the three colours, summed.
  Decal      a Mix over the material's base colour by the picture's alpha: the base colour shows
             through the picture's alpha and, when the Image Texture clips (alpha 0 outside the
             picture), around it; a tiled decal (REPEAT) shows it only through the alpha.
  Amount     a Mix from the material's base colour to the map by the map's amount (below 100%).

in that order (3D Studio's). read() finds them again by their labels (any Invert node counts as the
negative), so that an edit (a changed colour or factor, a deleted or added node) is what export writes.
"""
from __future__ import annotations

from ..codec.scene import TextureSlot

NEGATIVE, TINT, DECAL, AMOUNT = "Negative", "Tint", "Decal", "Amount"
TINT_RGB = ("Tint R", "Tint G", "Tint B")


def _mix(nt, label: str, x: float, y: float):
    mix = nt.nodes.new("ShaderNodeMix")
    mix.data_type = "RGBA"
    mix.label = label
    mix.location = (x, y)
    return mix


def amount_mix(nt, amount: float, x: float, y: float):
    """The Mix that lays a map over what lies below it (its A) by the map's amount."""
    mix = _mix(nt, AMOUNT, x, y)
    mix.inputs["Factor"].default_value = amount
    return mix


def build(nt, slot: TextureSlot, tex, base_color, decal: bool, amount: bool = False):
    """Nodes after `tex` for the slot's negative, tint, (when `decal`) decal and (when `amount` and the
    slot's strength is below 1) amount over the base colour; -> the colour socket."""
    out = tex.outputs["Color"]
    x, y = tex.location.x + 300, tex.location.y
    if slot.invert:
        inv = nt.nodes.new("ShaderNodeInvert")
        inv.label, inv.location = NEGATIVE, (x, y)
        nt.links.new(out, inv.inputs["Color"])
        out, x = inv.outputs["Color"], x + 200
    if len(slot.tint) == 2:
        bw = nt.nodes.new("ShaderNodeRGBToBW")
        bw.location = (x, y - 150)
        nt.links.new(out, bw.inputs["Color"])
        mix = _mix(nt, TINT, x + 150, y)
        nt.links.new(bw.outputs["Val"], mix.inputs["Factor"])
        mix.inputs["A"].default_value = (*slot.tint[0][:3], 1.0)
        mix.inputs["B"].default_value = (*slot.tint[1][:3], 1.0)
        out, x = mix.outputs["Result"], x + 350
    elif len(slot.tint) == 3:
        sep = nt.nodes.new("ShaderNodeSeparateColor")
        sep.location = (x, y - 150)
        nt.links.new(out, sep.inputs["Color"])
        total = None
        for k, (label, channel) in enumerate(zip(TINT_RGB, ("Red", "Green", "Blue"))):
            scale = nt.nodes.new("ShaderNodeVectorMath")
            scale.operation, scale.label, scale.location = "SCALE", label, (x + 200, y - 150 * k)
            scale.inputs[0].default_value = slot.tint[k][:3]
            nt.links.new(sep.outputs[channel], scale.inputs["Scale"])
            if total is None:
                total = scale.outputs["Vector"]
                continue
            add = nt.nodes.new("ShaderNodeVectorMath")
            add.operation, add.location = "ADD", (x + 400, y - 150 * k)
            add.label = TINT if k == 2 else ""
            nt.links.new(total, add.inputs[0])
            nt.links.new(scale.outputs["Vector"], add.inputs[1])
            total = add.outputs["Vector"]
        out, x = total, x + 600
    if decal:
        mix = _mix(nt, DECAL, x, y)
        nt.links.new(tex.outputs["Alpha"], mix.inputs["Factor"])
        mix.inputs["A"].default_value = (*base_color[:3], 1.0)
        nt.links.new(out, mix.inputs["B"])
        out, x = mix.outputs["Result"], x + 200
    if amount and slot.strength < 1.0:
        mix = amount_mix(nt, slot.strength, x, y)
        mix.inputs["A"].default_value = (*base_color[:3], 1.0)
        nt.links.new(out, mix.inputs["B"])
        out = mix.outputs["Result"]
    return out


def after(tex, limit: int = 12) -> list:
    """The nodes fed by `tex`, directly or through others (at most `limit` steps on)."""
    seen, todo = [], [tex]
    for _ in range(limit):
        nxt = []
        for node in todo:
            for sock in node.outputs:
                for link in sock.links:
                    if link.to_node not in seen and link.to_node.type not in ("BSDF_PRINCIPLED", "OUTPUT_MATERIAL"):
                        seen.append(link.to_node)
                        nxt.append(link.to_node)
        if not nxt:
            break
        todo = nxt
    return seen


def read_amount(tex) -> float | None:
    """The factor of the first Amount Mix that `tex` reaches through its B (the map's side), or None:
    a Mix that `tex` reaches through A is another map's amount over this one."""
    mix = mix_on_map_side(tex, lambda label: "B" if label == AMOUNT else None)
    return None if mix is None else float(mix.inputs["Factor"].default_value)


def mix_on_map_side(tex, map_socket, limit: int = 12):
    """The first Mix after `tex` for which map_socket(its label) names an input (the map's side), when
    `tex` reaches it through that input; None when `tex` reaches the first such Mix on another side
    (another map's mix over this one) or none at all."""
    todo = [tex]
    for _ in range(limit):
        nxt = []
        for node in todo:
            for sock in node.outputs:
                for link in sock.links:
                    to = link.to_node
                    side = map_socket(to.label) if to.type == "MIX" else None
                    if side is not None:
                        if link.to_socket.name == side:
                            return to
                    elif to.type not in ("BSDF_PRINCIPLED", "OUTPUT_MATERIAL"):
                        nxt.append(to)
        if not nxt:
            break
        todo = nxt
    return None


def read(tex) -> tuple[bool, bool, tuple]:
    """(decal, negative, tint colours) from the nodes after `tex` that build() made."""
    later = after(tex)
    nodes = {n.label: n for n in later if n.label}
    invert = any(n.type == "INVERT" for n in later)          # ours, or one the user put there
    decal = DECAL in nodes and nodes[DECAL].type == "MIX"
    tint: tuple = ()
    if all(label in nodes for label in TINT_RGB):
        tint = tuple(tuple(float(v) for v in nodes[label].inputs[0].default_value[:3]) for label in TINT_RGB)
    elif TINT in nodes and nodes[TINT].type == "MIX":
        tint = tuple(tuple(float(v) for v in nodes[TINT].inputs[s].default_value[:3]) for s in ("A", "B"))
    return decal, invert, tint
