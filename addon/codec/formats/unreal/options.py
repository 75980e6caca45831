"""Codec-level options for Unreal Engine 1 vertex meshes (the operators expose the same names)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class ImportOptions:
    use_uc_script: bool = True          # read X.uc (beside the pair or in Classes/) for scale, sequences, skins
    texture_search_folder: str = ""     # another folder to search for skins ("" = only the package folders)
    mesh_name: str = ""                 # which MESH of a script that imports several ("" = the pair's own)


@dataclass(frozen=True)
class ExportOptions:
    variant: Literal["AS_IMPORTED", "STANDARD", "DEUS_EX"] = "AS_IMPORTED"      # AS_IMPORTED (the source's; else STANDARD), STANDARD (11/11/10 bits) or DEUS_EX (int16)
    scale: float = field(default=1.0, metadata={"min": 0.0})      # multiplies the format's default scale; 0 = fit into the packed range
    use_scene_range: bool = True        # write every frame the scene holds (Blender: its start..end)
    frame_start: int = 1                # with use_scene_range off: the first frame to write, as given
    frame_end: int = 250                # with use_scene_range off: the last frame to write, as given
    sequence_source: Literal["ANIMATIONS", "MARKERS", "ALL"] = "ANIMATIONS" # ANIMATIONS (scene animations), MARKERS (timeline markers), ALL (one sequence)
    write_uc: bool = True               # write X.uc beside the pair (or the pair into Models/ for Classes/X.uc)
    package_name: str = ""              # package named in the script's defaultproperties ("" = none)
    texture_group: str = "Skins"        # GROUP= of TEXTURE IMPORT
    texture_prefix: str = ""            # prefix for texture names without one (e.g. "J" gives "Jskin1")
