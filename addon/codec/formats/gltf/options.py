"""Codec-level options of the glTF reader and writer (the command line's -o names)."""
from __future__ import annotations

from dataclasses import dataclass

from ...option_rules import option


@dataclass(frozen=True)
class ImportOptions:
    """.gltf / .glb import."""

    fps: float = option(24.0, "Frame Rate", "Frames per second that the animations' times (seconds) are "
                        "sampled to", min=0.01, max=1000.0)


@dataclass(frozen=True)
class ExportOptions:
    """.gltf / .glb export."""

    scale: float = option(1.0, "Scale", "Multiplies every length", min=1e-6)
    fps: float = option(0.0, "Frame Rate", "Frames per second of the animations' times (0: each animation's "
                        "own rate, else the scene's, else 24)", min=0.0, max=1000.0)
    quantize: bool = option(True, "Quantize Frames", "Vertex frames on a grid (Unreal's packed frames) as whole "
                            "steps, bytes or shorts (KHR_mesh_quantization); off: floats, for readers without it")
