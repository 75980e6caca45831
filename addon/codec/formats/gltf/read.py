"""glTF bytes -> Document: a .glb's chunks, or a .gltf's JSON with its buffers (files beside it or
data: URIs), every length checked against the bytes really there.

What the writer relies on to write a read file back byte for byte (write.encode_bytes): a .glb's
`json_text` is its JSON chunk as stored (padding included), `buffers[0]` its BIN chunk up to
buffer 0's byteLength and `bin_padding` the rest of that chunk; a .gltf's `json_text` is the whole
file and `resources` holds the files its URIs name, as read. The JSON's own structure (indices,
accessor ranges) is checked where it is used: accessors_in.py and to_scene.py.
"""
from __future__ import annotations

import base64
import binascii
import json
import struct
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from ...errors import FormatError, Warnings
from .model import CHUNK_BIN, CHUNK_JSON, GLB_MAGIC, GLB_VERSION, MESHOPT, Document

MAX_DEPTH_ERRORS = (RecursionError, ValueError, UnicodeDecodeError)


def parse(data: bytes, warnings: Warnings, resources: dict[str, bytes] | None = None, name: str = "") -> Document:
    """A .glb (by its magic) or a .gltf's JSON; `resources`: the files beside it, by URI."""
    data = bytes(data)
    if data[:4] == GLB_MAGIC:
        doc = _glb(data, warnings)
    else:
        doc = Document(_json(data, 0), binary=False, json_text=data)
    doc.name = name
    _check_asset(doc.json)
    _load_buffers(doc, resources or {}, warnings)
    return doc


def read_path(path: Path, opts, warnings: Warnings) -> Document:
    path = Path(path)
    data = path.read_bytes()
    resources: dict[str, bytes] = {}
    if data[:4] != GLB_MAGIC:
        tree = _json(data, 0)
        for uri in external_uris(tree):
            name = PurePosixPath(unquote(uri))
            if name.is_absolute() or ".." in name.parts or "\0" in str(name):
                # files beside the model only: neither read from elsewhere nor written back elsewhere
                warnings.warn(f"{uri!r} names no file beside the model: not read")
                continue
            try:
                resources[uri] = (path.parent / name).read_bytes()
            except (OSError, ValueError):
                pass                   # a missing buffer is named by parse, a missing image by to_scene
    doc = parse(data, warnings, resources, path.stem)
    doc.path = str(path)
    return doc


def external_uris(tree: dict) -> list[str]:
    """The URIs of files beside a .gltf that its buffers and images name (not data: URIs)."""
    out = []
    for key in ("buffers", "images"):
        items = tree.get(key)
        for item in items if isinstance(items, list) else []:
            uri = item.get("uri") if isinstance(item, dict) else None
            if isinstance(uri, str) and uri and not uri.startswith("data:") and "://" not in uri and uri not in out:
                out.append(uri)
    return out


def _glb(data: bytes, warnings: Warnings) -> Document:
    if len(data) < 20:
        raise FormatError(f"a .glb needs a 12-byte header and a chunk; the file has {len(data)} bytes", 0, "header")
    _, version, length = struct.unpack_from("<4sII", data, 0)
    if version != GLB_VERSION:
        raise FormatError(f"glTF binary version {version} is not supported (only 2)", 4, "header.version")
    if length > len(data):
        raise FormatError(f"the header says {length} bytes, the file has {len(data)}", 8, "header.length")
    if length < len(data):
        warnings.warn(f"{len(data) - length} bytes after the .glb's end (header length {length}) are ignored")
    chunks, pos = [], 12
    while pos + 8 <= length:
        size, kind = struct.unpack_from("<II", data, pos)
        if size > length - pos - 8:
            raise FormatError(f"chunk {len(chunks)} claims {size} bytes, {length - pos - 8} left",
                              pos, f"chunks[{len(chunks)}].chunkLength")
        chunks.append((kind, pos + 8, data[pos + 8:pos + 8 + size]))
        pos += 8 + size
    if pos != length:
        warnings.warn(f"{length - pos} stray bytes after the last chunk are ignored")
    if not chunks or chunks[0][0] != CHUNK_JSON:
        raise FormatError("the first chunk is not JSON", 16, "chunks[0].chunkType")
    kind, at, text = chunks[0]
    doc = Document(_json(text, at), binary=True, json_text=text)
    bins = [c for c in chunks[1:] if c[0] == CHUNK_BIN]
    if len(chunks) > 1 + len(bins) or len(bins) > 1:
        warnings.warn("chunks other than one JSON and one BIN are ignored")
    buffers = doc.json.get("buffers")
    first = buffers[0] if isinstance(buffers, list) and buffers and isinstance(buffers[0], dict) else None
    if bins and first is not None and "uri" not in first:
        n = _length(first, "buffers[0]")
        blob = bins[0][2]
        if n > len(blob):
            raise FormatError(f"buffer 0 claims {n} bytes, the BIN chunk holds {len(blob)}",
                              bins[0][1] - 8, "buffers[0].byteLength")
        doc.buffers.append(blob[:n])
        doc.bin_padding = blob[n:]
    elif bins:
        warnings.warn("the BIN chunk is not buffer 0 (which has a URI, or is missing): it is ignored")
    return doc


