"""Every format's operators: registered, in the menus, with a FileHandler, and
with properties in step with their codec options dataclasses."""
import dataclasses
import sys

import pytest

import bpy

EXPECTED = {
    "import_scene.studio3ds", "export_scene.studio3ds",
    "import_scene.unreal_vertex_mesh", "export_scene.unreal_vertex_mesh",
    "import_scene.unigine_mesh", "export_scene.unigine_mesh",
    "import_anim.unigine_anim", "export_anim.unigine_anim",
    "import_scene.ultimate3d", "export_scene.ultimate3d",
}


def _operator_classes(lgf):
    return [cls for cls in lgf.operators.classes() if issubclass(cls, bpy.types.Operator)]


def _file_handlers(lgf):
    return [cls for cls in lgf.operators.classes() if issubclass(cls, bpy.types.FileHandler)]


def _op_exists(idname):
    mod, name = idname.split(".")
    return hasattr(getattr(bpy.ops, mod), name) and getattr(getattr(bpy.ops, mod), name).get_rna_type() is not None


@pytest.mark.parametrize("idname", sorted(EXPECTED))
def test_public_operator_is_registered(lgf, idname):
    assert _op_exists(idname), f"{idname} is not registered"


class _Recorder:
    def __init__(self):
        self.items = []

    def operator(self, idname, text="", **kw):
        self.items.append((idname, text))


def _menu_entries(menu):
    """(operator id, text) of the extension's entries in a menu."""
    rec = _Recorder()
    fake = type("Menu", (), {"layout": rec})()
    for fn in menu._dyn_ui_initialize():
        if getattr(fn, "__module__", "").startswith("bl_ext."):
            fn(fake, bpy.context)
    return rec.items


def _menu_ops(menu):
    return {idname for idname, _ in _menu_entries(menu)}


def test_every_operator_is_in_the_file_menus(lgf):
    imports = _menu_ops(bpy.types.TOPBAR_MT_file_import)
    exports = _menu_ops(bpy.types.TOPBAR_MT_file_export)
    assert {i for i in EXPECTED if i.startswith("import_")} <= imports
    assert {i for i in EXPECTED if i.startswith("export_")} <= exports


def test_file_handlers_cover_every_extension(lgf):
    handlers = _file_handlers(lgf)
    exts = {e for h in handlers for e in h.bl_file_extensions.split(";")}
    for spec in lgf.codec.registered_formats().values():
        if spec.operator_id:            # glTF has none: Blender's own glTF add-on opens those files
            assert set(spec.extensions) & exts, f"no FileHandler for {spec.name}"
    assert not {".gltf", ".glb"} & exts
    for h in handlers:
        assert _op_exists(h.bl_import_operator) and _op_exists(h.bl_export_operator)


def test_operator_properties_match_options_dataclasses(lgf):
    from importlib import import_module
    rules = import_module(f"{lgf.__name__}.codec.option_rules")
    choices, bounds = rules.choices, rules.bounds
    classes = [c for c in _operator_classes(lgf) if getattr(c, "options_class", None)]
    assert len(classes) >= 2
    for cls in classes:
        mod, name = cls.bl_idname.split(".")
        props = getattr(getattr(bpy.ops, mod), name).get_rna_type().properties
        allowed = choices(cls.options_class)
        for f in dataclasses.fields(cls.options_class):
            assert f.name in props, f"{cls.bl_idname} lacks property {f.name!r} of {cls.options_class.__name__}"
            prop = props[f.name]
            if f.name in allowed:       # the dataclass's Literal is the one list of choices
                assert tuple(i.identifier for i in prop.enum_items) == allowed[f.name], f"{cls.bl_idname}.{f.name}"
            lo, hi = bounds(f)
            if lo is not None:
                assert prop.hard_min == pytest.approx(lo), f"{cls.bl_idname}.{f.name} min"
            if hi is not None:
                assert prop.hard_max == pytest.approx(hi), f"{cls.bl_idname}.{f.name} max"
            default = prop.default_flag if getattr(prop, "is_enum_flag", False) else getattr(prop, "default", None)
            if getattr(prop, "is_array", False) or default is None:
                continue
            want = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            if isinstance(want, float):
                assert default == pytest.approx(want), f"{cls.bl_idname}.{f.name} default"
            else:
                assert default == want, f"{cls.bl_idname}.{f.name}: property default {default!r} != {want!r}"


