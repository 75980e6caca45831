"""File names as old formats and their tools store them (DOS 8.3), shared by the writers and the
bridge, which copies pictures under the names the file will give them."""
from __future__ import annotations

import os
import re


def name_83(name: str, taken: set[str]) -> str:
    """An upper-case 8.3 name for a texture file, unique among `taken`."""
    base = name.replace("\\", "/").split("/")[-1]
    stem, ext = os.path.splitext(base)
    stem = re.sub(r"[^A-Z0-9_]", "", stem.upper()) or "TEX"
    ext = re.sub(r"[^A-Z0-9_]", "", ext.upper())[:3]
    out = f"{stem[:8]}.{ext}" if ext else stem[:8]
    n = 1
    while out in taken and n < 1000:
        short = f"{stem[:8 - len(str(n)) - 1]}~{n}"
        out = f"{short}.{ext}" if ext else short
        n += 1
    taken.add(out)
    return out


def unique_name(name: str, taken: set[str]) -> str:
    """`name`, or name_2, name_3 ... when `taken` has it (file names compare ignoring case); added to taken."""
    out, n = name, 1
    while out.lower() in taken:
        n += 1
        out = f"{name}_{n}"
    taken.add(out.lower())
    return out