def _json(text: bytes, offset: int) -> dict:
    try:
        tree = json.loads(text.decode("utf-8-sig"))
    except MAX_DEPTH_ERRORS as e:
        raise FormatError(f"the glTF JSON does not parse: {e}", offset, "JSON") from None
    if not isinstance(tree, dict):
        raise FormatError("the glTF JSON is not an object", offset, "JSON")
    return tree


def _check_asset(tree: dict) -> None:
    asset = tree.get("asset")
    version = asset.get("version") if isinstance(asset, dict) else None
    if not isinstance(version, str):
        raise FormatError("no asset.version: not a glTF file", None, "asset.version")
    if not version.startswith("2."):
        raise FormatError(f"glTF {version} is not supported (only 2.x)", None, "asset.version")
    minimum = asset.get("minVersion")
    if isinstance(minimum, str) and minimum not in ("2.0", "2"):
        raise FormatError(f"the file needs a glTF reader of version {minimum}", None, "asset.minVersion")


def _length(buffer: dict, path: str) -> int:
    n = buffer.get("byteLength")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise FormatError(f"byteLength {n!r} is not a count", None, f"{path}.byteLength")
    return n


def _load_buffers(doc: Document, resources: dict[str, bytes], warnings: Warnings) -> None:
    """buffers[i] for every buffer after the BIN chunk: a data: URI or a file beside the .gltf.
    A missing file leaves an empty buffer (what reads from it then fails, the rest still reads)."""
    buffers = doc.json.get("buffers", [])
    if not isinstance(buffers, list):
        raise FormatError("buffers is not a list", None, "buffers")
    for i in range(len(doc.buffers), len(buffers)):
        b = buffers[i]
        path = f"buffers[{i}]"
        if not isinstance(b, dict):
            raise FormatError("not an object", None, path)
        n = _length(b, path)
        uri = b.get("uri")
        ext = b.get("extensions")
        if not isinstance(uri, str) and isinstance(ext, dict) and any(
                isinstance(ext.get(e), dict) and ext[e].get("fallback") for e in MESHOPT):
            doc.buffers.append(b"")        # a meshopt fallback with no data: its views are compressed ones
            continue
        if not isinstance(uri, str):
            if i == 0 and doc.binary:
                raise FormatError("buffer 0 has no URI and the .glb no BIN chunk", None, path)
            raise FormatError("a buffer without a URI", None, f"{path}.uri")
        if uri.startswith("data:"):
            blob = data_uri(uri, f"{path}.uri")
        elif uri in resources:
            doc.resources[uri] = resources[uri]
            blob = resources[uri]
        else:
            doc.buffers.append(b"")
            warnings.warn(f"{path}: its file {uri[:60]!r} is not beside the .gltf")
            continue
        if n > len(blob):
            raise FormatError(f"the buffer claims {n} bytes, its data holds {len(blob)}", None, f"{path}.byteLength")
        doc.buffers.append(blob[:n])
    for uri in external_uris(doc.json):
        if uri in resources:
            doc.resources[uri] = resources[uri]


def data_uri(uri: str, path: str) -> bytes:
    head, sep, body = uri.partition(",")
    if not sep or not head.endswith(";base64"):
        raise FormatError("a data: URI that is not base64", None, path)
    try:
        return base64.b64decode(body, validate=True)
    except (binascii.Error, ValueError) as e:
        raise FormatError(f"bad base64 in a data: URI: {e}", None, path) from None