def test_operators_support_presets(lgf):
    for cls in _operator_classes(lgf):
        assert "PRESET" in cls.bl_options, cls.bl_idname


def test_cli_command_converts(lgf, tmp_path):

    from tests.conftest import ASSETS
    # The command is registered in Blender; run the same entry point it calls.
    from importlib import import_module
    cli = import_module(f"{lgf.__name__}.operators._cli")
    assert cli._handle is not None, "register_cli_command was not called"
    src = ASSETS / "3ds" / "cube_hierarchy.3ds"
    out = tmp_path / "out.3ds"
    assert cli._run(["convert", str(src), str(out)]) == 0
    assert out.stat().st_size > 0


@pytest.mark.parametrize("handler,name", [("IO_FH_studio3ds", "out.3ds"), ("IO_FH_unreal_vertex_mesh", "out_d.3d"),
                                          ("IO_FH_unigine_mesh", "out.mesh"), ("IO_FH_ultimate3d", "out.u3d")])
def test_collection_exporter_writes_only_its_collection(clean, lgf, tmp_path, handler, name):
    from tests.bench_data import grid_mesh
    from addon.codec.scene import Node, Scene
    s = Scene()
    for k, obj_name in enumerate(["Inside", "Outside"]):
        s.meshes.append(grid_mesh(obj_name, 50 * (k + 1)))
        s.add_node(Node(obj_name, "MESH", k))
    lgf.bridge.build_scene(s, lgf.bridge.BuildOptions(), clean)
    coll = bpy.data.collections.new("Export")
    clean.scene.collection.children.link(coll)
    coll.objects.link(bpy.data.objects["Inside"])
    clean.scene.collection.objects.unlink(bpy.data.objects["Inside"])
    with clean.temp_override(collection=coll):
        assert bpy.ops.collection.exporter_add(name=handler) == {"FINISHED"}
        coll.exporters[0].export_properties.filepath = str(tmp_path / name)
        assert bpy.ops.collection.export_all() == {"FINISHED"}
    back = lgf.codec.load(tmp_path / name)
    inside = len(bpy.data.objects["Inside"].data.polygons)
    assert sum(len(m.corners) // 3 for m in back.meshes) == inside


def test_failed_export_keeps_the_existing_file(clean, lgf, tmp_path):
    from tests.bench_data import grid_mesh
    from addon.codec.scene import Node, Scene
    s = Scene(meshes=[grid_mesh("Big", 40_000)])       # over the 16383-vertex limit of Unreal meshes
    s.add_node(Node("Big", "MESH", 0))
    lgf.bridge.build_scene(s, lgf.bridge.BuildOptions(), clean)
    target = tmp_path / "big_d.3d"
    target.write_bytes(b"previous contents")
    with pytest.raises(RuntimeError, match="16383"):
        bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(target))
    assert target.read_bytes() == b"previous contents"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big_d.3d"]


def test_bundled_wheel_is_installed_with_the_extension(lgf):
    from pathlib import Path
    python = "python%d.%d" % sys.version_info[:2]      # Blender's own: 3.11 up to 5.0, 3.13 from 5.1
    site = Path(bpy.utils.user_resource("EXTENSIONS")) / ".local" / "lib" / python / "site-packages"
    assert (site / "Crypto" / "Cipher").is_dir(), f"pycryptodome from the zip's wheels/ is not in {site}"


