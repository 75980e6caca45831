"""glTF 2.0: `.gltf` (JSON with its .bin and images beside it) and `.glb` (one file).

In-memory entry points (the same in every format package; the package's attributes
read, write, to_scene and from_scene are these modules): `read.parse(bytes, warnings)
-> Document`, `write.encode_bytes(document) -> bytes` (`write.encode(document, target)`
for every file), `to_scene.to_scene(document, ImportOptions(), warnings)` and
`from_scene.from_scene(scene, ExportOptions(), warnings)`.

Two registry entries share them, so that `--to gltf` and `--to glb` each name the file
written. Blender has its own glTF add-on: no operators, no File menu entries.
"""
from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import unquote

from ...registry import FormatSpec
from . import from_scene, read, to_scene, write
from .options import ExportOptions, ImportOptions


def _sniff_glb(head: bytes, name: str) -> bool:
    return head[:4] == b"glTF"


def _sniff_gltf(head: bytes, name: str) -> bool:
    return head.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{"


def _sources(path: Path, options=None) -> list[Path]:
    """The file and the files beside a .gltf that its URIs name (what `lgf check` compares)."""
    p = Path(path)
    try:
        with open(p, "rb") as fh:
            if fh.read(4) == b"glTF":
                return [p]
        tree = json.loads(p.read_bytes())
    except (OSError, ValueError):
        return [p]
    found = [p.parent / unquote(u) for u in read.external_uris(tree)] if isinstance(tree, dict) else []
    return [p] + [f for f in found if f.is_file()]


def _spec(name: str, label: str, ext: str, sniff, written) -> FormatSpec:
    return FormatSpec(
        name=name, label=label, extensions=(ext,), sniff=sniff, read=read.read_path, encode=write.encode,
        to_scene=to_scene.to_scene, from_scene=from_scene.from_scene,
        import_options=ImportOptions, export_options=ExportOptions, version=lambda d: "2.0", sources=_sources,
        written=written, own_smoothing=True)


FORMAT = [
    _spec("gltf", "glTF 2.0 (JSON + files)", ".gltf", _sniff_gltf, lambda p: [p, p.with_suffix(".bin")]),
    _spec("glb", "glTF 2.0 Binary", ".glb", _sniff_glb, lambda p: [p]),
]
