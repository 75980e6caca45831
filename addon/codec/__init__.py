"""The Blender-free codec: files <-> neutral Scene, for every format.

    scene = load("model.3ds")
    save(scene, "model.mesh")
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Any

from . import animation, finite, losses
from .errors import CodecError, FormatError, UnsupportedFeature, Warnings, WrongPassword
from .fileio import write_atomically
from .option_rules import ShownOption, shown_options
from .registry import FormatSpec, Limits, find_format, registered_formats
from .scene import Scene
from .meshops import with_normals

__all__ = ["load", "save", "encode", "check", "info", "read_model", "options_for", "rebase",
           "CodecError", "FormatError", "UnsupportedFeature", "WrongPassword", "Scene", "registered_formats",
           "FormatSpec", "Limits", "ShownOption", "shown_options"]


def options_for(cls: type, options: dict[str, Any]):
    """Build an options dataclass, ignoring keys it does not have (shared CLI flags), and
    coercing command-line values to the type of each field's default ("1.0" stays a str)."""
    out = {}
    for f in fields(cls):
        if f.name not in options:
            continue
        value, default = options[f.name], (f.default if f.default is not MISSING else f.default_factory())
        if isinstance(default, (frozenset, set)) and isinstance(value, str):
            value = frozenset(v.strip() for v in value.split(",") if v.strip())
        elif isinstance(default, str) and not isinstance(value, str):
            value = str(value)
        elif isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        out[f.name] = value
    return cls(**out)


def read_model(path: str | Path, fmt: str = "", **options) -> tuple[FormatSpec, Any, Warnings]:
    p = Path(path)
    spec = find_format(p, fmt)
    warnings = Warnings()
    try:
        model = spec.read(p, options_for(spec.import_options, options), warnings)
    except FormatError as e:
        raise e.in_file(e.file or str(p))
    return spec, model, warnings


def load(path: str | Path, fmt: str = "", *, with_companions: bool = False, **options) -> Scene:
    """Read any supported file into a Scene. Warnings are in `scene.warnings`. with_companions: the
    files that belong to it without being read by it (UNIGINE .anim beside a .mesh) add their part."""
    spec, model, warnings = read_model(path, fmt, **options)
    scene = spec.to_scene(model, options_for(spec.import_options, options), warnings)
    if with_companions and spec.join_companions is not None:
        spec.join_companions(scene, Path(path), warnings)
    scene = finite.clean(scene, warnings)
    scene.source_format = scene.source_format or spec.name
    scene.source_version = scene.source_version or str(spec.version(model))
    scene.warnings = warnings.as_list()
    return scene


def rebase(scene: Scene, rest: dict) -> list[str]:
    """Re-express the bone keys of a loaded animation against another armature's rest pose
    (parent-local 4x4 matrices by bone name), for formats whose keys depend on their own rest;
    returns the warnings (bones that are missing on either side)."""
    spec = find_format("", scene.source_format)
    if spec.rebase is None:
        raise UnsupportedFeature(f"{spec.label} animations cannot be moved onto another armature")
    warnings = Warnings()
    spec.rebase(scene, rest, warnings)
    return warnings.as_list()


def encode(scene: Scene, path: str | Path, fmt: str = "", **options) -> tuple[dict[Path, bytes | list], list[str]]:
    """The bytes of every file that saving `scene` as `path` writes (or the list of pieces a large one is made
    of, as write_atomically takes them), and the warnings; nothing is written."""
    p = Path(path)
    spec = find_format(p, fmt, for_write=True)
    warnings = Warnings()
    losses.report(scene, spec.name, warnings)
    scene = finite.clean(scene, warnings)     # a Scene from Blender or a script: NaN meets no writer
    scene = animation.cut_to_keys(scene, warnings)
    if not spec.own_smoothing:
        scene = with_normals(scene)      # a .3ds read for Blender's own smoothing has groups, no normals
    model = spec.from_scene(scene, options_for(spec.export_options, options), warnings)
    return spec.encode(model, p), warnings.as_list()


def save(scene: Scene, path: str | Path, fmt: str = "", **options) -> list[str]:
    """Write a Scene; returns the warnings. The write is atomic."""
    files, warnings = encode(scene, path, fmt, **options)
    write_atomically(files)
    return warnings


@dataclass
class CheckResult:
    file: str
    ok: bool
    message: str


def check(path: str | Path, fmt: str = "", **options) -> list[CheckResult]:
    """Parse, re-encode, and compare with the bytes on disk, file by file."""
    p = Path(path)
    try:
        spec, model, warnings = read_model(p, fmt, **options)
        encoded = spec.encode(model, p)
    except CodecError as e:
        return [CheckResult(str(p), False, f"{type(e).__name__}: {e}")]
    results = []
    for src in spec.sources(p, options_for(spec.import_options, options)):
        if src not in encoded:
            results.append(CheckResult(str(src), False, "not rewritten"))
            continue
        old, new = src.read_bytes(), encoded[src]
        if old == new:
            # identical bytes from a file that lies (a truncated frame list) still say so
            said = f"; warning: {'; '.join(warnings.as_list())}" if warnings else ""
            results.append(CheckResult(str(src), True, f"{len(old)} bytes identical{said}"))
        else:
            at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
            results.append(CheckResult(str(src), False,
                                       f"differs at byte {at} (0x{at:X}); {len(old)} bytes read, {len(new)} written"))
    return results


def info(path: str | Path, fmt: str = "", **options) -> dict:
    """The file's structure and counts, in the shape DESIGN.md fixes."""
    scene = load(path, fmt, **options)
    meshes = []
    for m in scene.meshes:
        sizes = m.face_sizes
        meshes.append({
            "name": m.name,
            "vertices": int(len(m.positions)),
            "triangles": int((sizes - 2).clip(min=0).sum()),
            "materials": len(m.materials),
            "uv_layers": len(m.uv_layers),
            "shape_keys": len(m.shape_keys),
        })
    return {
        "format": scene.source_format,
        "version": scene.source_version,
        "meshes": meshes,
        "materials": [m.name for m in scene.materials],
        "bones": sum(len(a.bones) for a in scene.armatures),
        "animations": [{"name": a.name, "frame_start": a.frame_start, "frame_end": a.frame_end}
                       for a in scene.animations],
        "cameras": len(scene.cameras),
        "lights": len(scene.lights),
        "warnings": list(scene.warnings),
    }
