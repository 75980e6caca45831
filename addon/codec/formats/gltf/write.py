"""Document -> bytes: a .glb, or a .gltf with its .bin and images beside it.

A Document read from a file (json_text set) is written back as it was read: the JSON text,
buffer 0 as the .glb's BIN chunk followed by `bin_padding` (the chunk's own bytes past the buffer),
and the files its URIs named. A Document that from_scene built (accessors_out.Built: json_text empty,
buffer 0 as its pieces) is serialised here, for the target's kind: buffer 0 has no URI until the
target says where it goes, and its images are files (resources) that a .glb embeds as buffer views.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path
from urllib.parse import unquote

from .accessors_out import Built
from .model import CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, GLB_VERSION, Document


def _pad(data: bytes, fill: bytes) -> bytes:
    return data + fill * (-len(data) % 4)


def glb_pieces(json_text: bytes, bin_chunk: list | None) -> list:
    """A .glb as the pieces it is made of: the JSON chunk padded with spaces, the BIN chunk (when any: the
    pieces it is joined from, whose sizes add up to a multiple of 4) after it."""
    js = _pad(json_text, b" ")
    n_bin = sum(len(p) for p in bin_chunk) if bin_chunk is not None else 0
    size = 12 + 8 + len(js) + (8 + n_bin if bin_chunk is not None else 0)
    parts = [struct.pack("<4sII", GLB_MAGIC, GLB_VERSION, size), struct.pack("<II", len(js), CHUNK_JSON), js]
    if bin_chunk is not None:
        parts += [struct.pack("<II", n_bin, CHUNK_BIN), *bin_chunk]
    return parts


def encode_bytes(doc: Document) -> bytes:
    """The main file's bytes: the .glb, or the .gltf's JSON."""
    if doc.json_text:
        if not doc.binary:
            return doc.json_text
        return b"".join(glb_pieces(doc.json_text, [doc.buffers[0], doc.bin_padding] if doc.buffers else None))
    main = _serialise(doc, doc.binary, doc.name or "model")[0]
    return main if isinstance(main, bytes) else b"".join(main)


def encode(doc: Document, target: Path) -> dict[Path, bytes | list]:
    """Every file a write to `target` makes, by path: its bytes, or for a written document's .glb and .bin the
    pieces they are made of (fileio.write_atomically writes them one after another: morph targets can make
    hundreds of MB, never joined in memory)."""
    target = Path(target)
    if doc.json_text:
        return {target: encode_bytes(doc), **{target.parent / unquote(uri): data for uri, data in doc.resources.items()}}
    main, beside = _serialise(doc, target.suffix.lower() == ".glb", target.stem)
    return {target: main, **{target.parent / uri: data for uri, data in beside.items()}}


def _dumps(tree: dict) -> bytes:
    # "replace": a name kept as undecodable bytes (surrogates) is written with "?" (losses.report warns)
    return json.dumps(tree, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8", "replace")


def _serialise(doc: Document, binary: bool, stem: str) -> tuple[bytes | list, dict]:
    tree = dict(doc.json)            # a copy of what is changed here: encoding twice gives the same bytes
    for key in ("bufferViews", "buffers", "images"):
        if key in tree:
            tree[key] = [dict(x) for x in tree[key]]
    pieces = list(doc.pieces) if isinstance(doc, Built) else [bytes(doc.buffers[0])] if doc.buffers else []
    size = sum(len(p) for p in pieces)
    beside = dict(doc.resources)
    if binary:
        # images become buffer views after the geometry, each at a 4-byte boundary
        views = tree.setdefault("bufferViews", [])
        for image in tree.get("images", []):
            uri = image.get("uri", "")
            if uri not in beside:
                continue
            data = beside.pop(uri)
            pad = -size % 4
            pieces += [b"\0" * pad, data]
            size += pad
            views.append({"buffer": 0, "byteOffset": size, "byteLength": len(data)})
            size += len(data)
            del image["uri"]
            image["bufferView"] = len(views) - 1
        if not views:
            del tree["bufferViews"]
        if size:
            tree.setdefault("buffers", [{}])[0]["byteLength"] = size
        return glb_pieces(_dumps(tree), pieces + [b"\0" * (-size % 4)] if size else None), beside
    if size:
        name = f"{stem}.bin"
        tree["buffers"][0]["uri"] = name
        beside[name] = pieces
    # images beside a .gltf take its name first: models converted into one folder never share (or refuse
    # to overwrite) a picture of the same name
    for image in tree.get("images", []):
        uri = image.get("uri", "")
        if uri in doc.resources:
            image["uri"] = f"{stem}_{uri}"
            beside[image["uri"]] = beside.pop(uri)
    return _dumps(tree), beside