DROPPED = {
    "import_scene.studio3ds": "3ds/jeep1.3ds",
    "import_scene.unreal_vertex_mesh": "unreal/box_d.3d",
    "import_scene.unigine_mesh": "unigine/grid_static.mesh",
    "import_anim.unigine_anim": "unigine/tube_bend.anim",      # onto the armature of tube_skinned.mesh
    "import_scene.ultimate3d": "ultimate3d/cube_v2.u3d",
}


@pytest.mark.parametrize("idname", sorted(DROPPED))
def test_a_dropped_file_opens_the_options_popup(clean, lgf, idname):
    """A drop calls invoke with filepath set: like Blender's own importers, the operator asks for
    its options in a popup (ImportHelper.invoke_popup) instead of opening the file browser.
    Background Blender never calls invoke, so invoke is called here on a stand-in operator that
    records the popup; then the drop itself, which imports the file."""
    from types import SimpleNamespace
    from tests.codec.fixtures_3ds import ASSETS
    cls = next(c for c in _operator_classes(lgf) if c.bl_idname == idname)
    asked = []
    stand_in = SimpleNamespace(invoke_popup=lambda context, *a, **k: asked.append(context) or {"RUNNING_MODAL"})
    assert cls.invoke(stand_in, bpy.context, None) == {"RUNNING_MODAL"} and asked == [bpy.context]
    if idname == "import_anim.unigine_anim":
        bpy.ops.import_scene.unigine_mesh(filepath=str(ASSETS.parent / "unigine/tube_skinned.mesh"))
    before = len(bpy.data.objects) + len(bpy.data.actions)
    mod, name = idname.split(".")
    op = getattr(getattr(bpy.ops, mod), name)
    assert op("INVOKE_DEFAULT", filepath=str(ASSETS.parent / DROPPED[idname])) == {"FINISHED"}
    assert len(bpy.data.objects) + len(bpy.data.actions) > before


def test_every_file_handler_import_is_in_the_drop_test(lgf):
    handlers = _file_handlers(lgf)
    assert {h.bl_import_operator for h in handlers} <= set(DROPPED)


def test_cli_command_takes_lgf_arguments_folders_and_jobs(lgf, tmp_path, capsys):
    from importlib import import_module
    from tests.codec.cli_tree import make_tree
    cli = import_module(f"{lgf.__name__}.operators._cli")
    with pytest.raises(SystemExit):
        cli._run(["--help"])
    assert capsys.readouterr().out.startswith("usage: blender -c legacy_game_formats ")
    src = make_tree(tmp_path / "src")
    # -j 2: worker processes import the installed extension as a plain package
    assert cli._run(["convert", str(src), "--to", "u3d", "-d", str(tmp_path / "out"), "-j", "2",
                     "--report", str(tmp_path / "r.json")]) == 1                 # one bad file in the tree
    got = sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*.u3d"))
    assert got == ["props/cube_v2.u3d", "props/grid_static.u3d", "ships/CUBE.u3d", "ships/deep/box.u3d"]
    assert cli._run(["convert", "a.3ds", "--to", "nope", "-d", "x"]) == 2


