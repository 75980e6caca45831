"""Every sample of every format, as the glTF writer's tests take them: each valid file in test_assets,
and what those files lack made from them (an Unreal pair with a script: sequences and a masked
skin; a UNIGINE mesh with its animation beside it; a .3ds with lights of each kind)."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from addon.codec import load, save
from addon.codec.scene import Light, Node
from tests.conftest import ASSETS

UC = ("class mar_rifle extends Actor;\r\n"
      "#exec MESH IMPORT MESH=mar_rifle ANIVFILE=mar_rifle_a.3d DATAFILE=mar_rifle_d.3d\r\n"
      "#exec MESH ORIGIN MESH=mar_rifle X=0 Y=0 Z=0 YAW=64\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=All STARTFRAME=0 NUMFRAMES=30\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=Fire STARTFRAME=0 NUMFRAMES=10 RATE=15\r\n"
      "#exec MESH SEQUENCE MESH=mar_rifle SEQ=Reload STARTFRAME=10 NUMFRAMES=20 RATE=30\r\n"
      "#exec TEXTURE IMPORT NAME=Jm_rifl FILE=m_rifl.bmp GROUP=Skins FLAGS=2\r\n"
      "#exec MESHMAP SETTEXTURE MESHMAP=mar_rifle NUM=0 TEXTURE=Jm_rifl\r\n")

FILES = sorted([p for p in (ASSETS / "3ds").iterdir() if p.suffix.lower() == ".3ds" and p.name != "wrong.3ds"]
               + list((ASSETS / "unreal").glob("*_d.3d")) + list((ASSETS / "unigine").glob("*.mesh"))
               + list((ASSETS / "ultimate3d").glob("*.u3d")))


def made(folder: Path) -> list[Path]:
    """The made samples, written into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("mar_rifle_d.3d", "mar_rifle_a.3d"):
        shutil.copy(ASSETS / "unreal" / name, folder / name)
    shutil.copy(ASSETS / "3ds" / "m_rifl.bmp", folder / "m_rifl.bmp")
    (folder / "mar_rifle.uc").write_bytes(UC.encode("latin-1"))
    shutil.copy(ASSETS / "unigine" / "tube_skinned.mesh", folder / "tube.mesh")
    shutil.copy(ASSETS / "unigine" / "tube_bend.anim", folder / "tube.anim")
    scene = load(ASSETS / "3ds" / "cube_hierarchy.3ds")
    for kind in ("POINT", "SPOT", "SUN"):
        scene.lights.append(Light(f"{kind.title()}Lamp", kind, color=(1.0, 0.8, 0.5), energy=500.0))
        m = np.eye(4)
        m[:3, 3] = (len(scene.lights) * 3.0, -4.0, 5.0)
        scene.add_node(Node(f"{kind.title()}Lamp", "LIGHT", len(scene.lights) - 1, matrix=m))
    save(scene, folder / "lamps.3ds")
    return [folder / "mar_rifle_d.3d", folder / "tube.mesh", folder / "lamps.3ds"]


def samples(folder: Path) -> list[Path]:
    return FILES + made(folder)


def sample_id(p: Path) -> str:
    return p.name
