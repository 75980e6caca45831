"""Ultimate 3D model -> bytes: write_v2 for a v2.0 model, write_v1 for a v1.0 one."""
from __future__ import annotations

from pathlib import Path

from . import write_v1, write_v2
from .model import Model, ModelV1


def encode_bytes(model: Model | ModelV1) -> bytes:
    return write_v1.write(model) if isinstance(model, ModelV1) else write_v2.write(model)


def encode(model: Model | ModelV1, target: Path) -> dict[Path, bytes]:
    return {Path(target): encode_bytes(model)}