def test_menus_and_file_handlers_come_from_the_format_specs(lgf, monkeypatch):
    """A FormatSpec's label and extensions show up in the registered menus and FileHandlers."""
    from dataclasses import replace
    from importlib import import_module
    registry = import_module(f"{lgf.__name__}.codec.registry")
    specs = lgf.codec.registered_formats()
    imports = _menu_entries(bpy.types.TOPBAR_MT_file_import)
    assert ("import_scene.unreal_vertex_mesh", "Unreal Engine 1 Vertex Mesh (_d.3d, _a.3d, .uc)") in imports
    assert ("import_scene.studio3ds", "3D Studio (.3ds)") in imports
    assert sorted(imports) == sorted((f"import_{s.operator_id}", s.menu_label) for s in specs.values() if s.operator_id)
    assert not [text for _, text in imports + _menu_entries(bpy.types.TOPBAR_MT_file_export) if "glTF" in text]
    table = dict(specs)
    table["3ds"] = replace(table["3ds"], label="Changed Studio", extensions=(".3ds", ".prj"))
    monkeypatch.setattr(registry, "_scan", lambda: table)
    assert ("import_scene.studio3ds", "Changed Studio (.3ds, .prj)") in _menu_entries(bpy.types.TOPBAR_MT_file_import)
    assert ("export_scene.studio3ds", "Changed Studio (.3ds, .prj)") in _menu_entries(bpy.types.TOPBAR_MT_file_export)
    handler = next(h for h in _file_handlers(lgf) if h.bl_idname == "IO_FH_studio3ds")
    assert (handler.bl_label, handler.bl_file_extensions) == ("Changed Studio", ".3ds;.prj")


def test_a_spec_without_its_operators_is_refused(lgf, monkeypatch):
    from dataclasses import replace
    from importlib import import_module
    registry = import_module(f"{lgf.__name__}.codec.registry")
    table = dict(lgf.codec.registered_formats())
    table["extra"] = replace(table["3ds"], name="extra", operator_id="scene.extra")
    monkeypatch.setattr(registry, "_scan", lambda: table)
    with pytest.raises(TypeError, match="'extra'.*no export or import operator"):
        lgf.operators.classes()


def test_operator_labels_and_help_are_the_option_fields(lgf):
    """Each property of a codec option is the field's declaration: label, help, choice labels."""
    checked = 0
    for cls in _operator_classes(lgf):
        mod, name = cls.bl_idname.split(".")
        props = getattr(getattr(bpy.ops, mod), name).get_rna_type().properties
        for o in lgf.codec.shown_options(cls.options_class):
            prop = props[o.name]
            assert (prop.name, prop.description) == (o.label, o.help), f"{cls.bl_idname}.{o.name}"
            if o.items:
                assert [(i.identifier, i.name, i.description) for i in prop.enum_items] == list(o.items)
            checked += 1
        assert cls.bl_label.split(" ", 1)[1] == lgf.codec.registered_formats()[cls.format_name].label
    assert checked > 30


def test_a_mesh_whose_vertex_count_changes_is_refused_with_a_message(clean, tmp_path):
    """The bridge's refusals are CodecErrors: the operator reports them (no traceback) and writes nothing."""
    bpy.ops.mesh.primitive_cube_add()
    ob = clean.object
    arr = ob.modifiers.new("Array", "ARRAY")
    arr.count = 1
    arr.keyframe_insert("count", frame=1)
    arr.count = 3
    arr.keyframe_insert("count", frame=3)
    clean.scene.frame_start, clean.scene.frame_end = 1, 3
    with pytest.raises(RuntimeError, match="Cannot export grow_d.3d: .*vertex count changes during the animation"):
        bpy.ops.export_scene.unreal_vertex_mesh(filepath=str(tmp_path / "grow_d.3d"))
    assert list(tmp_path.iterdir()) == []


def test_an_nla_strip_in_tweak_mode_is_refused_with_a_message(clean, tmp_path):
    bpy.ops.mesh.primitive_cube_add()
    ob = clean.object
    ob.keyframe_insert("location", frame=1)
    ob.location.x = 2
    ob.keyframe_insert("location", frame=5)
    action = ob.animation_data.action
    ob.animation_data.action = None
    track = ob.animation_data.nla_tracks.new()
    strip = track.strips.new("Move", 1, action)
    strip.select = True
    ob.animation_data.use_tweak_mode = True
    assert ob.animation_data.use_tweak_mode
    with pytest.raises(RuntimeError, match="Cannot export move.3ds: .*tweak mode"):
        bpy.ops.export_scene.studio3ds(filepath=str(tmp_path / "move.3ds"), animation_source="NLA")
    assert list(tmp_path.iterdir()) == []
