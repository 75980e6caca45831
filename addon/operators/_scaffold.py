"""What every format's Import/Export operators share.

A format module subclasses ImportOperator / ExportOperator, declares its own
properties with the same names as its codec options dataclass, and lists its
classes, FileHandler and menu functions in one registration table.
Operators only collect options, call the codec and the bridge, and report.
"""
from __future__ import annotations

import os
from dataclasses import asdict, fields
from pathlib import Path

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, axis_conversion
from mathutils import Matrix

from .. import bridge, codec
from ..codec.errors import CodecError, WrongPassword

OBJECT_TYPES = (
    ("EMPTY", "Empty", ""), ("MESH", "Mesh", ""), ("CAMERA", "Camera", ""),
    ("LIGHT", "Light", ""), ("ARMATURE", "Armature", ""),
)
_ALL_TYPES = {t[0] for t in OBJECT_TYPES}
ANIMATION_SOURCES = (
    ("AUTO", "Automatic", "Every action, each on its own, when an object has several; else the scene range"),
    ("ACTIONS", "Actions", "Every action that fits the exported objects, each played alone"),
    ("NLA", "NLA Strips", "Every NLA strip, its action played alone"),
    ("MARKERS", "Timeline Markers", "Each timeline marker starts an animation that runs to the next"),
    ("SCENE", "Scene Range", "The scene's frame range, played as it is"),
)


def options_from(op, cls):
    """Fill a codec options dataclass from the operator's properties of the same names."""
    kw = op.as_keywords()
    return cls(**{f.name: (kw[f.name] if not isinstance(kw[f.name], set) else frozenset(kw[f.name]))
                  for f in fields(cls) if f.name in kw})


def global_matrix(op, to_file: bool):
    """The user's axes and scale as one 4x4 (Blender <- file on import, file <- Blender on export)."""
    if to_file:
        conv = axis_conversion(to_forward=op.axis_forward, to_up=op.axis_up)
    else:
        conv = axis_conversion(from_forward=op.axis_forward, from_up=op.axis_up)
    m = Matrix.Scale(op.global_scale, 4) @ conv.to_4x4()
    return tuple(tuple(row) for row in m)


def report_warnings(op, warnings: list[str], what: str) -> None:
    if not warnings:
        return
    for w in warnings:
        print(f"{op.bl_idname}: warning: {w}")
    first = warnings[0] if len(warnings) == 1 else f"{warnings[0]} (and {len(warnings) - 1} more, see the console)"
    op.report({"WARNING"}, f"{what}: {first}")


