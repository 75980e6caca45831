"""The codec core: binary reader/writer, errors, warnings, axes, atomic writes, the registry."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from addon.codec import axes
from addon.codec.binary import Reader, Writer
from addon.codec.errors import FormatError, Warnings
from addon.codec.fileio import write_atomically
from addon.codec.registry import find_format, registered_formats

ROOT = Path(__file__).resolve().parents[2]


# -- binary -------------------------------------------------------------------
def test_reader_scalars_strings_and_arrays():
    w = Writer()
    w.u16(0x4D4D); w.i32(-5); w.f32(1.5); w.cstring("Box01"); w.array(np.arange(4, dtype="<u2"))
    r = Reader(w.getvalue())
    assert (r.u16(), r.i32(), r.f32(), r.cstring()) == (0x4D4D, -5, 1.5, "Box01")
    np.testing.assert_array_equal(r.array("<u2", 4), [0, 1, 2, 3])
    assert r.remaining == 0


def test_lying_count_fails_before_allocating():
    r = Reader(b"\x00" * 16)
    with r.chunk("MAIN"), r.chunk("FACES"):
        with pytest.raises(FormatError) as e:
            r.array("<f4", 2**40)
    assert e.value.offset == 0 and e.value.path == "MAIN/FACES"
    assert "16 left" in str(e.value)


def test_truncated_scalar_names_offset_and_path():
    r = Reader(b"\x01\x02\x03")
    r.u16()
    with r.chunk('OBJECT "Box01"'):
        with pytest.raises(FormatError) as e:
            r.u32()
    assert e.value.offset == 2 and 'OBJECT "Box01"' in str(e.value)


def test_chunk_end_limits_reads_and_must_lie_inside_parent():
    r = Reader(bytes(10))
    with r.chunk("A", end=4):
        r.bytes(4)
        with pytest.raises(FormatError):
            r.u8()
    assert r.remaining == 6
    with pytest.raises(FormatError):
        with r.chunk("B", end=20):
            pass


def test_unterminated_string_is_a_format_error():
    with pytest.raises(FormatError):
        Reader(b"abc").cstring()
    with pytest.raises(FormatError):
        Reader(b"abcdef\0").cstring(max_len=3)


def test_writer_patch():
    w = Writer()
    w.u32(0); w.bytes(b"xyz")
    w.patch(0, "u32", w.tell())
    assert w.getvalue() == b"\x07\x00\x00\x00xyz"


# -- errors and warnings ----------------------------------------------------
def test_format_error_message_has_file_offset_and_path():
    e = FormatError("bad length", 258, "MAIN/EDITOR").in_file("x.3ds")
    assert str(e) == "bad length [x.3ds, offset 258 (0x102), MAIN/EDITOR]"


def test_warnings_fold_repeats():
    w = Warnings()
    for _ in range(3):
        w.warn("index out of range", path="FACES")
    w.warn("other")
    assert w.as_list() == ["index out of range [FACES] (x3)", "other"]


# -- axes ------------------------------------------------------------------------
def test_basis_from_axes_is_identity_for_blender_axes():
    np.testing.assert_array_equal(axes.basis_from_axes("Y", "Z"), np.eye(3))


def test_basis_from_axes_y_up_maps_file_y_to_blender_z():
    b = axes.basis_from_axes("-Z", "Y")   # glTF-like: forward -Z, up +Y
    np.testing.assert_allclose(b @ [0, 1, 0], [0, 0, 1])
    np.testing.assert_allclose(b @ [0, 0, -1], [0, 1, 0])
    assert np.linalg.det(b) == pytest.approx(1.0)


def test_mirror_detection_and_winding_reversal():
    assert axes.mirrors(np.diag([1, -1, 1]))
    assert not axes.mirrors(np.eye(3))
    corners = np.array([0, 1, 2, 3, 4, 5, 6])     # a triangle and a quad
    faces = np.array([0, 3])
    np.testing.assert_array_equal(corners[axes.reverse_winding(corners, faces)], [0, 2, 1, 3, 6, 5, 4])


def test_normals_use_inverse_transpose():
    m = np.diag([2.0, 1.0, 1.0])
    n = axes.apply_normals(m, np.array([[1, 1, 0]], np.float32))
    np.testing.assert_allclose(n, [[1 / np.sqrt(5), 2 / np.sqrt(5), 0]], atol=1e-6)


def test_quaternion_matrix_round_trip_and_product():
    q = axes.axis_angle_to_quat([[0, 0, 1], [1, 0, 0], [0.3, 0.2, 0.9], [0, 1, 0]], [0.5, 3.0, -2.0, np.pi])
    np.testing.assert_allclose(np.abs(axes.matrix_to_quat(axes.quat_to_matrix(q))), np.abs(q), atol=1e-9)
    rz = axes.axis_angle_to_quat([0, 0, 1], np.pi / 2)
    np.testing.assert_allclose(axes.quat_to_matrix(axes.quat_multiply(rz, rz)) @ [1, 0, 0], [-1, 0, 0], atol=1e-9)


def test_compose_decompose_round_trip_with_mirror():
    m = axes.compose([1, 2, 3], axes.axis_angle_to_quat([0, 1, 0], 0.7), [-2, 3, 4])
    t, q, s = axes.decompose(m)
    np.testing.assert_allclose(axes.compose(t, q, s), m, atol=1e-9)
    assert s[0] < 0


# -- atomic writes -------------------------------------------------------------
def test_failed_write_leaves_existing_files_alone(tmp_path):
    a = tmp_path / "a.bin"
    a.write_bytes(b"old")

    with pytest.raises(TypeError):
        write_atomically({a: b"new", tmp_path / "b.bin": None})
    assert a.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]
    write_atomically({a: b"new"})
    assert a.read_bytes() == b"new"


def test_a_file_of_pieces_is_written_as_they_follow_one_another(tmp_path):
    rows = np.arange(6, dtype="<u2").reshape(3, 2)
    write_atomically({tmp_path / "a.bin": [b"head", memoryview(rows).cast("B"), b"", bytearray(b"!")]})
    assert (tmp_path / "a.bin").read_bytes() == b"head\0\0\1\0\2\0\3\0\4\0\5\0!"


# -- registry and the Blender-free guarantee ---------------------------------------
def test_registry_lists_every_format_with_its_functions():
    table = registered_formats()
    assert {"3ds", "unreal", "unigine-mesh", "unigine-anim", "u3d"} <= set(table)
    for spec in table.values():
        assert spec.extensions and all(e.startswith(".") and e == e.lower() for e in spec.extensions)
        for fn in (spec.sniff, spec.read, spec.encode, spec.to_scene, spec.from_scene):
            assert callable(fn)


def test_unknown_extension_is_a_format_error(tmp_path):
    with pytest.raises(FormatError):
        find_format(tmp_path / "model.xyz")


def test_codec_never_imports_blender():
    code = ("import sys\n"
            "for m in ('bpy', 'mathutils', 'bmesh'): sys.modules[m] = None\n"
            "import addon.codec, addon.codec.__main__, pkgutil, importlib\n"
            "import addon.codec.formats as f\n"
            "for m in pkgutil.walk_packages(f.__path__, f.__name__ + '.'): importlib.import_module(m.name)\n"
            "print(len(addon.codec.registered_formats()))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout.strip()) >= 5


def test_cli_info_json_has_the_design_shape():
    sample = ROOT / "test_assets" / "3ds" / "cube_hierarchy.3ds"
    out = subprocess.run([sys.executable, "-m", "addon.codec", "info", str(sample), "--json"],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert set(d) == {"format", "version", "meshes", "materials", "bones", "animations", "cameras",
                      "lights", "warnings"}
    assert d["format"] == "3ds"
    assert set(d["meshes"][0]) == {"name", "vertices", "triangles", "materials", "uv_layers", "shape_keys"}


def test_cli_reports_errors_without_traceback(tmp_path):
    bad = tmp_path / "bad.3ds"
    bad.write_bytes(b"MM\x00")
    out = subprocess.run([sys.executable, "-m", "addon.codec", "info", str(bad)], cwd=ROOT,
                         capture_output=True, text=True)
    assert out.returncode == 1                      # a file failed (2 is for usage errors)
    assert "Traceback" not in out.stderr and "error:" in out.stderr


def test_command_line_options_take_the_type_of_their_field():
    from dataclasses import dataclass
    from addon.codec import options_for

    @dataclass(frozen=True)
    class Opts:
        version: str = "2.0"
        scale: float = 1.0
        kinds: frozenset = frozenset({"MESH"})

    o = options_for(Opts, {"version": 1.0, "scale": 2, "kinds": "MESH, CAMERA", "unknown": 5})
    assert o == Opts("1.0", 2.0, frozenset({"MESH", "CAMERA"}))
    assert isinstance(o.scale, float)


def test_unique_name_keeps_names_that_make_one_file_apart():
    from addon.codec.file_names import unique_name
    taken: set[str] = set()
    assert [unique_name(n, taken) for n in ("Gun_1", "gun_1", "Gun_1", "Other")] == ["Gun_1", "gun_1_2", "Gun_1_3", "Other"]
