"""The Normals import option, for formats that store a vertex per (point, normal, UV)."""
from bpy.props import EnumProperty

ITEMS = (
    ("SHARP_EDGES", "Sharp Edges (Native)",
     "Weld the vertices at one point; the file's smoothing becomes sharp edges (and flat faces), which "
     "Blender shades itself and keeps up to date as you edit"),
    ("EXACT", "Exact (Custom Normals)",
     "Weld the vertices at one point; the file's normals as custom split normals"),
    ("KEEP", "Keep File Vertices",
     "The vertices as the file stores them (cut open at UV seams), with custom split normals"),
)


def normals_property(smoothing_groups: bool = False):
    """The Normals option; smoothing_groups names 3DS's own smoothing in the first item."""
    items = ((("SHARP_EDGES", "Smoothing Groups (Sharp Edges)",
               "Weld the vertices at one point; smoothing groups become sharp edges and flat faces, which "
               "Blender shades itself and keeps up to date as you edit (the groups are kept for export)"),)
             + ITEMS[1:]) if smoothing_groups else ITEMS
    return EnumProperty(name="Normals", default="SHARP_EDGES", items=items)