class ImportOperator(ImportHelper):
    """Mixin for import operators; subclasses set `format_name` and `options_class`."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_name = ""
    options_class = None

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0)
    use_keyframes: BoolProperty(name="Animation", default=True, description="Import keyframes and actions")
    object_types: EnumProperty(name="Object Types", items=OBJECT_TYPES, options={"ENUM_FLAG"}, default=_ALL_TYPES)
    apply_transform: BoolProperty(name="Apply Transform", default=False,
                                  description="Bake root object transforms into the mesh data")
    use_new_collection: BoolProperty(name="New Collection", default=False,
                                     description="Put the imported objects in a new collection named after the file")

    def invoke(self, context, event):
        # a dropped file (filepath set) asks for the options in a popup, as Blender's own importers do;
        # otherwise the file browser opens
        return self.invoke_popup(context)

    def paths(self) -> list[str]:
        if self.files and self.directory and any(f.name for f in self.files):
            return [os.path.join(self.directory, f.name) for f in self.files if f.name]
        return [self.filepath]

    def build_options(self, path: str) -> bridge.BuildOptions:
        return bridge.BuildOptions(
            global_matrix=global_matrix(self, to_file=False),
            collection=Path(path).stem if self.use_new_collection else "",
            use_keyframes=self.use_keyframes,
            object_types=frozenset(self.object_types),
            apply_transform=self.apply_transform,
            world=getattr(self, "world", "NEW"),
            world_name=Path(path).stem,
        )

    def build(self, context, scene, options: bridge.BuildOptions) -> bridge.BuildResult:
        """Scene -> Blender. Formats with special placement override this; raising
        CodecError here cancels the import with that message."""
        return bridge.build_scene(scene, options, context)

    def execute(self, context):
        opts = asdict(options_from(self, self.options_class))
        paths = self.paths()
        wm = context.window_manager
        wm.progress_begin(0, len(paths))
        warnings: list[str] = []
        try:
            for n, path in enumerate(paths):
                try:
                    scene = codec.load(path, fmt=self.format_name, **opts)
                    if context.view_layer.objects.active and context.view_layer.objects.active.mode != "OBJECT":
                        bpy.ops.object.mode_set(mode="OBJECT")
                    result = self.build(context, scene, self.build_options(path))
                except WrongPassword as e:
                    self.report({"ERROR"}, f"{Path(path).name}: {e}")
                    return {"CANCELLED"}
                except (CodecError, OSError) as e:
                    self.report({"ERROR"}, f"Cannot import {Path(path).name}: {e}")
                    return {"CANCELLED"}
                for obj in context.view_layer.objects:
                    obj.select_set(False)
                for obj in result.objects:
                    if obj is not None and obj.name in context.view_layer.objects:
                        obj.select_set(True)
                warnings += [f"{Path(path).name}: {w}" for w in scene.warnings]
                wm.progress_update(n + 1)
        finally:
            wm.progress_end()
        report_warnings(self, warnings, "Imported with warnings")
        return {"FINISHED"}

    def draw(self, context):
        self.layout.use_property_split = True
        _box(self, "Format", [f.name for f in fields(self.options_class)])
        _box(self, "Include", ["object_types", "use_keyframes", "use_new_collection"])
        _box(self, "Transform", ["global_scale", "axis_forward", "axis_up", "apply_transform"])


class ExportOperator(ExportHelper):
    """Mixin for export operators; subclasses set `format_name`, `options_class`, `filename_ext`."""

    bl_options = {"REGISTER", "PRESET"}
    format_name = ""
    options_class = None
    triangulate = True
    tangents = False
    tangents_kept_as = ""
    bake_vertices = False

    use_selection: BoolProperty(name="Selected Only", default=False)
    use_visible: BoolProperty(name="Visible Only", default=False)
    use_active_collection: BoolProperty(name="Active Collection", default=False)
    collection: StringProperty(name="Collection", default="", description="Export only this collection "
                               "(set by the Collection Exporter)")
    apply_modifiers: BoolProperty(name="Apply Modifiers", default=True)
    use_keyframes: BoolProperty(name="Animation", default=True)
    animation_source: EnumProperty(name="Animation Source", default="AUTO", items=ANIMATION_SOURCES,
                                   description="What becomes the file's animations")
    global_scale: FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0)
    object_types: EnumProperty(name="Object Types", items=OBJECT_TYPES, options={"ENUM_FLAG"}, default=_ALL_TYPES)

    def collect_options(self) -> bridge.CollectOptions:
        return bridge.CollectOptions(
            use_selection=self.use_selection, use_visible=self.use_visible,
            use_active_collection=self.use_active_collection, collection=self.collection,
            apply_modifiers=self.apply_modifiers, triangulate=self.triangulate,
            global_matrix=global_matrix(self, to_file=True), object_types=frozenset(self.object_types),
            use_keyframes=self.use_keyframes, bake_vertices=self.bake_vertices, tangents=self.tangents,
            tangents_kept_as=self.tangents_kept_as,
            animation_source=self.animation_source,
        )

    def collect(self, context):
        """Blender -> Scene. Formats with special needs override this."""
        return bridge.collect_scene(context, self.collect_options())

    def execute(self, context):
        if context.view_layer.objects.active and context.view_layer.objects.active.mode != "OBJECT":
            bpy.ops.object.mode_set(mode="OBJECT")
        try:
            scene = self.collect(context)
            warnings = scene.warnings + codec.save(scene, self.filepath, fmt=self.format_name,
                                                   **asdict(options_from(self, self.options_class)))
        except (CodecError, OSError, ValueError) as e:
            self.report({"ERROR"}, f"Cannot export {Path(self.filepath).name}: {e}")
            return {"CANCELLED"}
        report_warnings(self, warnings, "Exported with warnings")
        return {"FINISHED"}

    def draw(self, context):
        self.layout.use_property_split = True
        if not self.collection:           # a Collection Exporter has its scope already
            _box(self, "Limit to", ["use_selection", "use_visible", "use_active_collection"])
        _box(self, "Include", ["object_types", "apply_modifiers", "use_keyframes"])
        if self.use_keyframes:
            self.layout.box().prop(self, "animation_source")
        _box(self, "Format", [f.name for f in fields(self.options_class)])
        _box(self, "Transform", ["global_scale", "axis_forward", "axis_up"])


def _box(op, title: str, names: list[str]) -> None:
    if not names:
        return
    box = op.layout.box()
    box.label(text=title)
    for name in names:
        box.prop(op, name)


def file_handler(idname: str, label: str, import_op: str, export_op: str, extensions: str):
    """A FileHandler class: drag-and-drop import and the Collection Exporter."""
    return type(idname, (bpy.types.FileHandler,), {
        "bl_idname": idname,
        "bl_label": label,
        "bl_import_operator": import_op,
        "bl_export_operator": export_op,
        "bl_file_extensions": extensions,
        "poll_drop": classmethod(lambda cls, context: context.area is not None and context.area.type == "VIEW_3D"),
    })


def menu_entry(idname: str, label: str):
    def draw(self, context):
        self.layout.operator(idname, text=label)
    return draw
