"""What every format's Import/Export operators share, and how they come from the registry.

A format module writes one class per direction, decorated with `for_format(name)`: the
format's FormatSpec gives the operator's id, label, file extensions and options dataclass, and
each field of that dataclass becomes a property (label, help, choices and bounds from the
field: codec option_rules.option). Menus and FileHandlers come from the same FormatSpecs
(operators/__init__.py). Operators only collect options, call the codec and the bridge, and report.
"""
from __future__ import annotations

import os
from dataclasses import asdict, fields, replace
from pathlib import Path

import bpy
from bpy.props import BoolProperty, CollectionProperty, EnumProperty, FloatProperty, IntProperty, StringProperty
from bpy_extras.io_utils import ExportHelper, ImportHelper, axis_conversion, orientation_helper
from mathutils import Matrix

from .. import bridge, codec

# format name -> {"import": operator class, "export": operator class}, filled by for_format
OPERATORS: dict[str, dict[str, type]] = {}


def option_property(o: codec.ShownOption):
    """The bpy property of one option of a codec or bridge options dataclass."""
    kw = {"name": o.label, "description": o.help}
    bounded = {k: v for k, v in (("min", o.min), ("max", o.max), ("soft_min", o.soft_min),
                                 ("soft_max", o.soft_max)) if v is not None}
    if o.kind == "set":
        return EnumProperty(items=o.items, options={"ENUM_FLAG"}, default=set(o.default), **kw)
    if o.kind == "choice":
        return EnumProperty(items=o.items, default=o.default, **kw)
    if o.kind == "bool":
        return BoolProperty(default=o.default, **kw)
    if o.kind == "int":
        return IntProperty(default=o.default, **bounded, **kw)
    if o.kind == "float":
        return FloatProperty(default=o.default, **bounded, **kw)
    if o.secret:
        return StringProperty(default=o.default, subtype="PASSWORD", options={"SKIP_SAVE"}, **kw)
    return StringProperty(default=o.default, subtype=o.subtype or "NONE", **kw)


def global_scale_property():
    return FloatProperty(name="Scale", default=1.0, min=1e-6, max=1e6, soft_min=0.001, soft_max=1000.0)


def option_properties(cls: type, names=None) -> dict:
    """{name: property} for the fields of an options dataclass (only `names` when given)."""
    return {o.name: option_property(o) for o in codec.shown_options(cls) if names is None or o.name in names}


def _declared(cls: type) -> set[str]:
    return {n for c in cls.__mro__ for n in c.__dict__.get("__annotations__", {})}


def for_format(name: str):
    """Class decorator: the operator of format `name` in the registry, for its direction."""
    def make(cls):
        spec = codec.registered_formats()[name]
        side = "import" if issubclass(cls, ImportOperator) else "export"
        cls.bl_idname = f"{side}_{spec.operator_id}"
        cls.bl_label = f"{side.title()} {spec.label}"
        cls.format_name = name
        cls.limits = spec.limits
        cls.tangents_kept_as = spec.tangent_attribute
        cls.options_class = spec.import_options if side == "import" else spec.export_options
        cls.filename_ext = spec.extensions[0]
        own = cls.__dict__.get("__annotations__", {})
        taken = _declared(cls)
        new = {"filter_glob": StringProperty(default=";".join(f"*{e}" for e in spec.extensions), options={"HIDDEN"})}
        new.update({n: p for n, p in option_properties(cls.options_class).items() if n not in taken})
        cls.__annotations__ = {**own, **new}
        cls = orientation_helper(axis_forward="Y", axis_up="Z")(cls)
        OPERATORS.setdefault(name, {})[side] = cls
        return cls
    return make


