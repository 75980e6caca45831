"""Atomic writes: a failed export never leaves a half-written or damaged file."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomically(files: dict[Path, bytes]) -> list[Path]:
    """Write every file to a temporary sibling first, then rename them all.

    If anything fails before the renames, no target is touched.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for target, data in files.items():
            target = Path(target)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
            temps.append((tmp, target))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
        for tmp, target in temps:
            os.replace(tmp, target)
        return [t for _, t in temps]
    finally:
        for tmp, _ in temps:
            if os.path.exists(tmp):
                os.unlink(tmp)
