"""Format extras <-> custom properties: anything without a Blender equivalent."""
from __future__ import annotations

import json

import numpy as np

_JSON = "json:"

# Keys that Blender or other add-ons put on IDs, never ours.
_FOREIGN = {"_RNA_UI", "cycles", "cycles_visibility", "glTF2ExportSettings"}


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def store(idblock, extras: dict) -> None:
    for key, value in extras.items():
        value = _plain(value)
        if value is None or (isinstance(value, (list, dict)) and not value):
            continue
        if isinstance(value, bytes):
            value = value.hex()
        try:
            idblock[str(key)] = value
        except TypeError:
            # mixed lists and the like: ID properties cannot hold them, JSON can
            idblock[str(key)] = _JSON + json.dumps(value)


def load(idblock) -> dict:
    out = {}
    for key in idblock.keys():
        if key in _FOREIGN or key.startswith("_"):
            continue
        value = idblock[key]
        if isinstance(value, str) and value.startswith(_JSON):
            out[key] = json.loads(value[len(_JSON):])
            continue
        out[key] = value.to_dict() if hasattr(value, "to_dict") else (
            value.to_list() if hasattr(value, "to_list") else value)
    return out