def options_from(op, cls, names=None):
    """Fill an options dataclass from the operator's properties of the same names (only `names` when given)."""
    kw = op.as_keywords()
    return cls(**{f.name: (kw[f.name] if not isinstance(kw[f.name], set) else frozenset(kw[f.name]))
                  for f in fields(cls) if f.name in kw and (names is None or f.name in names)})


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
    """Mixin for import operators (see for_format); the properties the bridge's BuildOptions and
    the codec share come from codec.scene_options.ImportContent, through BuildOptions."""

    bl_options = {"REGISTER", "UNDO", "PRESET"}
    format_name = ""
    options_class = None

    files: CollectionProperty(type=bpy.types.OperatorFileListElement, options={"HIDDEN", "SKIP_SAVE"})
    directory: StringProperty(subtype="DIR_PATH", options={"HIDDEN", "SKIP_SAVE"})
    global_scale: global_scale_property()
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
        return replace(options_from(self, bridge.BuildOptions, _labelled(bridge.BuildOptions)), global_matrix=global_matrix(self, to_file=False),
                       collection=Path(path).stem if self.use_new_collection else "", world_name=Path(path).stem)

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
                except codec.WrongPassword as e:
                    self.report({"ERROR"}, f"{Path(path).name}: {e}")
                    return {"CANCELLED"}
                except (codec.CodecError, OSError) as e:
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
        include = ["object_types", "use_keyframes", "use_new_collection"] + (
            ["world"] if getattr(self, "world", None) is not None else [])
        transform = ["global_scale", "axis_forward", "axis_up", "apply_transform"]
        _box(self, "Format", [f.name for f in fields(self.options_class) if f.name not in include + transform])
        _box(self, "Include", include)
        _box(self, "Transform", transform)


class ExportOperator(ExportHelper):
    """Mixin for export operators (see for_format); the scope properties come from the bridge's CollectOptions."""

    bl_options = {"REGISTER", "PRESET"}
    format_name = ""
    options_class = None
    triangulate = True
    tangents = False
    tangents_kept_as = ""
    bake_vertices = False

    global_scale: global_scale_property()

    def collect_options(self) -> bridge.CollectOptions:
        return replace(options_from(self, bridge.CollectOptions, _labelled(bridge.CollectOptions)), triangulate=self.triangulate,
                       global_matrix=global_matrix(self, to_file=True), bake_vertices=self.bake_vertices,
                       tangents=self.tangents, tangents_kept_as=self.tangents_kept_as)

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
        except (codec.CodecError, OSError) as e:
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
        _box(self, "Format", [f.name for f in fields(self.options_class)
                              if f.name not in ("object_types", "apply_modifiers", "use_keyframes")])
        _box(self, "Transform", ["global_scale", "axis_forward", "axis_up"])


def _labelled(cls: type, leave=()) -> list[str]:
    """The fields of a bridge options dataclass that the operators show."""
    return [f.name for f in fields(cls) if "label" in f.metadata and f.name not in leave]


ImportOperator.__annotations__.update(option_properties(bridge.BuildOptions, _labelled(bridge.BuildOptions, {"world"})))
ExportOperator.__annotations__.update(option_properties(bridge.CollectOptions, _labelled(bridge.CollectOptions,
                                                                                           {"use_active_object"})))


def _box(op, title: str, names: list[str]) -> None:
    if not names:
        return
    box = op.layout.box()
    box.label(text=title)
    for name in names:
        box.prop(op, name)


def file_handler(spec: codec.FormatSpec):
    """The format's FileHandler: drag-and-drop import and the Collection Exporter."""
    suffix = spec.operator_id.split(".")[-1]
    return type(f"IO_FH_{suffix}", (bpy.types.FileHandler,), {
        "bl_idname": f"IO_FH_{suffix}",
        "bl_label": spec.label,
        "bl_import_operator": f"import_{spec.operator_id}",
        "bl_export_operator": f"export_{spec.operator_id}",
        "bl_file_extensions": ";".join(spec.extensions),
        "poll_drop": classmethod(lambda cls, context: context.area is not None and context.area.type == "VIEW_3D"),
    })
